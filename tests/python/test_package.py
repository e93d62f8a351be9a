"""The installed rewind package against what a user checks it with: h5py reading the
file directly, and the rewind commands (`rewind info --json`, `rewind window --out
W.json`, `rewind serve`, `rewind run --listen`) -- never against itself.

Run with pytest, by the python of a virtual environment the package was pip-installed
into (tests/python/package.sh makes one; ctest's python_package runs it):
    python -m pytest tests/python/test_package.py --rewind build/apps/rewind [--mpiexec mpiexec]
Each group of checks is one test; every check of a group runs and prints ok/FAIL, and the
test fails if one of them did.
"""
import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

import rewind
import rewind_client

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE = os.path.join(SRC, "cases", "default.toml")
ADAPTIVE = os.path.join(SRC, "cases", "cylinder-2d1-adaptive.toml")
REWIND, MPIEXEC = None, None  # from the command line (conftest.py), set by run_files
passed, failed = 0, 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}{': ' + str(detail) if detail else ''}")


def section(fn):
    """One group of checks as the pytest test test_<name>: it fails if one of them did."""
    def test():
        before = failed
        fn()
        assert failed == before, f"{failed - before} check(s) of {fn.__name__} failed (FAIL lines above)"

    test.__name__ = f"test_{fn.__name__}"
    globals()[test.__name__] = test
    return fn


def raises(kind, fn, *words):
    """True if fn() raises `kind` whose message holds every one of `words`."""
    try:
        fn()
    except kind as e:
        return all(w in str(e) for w in words) or print("   message:", e)
    except Exception as e:  # noqa: BLE001
        print("   raised", type(e).__name__, e)
    return False


def rewind_cmd(*args, ok=True):
    r = subprocess.run([REWIND, *map(str, args)], capture_output=True, text=True, timeout=120)
    if ok and r.returncode != 0:
        raise RuntimeError(f"rewind {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    return r


def info_json(path):
    return json.loads(rewind_cmd("info", path, "--json").stdout)


def start(args, log):
    """A background process (output in `log`) and the port it prints it listens on."""
    out = open(log, "w")
    p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    for _ in range(600):
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log).read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.1)
    p.kill()
    raise RuntimeError(f"{' '.join(args)} printed no address: {open(log).read()[-500:]}")


def example(name, *args):
    return subprocess.run([sys.executable, os.path.join(SRC, "examples", "python", name), *args], capture_output=True,
                          text=True, timeout=120)


def leaves_h5py(path, number):
    """(rows, values of u, uid, level, bbox) of a step's leaves, read with h5py alone."""
    with h5py.File(path, "r") as f:
        g = f[f"simulation/step_{number:08d}"]
        rows = np.flatnonzero(np.all(g["child_rows"][()] < 0, axis=1))
        return (rows, g["cell_data/u"][()][rows], g["uid"][()][rows], g["level"][()][rows],
                g["bounding_box"][()][rows])


@pytest.fixture(scope="module", autouse=True)
def run_files(request, tmp_path_factory):
    """The files, in an empty working directory: a uniform run, an adaptive one, a branch."""
    global REWIND, MPIEXEC
    REWIND, MPIEXEC = request.config.getoption("rewind"), request.config.getoption("mpiexec")
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("package"))
    rewind_cmd("run", CASE, "-o", "u.h5", "-q", "--set", "time.end=0.3", "--set", "output.visualisation_interval=0.1",
               "--set", "output.checkpoint_interval=0.2", "--set", "output.io.statistics=true")
    rewind_cmd("run", ADAPTIVE, "-o", "a.h5", "-q", "--steps", "4", "--set", "output.checkpoint_every=2",
               "--set", "output.visualisation_every=1", "--set", "output.float32=true")
    os.makedirs("sub")
    rewind_cmd("run", "--restart", "u.h5@190", "--set", "physics.nu=0.002", "-o", "sub/b.h5", "-q", "--set",
               "time.end=0.5")
    yield
    os.chdir(here)


@section
def installed():
    check("import rewind is the installed package, not the source tree",
          os.path.realpath(rewind.__file__).startswith(os.path.realpath(sys.prefix)), rewind.__file__)
    check("the old module rewind_client is the package's client (old code keeps running)",
          rewind_client.Client is rewind.Client and rewind_client.CollectorError is rewind.CollectorError)
    check("the installed distribution's version is rewind.__version__ (one version string)",
          importlib.metadata.version("rewind") == rewind.__version__,
          (importlib.metadata.version("rewind"), rewind.__version__))


@section
def steps():
    run = rewind.open("u.h5")
    kernel = info_json("u.h5")["steps"]
    mine = [(s.step, s.time, s.kind, s.committed, s.n_grids, s.n_levels, s.bytes) for s in run.steps]
    theirs = [(s["step"], s["time"], s["kind"], s["committed"], s["grids"], s["levels"], s["bytes"]) for s in kernel]
    check("run.steps equals `rewind info --json` (step, time, kind, committed, grids, levels, bytes)",
          mine == theirs, (mine, theirs))
    with h5py.File("u.h5", "r") as f:
        index = f["simulation/index"][()]
    check("... and the file's index read with h5py", list(run.steps.step) == list(index["step"])
          and list(run.steps.time) == list(index["time"]))
    check("run[0], run[-1], run.step(190), len(run): by position and by number",
          (run[0].number, run[-1].number, run.step(190).number, len(run)) == (0, 285, 190, 4))
    check("a visualisation step stores u, v, p as float32; a checkpoint every variable solved (2-D, no heat: "
          "u, v, p) as float64",
          run[1].variables == ["u", "v", "p"] and run[1]["u"].dtype == np.float32 and run[1].float32
          and run[2].variables == ["u", "v", "p"] and run[2]["p"].dtype == np.float64)
    check("a step it does not store is refused with the file, the step and what it stores",
          raises(rewind.UnknownVariable, lambda: run[1]["w"], "u.h5", "step 95", '"w"', "u, v, p")
          and raises(KeyError, lambda: run[1]["T"]))
    check("step numbers and positions that do not exist: NoSuchStep naming the file",
          raises(rewind.NoSuchStep, lambda: run.step(7), "u.h5", "no committed step 7")
          and raises(LookupError, lambda: run[4], "u.h5") and raises(rewind.NoSuchStep, lambda: run.select("#-5")))


@section
def leaves():
    for path in ("u.h5", "a.h5"):
        run = rewind.open(path)
        for step in run:
            rows, u, uid, level, bbox = leaves_h5py(path, step.number)
            f = step["u"]
            same = (np.array_equal(f.row, rows) and np.array_equal(f.values, u) and f.values.dtype == u.dtype
                    and np.array_equal(f.uid, uid) and np.array_equal(f.level, level) and np.array_equal(f.bbox, bbox))
            check(f"{path} step {step.number}: step['u'] is the leaves' u, uid, level and bbox as h5py reads them",
                  same)
        sx, sy, sz = run.block_cells
        k = np.arange(sx)
        x = bbox[:, 0, None] + (k + 0.5) * (bbox[:, 1, None] - bbox[:, 0, None]) / sx
        check(f"{path}: the cell centres lie at the middle of each grid's cells", np.allclose(f.x, x, rtol=0, atol=1e-12)
              and f.x.shape == (len(rows), sx) and f.y.shape == (len(rows), sy) and f.dims == ("grid", "z", "y", "x"))
        d = run.domain
        area = np.sum((bbox[:, 1] - bbox[:, 0]) * (bbox[:, 3] - bbox[:, 2]))
        check(f"{path}: the leaves tile the domain (areas add up to the domain's)",
              abs(area - (d[1] - d[0]) * (d[3] - d[2])) < 1e-12, area)
    s = rewind.open("a.h5")[-1]
    with h5py.File("a.h5", "r") as f:
        g = f[f"simulation/step_{s.number:08d}"]
        lev, off = g["level"][()], g["level_offsets"][()]
        leaf = np.all(g["child_rows"][()] < 0, axis=1)
        p = g["cell_data/p"][()]
    check("a.h5 is adaptive: leaves on three levels", sorted(set(s["u"].level.tolist())) == [3, 4, 5])
    for L in range(s.n_levels):
        grids = s.grids(level=L)
        cut = s.level_cut(L)
        want = np.flatnonzero((lev == L) | (leaf & (lev < L)))
        check(f"grids(level={L}) are rows level_offsets[{L}]..; level_cut({L}) the level plus the leaves above it",
              np.array_equal(grids.rows, np.arange(off[L], off[L + 1])) and np.array_equal(cut.rows, want)
              and np.array_equal(cut["p"].values, p[want]))


@section
def at_rule():
    run = rewind.open("u.h5")
    eps = 1e-13
    times = [0.0, 0.05, 0.1, 0.1 * (1 - 1e-9), 0.1 * (1 + eps), 0.25, 0.3, 0.3 * (1 + 5 * eps), 0.3 * (1 + 1e-10),
             2.0, -1.0]
    for t in times:
        r = rewind_cmd("window", "u.h5", "--time", f"t={t!r}", "--box", "0,0,0,1,0.41,0", "--budget", "10", ok=False)
        m = re.match(r"step (\d+) ", r.stdout)
        kernel = int(m.group(1)) if r.returncode == 0 and m else None
        try:
            mine = run.at(t).number
            same = run.at(f"t={t!r}").number == mine and run.select(f"t={t!r}").number == mine
        except rewind.NoSuchStep:
            mine, same = None, True
        check(f"at(t={t!r}) picks the step `rewind window --time` picks ({kernel})", mine == kernel and same,
              (mine, kernel, r.stderr.strip()))
    check("a time after the last committed step is refused, naming the last step",
          raises(rewind.NoSuchStep, lambda: run.at(2.0), "u.h5", "t=2 has not been reached", "285"))
    check("a malformed time is refused", raises(rewind.NoSuchStep, lambda: run.at("t=soon"), "bad time selector"))


def same_window(mine, dump):
    """Differences between a rewind.Window and a `rewind window --out` JSON dump ([] if none)."""
    bad = []
    for k in ("step", "time", "level", "stride", "cells", "variables"):
        if getattr(mine, k) != dump[k]:
            bad.append((k, getattr(mine, k), dump[k]))
    if (mine.box["lo"], mine.box["hi"]) != (dump["lo"], dump["hi"]):
        bad.append(("box", mine.box, dump["lo"], dump["hi"]))
    keys = ("row", "uid", "level", "first", "count", "stride", "origin", "spacing")
    if [[p[k] for k in keys] for p in mine.pieces] != [[p[k] for k in keys] for p in dump["pieces"]]:
        bad.append("pieces")
    for i, v in enumerate(dump["variables"]):
        if not np.array_equal(mine.values[v], np.array(dump["values"][i], dtype=float)):
            bad.append(f"values of {v}")
    if not np.array_equal(mine.cell_type, np.array(dump["cell_type"], dtype=np.uint8)):
        bad.append("cell_type")
    return bad


def rows_read(fn, names):
    """fn()'s result and how many rows of each dataset named in `names` it read through
    h5py (every Dataset.__getitem__, counted by the rows it returned)."""
    counts = dict.fromkeys(names, 0)
    plain = h5py.Dataset.__getitem__

    def counting(d, key):
        out = plain(d, key)
        name = d.name.rsplit("/", 1)[-1]
        if name in counts:
            counts[name] += out.shape[0] if np.ndim(out) else 1
        return out
    h5py.Dataset.__getitem__ = counting
    try:
        return fn(), counts
    finally:
        h5py.Dataset.__getitem__ = plain


def cold_window_rows():
    """A cold window (the step's topology not read yet) reads only the topology rows its
    walk visits, as `rewind window` does (window::StepRows), and answers the same."""
    topo = ("uid", "level", "bounding_box", "child_rows", "parent_row", "sort_key", "rank", "child_uids")
    for path, budget in (("a.h5", 1500), ("u.h5", 1500)):
        run = rewind.open(path)
        step = run[-1]
        box = "0,0,0,2.2,0.41,0"
        rewind_cmd("window", f"{path}@{step.number}", "--box", box, "--budget", budget, "--out", "cold.json")
        with open("cold.json") as f:
            dump = json.load(f)
        b = [float(x) for x in box.split(",")]
        w, counts = rows_read(lambda: step.window((b[:3], b[3:]), budget), topo)
        n = step.n_grids
        check(f"{path}@{step.number}: a cold window with budget {budget} reads only the topology rows it visits "
              f"(rows read of {n}: {counts}), and equals `rewind window`",
              2 < counts["bounding_box"] and max(counts.values()) <= n // 2 and not same_window(w, dump),
              same_window(w, dump))
        step.topology  # the whole topology in memory: the warm window walks it, and answers the same
        w, counts = rows_read(lambda: step.window((b[:3], b[3:]), budget), topo)
        check(f"... warm (the topology read): no topology row read again, the same window",
              counts["bounding_box"] == 0 and not same_window(w, dump), (counts, same_window(w, dump)))


@section
def windows():
    boxes = {"the domain": "0,0,0,2.2,0.41,0", "a box": "0.13,0.05,0,0.71,0.3,1", "an x slice": "0.7,0,0,0.7,0.41,1",
             "the closing face x=2.2": "2.2,0,0,2.2,0.41,0", "a box half outside": "-1,0.2,0,0.4,2,0",
             "a box outside": "3,3,3,4,4,4"}
    n = 0
    for path, number in (("u.h5", 95), ("u.h5", 190), ("a.h5", 3), ("a.h5", 4)):
        run = rewind.open(path)
        bad, kinds = [], set()
        for what, box in boxes.items():
            for budget in (1, 60, 1500, 40000, 10**7):
                vars_ = ["p"] if budget == 1500 else None
                out = f"w{n}.json"
                n += 1
                args = ["window", f"{path}@{number}", "--box", box, "--budget", budget, "--out", out]
                rewind_cmd(*args, *(["--vars", "p"] if vars_ else []))
                with open(out) as f:
                    dump = json.load(f)
                b = [float(x) for x in box.split(",")]
                w = run.window((b[:3], b[3:]), budget, vars_, step=f"{number}")
                kinds.add((w.level, w.stride > 1, len({p["level"] for p in w.pieces}) > 1, len(w.pieces) == 0))
                diff = same_window(w, dump)
                if diff:
                    bad.append((what, budget, diff))
        check(f"{path}@{number}: windows equal `rewind window --out`, value by value, for {len(boxes)} boxes "
              f"(slices, the closing face, half and wholly outside) x 5 budgets", not bad, bad)
        check(f"... among them strided, multi-level (adaptive only) and empty windows",
              any(k[1] for k in kinds) and any(k[3] for k in kinds) and any(k[2] for k in kinds) == (path == "a.h5"),
              kinds)
    cold_window_rows()
    run = rewind.open("u.h5")
    w = run.window(None, 0, ["u"], step=-1)
    img = w.image("u")
    _, u, _, _, bbox = leaves_h5py("u.h5", 285)
    hx, hy = (2.2 / 352, 0.41 / 64)
    oracle = np.full((1, 64, 352), np.nan)
    for g, b in zip(u, bbox):
        i, j = int(round(b[0] / hx)), int(round(b[2] / hy))
        oracle[:, j:j + 8, i:i + 44] = g
    check("an unlimited window of a uniform tree stitches into the leaves' image (h5py, placed by bbox)",
          img.values.shape == (1, 64, 352) and np.array_equal(img.values, oracle) and np.allclose(img.x[:2], [hx / 2, 1.5 * hx]))
    a = rewind.open("a.h5")
    wa = a.window(None, 0, ["u"])
    check("a window over several levels is not stitched without resample, with one line naming them",
          raises(rewind.InvalidArgument, lambda: wa.image("u"), "levels 3, 4, 5", "resample=True"))
    img = wa.image("u", resample=True)
    _, u, _, _, bbox = leaves_h5py("a.h5", a[-1].number)
    fine = (2.2 / (44 * 32), 0.41 / (8 * 32))
    oracle = np.full(img.values.shape, np.nan)
    for g, b in zip(u, bbox):
        k = int(round((b[1] - b[0]) / 44 / fine[0]))  # finest cells per cell of this leaf, per axis
        i, j = int(round(b[0] / fine[0])), int(round(b[2] / fine[1]))
        oracle[:, j:j + 8 * k, i:i + 44 * k] = np.repeat(np.repeat(g, k, axis=2), k, axis=1)
    check("... with resample=True: the leaves on the finest lattice, coarse cells repeated (h5py oracle)",
          img.values.shape == (1, 256, 1408) and np.array_equal(img.values, oracle))
    check("a box with lo > hi, or a negative budget, is refused with one line",
          raises(rewind.InvalidArgument, lambda: run.window(((1, 0, 0), (0, 1, 1)), 10), "lo > hi on x")
          and raises(ValueError, lambda: run.window(None, -1), "budget")
          and raises(rewind.InvalidArgument, lambda: run.window(((0, 0), (1, 1)), 10), "expected ((x0, y0, z0)"))


@section
def lineage():
    b = rewind.open("sub/b.h5")
    j = info_json("sub/b.h5")
    lin = j["lineage"]
    check("lineage equals `rewind info --json` (parent file as stored, absolute hint, step, time, changes)",
          (b.lineage.parent_file, b.lineage.parent_file_absolute, b.lineage.parent_step, b.lineage.parent_time,
           b.lineage.changes) == (lin["parent_file"], lin["parent_file_absolute"], lin["parent_step"],
                                  lin["parent_time"], lin["changes"]), vars(b.lineage))
    check("chain() resolves the parent as the kernel does (relative to the branch's directory)",
          [f.path for f in b.chain()] == [c["path"] for c in j["lineage"]["chain"]], [f.path for f in b.chain()])
    # The timeline from the kernel's step lists: the parent's steps up to the branch step, then
    # the branch's own (whose step at the branch point stands for both).
    parent = info_json(j["lineage"]["chain"][1]["path"])["steps"]
    want = [(j["lineage"]["chain"][1]["path"], s["step"], s["time"]) for s in parent if s["step"] < lin["parent_step"]]
    want += [("sub/b.h5", s["step"], s["time"]) for s in j["steps"]]
    tl = b.timeline()
    got = [(p, s.step, s.time) for p, s in tl.entries]
    check("timeline(): the parent's steps before the branch point, then the branch's", got == want, got)
    check("timeline steps read from the file that holds them (h5py)",
          np.array_equal(tl[1]["u"].values, leaves_h5py("u.h5", 95)[1])
          and np.array_equal(tl[2]["u"].values, leaves_h5py("sub/b.h5", 190)[1]) and tl[2].run.path == "sub/b.h5")
    check("timeline.at(t): the step in force across files; a time past its end refused",
          tl.at(0.15).number == 95 and tl.at(0.15).run.path == j["lineage"]["chain"][1]["path"]
          and tl.at(0.45).number == 380 and tl.at(0.2).run.path == "sub/b.h5"
          and raises(rewind.NoSuchStep, lambda: tl.at(0.6), "sub/b.h5", "has not been reached"))
    os.makedirs("moved/deeper")
    shutil.copy("sub/b.h5", "moved/deeper/b.h5")
    m = rewind.open("moved/deeper/b.h5")
    check("a branch moved without its parent finds it through the absolute hint, as `rewind info` does",
          m.lineage.parent_path == b.lineage.parent_file_absolute
          and [f.path for f in m.chain()] == [c["path"] for c in info_json("moved/deeper/b.h5")["lineage"]["chain"]])
    shutil.copy("sub/b.h5", "moved/deeper/lost.h5")
    with h5py.File("moved/deeper/lost.h5", "r+") as f:
        f["common/lineage"].attrs["parent_file_absolute"] = np.bytes_("/nowhere/u.h5")
    lost = rewind.open("moved/deeper/lost.h5")
    check("a branch whose parent is gone: its steps still read, its parent and timeline raise LineageError",
          len(lost) == 4 and raises(rewind.LineageError, lambda: lost.parent, "moved/deeper/lost.h5", "moved/deeper/../u.h5")
          and raises(rewind.LineageError, lambda: lost.timeline()))
    check("... as `rewind lineage` reports a broken chain (exit 1)", rewind_cmd("lineage", "moved/deeper/lost.h5",
                                                                               ok=False).returncode == 1)
    check("an original run's timeline is its own steps", [s.step for _, s in rewind.open("u.h5").timeline().entries]
          == [0, 95, 190, 285] and rewind.open("u.h5").parent is None)


@section
def bad_files():
    check("a missing file: NoSuchFile (a FileNotFoundError) naming it",
          raises(rewind.NoSuchFile, lambda: rewind.open("nope.h5"), "nope.h5")
          and raises(FileNotFoundError, lambda: rewind.open("nope.h5")))
    with open("text.h5", "w") as f:
        f.write("not hdf5\n")
    check("a file that is not HDF5: FileError naming it", raises(rewind.FileError, lambda: rewind.open("text.h5"),
                                                                 "text.h5", "not an HDF5 file"))
    shutil.copy("u.h5", "newer.h5")
    with h5py.File("newer.h5", "r+") as f:
        f.attrs["format_version"] = np.array([2, 0], dtype=np.int64)
    check("a newer major format version is refused", raises(rewind.FileError, lambda: rewind.open("newer.h5"),
                                                            "newer.h5", "2.0", "newer"))
    with h5py.File("other.h5", "w") as f:
        f.attrs["format"] = np.bytes_("something-else")
    check("an HDF5 file of another format is refused", raises(rewind.FileError, lambda: rewind.open("other.h5"),
                                                              "other.h5", "not a Rewind file"))
    before = open("u.h5", "rb").read()
    with rewind.open("u.h5") as run:
        run[-1]["u"], run.window(None, 100)
    check("reading never changes the file", open("u.h5", "rb").read() == before)


@section
def contact_files():
    """A contact file (docs/collector-protocol.md) names the live job's process: one whose
    process has ended -- also one ended but not yet reaped by its parent (a zombie, as under
    mpirun for a moment) -- is stale, with one line; a running one's is read."""
    def contact(pid, **more):
        with open("c.h5.contact", "w") as f:
            json.dump({"version": 1, "host": "127.0.0.1", "port": 5000, "token": "t", "node": socket.gethostname(),
                       "pid": pid, "started": "2026-01-01T00:00:00Z", **more}, f)
        os.chmod("c.h5.contact", 0o600)
    with open(f"/proc/{os.getpid()}/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, as rewind run writes it
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot = f.read().strip()
    contact(os.getpid())
    check("a running job's contact file is read", rewind.read_contact("c.h5")["port"] == 5000)
    contact(os.getpid(), boot_id=boot, pid_start=start)
    check("... also with its boot id and start", rewind.read_contact("c.h5")["port"] == 5000)
    contact(os.getpid(), boot_id=boot, pid_start=start + 1)
    check("a pid reused by a later process: stale", raises(rewind.InvalidArgument, lambda: rewind.read_contact("c.h5"),
                                                           "is stale"))
    contact(os.getpid(), boot_id="00000000-0000-0000-0000-000000000000", pid_start=start)
    check("a contact file of an earlier boot: stale", raises(rewind.InvalidArgument, lambda: rewind.read_contact("c.h5"),
                                                             "is stale"))
    child = subprocess.Popen(["true"])
    for _ in range(500):  # not waited for: a zombie once it has ended
        with open(f"/proc/{child.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    contact(child.pid)
    check("a zombie's contact file is stale", raises(rewind.InvalidArgument, lambda: rewind.read_contact("c.h5"),
                                                     "is stale", str(child.pid)))
    child.wait()
    check("... and so is an ended, reaped one's", raises(rewind.InvalidArgument, lambda: rewind.read_contact("c.h5"),
                                                         "is stale"))


@section
def serve_client():
    p, port = start([REWIND, "serve", "u.h5", "--listen", "127.0.0.1:0", "--token", "pytok"], "serve.log")
    try:
        run = rewind.open("u.h5")
        with rewind.connect(f"127.0.0.1:{port}", token="pytok") as c:
            check("connect(HOST:PORT): info and steps of rewind serve",
                  [v["name"] for v in c.info()["variables"]] == run.variables
                  and [s["step"] for s in c.steps()] == list(run.steps.step))
            for box, budget, t in ((((0, 0, 0), (2.2, 0.41, 0)), 3000, "latest"), (((0.1, 0.1, 0), (0.5, 0.3, 1)), 200, "t=0.15"),
                                   (((0, 0, 0), (2.2, 0.41, 1)), 7, "95"), (((0, 0, 0), (2.2, 0.41, 0)), 3000, "adaptive"),
                                   (((0.1, 0.1, 0), (0.5, 0.3, 1)), 200, "adaptive")):
                lod = "adaptive" if t == "adaptive" else "uniform"  # protocol 1.10: from the step's statistics
                t = "latest" if t == "adaptive" else t
                w = c.window(box, budget, time=t, lod=lod)
                mine = run.window(box, budget, step=t, lod=lod)
                check(f"... the rule that answered is {lod}, from the server and from the file",
                      w.lod == mine.lod == lod and (lod == "uniform" or run.select(t).statistics("u") is not None))
                keys = ("row", "uid", "level", "first", "count", "stride", "origin", "spacing")
                same = ([[q[k] for k in keys] for q in w.pieces] == [[q[k] for k in keys] for q in mine.pieces]
                        and w.variables == mine.variables and w.box == mine.box and w.level == mine.level
                        and all(np.array_equal(w.values[v], mine.values[v]) for v in w.variables)
                        and np.array_equal(w.cell_type, mine.cell_type))
                check(f"the server's window at {t}, budget {budget} equals run.window, value by value", same)
                pieces = list(w)
                check("... its pieces as rewind.Piece: values (nz, ny, nx) and cell centres",
                      all(q.values["p"].shape == tuple(q.count[::-1]) and len(q.x) == q.count[0] for q in pieces)
                      and np.isclose(pieces[0].x[0], pieces[0].origin[0] + pieces[0].cell[0] / 2))
            for kwargs, code in ((dict(time="t=99"), "no_such_step"), (dict(variables=["rho"]), "unknown_variable")):
                check(f"an error reply raises CollectorError {code}",
                      raises(rewind.CollectorError, lambda: c.window(((0, 0, 0), (1, 1, 0)), 10, **kwargs), code))
            check("steering rewind serve: unsupported, before anything is sent",
                  raises(rewind.CollectorError, c.status, "unsupported"))
        check("a wrong token: CollectorError unauthorized",
              raises(rewind.CollectorError, lambda: rewind.connect(f"127.0.0.1:{port}", token="nope"), "unauthorized"))
        check("a malformed address is refused", raises(rewind.InvalidArgument, lambda: rewind.connect("localhost"),
                                                       "HOST:PORT"))
        r = example("window_plot.py", f"127.0.0.1:{port}", "--box", "0,0,0,2.2,0.41,0", "--budget", "5000", "--var", "u",
                    "--time", "latest", "--token", "pytok", "--out", "served.png")
        check("examples/window_plot.py draws a window of rewind serve", r.returncode == 0 and os.path.getsize("served.png")
              > 0, r.stderr)
    finally:
        p.kill()
        p.wait()


@section
def examples():
    r = example("file_window.py", "sub/b.h5", "--time", "t=0.15", "--var", "u", "--budget", "3000", "--out", "b.png")
    check("examples/file_window.py draws a branch's step from its parent (its timeline)",
          r.returncode == 0 and "step 95 of sub/../u.h5" in r.stdout and os.path.getsize("b.png") > 0, r.stdout + r.stderr)
    r = example("file_window.py", "a.h5", "--budget", "0", "--var", "p", "--out", "a.png")
    check("... and an adaptive step's leaves on three levels", r.returncode == 0 and "levels [3, 4, 5]" in r.stdout,
          r.stdout + r.stderr)
    r = example("file_window.py", "u.h5", "--time", "t=9", "--out", "x.png")
    check("... and refuses a time not reached with one error line", r.returncode != 0 and
          r.stderr.strip().count("\n") == 0 and "t=9 has not been reached" in r.stderr and not os.path.exists("x.png"),
          r.stderr)


@section
def live_client():
    args = [MPIEXEC, "-n", "3", REWIND, "run", CASE, "-o", "live.h5", "-q", "--listen", "127.0.0.1:0",
            "--set", "time.end=30", "--set", "output.checkpoint_every=1", "--set", "output.visualisation_interval=0",
            "--set", "output.checkpoint_interval=0"]
    p, _ = start(args, "live.log")
    try:
        with rewind.connect("live.h5") as c:  # its contact file: where, and the token the run generated
            check("a live run: status running", c.status()["state"] == "running")
            for _ in range(600):  # a few steps in, so that steps before the set are in the file
                if c.status()["step"] >= 3:
                    break
                time.sleep(0.05)
            paused = c.pause()
            check("pause: the run is paused at a step boundary", paused["state"] == "paused" and c.status()["state"] == "paused")
            box = ((0.1, 0.05, 0), (0.9, 0.35, 0))
            w = c.window(box, 2000, ["u", "p"], time="live")
            names = [q["name"] for q in c.parameters()]
            check("parameters name physics.nu", "physics.nu" in names, names)
            s = c.set({"physics.nu": 0.0015})
            c.resume()
            for _ in range(300):
                if c.status()["step"] > s["step"] + 1:
                    break
                time.sleep(0.05)
            stopped = c.stop()
            check("set, resume, stop: the run stops", stopped["state"] in ("stopping", "finished"), stopped)
        check("the job exits 0 after stop", p.wait(timeout=120) == 0, open("live.log").read()[-400:])
        run = rewind.open("live.h5")
        mine = run.step(w.step).window(box, 2000, ["u", "p"])
        keys = ("uid", "level", "first", "count", "stride", "origin", "spacing")
        check("the live window (paused) equals the file's step read by rewind.open, value by value",
              [[q[k] for k in keys] for q in w.pieces] == [[q[k] for k in keys] for q in mine.pieces]
              and all(np.array_equal(w.values[v], mine.values[v]) for v in ("u", "p")), (w, mine))
        # The set arrived at the boundary after step s["step"] - 1, before that step was written
        # (the live link is the run's first observer): a restart from it computes with the new value.
        marks = {st.number: "physics.nu=0.0015" in st.case_overrides for st in run}
        check("case_overrides: the steps written from the set's boundary on carry it, those before do not",
              all(m == (n >= s["step"] - 1) for n, m in marks.items()) and any(marks.values()) and not all(marks.values()),
              (s, marks))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()

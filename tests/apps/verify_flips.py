"""A bounded byte-flip campaign against `rewind verify`.

    verify_flips.py REWIND WORKDIR [SEED] [SECONDS]   (works in a fresh folder inside WORKDIR)

Writes a small run (checkpoints 0 and 4, a visualisation step 2), then flips one byte at
a time in a copy: in every dataset of a checkpoint and of the visualisation step, in the
step index, in /common's datasets, in attributes of a step and of /common (located in
their object headers), and at random places of the file's metadata (bytes that belong
to no dataset's raw data), with a fixed seed. Each byte is found with h5py (dataset
offsets, the index's chunk), independently of Rewind. For every flip it runs `rewind
verify` and then a window of each step and a restart from each checkpoint (1 step),
compared with the same of the undamaged file (window values and cell types exactly,
restarts with `rewind diff`); after a flip in a step's attributes `rewind info` must say
the step is damaged. A flip passes when verify exits 1 naming the damaged step
(and the dataset, for a step's dataset) or the file, OR when verify exits 0 and every
window and restart is bit-identical to the undamaged file's (harmless damage).

Prints one line per flip and the matrix (kind of damage x verify's verdict x what the
windows and restarts then did); exits 1 if any flip fails. SECONDS (default 75) bounds
the campaign: flips not reached in time are reported as skipped.
"""
import atexit
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import h5py

REWIND, WORK = sys.argv[1], sys.argv[2]
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 31
BUDGET = float(sys.argv[4]) if len(sys.argv) > 4 else 75.0
CASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cases", "default.toml")
HERE = tempfile.mkdtemp(dir=WORK)  # a fresh folder, removed at the end
atexit.register(shutil.rmtree, HERE, True)
os.chdir(HERE)


def run(*args, timeout=60):
    p = subprocess.run([REWIND, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).strip()


rc, out = run("run", CASE, "--output", "a.h5", "--steps", "4", "--set", "output.checkpoint_interval=0.004",
              "--set", "output.visualisation_interval=0.002", "-q")
assert rc == 0, out
with h5py.File("a.h5", "r") as f:
    steps = {int(g.attrs["step"]): g.attrs["kind"].decode() if isinstance(g.attrs["kind"], bytes) else g.attrs["kind"]
             for k, g in f["simulation"].items() if k.startswith("step_")}
assert sorted(steps) == [0, 2, 4], steps
CHECKPOINTS = [s for s in sorted(steps) if steps[s] == "checkpoint"]


def window(path, step):
    rc, out = run("window", f"{path}@{step}", "--box", "-9,-9,-9,9,9,9", "--budget", "10000000", "--vars", "u,v,p", "--out", "w.json")
    if rc != 0:
        return None, out
    with open("w.json") as f:
        d = json.load(f)
    d.pop("file", None)
    return d, out


def restart(path, step, out_file):
    if os.path.exists(out_file):
        os.remove(out_file)
    return run("run", "--restart", f"{path}@{step}", "--steps", "1", "--output", out_file, "-q", "--force")


REF_WINDOWS = {s: window("a.h5", s)[0] for s in steps}
for s in CHECKPOINTS:
    rc, out = restart("a.h5", s, f"ref{s}.h5")
    assert rc == 0, out


def outcomes(path, which):
    """What a window of each step in `which` and a restart from each of its checkpoints did."""
    res = []
    for s in which:
        d, out = window(path, s)
        res.append(("window", s, "refused" if d is None else "identical" if d == REF_WINDOWS[s] else "DIFFERENT", out))
        if s in CHECKPOINTS:
            rc, out = restart(path, s, "r.h5")
            if rc != 0:
                res.append(("restart", s, "refused" if rc < 128 else "CRASHED", out))
            else:
                same, diff = run("diff", "r.h5", f"ref{s}.h5")
                res.append(("restart", s, "identical" if same == 0 else "DIFFERENT", diff))
    return res


# ---- where the bytes are (h5py, independent of Rewind) ----------------------------
targets = []  # (kind, step or None, dataset path or None, offset)
raw = []  # raw-data ranges: no random metadata flip lands there
rng = random.Random(SEED)
with h5py.File("a.h5", "r") as f:
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            if obj.chunks is None:
                at, n = obj.id.get_offset(), obj.id.get_storage_size()
            else:
                info = obj.id.get_chunk_info(0)
                at, n = info.byte_offset, info.size
            if at is not None and n > 0:
                raw.append((at, at + n))
            return at, n
        return None, 0

    datasets = {}
    f.visititems(lambda name, obj: datasets.__setitem__("/" + name, visit(name, obj)) if isinstance(obj, h5py.Dataset) else None)
    for s in (4, 2):  # every dataset of the checkpoint; the visualisation step's tree and a field
        prefix = f"/simulation/step_{s:08d}/"
        for path, (at, n) in sorted(datasets.items()):
            if s == 2 and path[len(prefix):] not in ("level_offsets", "uid", "cell_type", "cell_data/u"):
                continue
            if path.startswith(prefix) and at is not None and n > 0:
                targets.append((f"step dataset {path[len(prefix):]}", s, path[len(prefix):], at + rng.randrange(n)))
    for path in ("/common/case_file", "/common/variable_names", "/common/variable_units"):
        at, n = datasets[path]
        targets.append((f"common dataset {path}", None, path, at + rng.randrange(n)))
    at, n = datasets["/simulation/index"]
    idx = f["simulation/index"].dtype
    for field in ("step", "time", "kind", "committed", "n_grids"):  # a byte of a field of a row, as stored
        row, width = rng.randrange(len(steps)), idx.fields[field][0].itemsize
        targets.append((f"index row field {field}", None, "index",
                        at + row * idx.itemsize + idx.fields[field][1] + rng.randrange(width)))

    def attribute_value(obj, name, count=1):
        """Offsets of the value bytes of attribute `name` of `obj` (in its object header)."""
        addr = h5py.h5o.get_info(obj.id).addr
        with open("a.h5", "rb") as fb:
            fb.seek(addr)
            blob = fb.read(1 << 16)
        key = name.encode() + b"\0"
        i = blob.find(key)
        while i >= 8:
            # attribute message v3: version, flags, name size, datatype size, dataspace size, encoding, name
            ver, _, nsize, tsize, ssize = struct.unpack_from("<BBHHH", blob, i - 9)
            if ver == 3 and nsize == len(key):
                data = addr + i + nsize + tsize + ssize
                return [data + k for k in range(count)]
            i = blob.find(key, i + 1)
        return []

    g4 = f["simulation/step_00000004"]
    for name, size in (("time", 8), ("dt", 8), ("step", 8), ("n_grids", 8), ("n_levels", 8), ("bytes", 8),
                       ("committed", 1), ("kind", 4), ("leaf_grids_per_level", 8), ("monitor_state", 8)):
        for at in attribute_value(g4, name, size)[size // 2:size // 2 + 1]:
            targets.append((f"step attribute {name}", 4, name, at))
    for name, size in (("domain", 48), ("block_cells", 24), ("max_children", 8)):
        for at in attribute_value(f["common"], name, size)[size // 3:size // 3 + 1]:
            targets.append((f"common attribute {name}", None, name, at))
targets.append(("superblock signature", None, None, rng.randrange(8)))
targets.append(("superblock (after the signature)", None, None, 8 + rng.randrange(40)))
size = os.path.getsize("a.h5")
raw.sort()
picked = 0
while picked < 10:
    at = rng.randrange(size)
    if not any(a <= at < b for a, b in raw):
        targets.append(("metadata (random byte)", None, None, at))
        picked += 1

# ---- the campaign -----------------------------------------------------------------
matrix, failures, done, t0 = {}, [], 0, time.monotonic()
for kind, step, dataset, at in targets:
    if time.monotonic() - t0 > BUDGET:
        break
    shutil.copyfile("a.h5", "d.h5")
    with open("d.h5", "r+b") as fb:
        fb.seek(at)
        old = fb.read(1)[0]
        fb.seek(at)
        fb.write(bytes([old ^ (1 << rng.randrange(8))]))
    rc, out = run("verify", "d.h5")
    damaged = [line for line in out.splitlines() if "DAMAGED" in line]
    if rc == 1:
        names_it = bool(damaged)
        if step is not None:
            names_it = any(line.startswith("step") and f" {step} " in f" {line.split()[1]} " or f"step {step}" in line
                           for line in damaged)
            if kind.startswith("step dataset") and dataset != "checksums":
                names_it = names_it and any(dataset in line for line in damaged)
        verdict = "damaged (exit 1)" if names_it else "damaged, unnamed"
    else:
        verdict = {0: "ok (exit 0)", 2: "error (exit 2)"}.get(rc, f"exit {rc}")
    which = sorted(steps) if step is None or rc != 1 else [step]
    res = outcomes("d.h5", which)
    then = sorted({r[2] for r in res})
    harmless = all(r[2] == "identical" for r in res)
    ok = verdict == "damaged (exit 1)" or (rc == 0 and harmless)
    if any(r[2] == "CRASHED" for r in res):
        ok = False
    if kind.startswith("step attribute"):  # `rewind info` must not show the step as merely uncommitted
        rc_info, info = run("info", "d.h5")
        if rc_info == 0 and "DAMAGED" not in info:
            ok = False
            out += "\nrewind info does not say the step is damaged:\n" + info
    done += 1
    key = (kind if not kind.startswith("metadata") else kind, verdict, "/".join(then))
    matrix[key] = matrix.get(key, 0) + 1
    line = damaged[0] if damaged else out.splitlines()[-1] if out else ""
    print(f"{'ok  ' if ok else 'FAIL'} byte {at:>8} {kind:<36} verify: {verdict:<18} then: {'/'.join(then):<20} | {line[:110]}")
    if not ok:
        failures.append((kind, at, out, res))

print(f"\nmatrix (seed {SEED}): kind of damage | verify's verdict | what windows and restarts then did | flips")
for (kind, verdict, then), n in sorted(matrix.items()):
    print(f"  {kind:<38} | {verdict:<18} | {then:<22} | {n}")
detected = sum(n for (k, v, t), n in matrix.items() if v == "damaged (exit 1)")
print(f"{done} of {len(targets)} flips in {time.monotonic() - t0:.0f} s: {detected} reported as damage (exit 1), "
      f"{done - detected - len(failures)} harmless (verify 0, windows and restarts identical), {len(failures)} failed"
      + (f"; {len(targets) - done} skipped (time budget)" if done < len(targets) else ""))
for kind, at, out, res in failures[:5]:
    print(f"\nFAILED {kind} at byte {at}:\n{out}\n" + "\n".join(f"  {r[0]} {r[1]}: {r[2]}: {r[3][:200]}" for r in res))
sys.exit(1 if failures else 0)

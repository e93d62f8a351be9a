"""OpenVisus (PyPI openvisusnogui) as the multiresolution peer of the sliding-window
benchmark (bench/window/HISTORY.md, "Sliding windows (offline)"). Run with the venv's python.

  visus_bench.py convert FILE.h5 OUT.idx [--var p] [--compression raw|zip]
      the finest level of FILE's latest step as one float64 IDX field (conversion time
      printed, never counted in latencies)
  visus_bench.py run --round R --plan PLAN IDX...
      one round: whole-domain reads with the value count of rewind's answer (from PLAN,
      the `plan` lines of rewind_bench_window), warm and cold, printed as
      `m <round> <stem> <who> <warm|cold> <budget> <ms> <values>`; then `vzoom` lines: the
      1/64-volume box read at the same resolution.
who: visus (LoadDataset + read, like a one-shot `rewind window`), visus_open (read on a
loaded dataset with a reused access, like a `rewind serve` session)."""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pagecache import evict, parse_plan  # noqa: E402


def stem(p):
    return os.path.splitext(os.path.basename(p))[0]


def convert(a):
    import h5py
    import OpenVisus as ov

    t0 = time.perf_counter()
    with h5py.File(a.h5, "r") as f:
        c = f["common"]
        s = [int(x) for x in c.attrs["block_cells"]]
        dom = [float(x) for x in c.attrs["domain"]]
        steps = sorted(k for k in f["simulation"] if k.startswith("step_"))
        g = f["simulation"][steps[-1]]
        off = g["level_offsets"][:]
        deepest = len(off) - 2
        rows = slice(int(off[deepest]), int(off[deepest + 1]))
        data = g["cell_data"][a.var][rows]          # (n, sz, sy, sx)
        bbox = g["bounding_box"][rows]
    n = [s[i] << deepest for i in range(3)]          # leaf cells per axis x, y, z
    field = np.empty((n[2], n[1], n[0]), dtype=np.float64)
    for i in range(data.shape[0]):
        o = [int(round((bbox[i, 2 * ax] - dom[2 * ax]) / (dom[2 * ax + 1] - dom[2 * ax]) * n[ax])) for ax in range(3)]
        field[o[2]:o[2] + s[2], o[1]:o[1] + s[1], o[0]:o[0] + s[0]] = data[i]
    t1 = time.perf_counter()
    db = ov.CreateIdx(url=a.idx, dim=3, data=field, compression=[a.compression])
    t2 = time.perf_counter()
    check = ov.LoadDataset(a.idx).read(quality=0)
    ok = check.shape == field.shape and np.array_equal(check, field)
    print(f"convert {a.h5} -> {a.idx}: {field.shape[::-1]} float64, assemble {t1 - t0:.1f} s, "
          f"IDX write ({a.compression}) {t2 - t1:.1f} s, {sum(map(du, idx_files(a.idx))) / 1e9:.2f} GB, "
          f"full read back equal: {ok}")
    del db
    return 0 if ok else 1


def du(p):
    if not os.path.isdir(p):
        return os.path.getsize(p)
    return sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(p) for n in ns)


def idx_files(url):
    d, p = os.path.dirname(os.path.abspath(url)), stem(url)
    return [url] + ([os.path.join(d, p)] if os.path.isdir(os.path.join(d, p)) else [])


def quality_for(leaf, counts):
    """Quality (-3 per halving of every axis) whose answer has `counts` values per axis."""
    f = [leaf[i] / counts[i] for i in range(3)]
    m = math.log2(f[0])
    if any(abs(x - f[0]) > 1e-9 for x in f) or abs(m - round(m)) > 1e-9:
        return None
    return -3 * int(round(m))


def run(a):
    import OpenVisus as ov

    plan = parse_plan(a.plan)
    for url in a.idx:
        name = stem(url)
        db = ov.LoadDataset(url)
        access = db.createAccess()
        budgets = sorted(b for (s, b) in plan if s == name)
        for b in budgets:
            p = plan[(name, b)]
            q = quality_for(p["leaf"], p["counts"])
            if q is None:
                print(f"# {name} {b}: rewind's answer {p['counts']} is no IDX resolution", file=sys.stderr)
                continue
            calls = [("visus", lambda q=q: ov.LoadDataset(url).read(quality=q)),
                     ("visus_open", lambda q=q: db.read(quality=q, access=access))]
            calls = calls[a.round % 2:] + calls[:a.round % 2]
            for cache in ("warm", "cold"):
                for who, call in calls:
                    ts, d = [], None
                    if cache == "warm":
                        call()
                    for _ in range(1 if cache == "cold" else a.reps):
                        if cache == "cold":
                            evict(*idx_files(url))
                        t0 = time.perf_counter()
                        d = call()
                        ts.append((time.perf_counter() - t0) * 1e3)
                    ts.sort()
                    if d.shape[::-1] != p["counts"]:
                        print(f"# warning: {who} {name} {b}: shape {d.shape[::-1]} != rewind's {p['counts']}", file=sys.stderr)
                    print(f"m {a.round} {name} {who} {cache} {b} {ts[len(ts) // 2]:.3f} {d.size}", flush=True)
            # Zoom: the 1/64-volume box (3/8 .. 5/8 of each axis) at the same resolution.
            leaf = p["leaf"]
            box = [(3 * n // 8, 5 * n // 8) for n in leaf]
            z = db.read(x=box[0], y=box[1], z=box[2], quality=q, access=access)
            whole_h = leaf[0] / p["counts"][0]
            zoom_h = (box[0][1] - box[0][0]) / z.shape[2]
            print(f"vzoom {name} {b} {d.size} {z.size} {z.shape[2]} {z.shape[1]} {z.shape[0]} {whole_h / zoom_h:.3g}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("convert")
    c.add_argument("h5")
    c.add_argument("idx")
    c.add_argument("--var", default="p")
    c.add_argument("--compression", default="raw")
    r = sub.add_parser("run")
    r.add_argument("--round", type=int, default=0)
    r.add_argument("--plan", required=True)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("idx", nargs="+")
    a = ap.parse_args()
    return convert(a) if a.mode == "convert" else run(a)


if __name__ == "__main__":
    sys.exit(main())

"""One-shot RunFile.window latency of two builds of the Python package, side by side.

    /usr/bin/python3 bench/window/python_cold.py OLD_PYTHON_DIR NEW_PYTHON_DIR FILE ROUNDS BUDGET...

OLD/NEW_PYTHON_DIR: folders holding a `rewind` package (e.g. another worktree's python/).
For each round, cache state and budget, a fresh python per package (order alternating by
round) times rewind.open(FILE).window(None, BUDGET, ["p"]): cold = fsync +
POSIX_FADV_DONTNEED of FILE right before (the guest's page cache only), warm = one
untimed window first. Prints every measurement ("m" lines) and a table: medians, and the
median of the per-round ratios old/new (> 1: new faster). bench/window/HISTORY.md, §5 "Python windows read only the topology rows they visit".
"""
import os, subprocess, sys, json, statistics
old, new, f, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
budgets = [int(b) for b in sys.argv[5:]]
CHILD = r'''
import os, sys, time, json
sys.path.insert(0, sys.argv[1])
import rewind
f, budget, cold = sys.argv[2], int(sys.argv[3]), sys.argv[4] == "cold"
fd = os.open(f, os.O_RDONLY)
if cold:
    os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
else:
    rewind.open(f).window(None, budget, ["p"])  # untimed, warms the OS cache
t0 = time.perf_counter()
run = rewind.open(f)
w = run.window(None, budget, ["p"])
dt = time.perf_counter() - t0
print(json.dumps({"ms": dt * 1e3, "cells": w.cells, "level": w.level, "pkg": rewind.__file__}))
'''
res = {}
for r in range(rounds):
    for cache in ("cold", "warm"):
        for b in budgets:
            order = (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old))
            for who, path in order:
                out = subprocess.run([sys.executable, "-c", CHILD, path, f, str(b), cache], capture_output=True, text=True)
                if out.returncode:
                    sys.exit(out.stderr)
                m = json.loads(out.stdout)
                res.setdefault((cache, b, who), []).append(m)
                print("m", r, cache, b, who, f"{m['ms']:.2f}", m["cells"], m["level"], flush=True)
print("| cache | budget | values | new ms | old ms | old/new (median of rounds) | rounds |")
print("|---|---:|---:|---:|---:|---:|---:|")
for cache in ("cold", "warm"):
    for b in budgets:
        o, n = res[(cache, b, "old")], res[(cache, b, "new")]
        assert all(x["cells"] == y["cells"] for x, y in zip(o, n))
        q = statistics.median(x["ms"] / y["ms"] for x, y in zip(o, n))
        print(f"| {cache} | {b:.0e} | {n[0]['cells']} | {statistics.median(x['ms'] for x in n):.1f} | "
              f"{statistics.median(x['ms'] for x in o):.1f} | {q:.2f} | {rounds} |")

"""(b) of the sliding-window benchmark: stock ParaView (pvpython, no plugin) opens the
VTKHDF view of a whole step (`<run>.views/step_*.hdf`, virtual datasets into the run
file) and reads its data: OpenDataFile + UpdatePipeline with only the benchmark's
variable enabled, every level (the reader's default). Run as

  pvpython pv_bench.py --round R [--var p] [--reps 1] RUN.h5...

and prints `m <round> <stem> paraview <warm|cold> 0 <ms> <cells read>`: cold first (the
run file and the view dropped from the page cache), then warm (the cold call left them
cached; a 10^8-cell step takes ~25 s per call, so no extra warm-up call)."""
import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pagecache import evict  # noqa: E402

from paraview import simple  # noqa: E402


def open_whole(view, var):
    r = simple.OpenDataFile(view)
    r.CellArrayStatus = [var]
    r.UpdatePipeline()
    n = r.GetDataInformation().GetNumberOfCells()
    simple.Delete(r)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--var", default="p")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    for run in a.runs:
        stem = os.path.splitext(os.path.basename(run))[0]
        view = sorted(glob.glob(os.path.join(os.path.dirname(run), stem + ".views", "step_*.hdf")))[-1]
        for cache in ("cold", "warm"):
            ts, n = [], 0
            for _ in range(1 if cache == "cold" else a.reps):
                if cache == "cold":
                    evict(run, view)
                t0 = time.perf_counter()
                n = open_whole(view, a.var)
                ts.append((time.perf_counter() - t0) * 1e3)
            ts.sort()
            print(f"m {a.round} {stem} paraview {cache} 0 {ts[len(ts) // 2]:.3f} {n}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The h5py + numpy oracle of a restart's checkpoint (no Rewind code): from a run file's
/simulation/index, the checkpoint a restart at SEL must take ("latest": the last
checkpoint; "t=T": the last checkpoint at or before the last step at or before T), and
the step each branch file names in /common/lineage. Exit 0 when every branch names it.
  restart_oracle.py RUN.h5 SEL BRANCH.h5 [BRANCH.h5 ...]
  restart_oracle.py RUN.h5 --last-kind   prints the kind of the file's last step"""
import sys

import h5py
import numpy as np


def index(path):
    with h5py.File(path, "r") as f:
        ix = f["simulation/index"][...]
    order = np.argsort(ix["step"])
    return ix["step"][order], ix["time"][order], np.asarray(ix["kind"][order], dtype=int)


def expected(path, sel):
    steps, times, kinds = index(path)
    last = len(steps) - 1
    if sel.startswith("t="):
        t = float(sel[2:])
        last = int(np.nonzero(times <= t * (1 + 1e-12))[0][-1])
    cps = [i for i in range(last + 1) if kinds[i] == 1]
    return int(steps[cps[-1]])


def main():
    run = sys.argv[1]
    if sys.argv[2] == "--last-kind":
        print(["visualisation", "checkpoint"][index(run)[2][-1]])
        return 0
    want, bad = expected(run, sys.argv[2]), 0
    for branch in sys.argv[3:]:
        with h5py.File(branch, "r") as f:
            got = int(f["common/lineage"].attrs["parent_step"])
        if got != want:
            print(f"{branch}: branched from step {got}, the restart at {sys.argv[2]} takes checkpoint {want}")
            bad = 1
    print(f"checkpoint {want}")
    return bad


sys.exit(main())

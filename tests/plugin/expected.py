# What the plugin must show, read straight from the file with h5py (no Rewind code).
# The level-of-detail cut's values are what the leaves imply (tests/support/lod_oracle.py:
# a parent is the average of its children), not the file's stored parents: a plugin and
# a file that agree could both be stale.
import json, os, sys
import h5py, numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import lod_oracle  # noqa: E402

path, out = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    steps = [f["simulation"][g] for g in sorted(f["simulation"]) if g.startswith("step_")]
    steps = [s for s in steps if int(s.attrs["committed"]) == 1]
    last = steps[-1]
    level = last["level"][...]
    leaf = np.all(last["child_rows"][...] < 0, axis=1)
    u = last["cell_data"]["u"][...]
    implied = lod_oracle.implied(lod_oracle.Topology(last, lod_oracle.block_of(f)), u.astype(np.float64))
    lod1 = (level == 1) | (leaf & (level < 1))
    json.dump({
        "times": [float(s.attrs["time"]) for s in steps],
        "variables": sorted(last["cell_data"]),
        "levels": int(level.max()) + 1,
        "leaves_per_level": [int(np.sum(leaf & (level == l))) for l in range(int(level.max()) + 1)],
        "leaf_u_sum": float(u[leaf].sum()),
        "lod1_grids": int(lod1.sum()),
        "lod1_u_sum": float(sum(implied[r].sum() for r in np.flatnonzero(lod1))),
        # the level cut at every MaximumLevel: grids on that level, and leaves above it
        "lod_u_sums": [float(sum(implied[r].sum() for r in np.flatnonzero((level == m) | (leaf & (level < m)))))
                       for m in range(int(level.max()) + 1)],
        "cells_per_grid": int(np.prod(u.shape[1:])),
    }, open(out, "w"))

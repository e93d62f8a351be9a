# What the plugin must show, read straight from the file with h5py (no Rewind code).
import json, sys
import h5py, numpy as np

path, out = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    steps = [f["simulation"][g] for g in sorted(f["simulation"]) if g.startswith("step_")]
    steps = [s for s in steps if int(s.attrs["committed"]) == 1]
    last = steps[-1]
    level = last["level"][...]
    leaf = np.all(last["child_rows"][...] < 0, axis=1)
    u = last["cell_data"]["u"][...]
    lod1 = (level == 1) | (leaf & (level < 1))
    json.dump({
        "times": [float(s.attrs["time"]) for s in steps],
        "variables": sorted(last["cell_data"]),
        "levels": int(level.max()) + 1,
        "leaves_per_level": [int(np.sum(leaf & (level == l))) for l in range(int(level.max()) + 1)],
        "leaf_u_sum": float(u[leaf].sum()),
        "lod1_grids": int(lod1.sum()),
        "lod1_u_sum": float(u[lod1].sum()),
        "cells_per_grid": int(np.prod(u.shape[1:])),
    }, open(out, "w"))

"""What `rewind diff A B --time T` must report, from h5py and numpy alone (no Rewind code).

In each file the step in force at T (the last committed step at or before T); grids
matched by uid; a cell counts unless cell_type is 1 (solid) in either file (or every cell
with --all-cells). Per variable of cell_data: max |A-B| and the cells that differ over
the counted cells of every matched grid; L2 = sqrt(sum V (A-B)^2) and relative L2 =
L2(A-B) / L2(A) over the counted cells of grids that are leaves in both (V: the cell's
volume from bounding_box and block_cells).

usage: diff_oracle.py A.h5 B.h5 T [--all-cells]
prints "step A B", "cells COUNTED ALL" and per variable "VAR MAX L2 REL DIFFER" (JSON lines).
"""
import json
import sys

import h5py
import numpy as np


def step_in_force(h5, t):
    index = h5["/simulation/index"][:]
    rows = [r for r in index if int(r["committed"]) == 1 and float(r["time"]) <= t * (1 + 1e-12) + 1e-300]
    return max(rows, key=lambda r: float(r["time"]))["step"] if rows else None


def load(path, t):
    h5 = h5py.File(path, "r")
    step = int(step_in_force(h5, t))
    return h5, step, h5[f"/simulation/step_{step:08d}"]


def main():
    pa, pb, t = sys.argv[1], sys.argv[2], float(sys.argv[3])
    all_cells = "--all-cells" in sys.argv
    fa, sa, ga = load(pa, t)
    fb, sb, gb = load(pb, t)
    row_b = {int(u): r for r, u in enumerate(gb["uid"][:])}
    ra = np.array([r for r, u in enumerate(ga["uid"][:]) if int(u) in row_b])
    rb = np.array([row_b[int(u)] for u in ga["uid"][:][ra]])
    leaf = (ga["child_rows"][:][ra] < 0).all(axis=1) & (gb["child_rows"][:][rb] < 0).all(axis=1)
    block = np.array(fa["/common"].attrs["block_cells"], dtype=float)
    box = ga["bounding_box"][:][ra]
    ext = box[:, 1::2] - box[:, 0::2]
    vol = np.prod(np.where(ext > 0, ext / block, 1.0), axis=1) * leaf
    ncell = int(np.prod(block))
    ta = ga["cell_type"][:].reshape(len(ga["uid"]), ncell)[ra]
    tb = gb["cell_type"][:].reshape(len(gb["uid"]), ncell)[rb]
    counted = np.ones_like(ta, dtype=bool) if all_cells else (ta != 1) & (tb != 1)
    weight = np.repeat(vol[:, None], ncell, axis=1) * counted
    print(json.dumps({"step": [sa, sb], "cells": [int(counted.sum()), int(counted.size)]}))
    for name in ga["cell_data"]:
        if name not in gb["cell_data"]:
            continue
        a = ga["cell_data"][name][:].reshape(len(ga["uid"]), ncell)[ra].astype(np.float64)
        b = gb["cell_data"][name][:].reshape(len(gb["uid"]), ncell)[rb].astype(np.float64)
        d = np.abs(a - b)
        l2d, l2a = np.sqrt((weight * d * d).sum()), np.sqrt((weight * a * a).sum())
        print(json.dumps({"var": name, "max": float(d[counted].max()), "l2": float(l2d),
                          "rel": float(l2d / l2a) if l2a > 0 else None, "differ": int((counted & (d != 0)).sum())}))


if __name__ == "__main__":
    main()

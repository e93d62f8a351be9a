"""The adaptive window oracle: a uniform and an adaptive window of one step (`rewind window
--out W.json`, same box and budget), checked against the file with h5py and numpy only.

- each window holds at most BUDGET cells per variable, and every piece's values are the
  file's cells of its grid (row, first, count, stride), bit for bit; no two pieces overlap
  (an adaptive window may show a grid in several pieces, format 1.10's shares);
- the adaptive one says it answered adaptively (lod "adaptive");
- (unless the root alone overflows the budget: then both are the same level-0 subsample)
  its relative L2 error against the leaves, over the non-solid leaf cells, is no larger than
  the uniform one's. The error is computed on the lattice of the finest cells: each leaf
  cell and each returned cell painted onto the lattice cells it covers (equal volumes), the
  window's value compared with the leaf's at every non-solid lattice cell the box covers
  (whose centre lies in BOX when it is given, the same cells for both windows: a window's
  cells reach past a box that cuts them, each window's by another amount; else every
  lattice cell the window paints).

usage: window_error_oracle.py FILE.h5 UNIFORM.json ADAPTIVE.json BUDGET [X0,Y0,Z0,X1,Y1,Z1]
Prints "budget B: uniform E_u (n_u cells), adaptive E_a (n_a cells), ratio R"; exit 0 when
every point holds, 1 otherwise (one line each), 2 on bad input.
"""
import json
import sys

import h5py
import numpy as np


def load(path):
    with open(path) as f:
        return json.load(f)


def lattice_of(bbox, block):
    """Root box lower corner and the finest cell size per axis (x, y, z)."""
    ext = np.stack([bbox[:, 1] - bbox[:, 0], bbox[:, 3] - bbox[:, 2], bbox[:, 5] - bbox[:, 4]], axis=1)
    h = (ext / np.array(block, dtype=float)).min(axis=0)
    lo = np.array([bbox[:, 0].min(), bbox[:, 2].min(), bbox[:, 4].min()])
    n = np.rint((np.array([bbox[:, 1].max(), bbox[:, 3].max(), bbox[:, 5].max()]) - lo) / h).astype(int)
    return lo, h, n


def paint(target, lo, h, box_lo, cell, values):
    """Paint `values` (z, y, x) of cells of size `cell` from corner box_lo onto the lattice."""
    start = np.rint((np.asarray(box_lo) - lo) / h).astype(int)
    rep = np.rint(np.asarray(cell) / h).astype(int)
    v = values.repeat(rep[2], axis=0).repeat(rep[1], axis=1).repeat(rep[0], axis=2)
    target[start[2]:start[2] + v.shape[0], start[1]:start[1] + v.shape[1], start[0]:start[0] + v.shape[2]] = v


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__)
        return 2
    path, upath, apath, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    box = [float(v) for v in sys.argv[5].split(",")] if len(sys.argv) == 6 else None
    problems = []
    with h5py.File(path, "r") as h5:
        block = tuple(int(v) for v in h5["/common"].attrs["block_cells"])  # (sx, sy, sz)
        wins = {"uniform": load(upath), "adaptive": load(apath)}
        g = h5[f"/simulation/step_{wins['uniform']['step']:08d}"]
        var = wins["uniform"]["variables"][0]
        data = g[f"cell_data/{var}"][()].astype(np.float64)
        types = g["cell_type"][()] if "cell_type" in g else np.zeros(data.shape, dtype=np.uint8)
        bbox = g["bounding_box"][()]
        leaf = ~(g["child_rows"][()] >= 0).any(axis=1)
        lo, h, n = lattice_of(bbox, block)
        shape = (n[2], n[1], n[0])
        truth = np.full(shape, np.nan)
        fluid = np.zeros(shape, dtype=bool)
        for r in np.flatnonzero(leaf):
            b = bbox[r]
            cell = ((b[1] - b[0]) / block[0], (b[3] - b[2]) / block[1], (b[5] - b[4]) / block[2])
            paint(truth, lo, h, (b[0], b[2], b[4]), cell, data[r])
            paint(fluid, lo, h, (b[0], b[2], b[4]), cell, types[r] != 1)
        inbox = np.ones(shape, dtype=bool)
        if box is not None:  # lattice cells whose centre lies in the box (a flat axis: all)
            for a, axis in enumerate((2, 1, 0)):  # x, y, z -> array axes
                if box[a + 3] > box[a]:
                    centre = lo[a] + (np.arange(shape[axis]) + 0.5) * h[a]
                    inside = (centre >= box[a]) & (centre <= box[a + 3])
                    inbox &= inside.reshape([-1 if i == axis else 1 for i in range(3)])
        errors = {}
        for rule, w in wins.items():
            if w["cells"] > budget:
                problems.append(f"{rule}: {w['cells']} cells, over the budget {budget}")
            if w["step"] != wins["uniform"]["step"] or w["variables"][0] != var:
                problems.append(f"{rule}: another step or variable than the uniform window's")
            got = np.full(shape, np.nan)
            painted = np.zeros(shape, dtype=np.int32)  # pieces over each lattice cell: at most one
            values = np.asarray(w["values"][0], dtype=np.float64)
            offset = 0
            for p in w["pieces"]:
                (fx, fy, fz), (cx, cy, cz), s = p["first"], p["count"], p["stride"]
                k = cx * cy * cz
                want = data[p["row"]][fz:fz + cz * s:s, fy:fy + cy * s:s, fx:fx + cx * s:s]
                piece = values[offset:offset + k]
                if piece.shape != (want.size,) or not np.array_equal(piece, want.ravel()):
                    problems.append(f"{rule}: piece of row {p['row']} is not the file's cells")
                if s == 1:
                    b = bbox[p["row"]]
                    cell = ((b[1] - b[0]) / block[0], (b[3] - b[2]) / block[1], (b[5] - b[4]) / block[2])
                    corner = (b[0] + fx * cell[0], b[2] + fy * cell[1], b[4] + fz * cell[2])
                    paint(got, lo, h, corner, cell, piece.reshape(cz, cy, cx))
                    st = np.rint((np.asarray(corner) - lo) / h).astype(int)
                    ext = np.rint(np.asarray(cell) / h).astype(int) * (cx, cy, cz)
                    painted[st[2]:st[2] + ext[2], st[1]:st[1] + ext[1], st[0]:st[0] + ext[0]] += 1
                offset += k
            if offset != len(values):
                problems.append(f"{rule}: {len(values)} values for pieces of {offset} cells")
            if painted.max(initial=0) > 1:
                problems.append(f"{rule}: pieces overlap (a grid's parts, or two grids, shown twice)")
            if any(p["stride"] > 1 for p in w["pieces"]):
                continue
            seen = fluid & ~np.isnan(got) & inbox
            if box is not None and (fluid & inbox & np.isnan(got)).any():
                problems.append(f"{rule}: leaves fluid cells of the box uncovered")
            if not seen.any():
                problems.append(f"{rule}: covers no fluid cell")
                continue
            errors[rule] = float(np.sqrt(((got[seen] - truth[seen]) ** 2).sum() / (truth[seen] ** 2).sum()))
        strided = any(p["stride"] > 1 for w in wins.values() for p in w["pieces"])
        if strided:  # the root's cells overflow the budget: a level-0 subsample answers for both rules
            errors = {}
            if wins["uniform"]["pieces"] != wins["adaptive"]["pieces"] or wins["uniform"]["values"] != wins["adaptive"]["values"]:
                problems.append(f"budget {budget}: the root overflows, but the two windows differ")
            else:
                print(f"budget {budget}: the root's cells overflow it; both windows are the same level-0 subsample")
        elif wins["adaptive"].get("lod") != "adaptive":
            problems.append(f"the adaptive window says lod {wins['adaptive'].get('lod')!r}")
        if len(errors) == 2:
            eu, ea = errors["uniform"], errors["adaptive"]
            print(f"budget {budget}: uniform {eu:.4g} ({wins['uniform']['cells']} cells), "
                  f"adaptive {ea:.4g} ({wins['adaptive']['cells']} cells), ratio {ea / eu if eu > 0 else 1.0:.3f}")
            if ea > eu * (1 + 1e-9) + 1e-300:
                problems.append(f"budget {budget}: the adaptive window's error {ea:.6g} exceeds the uniform one's {eu:.6g}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""h5py + numpy oracle of a restart onto a refined tree (no Rewind code).

  refined_restart.py PARENT.h5 BRANCH.h5 STEP REGION ...

REGION: disc:CX,CY,R,LEVEL or box:X0,X1,Y0,Y1,LEVEL (the branch's added [[tree.refine]]).
The branch's first step must be the parent's checkpoint STEP on the refined tree:
  - the same step and time; every grid of the parent in it, its cells bit for bit where it
    stays a leaf (up to round-off where it was split: it then holds its children's mean);
  - every leaf that meets a region at least at the region's level;
  - every added grid equal to the parent's complete finest level interpolated down level
    by level as the docs say (central slopes, one-sided at a domain face, x then y;
    tolerance 1e-12 of the field's range), and conservative: the branch's leaves average to
    each of the parent's finest cells.
A 2-D run whose parent is a uniform tree (its finest level complete). Prints one line per
check; exits 1 if any fails.
"""
import sys

import h5py
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 3)[0] + "/tests/support")
from finest_level import Checks, finest_arrays  # noqa: E402
from lod_oracle import committed_steps  # noqa: E402


def prolong(a):
    """One level down: u0 + slope_x * (+-1/4) + slope_y * (+-1/4), central slopes, one-sided
    at the domain's faces (np.gradient's; the forest's Interp::linear, in its order)."""
    sy, sx = np.gradient(a, axis=0), np.gradient(a, axis=1)
    ny, nx = a.shape
    out = np.empty((2 * ny, 2 * nx))
    for dj, oy in ((0, -0.25), (1, 0.25)):
        for di, ox in ((0, -0.25), (1, 0.25)):
            out[dj::2, di::2] = (a + sx * ox) + sy * oy
    return out


def main():
    parent_file, branch_file, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
    regions = []
    for spec in sys.argv[4:]:
        kind, nums = spec.split(":")
        v = [float(x) for x in nums.split(",")]
        regions.append((kind, v[:-1], int(v[-1])))
    check = Checks()
    P, B = h5py.File(parent_file, "r"), h5py.File(branch_file, "r")
    first = committed_steps(B)[0]
    gp, gb = P[f"/simulation/step_{step:08d}"], B[f"/simulation/step_{first:08d}"]
    check(first == step and gb.attrs["time"] == gp.attrs["time"],
          f"the branch's first step is the parent's step {step} at t = {gp.attrs['time']} (got {first})")

    names = sorted(gp["cell_data"].keys())
    up, ub = gp["uid"][:], gb["uid"][:]
    row_b = {int(u): r for r, u in enumerate(ub)}
    missing = [int(u) for u in up if int(u) not in row_b]
    check(not missing, f"all {len(up)} grids of the parent are in the branch ({len(ub)} grids)")
    # A stored leaf keeps its cells bit for bit; a stored grid the refinement split holds the
    # mean of its new children (the file's rule for every parent), equal up to round-off.
    leaf_b = (gb["child_rows"][:] < 0).all(axis=1)
    same, split, n_split = True, 0.0, 0
    for v in names:
        cp, cb = gp["cell_data/" + v][:], gb["cell_data/" + v][:]
        scale = max(np.abs(cp).max(), 1e-300)
        for r, u in enumerate(up):
            rb = row_b.get(int(u))
            if rb is None:
                continue
            if leaf_b[rb]:
                same &= np.array_equal(cp[r], cb[rb])
            else:
                split = max(split, np.abs(cp[r] - cb[rb]).max() / scale)
                n_split += 1
    check(same, f"... the stored grids that stay leaves: their cells ({', '.join(names)}) bit for bit as stored")
    check(n_split > 0 and split < 1e-13,
          f"... the {n_split // len(names)} stored grids now refined: as stored up to round-off ({split:.1e})")

    lev, bb = gb["level"][:], gb["bounding_box"][:]
    leaf = (gb["child_rows"][:] < 0).all(axis=1)
    short = 0
    for kind, v, level in regions:
        for r in np.where(leaf)[0]:
            x0, x1, y0, y1 = bb[r, 0], bb[r, 1], bb[r, 2], bb[r, 3]
            if kind == "disc":
                dx = max(x0 - v[0], 0.0, v[0] - x1)
                dy = max(y0 - v[1], 0.0, v[1] - y1)
                meets = dx * dx + dy * dy < v[2] * v[2]
            else:
                meets = x0 < v[1] and x1 > v[0] and y0 < v[3] and y1 > v[2]
            short += bool(meets and lev[r] < level)
    check(short == 0, f"every leaf that meets a region is at least at its level ({short} short; leaves per level "
          f"{np.bincount(lev[leaf]).tolist()})")

    # The oracle's levels: the parent's complete finest level (a uniform tree), interpolated down.
    x0, y0, hx, hy, parent = finest_arrays(gp, names)
    top = int(gp["level"][:].max())
    sy, sx = gp["cell_data/u"].shape[2:4]
    ny, nx = parent["u"].shape
    dom = (x0, y0)
    stored = {int(x) for x in up}
    added = [r for r, u in enumerate(ub) if int(u) not in stored]
    deepest = int(lev.max())
    fine = 2 ** (deepest - top)
    worst, cons, n_cells = 0.0, 0.0, 0
    for v in names:
        a = parent[v]
        scale = max(np.nanmax(a) - np.nanmin(a), 1e-300)
        oracle = {top: a}
        for L in range(top + 1, deepest + 1):
            oracle[L] = prolong(oracle[L - 1])
        bdata = gb["cell_data/" + v][:]
        for r in added:
            L = int(lev[r])
            h = (hx / 2 ** (L - top), hy / 2 ** (L - top))
            i, j = int(round((bb[r, 0] - dom[0]) / h[0])), int(round((bb[r, 2] - dom[1]) / h[1]))
            worst = max(worst, np.abs(bdata[r, 0] - oracle[L][j:j + sy, i:i + sx]).max() / scale)
            n_cells += sy * sx
        # Conservation, from the branch's leaves alone: spread every leaf over the deepest
        # level's cells, average back over each of the parent's finest cells.
        leaves = np.full((ny * fine, nx * fine), np.nan)
        for r in np.where(leaf)[0]:
            q = 2 ** (deepest - int(lev[r]))
            i = int(round((bb[r, 0] - dom[0]) / (hx / fine)))
            j = int(round((bb[r, 2] - dom[1]) / (hy / fine)))
            leaves[j:j + sy * q, i:i + sx * q] = np.kron(bdata[r, 0], np.ones((q, q)))
        means = leaves.reshape(ny, fine, nx, fine).mean(axis=(1, 3))
        cons = max(cons, np.abs(means - a).max() / scale)
    check(len(added) > 0 and worst < 1e-12,
          f"the {len(added)} added grids ({n_cells // max(len(names), 1)} cells) are the parent's level {top} "
          f"interpolated down (max difference {worst:.1e} of the field's range)")
    check(cons < 1e-12, f"... and conservative: the branch's leaves average to each of the parent's level-{top} "
          f"cells ({cons:.1e})")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())

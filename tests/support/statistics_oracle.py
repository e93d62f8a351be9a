"""The statistics oracle: each grid's min, max and detail, and its per-octant shares of its
parent's detail, computed from a Rewind file's cells with h5py and numpy only, against the
`statistics/<var>` and `shares/<var>` the writer stored (docs/file-format.md §3,
"Statistics"; formats 1.9 and 1.10).

Independent of Rewind's code: the cells, cell types, boxes and child rows as stored.
- min / max: numpy's over the grid's cells whose cell_type is not 1 (NaN when none);
- detail: sqrt of the sum over the grid's children of (child cell - the parent cell
  covering it)^2, the parent prolonged piecewise constant (numpy.repeat) onto each
  child's half, placed by the boxes; 0 for a leaf;
- shares: per child and octant o = ox + 2 oy + 4 oz of its cells (halves along each refined
  axis), sqrt of the sum over the octant's cells of (child cell - parent cell covering it)^2;
  the root's row 0; stored exactly where the statistics are and every refined axis's cell
  count is divisible by 4.

usage:
  statistics_oracle.py FILE.h5 [--expect-none] [--min-parents N]
Checks every committed step and every cell_data variable. --expect-none: the steps must
store no statistics (and still read). Exit 0 when everything agrees (prints one summary
line), 1 with one line per disagreement, 2 on bad input.
"""
import argparse
import sys

import h5py
import numpy as np

DETAIL_REL = 1e-9  # the writer sums in another order (and, across ranks, by moments)


def committed_steps(h5):
    index = h5["/simulation/index"][:]
    return [int(r["step"]) for r in index if int(r["committed"]) == 1]


def squares(data, bbox, r, c, block):
    """(child c - parent r prolonged)^2 over c's cells (sz, sy, sx), and the refinement of
    each axis (x, y, z): 2 or 1."""
    pb, cb = bbox[r], bbox[c]
    rep, sl = [], []
    for a, s in enumerate(block):  # x, y, z
        pext, cext = pb[2 * a + 1] - pb[2 * a], cb[2 * a + 1] - cb[2 * a]
        f = int(round(pext / cext))
        if f not in (1, 2):
            raise ValueError(f"row {c}: extent {cext} is no refinement of row {r}'s {pext}")
        half = 1 if f == 2 and cb[2 * a] - pb[2 * a] > 0.25 * pext else 0
        rep.append(f)
        sl.append(slice(half * s // f, (half + 1) * s // f) if f == 2 else slice(0, s))
    parent = data[r][sl[2], sl[1], sl[0]]
    prolonged = parent.repeat(rep[2], axis=0).repeat(rep[1], axis=1).repeat(rep[0], axis=2)
    return (data[c] - prolonged) ** 2, rep


def expected(g, var, block, nc):
    """(ng, 3) min, max, detail and (ng, nc) shares of `var` in step group g, from its cells."""
    sx, sy, sz = block
    data = g[f"cell_data/{var}"][()].astype(np.float64)  # (ng, sz, sy, sx), as stored
    types = g["cell_type"][()] if "cell_type" in g else np.zeros(data.shape, dtype=np.uint8)
    bbox = g["bounding_box"][()]
    child_rows = g["child_rows"][()]
    ng = data.shape[0]
    out = np.zeros((ng, 3))
    shares = np.zeros((ng, nc))
    for r in range(ng):
        fluid = data[r][types[r] != 1]
        out[r, 0:2] = (fluid.min(), fluid.max()) if fluid.size else (np.nan, np.nan)
        total = 0.0
        for c in (int(c) for c in child_rows[r] if c >= 0):
            sq, rep = squares(data, bbox, r, c, block)
            total += float(sq.sum())
            for o in range(nc):  # octant o: halves of c's cells along the refined axes
                bits = (o & 1, (o >> 1) & 1, (o >> 2) & 1)
                if any(b and f != 2 for b, f in zip(bits, rep)):
                    raise ValueError(f"row {c}: octant {o} along an axis that is not refined")
                sl = [slice(b * s // 2, (b + 1) * s // 2) if f == 2 else slice(0, s)
                      for b, f, s in zip(bits, rep, (sx, sy, sz))]
                shares[c, o] = np.sqrt(float(sq[sl[2], sl[1], sl[0]].sum()))
        out[r, 2] = np.sqrt(total)
    return out, shares


def has_shares(block, nc):
    """Whether a step with statistics stores shares: every refined axis's count divisible by 4."""
    axes = {2: 1, 4: 2, 8: 3}[nc]
    return all(s % 4 == 0 for s in block[:axes])


def check_shares(g, step, var, want, want_detail, scale, block, bad):
    """shares/<var> of step group g against numpy's `want` (ng, nc)."""
    got = g[f"shares/{var}"][()]
    if got.shape != want.shape or got.dtype != np.float64:
        bad.append(f"step {step} {var}: shares shape {got.shape} {got.dtype}, expected {want.shape} float64")
        return
    if not (got[0] == 0).all():
        bad.append(f"step {step} {var}: the root's shares {got[0]!r}, expected zeros")
    # as the detail's: rounding of the values over the octant's cells
    tol = DETAIL_REL * want + 1e-13 * scale * np.sqrt(np.prod(block))
    for r, o in np.argwhere(~(np.abs(got - want) <= tol))[:3]:
        bad.append(f"step {step} {var} row {r}: share {o} {got[r, o]!r}, numpy says {want[r, o]!r}")
    # each parent's detail is the norm of its children's shares
    parent_row = g["parent_row"][()]
    sums = np.zeros(len(got))
    np.add.at(sums, parent_row[parent_row >= 0], (got[parent_row >= 0] ** 2).sum(axis=1))
    tol = DETAIL_REL * want_detail + 1e-13 * scale * np.sqrt(8 * np.prod(block))
    for r in np.flatnonzero(~(np.abs(np.sqrt(sums) - want_detail) <= tol))[:3]:
        bad.append(f"step {step} {var} row {r}: its children's shares give {np.sqrt(sums[r])!r}, "
                   f"its detail is {want_detail[r]!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--expect-none", action="store_true")
    ap.add_argument("--min-parents", type=int, default=1, help="grids with children the file must hold")
    a = ap.parse_args()
    bad, checked, parents, shared = [], 0, 0, 0
    try:
        h5 = h5py.File(a.file, "r")
    except OSError as e:
        print(f"{a.file}: {e}")
        return 2
    with h5:
        block = tuple(int(v) for v in h5["/common"].attrs["block_cells"])
        nc = int(h5["/common"].attrs["max_children"])
        version = list(h5.attrs["format_version"])
        for step in committed_steps(h5):
            g = h5[f"/simulation/step_{step:08d}"]
            names = sorted(g["cell_data"].keys())
            if a.expect_none:
                if "statistics" in g or "shares" in g:
                    bad.append(f"step {step}: statistics or shares stored where none were asked for")
                continue
            if "statistics" not in g or sorted(g["statistics"].keys()) != names:
                bad.append(f"step {step}: statistics for {sorted(g['statistics'].keys()) if 'statistics' in g else []}, "
                           f"cell_data holds {names}")
                continue
            want_shares = has_shares(block, nc) and version >= [1, 10]
            if ("shares" in g) != want_shares or (want_shares and sorted(g["shares"].keys()) != names):
                bad.append(f"step {step}: shares for {sorted(g['shares'].keys()) if 'shares' in g else []}, "
                           f"expected {names if want_shares else []} (block {block}, max_children {nc})")
                continue
            parents += int((g["child_rows"][()] >= 0).any(axis=1).sum())
            for var in names:
                got = g[f"statistics/{var}"][()]
                want, want_sh = expected(g, var, block, nc)
                if got.shape != want.shape or got.dtype != np.float64:
                    bad.append(f"step {step} {var}: shape {got.shape} {got.dtype}, expected {want.shape} float64")
                    continue
                for col, name in ((0, "min"), (1, "max")):
                    same = (got[:, col] == want[:, col]) | (np.isnan(got[:, col]) & np.isnan(want[:, col]))
                    for r in np.flatnonzero(~same)[:3]:
                        bad.append(f"step {step} {var} row {r}: {name} {got[r, col]!r}, numpy says {want[r, col]!r}")
                scale = max(1.0, float(np.nanmax(np.abs(want[:, 0:2])))) if np.isfinite(want[:, 0:2]).any() else 1.0
                # rounding of the values (~eps * scale each) over the children's cells
                tol = DETAIL_REL * want[:, 2] + 1e-13 * scale * np.sqrt(8 * np.prod(block))
                for r in np.flatnonzero(~(np.abs(got[:, 2] - want[:, 2]) <= tol))[:3]:
                    bad.append(f"step {step} {var} row {r}: detail {got[r, 2]!r}, numpy says {want[r, 2]!r}")
                if want_shares:
                    check_shares(g, step, var, want_sh, want[:, 2], scale, block, bad)
                    shared += 1
                checked += 1
    if not a.expect_none and version < [1, 9]:
        bad.append(f"format_version {version}: statistics need 1.9")
    if not a.expect_none and (checked == 0 or parents < a.min_parents):
        bad.append(f"nothing to check: {checked} step variables, {parents} grids with children")
    for line in bad:
        print(line)
    if not bad:
        print(f"{a.file}: statistics of {checked} step variables agree with numpy ({parents} parent grids), "
              f"shares of {shared}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

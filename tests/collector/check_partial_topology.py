"""A cold `rewind window FILE@STEP` reads only the topology rows its walk visits,
and still returns the selection the definitions give (rewind/window/select.hpp), checked
against a brute force in numpy over the whole topology read with h5py (every grid, every
cell), sharing no code with Rewind.

A copy of the file gets one leaf's bounding_box damaged far from a small box: a window of
the small box never visits that row, so it must answer, equal to the brute force on the
intact file, value for value (check_window.py); a window of the whole domain visits it
and must be refused naming the checksum. A window that read the whole topology first
refuses both.

usage: check_partial_topology.py REWIND FILE.h5 PYTHON     (prints 'ok ...' lines; exit 1 on failure)
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

TOL = 1e-9


def meets(c0, c1, b0, b1, extent, dom_hi):
    """The header's per-cell 'meets' predicate on one axis, for arrays of cells."""
    tol = TOL * extent
    if b1 - b0 <= 2 * tol:
        p = 0.5 * (b0 + b1)
        closing = (np.abs(c1 - dom_hi) <= tol) & (abs(p - dom_hi) <= tol)
        return ((c0 - tol <= p) & (p < c1 - tol)) | closing
    return (c0 < b1 - tol) & (c1 > b0 + tol)


def brute_force(g, block, lo, hi, budget):
    """(level, [(row, first, count)]) of the window, from every cell of every grid."""
    bbox, child, level = g["bounding_box"][:], g["child_rows"][:], g["level"][:]
    root = bbox[0]
    hits = []
    for r in range(len(level)):
        per_axis = []
        for a in range(3):
            s = block[a]
            edges = bbox[r, 2 * a] + (bbox[r, 2 * a + 1] - bbox[r, 2 * a]) / s * np.arange(s + 1)
            ext, dom_hi = root[2 * a + 1] - root[2 * a], root[2 * a + 1]
            per_axis.append(np.nonzero(meets(edges[:-1], edges[1:], lo[a], hi[a], ext, dom_hi))[0])
        hits.append(per_axis)
    cells = np.array([np.prod([len(h) for h in hs]) for hs in hits])
    leaf = (child < 0).all(axis=1)
    deepest = int(level.max())

    def in_s(lv):
        return (cells > 0) & ((level == lv) | (leaf & (level < lv)))

    count = [int(cells[in_s(lv)].sum()) for lv in range(deepest + 1)]
    assert count[0] <= budget, "the oracle does not model strides; pick a larger budget"
    best = max(lv for lv in range(deepest + 1) if count[lv] <= budget)
    pieces = [(int(r), [int(h[0]) for h in hits[r]], [len(h) for h in hits[r]]) for r in np.nonzero(in_s(best))[0]]
    return best, pieces


def window(rewind, spec, lo, hi, budget, out):
    box = ",".join(str(x) for x in list(lo) + list(hi))
    return subprocess.run([rewind, "window", spec, "--box", box, "--budget", str(budget), "--out", out],
                          capture_output=True, text=True)


def same_as_oracle(dump, oracle):
    level, pieces = oracle
    with open(dump) as f:
        w = json.load(f)
    got = [(p["row"], p["first"], p["count"]) for p in w["pieces"]]
    assert w["level"] == level, f"{dump}: level {w['level']}, the brute force says {level}"
    assert got == pieces, f"{dump}: pieces differ from the brute force ({len(got)} vs {len(pieces)})"
    assert all(p["stride"] == 1 for p in w["pieces"])
    return len(got)


def main():
    rewind, path, py = sys.argv[1], sys.argv[2], sys.argv[3]
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_window.py")
    with h5py.File(path, "r") as h5:
        step = max(int(r["step"]) for r in h5["/simulation/index"][:] if int(r["committed"]) == 1)
        b = h5["/common"].attrs["block_cells"]
        block = (int(b[0]), int(b[1]), int(b[2]))
        g = h5[f"/simulation/step_{step:08d}"]
        bbox, level, parent = g["bounding_box"][:], g["level"][:], g["parent_row"][:]
        root = bbox[0]
        small_lo, small_hi = (root[0], root[2], root[4]), (root[0] + 0.12 * (root[1] - root[0]),
                                                           root[2] + 0.3 * (root[3] - root[2]), root[4])
        whole_lo, whole_hi = (root[0], root[2], root[4]), (root[1], root[3], root[4])
        budget = 10 ** 7
        small = brute_force(g, block, small_lo, small_hi, budget)
        whole = brute_force(g, block, whole_lo, whole_hi, budget)
        # The damaged row: a deepest-level grid whose parent does not meet the small box
        # (so the walk never looks at it; nor the last row, which it loads for the
        # deepest level), the farthest from it.
        deep = int(level.max())
        far = [r for r in range(len(level) - 1) if level[r] == deep and bbox[parent[r], 0] > small_hi[0] + 1e-6]
        assert far, "no grid outside the small box's ancestors"
        victim = max(far, key=lambda r: bbox[r, 0])
        assert small[0] == deep, "the small window must reach the deepest level"
    shutil.copy(path, "damaged.h5")
    with h5py.File("damaged.h5", "r+") as h5:
        ds = h5[f"/simulation/step_{step:08d}/bounding_box"]
        row = ds[victim]
        row[0] += 1e-3 * (root[1] - root[0])
        ds[victim] = row
    spec = f"damaged.h5@{step}"
    r = window(rewind, spec, small_lo, small_hi, budget, "small.json")
    assert r.returncode == 0, f"small window of {spec} (row {victim} damaged, not visited) failed: {r.stderr.strip()}"
    n = same_as_oracle("small.json", small)
    subprocess.run([py, checker, path, "small.json"], check=True)
    print(f"ok small window of step {step} with row {victim} damaged elsewhere: level {small[0]}, {n} pieces = brute force")
    r = window(rewind, spec, whole_lo, whole_hi, budget, "whole_damaged.json")
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode != 0 and len(lines) == 1 and "bounding_box" in lines[0] and "checksum" in lines[0], \
        f"whole-domain window over the damaged row: rc {r.returncode}, {r.stderr.strip()}"
    print(f"ok whole-domain window visiting damaged row {victim}: refused ({lines[0]})")
    r = window(rewind, f"{path}@{step}", whole_lo, whole_hi, budget, "whole.json")
    assert r.returncode == 0, r.stderr
    n = same_as_oracle("whole.json", whole)
    print(f"ok whole-domain window of the intact file: level {whole[0]}, {n} pieces = brute force")


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, subprocess.CalledProcessError) as e:
        print(f"FAIL {e}")
        sys.exit(1)

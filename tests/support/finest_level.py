"""Helpers of the solver's h5py oracles (no Rewind code): the finest level of a written
step as plain arrays, and a pass/fail tally that prints one line per check."""
import numpy as np


class Checks:
    """check(ok, what) prints "ok   what" or "FAIL what"; failed counts the FAILs."""

    def __init__(self):
        self.failed = 0

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        self.failed += not ok


def finest_arrays(step, names):
    """A step group's finest leaf grids of a 2-D run as one array per variable (NaN where
    no grid of that level lies), with the lower corner and the cell sizes:
    (x0, y0, hx, hy, {name: array[y, x]})."""
    lev, bb = step["level"][:], step["bounding_box"][:]
    leaf = (step["child_rows"][:] < 0).all(axis=1)
    rows = np.where(leaf & (lev == lev[leaf].max()))[0]
    data = {v: step["cell_data/" + v][:] for v in names}
    sy, sx = next(iter(data.values())).shape[2:4]
    hx, hy = (bb[rows[0], 1] - bb[rows[0], 0]) / sx, (bb[rows[0], 3] - bb[rows[0], 2]) / sy
    x0, y0 = bb[rows, 0].min(), bb[rows, 2].min()
    shape = (int(round((bb[rows, 3].max() - y0) / hy)), int(round((bb[rows, 1].max() - x0) / hx)))
    out = {v: np.full(shape, np.nan) for v in names}
    for r in rows:
        i, j = int(round((bb[r, 0] - x0) / hx)), int(round((bb[r, 2] - y0) / hy))
        for v in names:
            out[v][j:j + sy, i:i + sx] = data[v][r, 0]
    return x0, y0, hx, hy, out

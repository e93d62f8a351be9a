# Stock ParaView (pvpython, no Rewind plugin) opens the VTKHDF views of compressed runs:
# every cell value of u at a visualisation step equals the uncompressed run's (lossless
# filters) or is within the zfp bound. Usage: pvpython views_compressed.py BOUND NAME...
# (NAME.views/NAME.hdf.series; the first NAME is the uncompressed reference.)
#
# The views' coarse levels are also checked against what the leaves imply (an h5py +
# numpy oracle, tests/support/lod_oracle.py): the root block of the uncompressed run's
# view is the average of the step's leaves (ParaView's level-of-detail rendering shows
# it; it once showed the initial state).
import os
import sys

import h5py
import numpy as np
from paraview.simple import OpenDataFile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import lod_oracle  # noqa: E402

bound, names = float(sys.argv[1]), sys.argv[2:]
U = "u [m\u2215s]"  # a view names u with its unit (docs/file-format.md §7)


def cell_array(name, at):
    """u over every cell of the view (an unstructured grid, rows in file order) at time index `at`."""
    reader = OpenDataFile(f"{name}.views/{name}.hdf.series")
    t = list(reader.TimestepValues)[at]
    reader.UpdatePipeline(t)
    a = reader.GetClientSideObject().GetOutputDataObject(0).GetCellData().GetArray(U)
    return t, (np.array([a.GetValue(i) for i in range(a.GetNumberOfTuples())]) if a else np.zeros(0))


def values(name):
    return list(cell_array(name, 1)[1])  # a visualisation step (step 0 and the last are checkpoints)


def root_against_leaves(name):
    """The view's level-0 grid (its first cells) at the visualisation step against the oracle's root."""
    t, cells = cell_array(name, 1)
    with h5py.File(f"{name}.h5", "r") as h5:
        step = next(s for s in lod_oracle.committed_steps(h5)
                    if abs(lod_oracle.step_group(h5, s).attrs["time"] - t) <= 1e-9 * max(1.0, abs(t)))
        g = lod_oracle.step_group(h5, step)
        ds = g["cell_data"]["u"]
        want = lod_oracle.implied(lod_oracle.Topology(g, lod_oracle.block_of(h5)), ds[:].astype(np.float64))[0].ravel()
        tol = lod_oracle.tolerance(ds, ds[:])
    got = cells[: want.size]  # row 0, the root, is the view's first cells
    err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    good = err <= tol
    print(f"{'ok  ' if good else 'FAIL'} {name}: the view's level 0 at step {step} = the average of its leaves "
          f"(max |diff| {err:.3g}, allowed {tol:.3g})", flush=True)
    return good


ref = values(names[0])
assert ref, "no values in the uncompressed views"
ok = root_against_leaves(names[0])
for name in names[1:]:
    got = values(name)
    err = max(abs(x - y) for x, y in zip(got, ref)) if len(got) == len(ref) else float("inf")
    limit = bound if name.startswith("zfp") else 0.0
    good = err <= limit and (err > 0 or limit == 0)
    ok = ok and good
    print(f"{'ok  ' if good else 'FAIL'} {name}: {len(got)} values, max |u - u_none| = {err} (allowed {limit})", flush=True)
sys.exit(0 if ok else 1)

# Opens a Rewind .hdf.series with stock ParaView (pvpython) and checks the grids, levels,
# time steps and one data value against the run file (h5py). A view is one unstructured
# grid: every cell of every grid, rows in file order (docs/file-format.md §7).
# Usage: pvpython check_views.py SERIES NLEVELS NBLOCKS VAR VALUE
import os
import sys

import h5py
import numpy as np
from paraview.simple import OpenDataFile

series, nlev, nblocks, var, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
reader = OpenDataFile(series)
times = list(reader.TimestepValues) if hasattr(reader, "TimestepValues") else []
print("reader", reader.GetXMLName(), "times", times)
assert len(times) >= 2, "expected a time series, got %r" % (times,)
reader.UpdatePipeline(times[0])
grid = reader.GetClientSideObject().GetOutputDataObject(0)
run = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(series))),
                   os.path.basename(series)[: -len(".hdf.series")] + ".h5")
with h5py.File(run, "r") as f:
    g = next(f["simulation"][s] for s in sorted(f["simulation"]) if s.startswith("step_")
             and abs(float(f["simulation"][s].attrs["time"]) - times[0]) < 1e-12)
    levels, blocks = len(g["level_offsets"]) - 1, len(g["level"])
    per_block = int(np.prod(f["common"].attrs["block_cells"]))
print("class", grid.GetClassName(), "levels", levels, "blocks", blocks, "cells", grid.GetNumberOfCells())
assert grid.GetClassName() == "vtkUnstructuredGrid", grid.GetClassName()
assert levels == nlev, levels
assert blocks == nblocks, blocks
assert grid.GetNumberOfCells() == nblocks * per_block, (grid.GetNumberOfCells(), nblocks, per_block)
arr = grid.GetCellData().GetArray(var)
assert arr is not None, "no cell array %s" % var
got = arr.GetValue(0)  # the root's first cell
print("first value", got, "expected", value)
assert abs(got - value) < 1e-9 * max(1.0, abs(value)), (got, value)
print("OK")

# Opens a Rewind .hdf.series with stock ParaView (pvpython) and checks blocks, levels,
# time steps and one data value. Usage: pvpython check_views.py SERIES NLEVELS NBLOCKS VAR VALUE
import sys
from paraview.simple import OpenDataFile, UpdatePipeline

series, nlev, nblocks, var, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
reader = OpenDataFile(series)
times = list(reader.TimestepValues) if hasattr(reader, "TimestepValues") else []
print("reader", reader.GetXMLName(), "times", times)
assert len(times) >= 2, "expected a time series, got %r" % (times,)
reader.UpdatePipeline(times[0])
amr = reader.GetClientSideObject().GetOutputDataObject(0)
print("class", amr.GetClassName(), "levels", amr.GetNumberOfLevels(), "blocks", amr.GetTotalNumberOfBlocks())
assert amr.GetClassName() == "vtkOverlappingAMR", amr.GetClassName()
assert amr.GetNumberOfLevels() == nlev, amr.GetNumberOfLevels()
assert amr.GetTotalNumberOfBlocks() == nblocks, amr.GetTotalNumberOfBlocks()
root = amr.GetDataSet(0, 0)
arr = root.GetCellData().GetArray(var)
assert arr is not None, "no cell array %s" % var
got = arr.GetValue(0)
print("first value", got, "expected", value)
assert abs(got - value) < 1e-9 * max(1.0, abs(value)), (got, value)
print("OK")

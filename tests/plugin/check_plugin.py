# Loads the Rewind ParaView plugin, opens a run file, and compares what it shows with
# expected.json (computed from the file with h5py); writes window dumps w_*.json for
# check_window.py and the steps it shows at the times in sys.argv[4] (one per line) to
# picked.txt, for the shell to compare with the kernel's rule.
import json, math, os, sys
from paraview.simple import LoadPlugin, Slice, Contour, CellDatatoPointData, Calculator, Glyph, StreamTracer
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pv_util import dump, field, images  # noqa: E402

plugin, path, expected, probe_times = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), sys.argv[4]
LoadPlugin(plugin, remote=False, ns=globals())
reader = RewindRunFile(FileName=path)  # noqa: F821 (defined by the plugin)

times = list(reader.TimestepValues)
assert times == expected["times"], (times, expected["times"])
reader.UpdatePipelineInformation()
assert sorted(reader.CellArrays.Available) == sorted(expected["variables"]), reader.CellArrays.Available


def output(t=None):
    reader.UpdatePipeline(times[-1] if t is None else t)
    return reader.GetClientSideObject().GetOutputDataObject(0)


def shown(max_level):
    reader.MaximumLevel = max_level
    mb = output()
    counts, total = [], 0.0
    for l in range(mb.GetNumberOfBlocks()):
        counts.append(mb.GetBlock(l).GetNumberOfPieces())
    for _, img in images(mb):
        assert img.GetNumberOfCells() == expected["cells_per_grid"], img.GetNumberOfCells()
        u = img.GetCellData().GetArray("u")
        assert img.GetCellData().GetArray("cell_type") is not None, "no cell_type array"
        total += sum(u.GetValue(i) for i in range(u.GetNumberOfTuples()))
    return counts, total


# MaximumLevel, as before the window properties: the level cut of the whole domain.
counts, total = shown(-1)
print("leaves per level", counts, "sum u", total)
assert counts == expected["leaves_per_level"], (counts, expected["leaves_per_level"])
assert math.isclose(total, expected["leaf_u_sum"], rel_tol=1e-12, abs_tol=1e-9), (total, expected["leaf_u_sum"])
counts, total = shown(1)
print("level-of-detail 1:", counts, "sum u", total)
assert sum(counts) == expected["lod1_grids"], (counts, expected["lod1_grids"])
assert math.isclose(total, expected["lod1_u_sum"], rel_tol=1e-12, abs_tol=1e-9), (total, expected["lod1_u_sum"])
reader.MaximumLevel = -1

# Window properties: box, budget, variables. Each dump is checked value by value against
# the file by check_window.py; here: the budget holds and a smaller box gets a finer level.
reader.CellArrays = ["p", "u"]
reader.Budget = 3000
w_whole = dump(output(), ["p", "u"], "w_whole.json")
reader.UseBox = 1
reader.BoxPosition = [0.12, 0.12, 0.0]
reader.BoxSize = [0.16, 0.16, 1.0]
w_zoom = dump(output(), ["p", "u"], "w_zoom.json")
reader.BoxSize = [0.06, 0.06, 1.0]
w_small = dump(output(), ["p", "u"], "w_small.json")
for w in (w_whole, w_zoom, w_small):
    assert 0 < w["cells"] <= 3000, w["cells"]
print("budget 3000: levels", w_whole["level"], w_zoom["level"], w_small["level"],
      "cells", w_whole["cells"], w_zoom["cells"], w_small["cells"])
assert w_whole["level"] < w_zoom["level"] <= w_small["level"], "the level does not grow as the box shrinks"
mb = output()
for _, img in images(mb):
    assert img.GetCellData().GetArray("T") is None, "a variable that was not asked for"
    b, h = img.GetBounds(), img.GetSpacing()  # whole cells that meet the box
    assert b[0] > 0.12 - h[0] and b[1] < 0.18 + h[0] and b[2] > 0.12 - h[1] and b[3] < 0.18 + h[1], b
reader.Budget = 1
w_tiny = dump(output(), ["p", "u"], "w_tiny.json")
assert w_tiny["cells"] == 1 and w_tiny["stride"] >= 2, (w_tiny["cells"], w_tiny["stride"])

# An earlier step through the window too (the second committed step).
reader.UseBox = 0
reader.Budget = 0
reader.CellArrays = expected["variables"]
mb = output(times[1])  # a visualisation step: it stores some variables only; those are shown
stored = [v for v in expected["variables"] if images(mb)[0][1].GetCellData().GetArray(v) is not None]
assert stored, "no variable in a visualisation step"
dump(mb, stored, "w_step1.json")

# Standard filters work on the output: slice, contour, glyph, stream tracer.
reader.UpdatePipeline(times[-1])
sl = Slice(Input=reader)
sl.SliceType.Origin = [0.2, 0.2, 0.5]
sl.SliceType.Normal = [1.0, 0.0, 0.0]
sl.UpdatePipeline(times[-1])
assert sl.GetDataInformation().GetNumberOfCells() > 0, "slice is empty"
pts = CellDatatoPointData(Input=reader)
lo, hi = reader.CellData["p"].GetRange()
co = Contour(Input=pts, ContourBy=["POINTS", "p"], Isosurfaces=[0.5 * (lo + hi)])
co.UpdatePipeline(times[-1])
assert co.GetDataInformation().GetNumberOfPoints() > 0, "contour is empty"
# Glyph and stream tracer on the velocity (u, v, w as one point vector).
vel = Calculator(Input=pts, ResultArrayName="velocity", Function="u*iHat+v*jHat+w*kHat")
gl = Glyph(Input=vel, GlyphType="Arrow", OrientationArray=["POINTS", "velocity"], ScaleArray=["POINTS", "No scale array"],
           GlyphMode="Every Nth Point", Stride=50)
gl.UpdatePipeline(times[-1])
assert gl.GetDataInformation().GetNumberOfPoints() > 0, "no glyphs"
st = StreamTracer(Input=vel, SeedType="Line", Vectors=["POINTS", "velocity"])
st.SeedType.Point1 = [0.05, 0.05, 0.0]  # a 2-D case is a plane at the domain's lower z
st.SeedType.Point2 = [0.05, 0.35, 0.0]
st.SeedType.Resolution = 10
st.UpdatePipeline(times[-1])
assert st.GetDataInformation().GetNumberOfPoints() > 0, "no streamlines"
print("slice cells", sl.GetDataInformation().GetNumberOfCells(), "contour points", co.GetDataInformation().GetNumberOfPoints(),
      "glyph points", gl.GetDataInformation().GetNumberOfPoints(), "streamline points", st.GetDataInformation().GetNumberOfPoints())

# The step shown at each probe time (the shell compares with `rewind window --time t=T`).
with open("picked.txt", "w") as f:
    for t in open(probe_times).read().split():
        f.write(f"{t} {int(field(output(float(t)), 'rewind_step'))}\n")
print("OK")

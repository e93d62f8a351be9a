# Run by colour_range.sh inside the paraview GUI (--script; @TMP@ filled in): a run file
# with statistics in a coarse, cropped window coloured by u at one step, then a later
# step, then with the range locked, back to the first; the same without statistics. At
# each stage it writes down the colour map's range, the grids shown (their rows) and
# the data's own range to colour.json for colour_range_check.py. The plugin is not
# loaded here: ParaView auto-loads it from PV_PLUGIN_PATH (its GUI behaviour fits the
# colour map). Each stage records its own error.
import json
import sys

from paraview.simple import *

sys.path.insert(0, "@HERE@")
from gui_stage import out, stage  # noqa: E402


v = GetActiveViewOrCreate("RenderView")
v.ViewSize = [600, 300]
scene = GetAnimationScene()


def seen(src, rep, array):
    """What the view shows of `src` now: the step, the rows of its grids, the colour
    map's range, ParaView's range of the data and the source's rewind_range_<array>."""
    mb = src.GetClientSideObject().GetOutputDataObject(0)
    rows = []
    for b in range(mb.GetNumberOfBlocks()):
        mp = mb.GetBlock(b)
        for p in range(mp.GetNumberOfPieces()):
            if mp.GetPiece(p):
                rows.append(int(mp.GetPiece(p).GetFieldData().GetArray("rewind_row").GetValue(0)))
    fd = mb.GetFieldData()
    stats = fd.GetArray("rewind_range_" + array)
    lut = GetColorTransferFunction(array)
    return {"step": int(fd.GetArray("rewind_step").GetValue(0)), "rows": rows,
            "colour": [str(x) for x in rep.ColorArrayName],
            "lut": [lut.RGBPoints[0], lut.RGBPoints[-4]],
            "data": list(src.CellData[array].GetRange()),
            "field": [stats.GetValue(0), stats.GetValue(1)] if stats else None,
            "ranges_on_output": sorted(fd.GetArrayName(i) for i in range(fd.GetNumberOfArrays())
                                       if (fd.GetArrayName(i) or "").startswith("rewind_range_"))}


r = RewindRunFile(FileName="@TMP@/run.h5")
r.UpdatePipelineInformation()
times = list(r.TimestepValues)
out["times"] = times
b = list(r.GetProperty("DomainBounds"))
# A coarse window (level 2: parents' averages) over a box that cuts grids.
r.MaximumLevel = 2
r.UseBox = 1
r.BoxPosition = [b[0] + 0.3 * (b[1] - b[0]), b[2], b[4]]
r.BoxSize = [0.27 * (b[1] - b[0]), 0.6 * (b[3] - b[2]), b[5] - b[4]]
scene.UpdateAnimationUsingDataTimeSteps()
d = Show(r, v)
ColorBy(d, ("CELLS", "u"))
out["file"] = "@TMP@/run.h5"


@stage
def first():  # a step after the initial state
    scene.AnimationTime = times[1]
    Render(v)
    out["first"] = seen(r, d, "u")


@stage
def later():  # the last step: the range follows
    scene.AnimationTime = times[-1]
    Render(v)
    out["later"] = seen(r, d, "u")


@stage
def locked():  # a range of the user's: locked (the colour map editor's lock), stays
    lut = GetColorTransferFunction("u")
    lut.RescaleTransferFunction(-5.0, 5.0)
    lut.AutomaticRescaleRangeMode = "Never"
    scene.AnimationTime = times[1]
    Render(v)
    out["locked"] = seen(r, d, "u")
    lut.AutomaticRescaleRangeMode = "Grow and update on 'Apply'"


@stage
def magnitude():  # velocity_magnitude has no statistics: the data's range
    ColorBy(d, ("CELLS", "velocity_magnitude"))
    scene.AnimationTime = times[-1]
    Render(v)
    out["magnitude"] = seen(r, d, "velocity_magnitude")


Hide(r, v)
p = RewindRunFile(FileName="@TMP@/plain.h5")
p.UpdatePipelineInformation()
out["plain_times"] = list(p.TimestepValues)
scene.UpdateAnimationUsingDataTimeSteps()


@stage
def plain():  # without statistics: shown, coloured as ParaView does (velocity_magnitude first)
    scene.AnimationTime = out["plain_times"][1]
    dp = Show(p, v)
    Render(v)
    out["plain_shown"] = seen(p, dp, "velocity_magnitude")
    ColorBy(dp, ("CELLS", "u"))
    scene.AnimationTime = out["plain_times"][-1]
    Render(v)
    out["plain"] = seen(p, dp, "u")


with open("@TMP@/colour.json", "w") as f:
    json.dump(out, f, indent=1, default=str)

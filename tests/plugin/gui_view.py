# Run by gui_view.sh inside the paraview GUI (--script; @PORT@ and @TMP@ filled in):
# shows a live source as a user would and writes what the view shows to view.json (and a
# screenshot, view.png) for gui_view_check.py. The plugin is not loaded here: ParaView
# auto-loads it from PV_PLUGIN_PATH. Each stage records its own error, so one failing
# stage does not hide the others' results.
import json
import sys
import time

from paraview.simple import *

sys.path.insert(0, "@HERE@")
from gui_stage import out, stage  # noqa: E402


v = GetActiveViewOrCreate("RenderView")
v.ViewSize = [800, 300]
live = RewindLiveSource(PortNumber=@PORT@, Budget=50000)
d = Show(live, v)
Render(v)
Render(v)
lut = GetColorTransferFunction("velocity_magnitude")


@stage
def shown():  # items 2 and 3: colour, 2-D
    out["colour"] = list(d.ColorArrayName)
    out["interaction"] = str(v.InteractionMode)
    out["bounds"] = list(live.GetDataInformation().GetBounds())


def ranges():
    a = live.CellData["velocity_magnitude"]
    return [list(a.GetRange()) if a else None, [lut.RGBPoints[0], lut.RGBPoints[-4]]]


@stage
def follow():  # item 6: what the panel's Follow does (refresh, update, render), twice
    out["ranges"] = [ranges()]
    for _ in range(2):
        time.sleep(1.5)
        live.SMProxy.InvokeCommand("Refresh")
        live.UpdatePipeline()
        Render(v)
        out["ranges"].append(ranges())


@stage
def screenshot():  # item 3: at the view's size, with what places the domain in it
    SaveScreenshot("@TMP@/view.png", v, ImageResolution=list(v.ViewSize))
    out["camera"] = {"focal": list(v.CameraFocalPoint), "position": list(v.CameraPosition),
                     "up": list(v.CameraViewUp), "scale": float(v.CameraParallelScale)}
    out["background"] = list(v.Background)


@stage
def annotation():  # item 4: the Annotation port and the field data it says
    fd = live.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
    out["step_time"] = [int(fd.GetArray("rewind_step").GetValue(0)), float(fd.GetArray("rewind_time").GetValue(0))]
    text = Show(OutputPort(live, 1), v)
    Render(v)
    out["annotation_representation"] = str(text.GetXMLName())
    out["annotation"] = live.GetClientSideObject().GetOutputDataObject(1).GetValue(0, 0).ToString()
    SaveScreenshot("@TMP@/view_text.png", v, ImageResolution=list(v.ViewSize))  # to look at


@stage
def off_axis():  # item 5: off the time axis, no data time (the Information tab's)
    info = live.GetDataInformation().DataInformation
    out["off_axis"] = {"has_time": bool(info.GetHasTime()), "range": list(info.GetTimeRange())}


@stage
def branch_axis():  # item 5: a branch in the job, then a live source on the time axis
    import rewind_steering
    steer = rewind_steering.Steering(live)
    out["branch"] = steer.branch("#0", {"boundary.xmin.velocity": [1.25, 0, 0]}, output="@TMP@/gb.h5")
    for _ in range(100):  # a few of the branch's steps committed
        time.sleep(0.2)
        if steer.status()["time"] > 0.1:
            break
    axis = RewindLiveSource(PortNumber=@PORT@, Budget=2000, UseTimeAxis=1)
    axis.UpdatePipelineInformation()
    times = list(axis.TimestepValues)
    axis.UpdatePipeline(times[-1])
    fd = axis.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
    info = axis.GetDataInformation().DataInformation
    shown_file = fd.GetAbstractArray("rewind_file")
    out["axis"] = {"times": times, "last_file": shown_file.GetValue(0) if shown_file else None,
                   "error": str(axis.GetPropertyValue("LastError")),
                   "has_time": bool(info.GetHasTime()), "range": list(info.GetTimeRange())}
    Delete(axis)


SetActiveSource(None)
with open("@TMP@/view.json", "w") as f:
    json.dump(out, f, indent=1, default=str)

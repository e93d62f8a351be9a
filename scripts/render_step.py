# Render one step of Rewind run files to PNGs with ParaView and the Rewind plugin.
#   scripts/headless.sh pvpython scripts/render_step.py PLUGIN.so RUN.h5 OUT.png [RUN2.h5 OUT2.png ...] [--time T] [--var u]
# Several files render in one session (one X server start).
import argparse
from paraview.simple import (LoadPlugin, Show, Render, ResetCamera, GetActiveViewOrCreate, ColorBy,
                             GetColorTransferFunction, SaveScreenshot, Hide, Delete)

ap = argparse.ArgumentParser()
ap.add_argument("plugin")
ap.add_argument("pairs", nargs="+", help="RUN.h5 OUT.png, repeated")
ap.add_argument("--time", type=float, default=None, help="simulated time (default: last step)")
ap.add_argument("--var", default="u")
a = ap.parse_args()

LoadPlugin(a.plugin, remote=False, ns=globals())
if len(a.pairs) % 2:
    ap.error("give RUN.h5 OUT.png pairs")


def render(path, png):
    reader = RewindRunFile(FileName=path)  # noqa: F821 (from the plugin)
    times = list(reader.TimestepValues)
    t = times[-1] if a.time is None else min(times, key=lambda x: abs(x - a.time))
    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [1400, 320]
    view.ViewTime = t
    view.OrientationAxesVisibility = 0
    disp = Show(reader, view)
    disp.Representation = "Surface"  # image data defaults to an outline
    ColorBy(disp, ("CELLS", a.var))
    lut = GetColorTransferFunction(a.var)
    lut.ApplyPreset("Cool to Warm", True)
    disp.SetScalarBarVisibility(view, True)
    view.CameraPosition = [1.1, 0.205, 3.0]
    view.CameraFocalPoint = [1.1, 0.205, 0.5]
    view.CameraViewUp = [0, 1, 0]
    ResetCamera(view)
    view.CameraParallelProjection = 1
    bounds = reader.GetDataInformation().GetBounds()
    view.CameraFocalPoint = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), bounds[5]]
    view.CameraPosition = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), bounds[5] + 10.0]
    # Fit the domain's width (the view is 1400 x 320 pixels).
    view.CameraParallelScale = 0.55 * max((bounds[1] - bounds[0]) * 320 / 1400, bounds[3] - bounds[2])
    Render(view)
    SaveScreenshot(png, view, ImageResolution=[1400, 320])
    print(f"render: {png} ({a.var} at t = {t:g} of {path})")
    Hide(reader, view)
    Delete(reader)


for i in range(0, len(a.pairs), 2):
    render(a.pairs[i], a.pairs[i + 1])

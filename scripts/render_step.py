# Render one step of Rewind run files to PNGs with ParaView and the Rewind plugin.
#
#   scripts/headless.sh pvpython scripts/render_step.py PLUGIN.so RUN.h5 OUT.png [RUN2.h5 OUT2.png ...]
#       [--time T] [--var u] [--width 1400]
#
# --time T   simulated time: the step in force then (the last step at or before T, the
#            kernel's rule); default: each file's last step
# --var V    a cell variable of the files (u, v, w, p, T, ...); default u
# --width W  image width in pixels; the height follows the domain's aspect
# Several files render in one session (one X server start) on ONE colour scale, so a
# run and its branches compare side by side. 2-D runs show the plane; 3-D runs a slice
# through the middle of the domain (normal z). The colour bar sits below the domain.
# Errors (a missing file, an unknown variable) are one line and exit 1.
import argparse
import os
import sys

import paraview.simple
from paraview.simple import (ColorBy, Delete, GetColorTransferFunction, GetScalarBar, LoadPlugin, Render,
                             SaveScreenshot, Show, Slice)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pv_view import look_down, timed_view  # noqa: E402

ap = argparse.ArgumentParser(
    prog="render_step.py",
    description="Render one step of Rewind run files to PNGs (several files: one colour scale). "
                "Run it under scripts/headless.sh pvpython.")
ap.add_argument("plugin", help="the Rewind ParaView plugin (RewindReader .so)")
ap.add_argument("pairs", nargs="+", help="RUN.h5 OUT.png, repeated")
ap.add_argument("--time", type=float, default=None,
                help="simulated time T: the step in force then, i.e. the last step at or before T "
                     "(default: each file's last step)")
ap.add_argument("--var", default="u", help="cell variable to colour by: u, v, w, p, T, ... (default u)")
ap.add_argument("--width", type=int, default=1400, help="image width in pixels")
a = ap.parse_args()


def fail(message):
    sys.exit(f"render_step: error: {message}")


if len(a.pairs) % 2:
    fail("give RUN.h5 OUT.png pairs")
files, pngs = a.pairs[0::2], a.pairs[1::2]
for f in files:
    if not os.path.isfile(f):
        fail(f"{f}: no such file")


def dim_of(path):
    """2 or 3: the run's dimension (/common attribute dim). Read before the plugin loads."""
    import h5py
    try:
        with h5py.File(path, "r") as f:
            d = f["common"].attrs["dim"]
            return int(d[0] if hasattr(d, "__len__") else d)
    except (OSError, KeyError) as e:
        fail(f"{path}: not a Rewind run file ({e})")


dims = {f: dim_of(f) for f in files}
LoadPlugin(a.plugin, remote=False, ns=globals())
paraview.simple._DisableFirstRenderCameraReset()


def open_step(path):
    """The reader, the time shown and what to show (the data, or a mid-z slice in 3-D)."""
    reader = RewindRunFile(FileName=path)  # noqa: F821 (from the plugin)
    times = list(reader.TimestepValues)
    if not times:
        Delete(reader)
        fail(f"{path}: no committed step")
    if a.time is None:
        t = times[-1]
    else:
        before = [x for x in times if x <= a.time * (1 + 1e-12)]
        if not before:
            Delete(reader)
            fail(f"{path}: no step at or before t = {a.time:g} (the first is at t = {times[0]:g})")
        t = before[-1]
    reader.UpdatePipeline(t)
    if a.var not in reader.CellData.keys():
        have = ", ".join(reader.CellData.keys())
        Delete(reader)
        fail(f"{path}: no cell variable '{a.var}' (it has: {have})")
    b = reader.GetDataInformation().GetBounds()
    shown = reader
    if dims[path] == 3:  # the outer face says little: a slice through the middle
        shown = Slice(Input=reader)
        shown.SliceType = "Plane"
        shown.SliceType.Origin = [0.5 * (b[0] + b[1]), 0.5 * (b[2] + b[3]), 0.5 * (b[4] + b[5])]
        shown.SliceType.Normal = [0, 0, 1]
        shown.UpdatePipeline(t)
    return reader, shown, t, b


# One colour scale: the range of the variable over every file's shown step.
lo, hi = float("inf"), float("-inf")
for path in files:
    reader, shown, t, _ = open_step(path)
    r = shown.CellData[a.var].GetRange()
    lo, hi = min(lo, r[0]), max(hi, r[1])
    if shown is not reader:
        Delete(shown)
    Delete(reader)
if not hi > lo:
    hi = lo + 1.0  # a constant field still gets a colour

lut = GetColorTransferFunction(a.var)
lut.ApplyPreset("Cool to Warm", True)
for path, png in zip(files, pngs):
    reader, shown, t, b = open_step(path)
    dx, dy = b[1] - b[0], b[3] - b[2]
    W = a.width
    H_domain = max(80, int(W * dy / dx)) if dx > 0 else W
    H = H_domain + 110  # the colour bar below the domain
    view = timed_view(W, H, t)
    disp = Show(shown, view)
    disp.Representation = "Surface"
    ColorBy(disp, ("CELLS", a.var))
    lut.AutomaticRescaleRangeMode = "Never"
    lut.RescaleTransferFunction(lo, hi)
    bar = GetScalarBar(lut, view)
    bar.Orientation = "Horizontal"
    bar.WindowLocation = "Any Location"
    bar.Position = [0.3, 0.02]
    bar.ScalarBarLength = 0.4
    bar.Title = a.var
    bar.ComponentTitle = ""
    disp.SetScalarBarVisibility(view, True)
    look_down(view, b, W, H, below=H - H_domain)  # the domain above the colour bar
    Render(view)
    SaveScreenshot(png, view, ImageResolution=[W, H])
    print(f"render: {png} ({a.var} at t = {t:g} of {path}, colour scale {lo:.4g} .. {hi:.4g})")
    Delete(view)
    if shown is not reader:
        Delete(shown)
    Delete(reader)

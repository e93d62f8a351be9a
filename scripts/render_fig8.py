# The paper's Fig. 8 ("time reversible steering") from Rewind run files, rendered with
# ParaView and the Rewind plugin: one row per timeline (a run and its branches), one
# column per time, every panel on one colour scale.
#
#   scripts/headless.sh pvpython scripts/render_fig8.py PLUGIN.so -o fig8.png \
#       --files base.h5 fast.h5 tilted.h5 --labels "base,faster inflow,tilted inflow" \
#       [--times 1,2] [--var speed]
#
# --var: a cell variable of the files (u, v, p, ...) or "speed" (|(u, v)|, by ParaView's
# Calculator). Each panel is a ParaView screenshot; matplotlib (the same Python)
# arranges them with titles and one colour bar. Prints the figure's path.
import argparse
import os
import sys
import tempfile

import paraview.simple
from paraview.simple import (Calculator, ColorBy, Delete, GetColorTransferFunction, LoadPlugin, Render,
                             SaveScreenshot, Show)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pv_view import look_down, timed_view  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("plugin")
ap.add_argument("-o", "--output", required=True)
ap.add_argument("--files", nargs="+", required=True)
ap.add_argument("--labels", help="comma-separated row titles (default: the file names)")
ap.add_argument("--times", default="1,2", help="comma-separated simulated times, one column each")
ap.add_argument("--var", default="speed")
ap.add_argument("--title", default="Time reversible steering (cf. Ertl, Frisch, Mundani, Fig. 8)")
ap.add_argument("--panels", help="also keep each panel as DIR/ROW-COLUMN.png (ParaView's screenshot)")
a = ap.parse_args()

LoadPlugin(a.plugin, remote=False, ns=globals())
times = [float(t) for t in a.times.split(",")]
labels = a.labels.split(",") if a.labels else [os.path.basename(f) for f in a.files]
if len(labels) != len(a.files):
    sys.exit(f"render_fig8: {len(labels)} labels for {len(a.files)} files")
W, H = 1400, 280  # pixels per panel: the channel is 2.2 x 0.41


def source(path):
    reader = RewindRunFile(FileName=path)  # noqa: F821 (from the plugin)
    if a.var != "speed":
        return reader, reader
    calc = Calculator(Input=reader, AttributeType="Cell Data", ResultArrayName="speed", Function="sqrt(u*u+v*v)")
    return reader, calc


def step_time(reader, t):
    """The file's step nearest to t (the file has its output times exactly)."""
    steps = list(reader.TimestepValues)
    if not steps:
        sys.exit(f"render_fig8: {reader.FileName}: no steps")
    best = min(steps, key=lambda s: abs(s - t))
    if abs(best - t) > 1e-6 * max(1.0, abs(t)):
        sys.exit(f"render_fig8: {reader.FileName}: no step at t = {t:g} (nearest {best:g})")
    return best


# One colour scale for every panel: the range over all of them.
panels = []
lo, hi = float("inf"), float("-inf")
for path in a.files:
    reader, src = source(path)
    for t in times:
        ts = step_time(reader, t)
        src.UpdatePipeline(ts)
        info = src.GetDataInformation().DataInformation.GetCellDataInformation().GetArrayInformation(a.var)
        if info is None:
            sys.exit(f"render_fig8: {path}: no cell variable '{a.var}'")
        r = info.GetComponentRange(-1 if info.GetNumberOfComponents() > 1 else 0)
        lo, hi = min(lo, r[0]), max(hi, r[1])
        panels.append((path, t, ts))
    Delete(src)
    if src is not reader:
        Delete(reader)

lut = GetColorTransferFunction(a.var)
lut.ApplyPreset("Viridis (matplotlib)", True)
paraview.simple._DisableFirstRenderCameraReset()  # the camera below is the one we want
tmp = a.panels or tempfile.mkdtemp(prefix="rewind-fig8-")
os.makedirs(tmp, exist_ok=True)
shots = {}
for path in a.files:
    reader, src = source(path)
    for t in times:
        ts = step_time(reader, t)
        view = timed_view(W, H, ts, white=True)
        src.UpdatePipeline(ts)
        disp = Show(src, view)
        disp.Representation = "Surface"
        ColorBy(disp, ("CELLS", a.var))
        lut.AutomaticRescaleRangeMode = "Never"  # ColorBy fits the scale to this panel: one scale for all
        lut.RescaleTransferFunction(lo, hi)
        look_down(view, src.GetDataInformation().GetBounds(), W, H)
        Render(view)
        png = os.path.join(tmp, f"{a.files.index(path)}-{times.index(t)}.png")
        SaveScreenshot(png, view, ImageResolution=[W, H])
        shots[(path, t)] = png
        Delete(view)
    Delete(src)
    if src is not reader:
        Delete(reader)

import matplotlib  # noqa: E402 (after ParaView: its own Python environment)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import cm, colors  # noqa: E402

rows, cols = len(a.files), len(times)
fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 1.25 * rows + 1.2), dpi=150, squeeze=False)
for i, path in enumerate(a.files):
    for j, t in enumerate(times):
        ax = axes[i][j]
        ax.imshow(plt.imread(shots[(path, t)]))
        ax.set_xticks([])
        ax.set_yticks([])
        for s in ax.spines.values():
            s.set_visible(False)
        if i == 0:
            ax.set_title(f"t = {t:g} s", fontsize=10)
        if j == 0:
            ax.set_ylabel(labels[i], fontsize=9)
sm = cm.ScalarMappable(norm=colors.Normalize(lo, hi), cmap="viridis")
fig.colorbar(sm, ax=axes, orientation="horizontal", fraction=0.06, pad=0.04,
             label={"speed": "velocity magnitude |(u, v)| [m/s]"}.get(a.var, a.var))
fig.suptitle(a.title, fontsize=11)
fig.savefig(a.output)
if not a.panels:
    for png in shots.values():
        os.remove(png)
    os.rmdir(tmp)
print(f"fig8: {a.output} ({rows} timelines x {cols} times, {a.var} from {lo:.3g} to {hi:.3g})")

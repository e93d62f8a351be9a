# Stock ParaView 5.11 (pvpython, no Rewind plugin) on the views of a run, checked against
# the run file with h5py / numpy (docs/file-format.md §7):
#  - the arrays are named with their units from /common/variable_units ("u [m∕s]");
#  - at each time of the time toolbar (the animation scene's time) the data shown is that
#    step's, value for value, and its field array `time` (the Information tab's data
#    arrays) is the step's `time` attribute, `step` its number;
#  - the Information tab's "Current data time" follows the time toolbar (ParaView 5.11
#    kept an AMR series' first time: the views are unstructured grids for that);
#  - in *Surface*, ParaView draws exactly the leaf cells that are not solid (cell_type 1):
#    the cells vtkGhostType leaves visible are those, and the represented cells number as
#    many; the oracle takes each grid's cells not under a child's bounding box;
#  - a screenshot shows the background at the cylinder's centre and the flow beside it.
#   pvpython views_stock.py RUN.h5 SCREENSHOT.png
# or in the paraview GUI (its --script takes no arguments): VIEWS_STOCK="RUN.h5 SHOT.png
# OUT.txt" paraview --script=views_stock.py --exit, the lines then also written to OUT.txt.
import os
import sys

import h5py
import numpy as np
import paraview.simple as pvs
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOImage import vtkPNGReader

gui = len(sys.argv) < 3  # the GUI's --script: arguments from the environment
path, shot, *report = os.environ["VIEWS_STOCK"].split() if gui else sys.argv[1:3]
out = open(report[0], "w", encoding="utf-8") if report else None
stem = os.path.splitext(os.path.basename(path))[0]
series = os.path.join(os.path.dirname(os.path.abspath(path)), stem + ".views", stem + ".hdf.series")
SLASH = "\u2215"  # how a view writes the '/' of a unit (an HDF5 name cannot hold '/')
fails = []


def say(line):
    print(line, flush=True)
    if out:
        out.write(line + "\n")
        out.flush()


def check(what, ok):
    say(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def oracle(s, block):
    """A step's expected view: per row its data, its visible-cell mask, the solid leaf centres."""
    sx, sy, sz = (int(b) for b in block)
    types = s["cell_type"][...].reshape(-1, sz, sy, sx)
    bbox, child_rows = s["bounding_box"][...], s["child_rows"][...]
    visible, centres = [], []
    for row in range(types.shape[0]):
        b = bbox[row]
        d = [(b[1] - b[0]) / sx, (b[3] - b[2]) / sy, (b[5] - b[4]) / sz]
        covered = np.zeros((sz, sy, sx), bool)
        for c in child_rows[row]:
            if c < 0:
                continue
            cb = bbox[c]
            lo = [int(round((cb[2 * a] - b[2 * a]) / d[a])) for a in range(3)]
            hi = [int(round((cb[2 * a + 1] - b[2 * a]) / d[a])) for a in range(3)]
            covered[lo[2]:hi[2], lo[1]:hi[1], lo[0]:hi[0]] = True
        solid_leaf = (~covered) & (types[row] == 1)
        visible.append(((~covered) & (types[row] != 1)).ravel())
        for k, j, i in zip(*np.nonzero(solid_leaf)):
            centres.append([b[0] + (i + 0.5) * d[0], b[2] + (j + 0.5) * d[1]])
    data = {v: s["cell_data"][v][...].astype(np.float64).reshape(types.shape[0], -1) for v in s["cell_data"]}
    return {"step": int(s.attrs["step"]), "visible": visible, "centres": centres, "data": data}


with h5py.File(path, "r") as f:
    domain = f["common"].attrs["domain"]
    block = f["common"].attrs["block_cells"]
    units = dict(zip(map(text, f["common/variable_names"][...]), map(text, f["common/variable_units"][...])))
    steps = {}
    for g in f["simulation"]:
        s = f["simulation"][g]
        if g.startswith("step_") and int(s.attrs["committed"]) == 1:
            steps[float(s.attrs["time"])] = oracle(s, block)

check("no Rewind plugin is loaded (stock ParaView)", not hasattr(pvs, "RewindRunFile"))
r = pvs.OpenDataFile(series)
say(f"reader {r.GetXMLName()}")
times = list(r.TimestepValues)
check(f"the time toolbar's times {times} are the run's step times {sorted(steps)}",
      np.allclose(times, sorted(steps), rtol=0, atol=1e-12))


def named(v):
    u = units.get(v, "")
    return f"{v} [{u.replace('/', SLASH)}]" if u else v


variables = sorted(next(iter(steps.values()))["data"])
names = list(r.CellData.keys())
check(f"the cell arrays {names} are the variables named with their units "
      f"{[named(v) for v in variables]}, and vtkGhostType",
      sorted(names) == sorted([named(v) for v in variables] + ["vtkGhostType"]))

view = pvs.GetActiveViewOrCreate("RenderView")
view.ViewSize = [800, 300]
view.OrientationAxesVisibility = 0
view.UseColorPaletteForBackground = 0
view.Background = [1, 0, 1]
d = pvs.Show(r, view)
d.Representation = "Surface"
pvs.ColorBy(d, ("CELLS", named("u")))
d.SetScalarBarVisibility(view, False)
view.CameraParallelProjection = 1
scene = pvs.GetAnimationScene()
scene.UpdateAnimationUsingDataTimeSteps()
for t in times:
    scene.AnimationTime = t  # what the time toolbar does
    pvs.Render(view)
    want = steps[min(steps, key=lambda x: abs(x - t))]
    dt = r.GetDataInformation().DataInformation.GetTime()
    check(f"t = {t}: the Information tab's Current data time {dt} is the step's time", dt == t)
    grid = r.GetClientSideObject().GetOutputDataObject(0)
    check(f"t = {t}: the view is one unstructured grid ({grid.GetClassName()})", grid.IsA("vtkUnstructuredGrid"))
    if not grid.IsA("vtkUnstructuredGrid"):
        continue
    cd = grid.GetCellData()
    same = True
    for v in variables:
        a = cd.GetArray(named(v))
        got = vtk_to_numpy(a).astype(np.float64) if a else None
        same &= got is not None and np.array_equal(got, want["data"][v].ravel())
    ghost = cd.GetArray("vtkGhostType")
    vis = (vtk_to_numpy(ghost) & 32) == 0 if ghost else np.ones(grid.GetNumberOfCells(), bool)
    vis_ok = np.array_equal(vis, np.concatenate(want["visible"]))
    shown = d.GetRepresentedDataInformation().GetNumberOfCells()  # what Surface draws
    expected = int(sum(x.sum() for x in want["visible"]))
    check(f"t = {t}: every cell value is step {want['step']}'s", same)
    check(f"t = {t}: Surface draws {shown} cells, the {expected} leaf cells that are not solid, exactly those",
          vis_ok and shown == expected)
    fd = r.GetDataInformation().DataInformation.GetFieldDataInformation()
    ta, sa = fd.GetArrayInformation("time"), fd.GetArrayInformation("step")
    tr = list(ta.GetComponentRange(0)) if ta else None
    sr = list(sa.GetComponentRange(0)) if sa else None
    check(f"t = {t}: the Information tab's field array time {tr} is the step's time, step {sr} its number "
          f"{want['step']}", tr == [t, t] and sr == [want["step"], want["step"]])

# The picture at the last time: the cylinder's centre shows the background, the flow beside it.
last = steps[times[-1]]
check("the last step has solid leaf cells (the cylinder)", len(last["centres"]) > 0)
cx, cy = np.mean(last["centres"], axis=0) if last["centres"] else (0.0, 0.0)
pvs.ResetCamera(view)
pvs.Render(view)
pvs.SaveScreenshot(shot, view, ImageResolution=[800, 300])
png = vtkPNGReader()
png.SetFileName(shot)
png.Update()
pix = png.GetOutput().GetPointData().GetScalars()
ren = view.GetRenderer()


def pixel_at(x, y):
    ren.SetWorldPoint(x, y, domain[5], 1.0)
    ren.WorldToDisplay()
    px, py, _ = ren.GetDisplayPoint()
    return [pix.GetComponent(int(round(py)) * 800 + int(round(px)), c) for c in range(3)]


def magenta(c):
    return c[0] > 200 and c[1] < 60 and c[2] > 200


colour = pixel_at(cx, cy)
check(f"Surface: the background (magenta) shows at the cylinder's centre ({cx:.3f}, {cy:.3f}): {colour}",
      magenta(colour))
wake = pixel_at(cx + 0.3, cy)
check(f"Surface: the flow is drawn at ({cx + 0.3:.3f}, {cy:.3f}): {wake}", not magenta(wake))
say("OK" if not fails else f"FAILED: {len(fails)}")

# What a ParaView user meets on opening a run file, checked
# against the file with h5py / numpy: the box widget starts on the domain; solid cells
# are hidden (vtkGhostType HIDDENCELL exactly where cell_type is 1) and not drawn (a
# screenshot's pixel at the cylinder's centre shows the background); the velocity is a
# vector (u, v, w) with its magnitude; every array carries its unit from
# /common/variable_units.  pvpython user_view.py PLUGIN FILE SCREENSHOT
import sys

import h5py
import numpy as np
from paraview.simple import *  # noqa: F401,F403
from paraview.vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.vtkCommonCore import vtkDataArray
from vtkmodules.vtkCommonDataModel import vtkDataSetAttributes
from vtkmodules.vtkIOImage import vtkPNGReader

plugin, path, shot = sys.argv[1:4]
LoadPlugin(plugin, remote=False, ns=globals())
fails = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


with h5py.File(path, "r") as f:
    box = f["common"].attrs["domain"]
    units = dict(zip([n.decode() if isinstance(n, bytes) else n for n in f["common/variable_names"][...]],
                     [u.decode() if isinstance(u, bytes) else u for u in f["common/variable_units"][...]]))
    steps = sorted((g for g in f["simulation"] if g.startswith("step_")), key=lambda g: int(g[5:]))
    last = [g for g in steps if int(f["simulation"][g].attrs["committed"]) == 1][-1]
    s = f["simulation"][last]
    file_types = s["cell_type"][...]
    file_u, file_v = s["cell_data/u"][...].astype(np.float64), s["cell_data/v"][...].astype(np.float64)
    file_w = s["cell_data/w"][...].astype(np.float64) if "w" in s["cell_data"] else np.zeros_like(file_u)
    t_last = float(s.attrs["time"])

# Item 10: the box starts on the domain (the widget's Position and Scale).
r = RewindRunFile(FileName=path)
lo, ext = [box[0], box[2], box[4]], [box[1] - box[0], box[3] - box[2], box[5] - box[4]]
check(f"BoxPosition {list(r.BoxPosition)} is the domain's lower corner {lo}", np.allclose(r.BoxPosition, lo))
check(f"BoxSize {list(r.BoxSize)} is the domain's extent {ext}", np.allclose(r.BoxSize, ext))

# Item 11, the data: ghost cells, velocity, units, against the file's last step.
r.UpdatePipeline(t_last)
mb = r.GetClientSideObject().GetOutputDataObject(0)
hidden_ok = vel_ok = mag_ok = units_ok = True
solid = pieces = 0
solid_centres = []
for level in range(mb.GetNumberOfBlocks()):
    mp = mb.GetBlock(level)
    for p in range(mp.GetNumberOfPieces()):
        img = mp.GetPiece(p)
        pieces += 1
        fd = img.GetFieldData()
        row = fd.GetArray("rewind_row").GetValue(0)
        stride = fd.GetArray("rewind_stride").GetValue(0)
        first = [int(fd.GetArray("rewind_first").GetComponent(0, c)) for c in range(3)]
        count = [max(d - 1, 1) for d in img.GetDimensions()]  # a 2-D case: planes
        sl = (row,) + tuple(slice(first[a], first[a] + count[a] * stride, stride) for a in (2, 1, 0))
        cd = dsa.WrapDataObject(img).CellData
        want_hidden = (file_types[sl].ravel() == 1)
        solid += int(want_hidden.sum())
        solid_centres += [[(b[0] + b[1]) / 2, (b[2] + b[3]) / 2] for b in
                          (img.GetCell(int(i)).GetBounds() for i in np.flatnonzero(want_hidden))]
        hidden_ok &= img.GetCellData().GetArray(vtkDataSetAttributes.GhostArrayName()) is not None
        if hidden_ok:
            hidden = (np.asarray(cd[vtkDataSetAttributes.GhostArrayName()]) & vtkDataSetAttributes.HIDDENCELL) != 0
            hidden_ok &= np.array_equal(hidden, want_hidden)
        want = np.stack([file_u[sl].ravel(), file_v[sl].ravel(), file_w[sl].ravel()], axis=1)
        vel = img.GetCellData().GetVectors()
        vel_ok &= vel is not None and vel.GetName() == "velocity" and np.allclose(np.asarray(cd["velocity"]), want)
        mag = img.GetCellData().GetArray("velocity_magnitude")
        mag_ok &= mag is not None and np.allclose(np.asarray(cd["velocity_magnitude"]), np.linalg.norm(want, axis=1))
        for name in ("u", "v", "p", "velocity", "velocity_magnitude"):
            a = img.GetCellData().GetArray(name)
            unit = units["u" if name.startswith("velocity") else name]
            units_ok &= a is not None and a.GetInformation().Get(vtkDataArray.UNITS_LABEL()) == unit
check(f"vtkGhostType hides exactly the file's solid cells (cell_type 1; {solid} of them in {pieces} grids)",
      hidden_ok and solid > 0)
check("'velocity' is the active vector array, (u, v, w) of the file", vel_ok)
check("'velocity_magnitude' is |(u, v, w)| of the file", mag_ok)
check(f"arrays carry their units from /common/variable_units ({units})", units_ok)
labels = mb.GetFieldData().GetAbstractArray("rewind_units")
check("field data rewind_units labels the variables for scalar bars (u [m/s])",
      labels is not None and "u [%s]" % units["u"] in [labels.GetValue(i) for i in range(labels.GetNumberOfValues())])

# Item 11, what the user sees: coloured by u, the cylinder's centre shows the background.
# The obstacle's centre: the mean centre of the file's solid cells (cell_type 1) shown.
v = GetActiveViewOrCreate("RenderView")
v.ViewSize = [800, 300]
v.OrientationAxesVisibility = 0
v.UseColorPaletteForBackground = 0
v.Background = [1, 0, 1]
d = Show(r, v)
ColorBy(d, ("CELLS", "u"))
d.SetScalarBarVisibility(v, False)
v.ViewTime = t_last
v.CameraParallelProjection = 1
ResetCamera(v)
Render(v)
cx, cy = np.mean(solid_centres, axis=0) if solid_centres else (0.0, 0.0)
ren = v.GetRenderer()


def pixel_at(x, y):
    """The screenshot's colour at world point (x, y) on the data's top face."""
    ren.SetWorldPoint(x, y, box[5], 1.0)
    ren.WorldToDisplay()
    px, py, _ = ren.GetDisplayPoint()
    return [pix.GetComponent(int(round(py)) * 800 + int(round(px)), c) for c in range(3)]


SaveScreenshot(shot, v, ImageResolution=[800, 300])
png = vtkPNGReader()
png.SetFileName(shot)
png.Update()
pix = png.GetOutput().GetPointData().GetScalars()
magenta = lambda c: c[0] > 200 and c[1] < 60 and c[2] > 200  # noqa: E731
colour = pixel_at(cx, cy)
check(f"the screenshot shows the background (magenta) at the cylinder's centre ({cx:.3f}, {cy:.3f}): {colour}",
      magenta(colour))
# ...and the flow a little downstream (the field is drawn, only the body is blank).
wake = pixel_at(cx + 0.3, cy)
check(f"the flow is drawn at ({cx + 0.3:.3f}, {cy:.3f}): {wake} is not the background", not magenta(wake))
print("OK" if not fails else "FAILED: %d" % len(fails))

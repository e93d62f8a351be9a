# Checks what gui_view.py saw in the paraview GUI (view.json, its screenshot) and the
# state saved after File → Open of a run file (QtTesting), by the properties a person
# sees: colouring, 2-D, the obstacle a hole, the annotation's text, colour ranges, the
# time axis. Oracles: the case file (the cylinder), h5py (the branch's steps).
# Prints "yes WHAT" / "no WHAT" per check, details indented.
#   gui_view_check.py VIEW.json STATE.pvsm VIEW.png CASE.toml BRANCH.h5
import os
import sys
import tomllib
import xml.etree.ElementTree as ET

import h5py
import matplotlib.image
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_checks import check, load_seen, say  # noqa: E402

view_json, state, png, case, branch = sys.argv[1:6]
seen = load_seen(view_json)





# Item 2: coloured by the velocity magnitude.
check("the live source is coloured by velocity_magnitude (cells)",
      lambda: (seen["colour"] == ["CELLS", "velocity_magnitude"], seen["colour"]))


def two_d():  # item 3
    cam, b = seen["camera"], seen["bounds"]
    look = np.subtract(cam["position"], cam["focal"])
    return ("2D" in seen["interaction"] and b[4] == b[5] and abs(look[0]) + abs(look[1]) < 1e-9 * abs(look[2])
            and np.allclose(cam["up"], [0, 1, 0]), (seen["interaction"], b, cam))


check("the 2-D case is a plane (z extent 0), the view in 2D interaction, the camera down z", two_d)


def pixels():
    """The screenshot, its background mask and the world coordinates of its pixels: in
    2D the camera is parallel, 2 * scale world units over the image's height, the focal
    point at its centre."""
    cam = seen["camera"]
    img = (matplotlib.image.imread(png)[:, :, :3] * 255).round()
    h, w = img.shape[:2]
    per_px = 2 * cam["scale"] / h
    ys, xs = np.mgrid[0:h, 0:w]
    wx = cam["focal"][0] + (xs + 0.5 - w / 2) * per_px
    wy = cam["focal"][1] - (ys + 0.5 - h / 2) * per_px
    background = np.all(np.abs(img - np.round(np.array(seen["background"]) * 255)) <= 3, axis=2)
    return img, background, wx, wy


def hole():  # item 3: the cylinder (the case file's) is a hole, the flow around it drawn
    _, background, wx, wy = pixels()
    ob = tomllib.load(open(case, "rb"))["obstacle"][0]
    dist = np.hypot(wx - ob["center"][0], wy - ob["center"][1])
    inside, ring = dist < 0.6 * ob["radius"], (dist > 1.3 * ob["radius"]) & (dist < 2.0 * ob["radius"])
    return (inside.sum() > 20 and background[inside].all() and (~background[ring]).mean() > 0.95,
            (int(inside.sum()), float(background[inside].mean()), float((~background[ring]).mean())))


def coloured():
    img, background, wx, wy = pixels()
    domain = (wx > 0.02) & (wx < 2.18) & (wy > 0.02) & (wy < 0.39)
    colours = len(np.unique(img[domain].reshape(-1, 3), axis=0))
    return colours > 50 and (~background[domain]).mean() > 0.9, (colours, float((~background[domain]).mean()))


check("screenshot: the cylinder is a clean hole (background inside, no wall), the flow around it drawn", hole)
check("screenshot: the domain is coloured (many colours), not one", coloured)


def follows():  # item 6: after each refresh (the panel's Follow) the colour range is the data's
    ranges = seen["ranges"]
    return (all(d is not None and np.allclose(d, l, rtol=1e-9, atol=0) for d, l in ranges)
            and any(not np.allclose(ranges[0][0], d) for d, _ in ranges[1:]), ranges)


check("after every refresh the colour range is the data's new range (the data's range changed)", follows)


def annotated():  # item 4: the Annotation port says the step and time of the field data
    step, t = seen["step_time"]
    return (seen["annotation"] == "step %d  t = %.6g" % (step, t)
            and seen["annotation_representation"] == "TextSourceRepresentation", (seen.get("annotation"), step, t))


check("the live source's Annotation port is text in the view: its step and time", annotated)
# Item 5: no bogus time off the axis; after the branch the axis ends in the branch's file.
check("off the time axis the live source has no data time (no [1e+299, -1e+299])",
      lambda: (not seen["off_axis"]["has_time"], seen["off_axis"]))


def branch_axis():
    with h5py.File(branch, "r") as f:
        s = [f["simulation"][g] for g in f["simulation"] if g.startswith("step_")]
        times = sorted(float(x.attrs["time"]) for x in s if int(x.attrs["committed"]) == 1)
    axis = seen["axis"]
    return (axis["times"] and axis["last_file"] == seen["branch"]["file"] and axis["times"][-1] in times
            and axis["has_time"] and axis["range"] == [axis["times"][0], axis["times"][-1]], (axis, times[-3:]))


check("after a branch in the job the time axis ends at the branch's step, its window from the branch's file",
      branch_axis)
# File → Open in the GUI (saved state): the reader coloured, its scalar bar titled with
# the unit, the view in 2D, the Annotation port shown as text.
root = ET.parse(state).getroot()
proxies = {p.get("id"): p for p in root.iter("Proxy")}


def prop(p, name):
    e = next((q for q in p.iter("Property") if q.get("name") == name), None)
    return [x.get("value") for x in e.iter("Element")] if e is not None else []


def proxy_input(p):
    e = next((q for q in p.iter("Property") if q.get("name") == "Input"), None)
    x = e.find("Proxy") if e is not None else None
    return (x.get("value"), x.get("output_port")) if x is not None else (None, None)


reader = next((i for i, p in proxies.items() if p.get("group") == "sources" and p.get("type") == "RewindReader"), None)
reprs = [p for p in proxies.values() if p.get("group") == "representations" and proxy_input(p)[0] == reader]
window = [p for p in reprs if p.get("type") != "TextSourceRepresentation" and proxy_input(p)[1] == "0"
          and prop(p, "ColorArrayName")]
text = [p for p in reprs if p.get("type") == "TextSourceRepresentation" and proxy_input(p)[1] == "1"]
say(bool(window) and prop(window[0], "ColorArrayName")[-1:] == ["velocity_magnitude"]
    and prop(window[0], "Visibility") == ["1"],
    "File → Open: the run file is shown coloured by velocity_magnitude", [prop(p, "ColorArrayName") for p in window])
bars = [p for p in proxies.values() if p.get("type") == "ScalarBarWidgetRepresentation" and prop(p, "Visibility") == ["1"]]
say(any(prop(p, "Title") == ["velocity_magnitude [m/s]"] for p in bars),
    "File → Open: its scalar bar is shown, titled 'velocity_magnitude [m/s]'", [prop(p, "Title") for p in bars])
views = [p for p in proxies.values() if p.get("group") == "views" and p.get("type") == "RenderView"]
say(bool(views) and prop(views[0], "InteractionMode") == ["1"], "File → Open: the view is in 2D interaction mode",
    [prop(p, "InteractionMode") for p in views])
say(bool(text) and prop(text[0], "Visibility") == ["1"], "File → Open: its Annotation port is shown as text in the view",
    [p.get("type") + ":" + str(proxy_input(p)) for p in reprs])

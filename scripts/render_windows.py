#!/usr/bin/python3
"""Draw sliding windows (`rewind window ... --out W.json`) next to each other, one above
the other, on one colour scale: the live windows of several futures of one run, taken
while they compute, so they compare at a glance.

usage: render_windows.py W.json [MORE.json ...] -o out.png [--labels A,B,...]
                         [--var speed|u|v|p] [--title T]

Each panel is titled with its label (default: the window's file), step, time and level;
solid cells (cell_type 1) are grey. --var speed draws |(u, v)|, so the windows must hold
u and v. Prints the PNG's path. Needs /usr/bin/python3 with python3-matplotlib and numpy.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

PROG = "render_windows"


def fail(msg):
    sys.exit(f"{PROG}: {msg}")


def field(w, var, path):
    """The window's values of `var` (speed: |(u, v)|), one array over all its cells."""
    names = w["variables"]

    def values(name):
        if name not in names:
            fail(f"{path}: no variable '{name}' in the window (it holds {', '.join(names) or 'none'})")
        return np.asarray(w["values"][names.index(name)], dtype=np.float64)

    return np.hypot(values("u"), values("v")) if var == "speed" else values(var)


def pieces(w, values):
    """(extent, 2-D masked array) per piece: its z = 0 layer, solid cells masked."""
    solid = np.asarray(w["cell_type"]) == 1 if w["cell_type"] else np.zeros(values.size, dtype=bool)
    offset = 0
    for p in w["pieces"]:
        cx, cy, cz = p["count"]
        n = cx * cy * cz
        layer = slice(offset, offset + cx * cy)  # x fastest, then y, then z
        a = np.ma.array(values[layer], mask=solid[layer]).reshape(cy, cx)
        (ox, oy, _), (sx, sy, _) = p["origin"], p["spacing"]
        yield (ox, ox + cx * sx, oy, oy + cy * sy), a
        offset += n


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("windows", nargs="+", help="rewind window --out W.json dumps")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--labels", help="comma-separated panel titles (default: each window's file)")
    ap.add_argument("--var", default="speed")
    ap.add_argument("--title", default="Live windows of the futures, side by side")
    a = ap.parse_args()
    labels = a.labels.split(",") if a.labels else None
    if labels and len(labels) != len(a.windows):
        fail(f"{len(labels)} labels for {len(a.windows)} windows")
    drawn = []
    for path in a.windows:
        try:
            with open(path) as f:
                w = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"{path}: not a window dump ({e})")
        if not w.get("pieces"):
            fail(f"{path}: an empty window")
        drawn.append((path, w, list(pieces(w, field(w, a.var, path)))))
    fluid = np.concatenate([x.compressed() for _, _, ps in drawn for _, x in ps])
    if not fluid.size:
        fail("no fluid cell in any window")
    lo, hi = float(fluid.min()), float(fluid.max())  # one colour scale for all
    xs = [e for _, _, ps in drawn for e, _ in ps]
    x0, x1 = min(e[0] for e in xs), max(e[1] for e in xs)
    y0, y1 = min(e[2] for e in xs), max(e[3] for e in xs)
    height = 8.0 * (y1 - y0) / (x1 - x0) + 0.6  # inches per panel: the box's aspect, and its title
    fig, axes = plt.subplots(len(drawn), 1, figsize=(10, height * len(drawn) + 0.6), squeeze=False,
                             layout="constrained")
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("0.6")
    for i, (path, w, ps) in enumerate(drawn):
        ax = axes[i][0]
        for extent, arr in ps:
            im = ax.imshow(arr, origin="lower", extent=extent, cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")
        label = labels[i] if labels else w["file"]
        ax.set_title(f"{label}: step {w['step']}, t = {w['time']:.3f} s, level {w['level']}", fontsize=10)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_aspect("equal")
        ax.set_ylabel("y [m]")
    axes[-1][0].set_xlabel("x [m]")
    fig.colorbar(im, ax=[r[0] for r in axes], label=f"{a.var} [m/s]" if a.var != "p" else "p")
    fig.suptitle(a.title)
    fig.savefig(a.output, dpi=110)
    print(a.output)


if __name__ == "__main__":
    main()

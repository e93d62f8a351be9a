"""Plot a window of a Rewind file on the x-y plane, offline (no server), with the rewind package.
(The rewind package installed -- python/README.md -- or PYTHONPATH=python.)

    python3 examples/python/file_window.py cylinder.h5 --time t=2 --var u \
        --box 0,0,0,2.2,0.41,0 --budget 20000 --out u.png

--time takes what every rewind command takes (latest, N, #i, t=T: the step in force at
T); a branch file's times reach back through its parents (its timeline). The window is
the one `rewind window FILE --time ... --box ... --budget ...` returns; its pieces are
stitched into one image on the finest level they use (coarse cells repeated). Prints the
steps of the timeline and what was drawn.
"""
import argparse
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rewind  # noqa: E402 - pip install ./python (python/README.md), or PYTHONPATH=python


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="a Rewind run file (or a branch of one)")
    ap.add_argument("--time", default="latest", help="latest, N, #i or t=T (default: latest)")
    ap.add_argument("--box", default=None, help="x0,y0,z0,x1,y1,z1 (default: the whole domain)")
    ap.add_argument("--budget", type=int, default=20000, help="most values (0: every leaf)")
    ap.add_argument("--var", default="p")
    ap.add_argument("--out", default="window.png")
    a = ap.parse_args()
    try:
        with rewind.open(a.file) as run:
            timeline = run.timeline()
            print(f"{a.file}: {len(timeline)} steps on its timeline, t = {timeline.times[0]:g} .. {timeline.times[-1]:g}")
            step = timeline.at(a.time) if a.time.startswith("t=") else run.select(a.time)
            box = None
            if a.box:
                b = [float(x) for x in a.box.split(",")]
                box = (b[:3], b[3:])
            w = step.window(box, a.budget, [a.var])
            plot(w, a.var, a.out)
    except rewind.RewindError as e:
        sys.exit(f"file_window.py: error: {e}")


def plot(w, var, out):
    img = w.image(var, resample=True)
    fig, ax = plt.subplots(figsize=(10, 4))
    im = ax.imshow(img.values[0], origin="lower", extent=img.extent, cmap="viridis", interpolation="nearest")
    fig.colorbar(im, ax=ax, label=var)
    ax.set_aspect("equal")
    levels = sorted({p["level"] for p in w.pieces})
    ax.set_title(f"{var}, step {w.step} (t={w.time:.4g}) of {os.path.basename(w.file)}, levels {levels}")
    fig.savefig(out, dpi=100, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {out}: step {w.step} of {w.file}, t = {w.time:.6g}, levels {levels}, {len(w.pieces)} pieces, "
          f"{w.cells} cells, image {img.values.shape[2]}x{img.values.shape[1]}")


if __name__ == "__main__":
    main()

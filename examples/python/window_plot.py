"""Plot windows of a variable on the x-y plane, from `rewind serve` or a running job.
(The rewind package installed -- python/README.md -- or PYTHONPATH=python.)

    python3 examples/python/window_plot.py 127.0.0.1:7400 --box 0,0,0,2.2,0.41,0 \
        --budget 20000 --var p --out window.png [--time latest] [--token-file F]

Against a running job (`mpirun -np 4 rewind run CASE --listen 127.0.0.1:7400`), the
default time "live" is the run's current state, and `--frames N --every S` follows it:
N pictures S seconds apart (window-000.png, ...), each titled with the run's status.

Each piece is drawn at its own place and resolution (coarse pieces show as big cells);
for 3-D windows the lowest z layer of each piece is drawn.
"""
import argparse
import os
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rewind  # noqa: E402 - pip install ./python (python/README.md), or PYTHONPATH=python


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("server", help="HOST:PORT of rewind serve or of rewind run --listen")
    ap.add_argument("--box", required=True, help="x0,y0,z0,x1,y1,z1")
    ap.add_argument("--budget", type=int, default=20000)
    ap.add_argument("--var", default="p")
    ap.add_argument("--time", default="live")
    ap.add_argument("--token", default=None, help="visible to every user in ps: prefer --token-file or REWIND_TOKEN")
    ap.add_argument("--token-file", default=None, help="file holding the token (chmod 600); default: the environment")
    ap.add_argument("--out", default="window.png")
    ap.add_argument("--frames", type=int, default=1, help="pictures to take (a running job: one per --every)")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between pictures")
    a = ap.parse_args()
    b = [float(x) for x in a.box.split(",")]
    stem, ext = os.path.splitext(a.out)
    with rewind.connect(a.server, token=a.token, token_file=a.token_file, timeout=30) as c:
        for i in range(a.frames):
            if i:
                time.sleep(a.every)
            w = c.window((b[:3], b[3:]), a.budget, [a.var], time=a.time)
            state = c.status()["state"] if c.offers("status") else ""
            plot(w, a.var, b, f"{stem}-{i:03d}{ext}" if a.frames > 1 else a.out, state)


def plot(w, var, b, out, state):
    fig, ax = plt.subplots(figsize=(10, 4))
    lo = float(w.values[var].min()) if w.cells else 0
    hi = float(w.values[var].max()) if w.cells else 1
    for p in w:  # rewind.Piece: values (nz, ny, nx), origin, spacing, count
        (x, y, _), (dx, dy, _), (nx, ny, _) = p.origin, p.spacing, p.count
        im = ax.imshow(p.values[var][0], origin="lower", extent=(x, x + nx * dx, y, y + ny * dy), vmin=lo, vmax=hi,
                       cmap="viridis", interpolation="nearest")
    if w.pieces:
        fig.colorbar(im, ax=ax, label=var)
    ax.set_xlim(b[0], b[3])
    ax.set_ylim(b[1], b[4])
    ax.set_aspect("equal")
    run = f" ({state})" if state else ""
    ax.set_title(f"{var}, step {w.step} (t={w.time:.4g}){run}, level {w.level}, {w.cells} cells, {len(w.pieces)} pieces")
    fig.savefig(out, dpi=100, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {out}: step {w.step}, t = {w.time:.6g}{run}, level {w.level}, {len(w.pieces)} pieces, {w.cells} cells")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Plot a `rewind run` monitor CSV as a PNG.

usage: plot_monitor.py MONITOR.csv -o out.png [--columns a,b,...] [--title T]

Without --columns the plot shows what the CSV holds: kinetic energy; drag and lift
coefficients (cylinder); Nusselt numbers (heated cavity); the Taylor-Green error;
pressure-solver cycles and the divergence after projection. Needs numpy-free
matplotlib only (Debian: /usr/bin/python3 with python3-matplotlib).
"""
import argparse
import csv
import math
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plot a rewind monitor CSV")
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--columns", help="comma-separated columns, one panel each (default: automatic)")
    ap.add_argument("--title")
    a = ap.parse_args(argv)

    with open(a.csv) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_monitor: {a.csv}: no data rows")
    cols = list(rows[0].keys())

    def col(name):
        out = []
        for r in rows:
            try:
                out.append(float(r[name]))
            except (TypeError, ValueError):
                out.append(math.nan)
        return out

    if "time" not in cols:
        sys.exit(f"plot_monitor: {a.csv}: no 'time' column (not a rewind monitor file?)")
    if a.columns:
        panels = [[c.strip()] for c in a.columns.split(",")]
        for p in panels:
            if p[0] not in cols:
                sys.exit(f"plot_monitor: {a.csv}: no column '{p[0]}' (have: {', '.join(cols)})")
    else:
        panels = [["kinetic_energy"]]
        if "cd" in cols:
            panels += [["cd"], ["cl"]]
        if "nu_xmin" in cols:
            panels += [["nu_xmin", "nu_xmax"]]
        if "tg_error" in cols:
            panels += [["tg_error"]]
        panels += [["pressure_cycles"], ["max_divergence"]]

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = col("time")
    # Skip the t = 0 row (monitors before the first step) in log panels.
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 1.6 * len(panels) + 0.6), dpi=90, sharex=True)
    if len(panels) == 1:
        axes = [axes]
    for ax, names in zip(axes, panels):
        for n in names:
            y = col(n)
            ax.plot(t, y, lw=1, label=n)
            if n in ("max_divergence", "tg_error") and any(v > 0 for v in y):
                ax.set_yscale("log")
            elif n in ("cd", "cl", "cl_z", "dp") and len(t) > 20:
                # Scale to the flow, not to the impulsive start: the first 5 % of the
                # time (the start-up spike of the forces) may leave the frame.
                t0 = t[0] + 0.05 * (t[-1] - t[0])
                late = [v for tt, v in zip(t, y) if tt >= t0 and v == v]
                if late:
                    lo, hi = min(late), max(late)
                    pad = 0.1 * (hi - lo) or 0.1 * abs(hi) or 1.0
                    ax.set_ylim(lo - pad, hi + pad)
        ax.set_ylabel(names[0] if len(names) == 1 else "Nu")
        if len(names) > 1:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time")
    fig.suptitle(a.title or a.csv, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.output)
    print(f"plot: {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

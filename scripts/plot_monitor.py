#!/usr/bin/python3
"""Plot `rewind run` monitor CSVs as a PNG: one panel per quantity, one line per file.

usage: plot_monitor.py MONITOR.csv [MORE.csv ...] -o out.png [--columns a,b,...]
                       [--labels A,B,...] [--title T]

Without --columns the plot shows what the first CSV holds: kinetic energy; drag and
lift coefficients (cylinder); Nusselt numbers (heated cavity); the Taylor-Green error;
pressure-solver cycles and the divergence after projection. Several CSVs (a run and
its branches) share the panels and the time axis, so timelines compare at a glance.
Needs numpy-free matplotlib only (Debian: /usr/bin/python3 with python3-matplotlib).
"""
import argparse
import csv
import math
import os
import sys


PROG = "plot_monitor"


def fail(message):
    """One line on stderr, exit 1."""
    sys.exit(f"{PROG}: error: {message}")


def read(path):
    """The CSV's columns as float lists (unparsable cells: nan)."""
    try:
        with open(path, "rb") as f:
            if f.read(8) == b"\x89HDF\r\n\x1a\n":
                fail(f"{path} is an HDF5 file; plot takes a run's monitor CSV (rewind run --monitor, or OUTPUT.monitor.csv)")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail(f"{path}: not a readable CSV text file ({getattr(e, 'strerror', None) or e.__class__.__name__})")
    if not rows:
        fail(f"{path}: no data rows")
    if "time" not in rows[0]:
        fail(f"{path}: no 'time' column (not a rewind monitor file?)")
    out = {}
    for name in rows[0]:
        col = []
        for r in rows:
            try:
                col.append(float(r[name]))
            except (TypeError, ValueError):
                col.append(math.nan)
        out[name] = col
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plot rewind monitor CSVs")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--columns", help="comma-separated columns, one panel each (default: automatic)")
    ap.add_argument("--labels", help="comma-separated legend labels, one per CSV (default: the file names)")
    ap.add_argument("--title")
    ap.add_argument("--prog", help=argparse.SUPPRESS)  # the name errors start with (rewind plot)
    a = ap.parse_args(argv)
    global PROG
    PROG = a.prog or PROG

    data = [read(p) for p in a.csv]
    labels = a.labels.split(",") if a.labels else [os.path.basename(p) for p in a.csv]
    if len(labels) != len(a.csv):
        fail(f"--labels has {len(labels)} labels for {len(a.csv)} files")
    cols = list(data[0].keys())
    if a.columns:
        panels = [[c.strip()] for c in a.columns.split(",")]
        for path, d in zip(a.csv, data):
            for p in panels:
                if p[0] not in d:
                    fail(f"{path}: no column '{p[0]}' (have: {', '.join(d)})")
    else:
        panels = [["kinetic_energy"]]
        if "cd" in cols:
            panels += [["cd"], ["cl"]]
        if "nu_xmin" in cols:
            panels += [["nu_xmin", "nu_xmax"]]
        if "tg_error" in cols:
            panels += [["tg_error"]]
        panels += [["pressure_cycles"], ["max_divergence"]]
        panels = [p for p in panels if all(n in d for d in data for n in p)]

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(f"needs matplotlib for {sys.executable} (Debian: apt-get install python3-matplotlib)")

    several = len(data) > 1
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 1.6 * len(panels) + 0.6), dpi=90, sharex=True)
    if len(panels) == 1:
        axes = [axes]
    t_all = [t for d in data for t in d["time"]]
    t_lo, t_hi = min(t_all), max(t_all)
    for ax, names in zip(axes, panels):
        late = []
        for d, label in zip(data, labels):
            for n in names:
                t, y = d["time"], d[n]
                ax.plot(t, y, lw=1, label=f"{label}: {n}" if several and len(names) > 1 else label if several else n)
                if n in ("max_divergence", "tg_error") and any(v > 0 for v in y):
                    ax.set_yscale("log")
                # Scale forces to the flow, not to an impulsive start: the first 5 % of
                # each file's time (the start-up spike of a run or a branch) may leave
                # the frame.
                t_from = t[0] + 0.05 * (t_hi - t_lo)
                late += [v for tt, v in zip(t, y) if tt >= t_from and v == v]
        if names[0] in ("cd", "cl", "cl_z", "dp") and len(late) > 20:
            lo, hi = min(late), max(late)
            pad = 0.1 * (hi - lo) or 0.1 * abs(hi) or 1.0
            ax.set_ylim(lo - pad, hi + pad)
        ax.set_ylabel(names[0] if len(names) == 1 else "Nu")
        if several or len(names) > 1:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time")
    fig.suptitle(a.title or ", ".join(a.csv), fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(a.output)
    except (OSError, ValueError) as e:
        fail(f"cannot write {a.output}: {getattr(e, 'strerror', None) or e}")
    print(f"plot: {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

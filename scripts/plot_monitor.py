#!/usr/bin/python3
"""Plot `rewind run` monitor CSVs as a PNG: one panel per quantity, one line per file.

usage: plot_monitor.py MONITOR.csv [MORE.csv ...] -o out.png [--columns a,b,...]
                       [--labels A,B,...] [--title T] [--describe]
                       [--follow [--follow-seconds N]]

Without --columns the plot shows what the first CSV holds: kinetic energy; drag and
lift coefficients (cylinder); Nusselt numbers (heated cavity); the Taylor-Green error;
pressure-solver cycles and the divergence after projection. Several CSVs (a run and
its branches) share the panels and the time axis, so timelines compare at a glance.
Every panel is scaled to the flow after the first 5 % of the time (an impulsive start
may leave the frame), axes carry units, log axes label enough ticks to be read, and
the title is the case name the CSV's "# case:" line records. --describe prints each
panel's label, scale, limits and tick labels (what a test can check without eyes).
--follow redraws the PNG (replaced whole) as the CSVs grow — runs, or futures of one
run, while they compute; a CSV not there yet is waited for — until none has grown for
--follow-seconds or Ctrl-C.
Needs numpy-free matplotlib only (Debian: /usr/bin/python3 with python3-matplotlib).
"""
import argparse
import csv
import math
import os
import re
import sys
import time


PROG = "plot_monitor"


def fail(message):
    """One line on stderr, exit 1."""
    sys.exit(f"{PROG}: error: {message}")


# Axis labels with units (monitors are per unit density: kinematic pressure, energy
# in m^5/s^2 = J / (kg/m^3)).
UNITS = {
    "time": "time [s]", "dt": "dt [s]", "kinetic_energy": "kinetic energy [m⁵/s²]",
    "max_velocity": "max |u| [m/s]", "max_divergence": "max |div u| [1/s]",
    "pressure_cycles": "pressure cycles", "pressure_residual": "pressure residual [1/s²]",
    "cd": "drag coefficient cd [-]", "cl": "lift coefficient cl [-]", "cl_z": "cl_z [-]",
    "dp": "Δp front-back [m²/s²]", "strouhal": "Strouhal number [-]", "tg_error": "Taylor-Green error [-]",
}


def label_of(names):
    if len(names) > 1 and all(n.startswith("nu_") for n in names):
        return "Nusselt number [-]"
    return UNITS.get(names[0], names[0])


def read(path, following=False):
    """The CSV's columns as float lists (unparsable cells: nan), and its case name.
    following: the file is still being written, so a last line without its newline is
    not read yet, and a file without rows yet, or not there yet (a future's CSV its run
    has not created), is None (not drawn yet)."""
    if following and not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            if f.read(8) == b"\x89HDF\r\n\x1a\n":
                fail(f"{path} is an HDF5 file; plot takes a run's monitor CSV (rewind run --monitor, or OUTPUT.monitor.csv)")
        with open(path, newline="") as f:
            text = f.read()
        lines = text.splitlines()
        if following and lines and not text.endswith("\n"):
            lines.pop()
        case = ""
        for line in lines:
            if line.startswith("# case:"):
                case = line[len("# case:"):].strip()
        rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail(f"{path}: not a readable CSV text file ({getattr(e, 'strerror', None) or e.__class__.__name__})")
    if not rows and following:
        return None
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
    return out, case


def set_limits(ax, lo, hi, log):
    """Y limits around [lo, hi] with a margin; on a log axis, ticks at 1, 2, 5 x 10^k
    labelled when the range spans few decades (matplotlib labels only powers of ten)."""
    if not log:
        pad = 0.1 * (hi - lo) or 0.1 * abs(hi) or 1.0
        ax.set_ylim(lo - pad, hi + pad)
        return
    from matplotlib import ticker
    ax.set_ylim(lo / 1.5, hi * 1.5)
    decades = math.log10(hi * 1.5) - math.log10(lo / 1.5)
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0,) if decades > 3 else (1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.LogFormatterSciNotation(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def run_label(csv_path):
    """The legend label of a CSV: its file name, and for a branch the change it made, read
    from the run file beside it (OUT.monitor.csv -> OUT.h5, /common/lineage/changes):
    "fast.monitor.csv (boundary.xmin.velocity=[2.25, 0, 0])"."""
    name = os.path.basename(csv_path)
    h5 = csv_path[: -len(".monitor.csv")] + ".h5" if csv_path.endswith(".monitor.csv") else None
    if not h5 or not os.path.exists(h5):
        return name
    try:
        import h5py
        with h5py.File(h5, "r") as f:
            changes = [c.decode() if isinstance(c, bytes) else str(c) for c in f["/common/lineage/changes"][()]]
    except Exception:  # not a Rewind file, no h5py: the file name alone
        return name
    return f"{name} ({', '.join(changes)})" if changes else name


def plain(label):
    """A tick label as a person reads it: matplotlib's mathtext ("$\\mathdefault{10^{-5}}$")
    as plain text ("10^-5", "2×10^-3")."""
    t = label.replace("$", "").replace("\\mathdefault", "").replace("\\mathregular", "")
    t = t.replace("\\times", "×").replace("\\minus", "−").replace("\\", "")
    t = re.sub(r"\^\{([^{}]*)\}", r"^\1", t)
    return t.replace("{", "").replace("}", "").strip()


def describe(fig, axes):
    """One line per panel: label | scale | limits | visible tick labels (plain text); then the title."""
    fig.canvas.draw()
    print(f"title: {fig._suptitle.get_text()}")
    for ax in axes:
        lo, hi = ax.get_ylim()
        ticks = [plain(t.get_text()) for t in ax.get_yticklabels() if t.get_text() and lo <= t.get_position()[1] <= hi]
        print(f"panel: {ax.get_ylabel()} | {ax.get_yscale()} | {lo:.6g} {hi:.6g} | {' '.join(ticks)}")
    print(f"xlabel: {axes[-1].get_xlabel()}")
    handles = axes[0].get_legend_handles_labels()[1] if axes[0].get_legend() else []
    if handles:
        print(f"legend: {' | '.join(handles)}")


def panels_of(a, data):
    """The panels: --columns, one each, or what every CSV holds of the automatic ones."""
    if a.columns:
        panels = [[c.strip()] for c in a.columns.split(",")]
        for path, d in zip(a.csv, data):
            for p in panels:
                if p[0] not in d:
                    fail(f"{path}: no column '{p[0]}' (have: {', '.join(d)})")
        return panels
    cols = list(data[0].keys())
    panels = [["kinetic_energy"]]
    if "cd" in cols:
        panels += [["cd"], ["cl"]]
    if "nu_xmin" in cols:
        panels += [["nu_xmin", "nu_xmax"]]
    if "tg_error" in cols:
        panels += [["tg_error"]]
    panels += [["pressure_cycles"], ["max_divergence"]]
    return [p for p in panels if all(n in d for d in data for n in p)]


def draw(plt, a, data, labels, cases):
    """The figure of the CSVs' rows: one panel per quantity, one line per file."""
    panels = panels_of(a, data)
    several = len(data) > 1
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 1.6 * len(panels) + 0.8), dpi=90, sharex=True)
    if len(panels) == 1:
        axes = [axes]
    t_all = [t for d in data for t in d["time"]]
    t_lo, t_hi = min(t_all), max(t_all)
    for ax, names in zip(axes, panels):
        late, log = [], False
        for d, label in zip(data, labels):
            for n in names:
                t, y = d["time"], d[n]
                ax.plot(t, y, lw=1, label=f"{label}: {n}" if several and len(names) > 1 else label if several else n)
                log = log or (n in ("max_divergence", "tg_error", "pressure_residual") and any(v > 0 for v in y))
                # Scale to the flow, not to an impulsive start: the first 5 % of each
                # file's time (the start-up spike of a run or a branch) may leave the frame.
                t_from = t[0] + 0.05 * (t_hi - t_lo)
                late += [v for tt, v in zip(t, y) if tt >= t_from and math.isfinite(v)]
        if log:
            ax.set_yscale("log")
            late = [v for v in late if v > 0]
        if len(late) > 3:
            set_limits(ax, min(late), max(late), log)
        ax.set_ylabel(label_of(names), fontsize=8)
        if several or len(names) > 1:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(UNITS["time"])
    title = a.title or (cases[0] if cases and all(c == cases[0] for c in cases) else ", ".join(cases or a.csv))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig, axes


def save(fig, output):
    """Writes the PNG whole or not at all: a viewer that reloads it never sees half a file."""
    tmp = os.path.join(os.path.dirname(os.path.abspath(output)), f".{os.path.basename(output)}.part.png")
    try:
        fig.savefig(tmp)
        os.replace(tmp, output)
    except (OSError, ValueError) as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        fail(f"cannot write {output}: {getattr(e, 'strerror', None) or e}")


def plot_once(plt, a, labels, following=False):
    """Reads every CSV and writes the figure; returns the rows each file had (None: not
    drawn, a file being followed has no rows yet)."""
    read_all = [read(p, following) for p in a.csv]
    if None in read_all:
        return None  # a file without rows yet: drawn once every file has some
    data = [d for d, _ in read_all]
    cases = [c for _, c in read_all if c]
    fig, axes = draw(plt, a, data, labels, cases)
    if a.describe:
        describe(fig, axes)
    save(fig, a.output)
    plt.close(fig)
    return [len(d["time"]) for d in data]


def sizes(paths):
    return [os.path.getsize(p) if os.path.exists(p) else -1 for p in paths]


def follow(plt, a, labels):
    """Redraws whenever a CSV has grown, until none has grown for --follow-seconds (a run
    that ended, or stalled) or the user interrupts (Ctrl-C: the last figure stays)."""
    seen, quiet_since, redraws, pending = None, time.monotonic(), 0, True
    missing = [p for p in a.csv if not os.path.exists(p)]
    if missing:
        print(f"plot: waiting for {', '.join(missing)} (not there yet)", flush=True)
    try:
        while True:
            now = sizes(a.csv)
            if now != seen:
                seen, quiet_since, pending = now, time.monotonic(), True
            rows = plot_once(plt, a, labels, following=True) if pending else None
            if rows is not None:  # drawn (a file without rows yet: not yet)
                pending, redraws = False, redraws + 1
                print(f"plot: {a.output} ({', '.join(f'{os.path.basename(p)} {n} rows' for p, n in zip(a.csv, rows))})",
                      flush=True)
            if time.monotonic() - quiet_since >= a.follow_seconds:
                break
            time.sleep(min(a.interval, a.follow_seconds))
        why = f"no file grew for {a.follow_seconds:g} s"
    except KeyboardInterrupt:
        why = "interrupted"
    print(f"plot: followed {len(a.csv)} file{'s' if len(a.csv) > 1 else ''}, {redraws} "
          f"redraw{'s' if redraws != 1 else ''}; stopped: {why}")
    if redraws == 0:
        fail(f"no rows to draw: {', '.join(a.csv)}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plot rewind monitor CSVs")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--columns", help="comma-separated columns, one panel each (default: automatic)")
    ap.add_argument("--labels", help="comma-separated legend labels, one per CSV (default: the file names, a "
                    "branch's with the change it made)")
    ap.add_argument("--title", help="plot title (default: the case name the CSV records)")
    ap.add_argument("--describe", action="store_true", help="print each panel's label, scale, limits and ticks")
    ap.add_argument("--follow", action="store_true", help="redraw as the CSVs grow")
    ap.add_argument("--follow-seconds", type=float, default=30.0,
                    help="with --follow: stop once no CSV has grown for this many seconds (default 30)")
    ap.add_argument("--interval", type=float, default=1.0, help=argparse.SUPPRESS)  # seconds between looks
    ap.add_argument("--prog", help=argparse.SUPPRESS)  # the name errors start with (rewind plot)
    a = ap.parse_args(argv)
    global PROG
    PROG = a.prog or PROG
    labels = a.labels.split(",") if a.labels else [run_label(p) for p in a.csv]
    if len(labels) != len(a.csv):
        fail(f"--labels has {len(labels)} labels for {len(a.csv)} files")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(f"needs matplotlib for {sys.executable} (Debian: apt-get install python3-matplotlib)")
    if a.follow:
        return follow(plt, a, labels)
    plot_once(plt, a, labels)
    print(f"plot: {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Compare `rewind run` output with published benchmark data.

  validate.py cavity PROFILES.csv --re 100 [-o plot.png]
      centre-line velocities vs Ghia, Ghia & Shin (1982), Tables I and II
  validate.py cylinder MONITOR.csv [--steady [--3d] [--window T]] [-o plot.png]
      Schaefer & Turek (1996) 2D-1 (steady) / 2D-2 (periodic) / 3D-1Z (steady, --3d) quantities
  validate.py study COARSE.csv MEDIUM.csv FINE.csv [--steady [--3d] [--window T]] [--ratio 2]
      grid convergence of the cylinder quantities over three refinements: observed
      order, Richardson extrapolation and the fine-grid GCI (Celik et al. 2008)
  validate.py ramp MONITOR.csv [MEDIUM.csv FINE.csv]
      2D-3 (the inflow ramped by sin(pi t / 8)): c_d max, c_l max and their times, dp at
      t = 8, against John (2004)'s reference values; with three runs whose time step
      halves, the observed order and the dt -> 0 values
  validate.py heated MONITOR.csv PROFILES.csv --ra 1e5
      Nusselt number and velocity maxima vs de Vahl Davis (1983)
  validate.py tg MONITOR.csv ... --cells N ...
      Taylor-Green error and observed order

Uses /usr/bin/python3 with numpy and matplotlib (Debian packages).
"""
import argparse
import csv
import math
import sys

# Ghia, Ghia & Shin, J. Comput. Phys. 48 (1982) 387-411, Table I (u on x = 0.5)
GHIA_Y = [1.0000, 0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000,
          0.4531, 0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547, 0.0000]
GHIA_U = {
    100: [1.00000, 0.84123, 0.78871, 0.73722, 0.68717, 0.23151, 0.00332, -0.13641, -0.20581,
          -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717, 0.00000],
    400: [1.00000, 0.75837, 0.68439, 0.61756, 0.55892, 0.29093, 0.16256, 0.02135, -0.11477,
          -0.17119, -0.32726, -0.24299, -0.14612, -0.10338, -0.09266, -0.08186, 0.00000],
    1000: [1.00000, 0.65928, 0.57492, 0.51117, 0.46604, 0.33304, 0.18719, 0.05702, -0.06080,
           -0.10648, -0.27805, -0.38289, -0.29730, -0.22220, -0.20196, -0.18109, 0.00000],
}
# Table II (v on y = 0.5)
GHIA_X = [1.0000, 0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000,
          0.2344, 0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625, 0.0000]
GHIA_V = {
    100: [0.00000, -0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533, 0.05454,
          0.17527, 0.17507, 0.16077, 0.12317, 0.10890, 0.10091, 0.09233, 0.00000],
    400: [0.00000, -0.12146, -0.15663, -0.19254, -0.22847, -0.23827, -0.44993, -0.38598, 0.05186,
          0.30174, 0.30203, 0.28124, 0.22965, 0.20920, 0.19713, 0.18360, 0.00000],
    1000: [0.00000, -0.21388, -0.27669, -0.33714, -0.39188, -0.51550, -0.42665, -0.31966, 0.02526,
           0.32235, 0.33075, 0.37095, 0.32627, 0.30353, 0.29012, 0.27485, 0.00000],
}
# de Vahl Davis, Int. J. Numer. Meth. Fluids 3 (1983) 249-264 (Pr = 0.71):
# mean Nusselt number, u_max on x = 0.5, v_max on y = 0.5 (velocities in alpha / L)
DVD = {1e3: (1.118, 3.649, 3.697), 1e4: (2.243, 16.178, 19.617),
       1e5: (4.519, 34.73, 68.59), 1e6: (8.800, 64.63, 219.36)}
# Schaefer & Turek (1996) intervals
ST_2D1 = {"cd": (5.57, 5.59), "cl": (0.0104, 0.0110), "dp": (0.1172, 0.1176)}
ST_2D2 = {"cd_max": (3.22, 3.24), "cl_max": (0.99, 1.01), "st": (0.295, 0.305)}
# 2D-3, the inflow 1.5 sin(pi t / 8) from rest to t = 8: Schaefer & Turek's intervals and
# the reference values of V. John, Int. J. Numer. Meth. Fluids 44 (2004) 777-788
ST_2D3 = {"cd_max": (2.93, 2.97), "cl_max": (0.47, 0.49), "dp8": (-0.115, -0.105)}
JOHN_2D3 = {"cd_max": 2.950921575, "cl_max": 0.47795, "dp8": -0.1116}
# 3D-1Z: the cylinder across a square channel, Re 20, scaled by the projected area D H
ST_3D1Z = {"cd": (6.05, 6.25), "cl": (0.008, 0.010), "dp": (0.165, 0.175)}


def read_csv(path):
    with open(path) as f:  # monitor CSVs start with a "# case:" comment line
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def interp(xs, ys, x):
    pts = sorted(zip(xs, ys))
    # Profile end points sit 1e-9 inside the walls.
    x = min(max(x, pts[0][0]), pts[-1][0])
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 > x0 else y0
    return float("nan")


def peak(t, y, sel):
    """The maximum of y over the rows sel, refined by the parabola through the largest
    sample and its two neighbours (the monitor samples every few steps, so the largest
    sample misses the crest by up to 1 - cos(pi dt_sample / T); the parabola's vertex
    misses it by O((dt_sample / T)^4)). A sample at the table's ends or on a flat stretch
    is kept as it is; a largest sample with lower neighbours puts the vertex between them."""
    i = max(sel, key=lambda k: y[k])
    if i <= 0 or i + 1 >= len(y) or not (t[i - 1] < t[i] < t[i + 1]):
        return y[i]
    f01 = (y[i] - y[i - 1]) / (t[i] - t[i - 1])
    f2 = ((y[i + 1] - y[i]) / (t[i + 1] - t[i]) - f01) / (t[i + 1] - t[i - 1])
    if not f2 < 0:
        return y[i]
    x = 0.5 * (t[i - 1] + t[i]) - f01 / (2 * f2)
    return y[i - 1] + f01 * (x - t[i - 1]) + f2 * (x - t[i - 1]) * (x - t[i])


def cavity(a):
    p = read_csv(a.file)
    re = int(a.re)
    u = [interp(p["y"], p["u_vertical"], y) for y in GHIA_Y]
    v = [interp(p["x"], p["v_horizontal"], x) for x in GHIA_X]
    eu = max(abs(x - g) for x, g in zip(u, GHIA_U[re]))
    ev = max(abs(x - g) for x, g in zip(v, GHIA_V[re]))
    print(f"Re {re}: max |u - Ghia| = {eu:.4f} on x = 0.5, max |v - Ghia| = {ev:.4f} on y = 0.5")
    print(f"{'y':>7} {'u':>9} {'Ghia':>9}   {'x':>7} {'v':>9} {'Ghia':>9}")
    for i in range(len(GHIA_Y)):
        print(f"{GHIA_Y[i]:7.4f} {u[i]:9.5f} {GHIA_U[re][i]:9.5f}   {GHIA_X[i]:7.4f} {v[i]:9.5f} {GHIA_V[re][i]:9.5f}")
    if a.output:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(7, 3.2), dpi=90)
        ax[0].plot(p["u_vertical"], p["y"], "-", label="rewind")
        ax[0].plot(GHIA_U[re], GHIA_Y, "o", mfc="none", label="Ghia et al.")
        ax[0].set_xlabel("u on x = 0.5"); ax[0].set_ylabel("y"); ax[0].legend(fontsize=8)
        ax[1].plot(p["x"], p["v_horizontal"], "-")
        ax[1].plot(GHIA_X, GHIA_V[re], "o", mfc="none")
        ax[1].set_xlabel("x"); ax[1].set_ylabel("v on y = 0.5")
        fig.suptitle(f"Lid-driven cavity, Re {re}")
        fig.tight_layout(); fig.savefig(a.output); print("plot:", a.output)
    return 0


def cylinder_values(m, a, quiet=False):
    """The benchmark's quantities from one monitor table, with their reference intervals
    (None when there are fewer than three lift periods)."""
    t, cd, cl, dp = m["time"], m["cd"], m["cl"], m["dp"]
    if a.steady:
        # The last row, or the mean over the last `window` time units: a steady run's
        # lift keeps a small oscillation (docs/validation.md, 2D-1).
        # (A run's first row, dt = 0, has no force yet: a restart's starts the window.)
        sel = ([i for i in range(len(t)) if t[i] >= t[-1] - a.window and m["dt"][i] > 0]
               if a.window > 0 else [len(t) - 1])
        vals = {k: sum(q[i] for i in sel) / len(sel) for k, q in (("cd", cd), ("cl", cl), ("dp", dp))}
        if not quiet and a.window > 0:
            for k, q in (("cd", cd), ("cl", cl), ("dp", dp)):
                print(f"{k:>6}: mean over t = {t[sel[0]]:.3f} .. {t[-1]:.3f} ({len(sel)} rows), range "
                      f"{min(q[i] for i in sel):.5f} .. {max(q[i] for i in sel):.5f}")
        return vals, (ST_3D1Z if a.three_d else ST_2D1)
    # Last `periods` lift periods from upward zero crossings.
    ups = [t[i - 1] + (t[i] - t[i - 1]) * (-cl[i - 1]) / (cl[i] - cl[i - 1])
           for i in range(1, len(t)) if cl[i - 1] < 0 <= cl[i]]
    if len(ups) < 3:
        return None, ST_2D2
    if getattr(a, "settle", False):
        return settled(t, cd, cl, ups, a, quiet), ST_2D2
    n = min(a.periods, len(ups) - 1)
    t0 = ups[-1 - n]
    sel = [i for i in range(len(t)) if t[i] >= t0]
    period = (ups[-1] - t0) / n
    if not quiet:
        print(f"last {n} periods from t = {t0:.3f}: period {period:.5f}")
        print(f"    dp range in the last periods: {min(dp[i] for i in sel):.4f} .. {max(dp[i] for i in sel):.4f}")
    return {"st": a.length / (a.velocity * period), "cd_max": peak(t, cd, sel),
            "cl_max": peak(t, cl, sel)}, ST_2D2


def settled(t, cd, cl, ups, a, quiet):
    """A run still approaching its limit cycle (a restart with a changed tree or scheme):
    the maxima of each whole lift period, and the limit of the last three per quantity by
    Aitken's delta-squared when they approach it geometrically (the increments keep their
    sign and shrink by a ratio q < 0.8: limit = last + d q / (1 - q)); else the last."""
    per = []
    for k in range(len(ups) - 1):
        sel = [i for i in range(len(t)) if ups[k] <= t[i] < ups[k + 1]]
        per.append((ups[k + 1], peak(t, cd, sel), peak(t, cl, sel)))
    vals = {"st": a.length / (a.velocity * (ups[-1] - ups[-2]))}
    for name, col in (("cd_max", 1), ("cl_max", 2)):
        x = [p[col] for p in per]
        limit, how = x[-1], "the last period's"
        if len(x) >= 3:
            d1, d2 = x[-2] - x[-3], x[-1] - x[-2]
            q = d2 / d1 if d1 != 0 else 0.0
            if 0 < q < 0.8:
                limit, how = x[-1] + d2 * q / (1 - q), f"Aitken, ratio {q:.2f} a period"
        vals[name] = limit
        if not quiet:
            print(f"{name:>6} per period: " + ", ".join(f"{v:.4f}" for v in x[-6:]) +
                  f" (periods ending t = {per[max(0, len(per) - 6)][0]:.2f} .. {per[-1][0]:.2f})"
                  f" -> {limit:.5f} ({how})")
    return vals


def cylinder(a):
    m = read_csv(a.file)
    t, cd, cl = m["time"], m["cd"], m["cl"]
    vals, ref = cylinder_values(m, a)
    if vals is None:
        print("fewer than 3 lift periods: no periodic state yet"); return 1
    for k, (lo, hi) in ref.items():
        ok = "inside" if lo <= vals[k] <= hi else "OUTSIDE"
        print(f"{k:>6} = {vals[k]:.5f}   Schaefer-Turek [{lo}, {hi}]  {ok}")
    if a.output:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(2, 1, figsize=(7, 4), dpi=90, sharex=True)
        ax[0].plot(t, cd); ax[0].set_ylabel("c_d")
        ax[1].plot(t, cl); ax[1].set_ylabel("c_l"); ax[1].set_xlabel("t")
        # The impulsive start spikes the forces: scale to the last three quarters.
        q = len(cd) // 4
        pad = 0.2 if a.steady else 0.05
        ax[0].set_ylim(min(cd[q:]) - pad, max(cd[q:]) + pad)
        ax[1].set_ylim(min(cl[q:]) - 0.1 * (max(cl[q:]) - min(cl[q:]) + 1e-3), max(cl[q:]) + 0.1 * (max(cl[q:]) - min(cl[q:]) + 1e-3))
        if not a.steady:
            for x in (ST_2D2["cd_max"][0], ST_2D2["cd_max"][1]):
                ax[0].axhline(x, color="k", lw=0.5, ls="--")
            for x in (ST_2D2["cl_max"][0], ST_2D2["cl_max"][1]):
                ax[1].axhline(x, color="k", lw=0.5, ls="--")
        fig.tight_layout(); fig.savefig(a.output); print("plot:", a.output)
    return 0


def ramp_values(m):
    """2D-3's quantities from one table: the maxima (refined by the parabola through the
    largest sample and its neighbours) with their times, and dp at t = 8."""
    t = m["time"]
    rows = range(len(t))
    out = {}
    for k in ("cd", "cl"):
        i = max(rows, key=lambda j: m[k][j])
        out[k + "_max"], out["t_" + k] = peak(t, m[k], rows), t[i]
    end = min(rows, key=lambda j: abs(t[j] - 8.0))
    out["dp8"] = m["dp"][end] if abs(t[end] - 8.0) < 1e-6 else None
    return out


def ramp(a):
    vals = [ramp_values(read_csv(f)) for f in a.files]
    for f, v in zip(a.files, vals):
        if v["dp8"] is None:
            print(f"validate.py: error: {f} has no row at t = 8 (2D-3 reads dp there)", file=sys.stderr)
            return 2
    for f, v in zip(a.files, vals):
        print(f"{f}: c_d max {v['cd_max']:.5f} (t {v['t_cd']:.3f}), c_l max {v['cl_max']:.5f} "
              f"(t {v['t_cl']:.3f}), dp(8) {v['dp8']:.5f}")
    print(f"{'':>7} {'value':>9} {'order':>6} {'John 2004':>10} {'error':>8}   Schaefer-Turek")
    for k, (lo, hi) in ST_2D3.items():
        x, order, why = vals[-1][k], "-", ""
        if len(vals) == 3:  # no order to read: the last (finest) run's value, and why
            p, ext, reason = richardson(*(v[k] for v in vals), 2.0)
            x, order, why = (ext, f"{p:.2f}", "") if p is not None else (x, "-", f", the last run's: {reason}")
        ok = ("inside" if lo <= x <= hi else "OUTSIDE") + why
        ref = JOHN_2D3[k]
        print(f"{k:>7} {x:9.5f} {order:>6} {ref:10.5f} {100 * (x - ref) / abs(ref):+7.2f}%   [{lo}, {hi}]  {ok}")
    return 0


def heated(a):
    m = read_csv(a.file)
    ra = float(a.ra)
    nu_ref, umax_ref, vmax_ref = DVD[ra]
    nul, nur = m["nu_xmin"][-1], m["nu_xmax"][-1]
    print(f"Ra {ra:g}: Nu(hot wall) = {nul:.4f}, Nu(cold wall) = {nur:.4f}, de Vahl Davis {nu_ref}"
          f"  ({100 * (nul - nu_ref) / nu_ref:+.2f} %)")
    if a.profiles:
        p = read_csv(a.profiles)
        scale = a.length / a.alpha
        umax = max(p["u_vertical"]) * scale
        vmax = max(p["v_horizontal"]) * scale
        print(f"u_max on x = 0.5: {umax:.3f} (de Vahl Davis {umax_ref}, {100 * (umax - umax_ref) / umax_ref:+.2f} %)")
        print(f"v_max on y = 0.5: {vmax:.3f} (de Vahl Davis {vmax_ref}, {100 * (vmax - vmax_ref) / vmax_ref:+.2f} %)")
    return 0


def richardson(f3, f2, f1, r):
    """Observed order, extrapolated value and fine-grid GCI (safety factor 1.25) from
    values on three grids refined by a constant ratio r, coarse to fine (Celik et al.,
    J. Fluids Eng. 130 (2008) 078001). When no order can be read, the order is None and
    the last value says why: the differences change sign or one is zero (oscillatory
    convergence), or they do not shrink (divergence)."""
    e32, e21 = f3 - f2, f2 - f1
    if e21 == 0 or e32 == 0 or (e32 > 0) != (e21 > 0):
        return None, None, "no monotone convergence"
    if abs(e21) >= abs(e32):
        return None, None, "diverging: the differences grow"
    p = math.log(e32 / e21) / math.log(r)
    ext = f1 + (f1 - f2) / (r ** p - 1)
    gci = 1.25 * abs((f1 - f2) / f1) / (r ** p - 1)
    return p, ext, gci


def study(a):
    tables = [read_csv(f) for f in a.files]
    vals = []
    for f, m in zip(a.files, tables):
        v, ref = cylinder_values(m, a, quiet=True)
        if v is None:
            print(f"{f}: fewer than 3 lift periods: no periodic state yet"); return 1
        vals.append(v)
    print(f"{'':>7} {'coarse':>9} {'medium':>9} {'fine':>9} {'order':>6} {'Richardson':>11} {'GCI fine':>9}   reference")
    for k, (lo, hi) in ref.items():
        f3, f2, f1 = (v[k] for v in vals)
        p, ext, gci = richardson(f3, f2, f1, a.ratio)
        if p is None:
            print(f"{k:>7} {f3:9.5f} {f2:9.5f} {f1:9.5f} {'-':>6} {'-':>11} {'-':>9}   [{lo}, {hi}]  {gci}")
            continue
        band = abs(f1) * gci
        where = "inside" if lo <= ext <= hi else ("overlaps" if ext - band <= hi and ext + band >= lo else "OUTSIDE")
        if not 0.5 <= p <= 3.0:  # a second-order scheme: the grids are not in the asymptotic range
            where = f"{where}, but the order is implausible: not asymptotic"
        print(f"{k:>7} {f3:9.5f} {f2:9.5f} {f1:9.5f} {p:6.2f} {ext:11.5f} {100 * gci:8.3f}%   [{lo}, {hi}]  {where}")
    return 0


def tg(a):
    errs = [read_csv(f)["tg_error"][-1] for f in a.files]
    print(f"{'cells':>7} {'max error':>12} {'order':>7}")
    for i, (n, e) in enumerate(zip(a.cells, errs)):
        order = "" if i == 0 else f"{math.log(errs[i - 1] / e) / math.log(n / a.cells[i - 1]):7.2f}"
        print(f"{n:>7} {e:12.4e} {order}")
    if a.output:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(4, 3.2), dpi=90)
        ax.loglog(a.cells, errs, "o-", label="max error")
        ref = [errs[0] * (a.cells[0] / n) ** 2 for n in a.cells]
        ax.loglog(a.cells, ref, "k--", label="2nd order")
        ax.set_xlabel("cells per side"); ax.set_ylabel("max |u - u_exact| / U0"); ax.legend(fontsize=8)
        fig.tight_layout(); fig.savefig(a.output); print("plot:", a.output)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cavity"); c.add_argument("file"); c.add_argument("--re", required=True, type=int, choices=[100, 400, 1000]); c.add_argument("-o", "--output")
    def cylinder_options(c):  # what cylinder_values() reads, for `cylinder` and `study`
        c.add_argument("--steady", action="store_true")
        c.add_argument("--3d", dest="three_d", action="store_true", help="with --steady: the 3D-1Z intervals")
        c.add_argument("--window", type=float, default=0.0, help="with --steady: mean over the last WINDOW time units")
        c.add_argument("--periods", type=int, default=4); c.add_argument("--length", type=float, default=0.1)
        c.add_argument("--velocity", type=float, default=1.0)
        c.add_argument("--settle", action="store_true",
                       help="a run approaching its limit cycle: per-period maxima, their geometric limit")
    c = sub.add_parser("cylinder"); c.add_argument("file"); cylinder_options(c); c.add_argument("-o", "--output")
    c = sub.add_parser("study"); c.add_argument("files", nargs=3, metavar="MONITOR.csv"); cylinder_options(c)
    c.add_argument("--ratio", type=float, default=2.0, help="refinement ratio between the grids (2: one level)")
    c = sub.add_parser("ramp"); c.add_argument("files", nargs="+", metavar="MONITOR.csv")
    c = sub.add_parser("heated"); c.add_argument("file"); c.add_argument("profiles", nargs="?")
    c.add_argument("--ra", required=True, type=float); c.add_argument("--alpha", type=float, required=True)
    c.add_argument("--length", type=float, default=1.0)
    c = sub.add_parser("tg"); c.add_argument("files", nargs="+"); c.add_argument("--cells", type=int, nargs="+", required=True)
    c.add_argument("-o", "--output")
    a = ap.parse_args()
    if a.cmd == "study" and not a.ratio > 1:
        ap.error(f"--ratio must be above 1 (got {a.ratio})")
    if a.cmd == "ramp" and len(a.files) not in (1, 3):
        ap.error(f"ramp reads one run, or three whose time step halves (got {len(a.files)})")
    try:
        return {"cavity": cavity, "cylinder": cylinder, "study": study, "heated": heated, "tg": tg,
                "ramp": ramp}[a.cmd](a)
    except OSError as e:
        print(f"validate.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
    except (KeyError, ValueError, IndexError) as e:
        print(f"validate.py: error: not a rewind monitor or profile table ({type(e).__name__}: {e})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

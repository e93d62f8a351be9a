#!/usr/bin/python3
"""The cylinder's drag and lift against a control-volume momentum balance.

The monitor's c_d and c_l are the momentum the immersed boundary takes out of the flow.
This test computes them a second way, from the written fields only (h5py + numpy): for a
square of finest cells around the body,
    F = - d/dt ∫_V u dV - ∮ [u (u·n) + p n - ν (∇u + ∇uᵀ) n] dS,
with face values averaged from the two cells beside a face, the time derivative by
central differences between written steps. It runs the shipped 2D-2 case (64 cells per
diameter at the body) under mpirun from its impulsive start, with the cylinder moved
0.03 towards the lower wall so that it has a lift from the first steps, on 2 and 3
compute ranks and with both time schemes, and requires both squares (0.055 and 0.06 half
width) to agree with the monitor to 1 % of the force's size at every written step from
t = 0.05 (measured: 0.06 – 0.6 %). A lift or drag scaled wrongly, a forcing counted
twice or missed (the rk2 scheme forces twice per step), or a pressure left out of the
balance fails it.
Usage: force_oracle.py REWIND SOURCE_DIR
       force_oracle.py --read RUN.h5 MONITOR.csv CX CY [HALF_WIDTH ...]
The second form runs nothing: it prints the balance's and the monitor's extremes over the
visualisation steps of a run written with output.float32 = false (docs/validation.md)."""
import csv, os, subprocess, sys, tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from finest_level import Checks, finest_arrays  # noqa: E402

READ = sys.argv[1] == "--read"
rewind, source = (None, None) if READ else (sys.argv[1], sys.argv[2])
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
NU, D, U = 1e-3, 0.1, 1.0
CX, CY = (float(sys.argv[4]), float(sys.argv[5])) if READ else (0.2, 0.17)
check = Checks()


def flux_and_momentum(fields, a):
    """The surface integral and the momentum inside the square of half width a, from a
    step's finest_arrays."""
    x0, y0, hx, hy, f = fields
    u, v, p = f["u"], f["v"], f["p"]
    i0, i1 = int(round((CX - a - x0) / hx)), int(round((CX + a - x0) / hx))
    j0, j1 = int(round((CY - a - y0) / hy)), int(round((CY + a - y0) / hy))
    mom = np.array([u[j0:j1, i0:i1].sum(), v[j0:j1, i0:i1].sum()]) * hx * hy
    F = np.zeros(2)
    J, I = slice(j0, j1), slice(i0, i1)
    for i, s in ((i0, -1), (i1, 1)):  # faces normal to x, between cells i-1 and i
        uf, vf, pf = (u[J, i - 1] + u[J, i]) / 2, (v[J, i - 1] + v[J, i]) / 2, (p[J, i - 1] + p[J, i]) / 2
        dudx, dvdx = (u[J, i] - u[J, i - 1]) / hx, (v[J, i] - v[J, i - 1]) / hx
        dudy = ((u[j0 + 1:j1 + 1, i - 1] - u[j0 - 1:j1 - 1, i - 1]) + (u[j0 + 1:j1 + 1, i] - u[j0 - 1:j1 - 1, i])) / (4 * hy)
        F += s * np.array([np.sum(uf * uf + pf - 2 * NU * dudx), np.sum(vf * uf - NU * (dvdx + dudy))]) * hy
    for j, s in ((j0, -1), (j1, 1)):  # faces normal to y
        uf, vf, pf = (u[j - 1, I] + u[j, I]) / 2, (v[j - 1, I] + v[j, I]) / 2, (p[j - 1, I] + p[j, I]) / 2
        dvdy, dudy = (v[j, I] - v[j - 1, I]) / hy, (u[j, I] - u[j - 1, I]) / hy
        dvdx = ((v[j - 1, i0 + 1:i1 + 1] - v[j - 1, i0 - 1:i1 - 1]) + (v[j, i0 + 1:i1 + 1] - v[j, i0 - 1:i1 - 1])) / (4 * hx)
        F += s * np.array([np.sum(uf * vf - NU * (dudy + dvdx)), np.sum(vf * vf + pf - 2 * NU * dvdy)]) * hx
    if not np.isfinite(F).all() or not np.isfinite(mom).all():
        raise SystemExit(f"FAIL the square of half width {a} leaves the finest level")
    return F, mom


def run(tmp, name, ranks, scheme):
    text = open(os.path.join(source, "cases", "cylinder-2d2-adaptive.toml")).read()
    text = text.replace("center = [0.2, 0.2, 0.5]", f"center = [{CX}, {CY}, 0.5]")
    assert text.count(f"center = [{CX}, {CY}, 0.5]") == 2  # the body and its refined disc
    case = os.path.join(tmp, name + ".toml")
    open(case, "w").write(text)
    h5, mon = os.path.join(tmp, name + ".h5"), os.path.join(tmp, name + ".csv")
    cmd = ["mpirun", "-np", str(ranks + 1), "--oversubscribe", rewind, "run", case, "-o", h5, "--monitor", mon,
           "--set", "time.end=0.3", "--set", "output.visualisation_interval=0.005",
           "--set", "output.float32=false", "--set", "monitor.interval=1"]
    if scheme == "rk2":
        cmd += ["--set", 'solver.time_scheme="rk2"', "--set", "solver.upwind=0"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-2000:] + r.stderr[-2000:])
        raise SystemExit(f"FAIL {' '.join(cmd)} exited with {r.returncode}")
    return h5, monitor_rows(mon)


def monitor_rows(mon):
    """The monitor CSV's c_d and c_l by step."""
    rows = {}
    with open(mon) as f:
        next(f)  # the "# case:" line
        for row in csv.DictReader(f):
            rows[int(row["step"])] = (float(row["cd"]), float(row["cl"]))
    return rows


def balance(h5, widths):
    """Times, steps and, per half width, c_d and c_l of the balance at each written step."""
    q = 0.5 * U * U * D
    with h5py.File(h5, "r") as f:
        steps = [f["simulation"][k] for k in sorted((k for k in f["simulation"] if k.startswith("step_")), key=lambda s: int(s[5:]))]
        steps = [s for s in steps if s.attrs["kind"] == b"visualisation"]
        t = np.array([float(s.attrs["time"]) for s in steps])
        n = [int(s.attrs["step"]) for s in steps]
        fields = [finest_arrays(s, ("u", "v", "p")) for s in steps]
    out = {}
    for a in widths:
        F, M = zip(*(flux_and_momentum(x, a) for x in fields))
        out[a] = -(np.gradient(np.array(M), t, axis=0) + np.array(F)) / q  # c_d, c_l
    return t, n, out


def compare(h5, rows, what):
    t, n, bodies = balance(h5, (0.055, 0.06))
    for a, body in bodies.items():
        keep = [k for k in range(1, len(t) - 1) if t[k] >= 0.05]
        mon = np.array([rows[n[k]] for k in keep])
        cv = body[keep]
        for c, name in ((0, "c_d"), (1, "c_l")):
            size = np.abs(mon[:, c]).max()
            err = np.abs(cv[:, c] - mon[:, c]).max()
            check(err <= 0.01 * size and size > (1.0 if c == 0 else 0.05),
                  f"{what}, square {a}: {name} from the momentum balance within {err / size:.2%} "
                  f"of the monitor's (|{name}| up to {size:.3f}, {len(keep)} steps from t = 0.05)")


if READ:
    t, n, bodies = balance(sys.argv[2], [float(a) for a in sys.argv[6:]] or [0.06])
    rows = monitor_rows(sys.argv[3])
    inner = range(1, len(t) - 1)  # the central differences' steps
    mon = np.array([rows[n[k]] for k in inner])
    for a, body in bodies.items():
        cv = body[1:-1]
        print(f"square {a}: balance c_l max {cv[:, 1].max():.4f} min {cv[:, 1].min():.4f} c_d max {cv[:, 0].max():.4f}"
              f" | monitor at the same steps c_l max {mon[:, 1].max():.4f} min {mon[:, 1].min():.4f}"
              f" c_d max {mon[:, 0].max():.4f} (t = {t[1]:.4f} ... {t[-2]:.4f})")
    sys.exit(0)

with tempfile.TemporaryDirectory() as tmp:
    for ranks, scheme in ((2, "euler"), (3, "rk2")):
        h5, rows = run(tmp, f"{scheme}{ranks}", ranks, scheme)
        compare(h5, rows, f"{scheme} on {ranks} compute ranks")
sys.exit(1 if check.failed else 0)

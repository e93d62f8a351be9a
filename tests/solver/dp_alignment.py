#!/usr/bin/python3
"""The cylinder's Δp monitor does not follow where the surface cuts the grid.

Runs the shipped 2D-1 case (64 cells per diameter at the body) under mpirun twice, the
cylinder moved by half a finest cell along x the second time (on another rank count),
and reads both final fields with h5py: the monitor's Δp must be the file's pressure and
normal velocity sampled bilinearly at three and six finest cells off the front and back
points and carried to them by the wall-normal momentum balance (dp/ds = nu d2u_s/ds2 at a
no-slip wall; an independent reading, written here from the formula), and it must move by
less than 1 % between the two positions, where the pressure one and two cells off the
surface (the forced layer, the monitor's sampling before) moves by more than 2 % (3.7 %).
Usage: dp_alignment.py REWIND SOURCE_DIR"""
import csv, os, subprocess, sys, tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from finest_level import Checks, finest_arrays  # noqa: E402

rewind, source = sys.argv[1], sys.argv[2]
case = os.path.join(source, "cases", "cylinder-2d1-adaptive.toml")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
R = 0.05
h = 2.2 / (44 * 2**5)  # the finest cells' width along x
check = Checks()


def finest_fields(path):
    """The last step's finest leaf grids as arrays, and a bilinear sampler of them."""
    with h5py.File(path, "r") as f:
        steps = sorted((k for k in f["simulation"] if k.startswith("step_")), key=lambda s: int(s[5:]))
        st = f["simulation"][steps[-1]]
        x0, y0, hx, hy, arrays = finest_arrays(st, ["p", "u"])
        t = float(st.attrs["time"])

    def at(name, x, y):
        A = arrays[name]
        s, q = (x - x0) / hx - 0.5, (y - y0) / hy - 0.5
        i, j = int(np.floor(s)), int(np.floor(q))
        a, b = s - i, q - j
        return A[j, i] * (1 - a) * (1 - b) + A[j, i + 1] * a * (1 - b) + A[j + 1, i] * (1 - a) * b + A[j + 1, i + 1] * a * b
    return at, t


def dp_linear(at, cx, d1, d2):
    """Δp with the front and back pressures extrapolated linearly from d1 and d2 cells."""
    def ext(x, s):
        return (d2 * at("p", x + s * d1 * h, 0.2) - d1 * at("p", x + s * d2 * h, 0.2)) / (d2 - d1)
    return ext(cx - R, -1) - ext(cx + R, 1)


def dp_wall(at, cx, nu=1e-3):
    """Δp with each surface pressure from 3 and 6 cells off it: the normal velocity fitted
    as a s^2 + b s^3 (zero with its slope at the wall), the pressure as p_w + nu 2a s + c s^2."""
    def surface(x, side):
        s = np.array([3 * h, 6 * h])
        u = np.array([side * at("u", x + side * d, 0.2) for d in s])
        p = np.array([at("p", x + side * d, 0.2) for d in s])
        a, _ = np.linalg.solve([[s[0] ** 2, s[0] ** 3], [s[1] ** 2, s[1] ** 3]], u)
        p_w, _ = np.linalg.solve([[1, s[0] ** 2], [1, s[1] ** 2]], p - nu * 2 * a * s)
        return p_w
    return surface(cx - R, -1) - surface(cx + R, 1)


work = tempfile.mkdtemp(prefix="rewind_dp_")
runs = {}
for name, ranks, cx in [("at", 2, 0.2), ("moved", 3, 0.2 + h / 2)]:
    out, mon = os.path.join(work, name + ".h5"), os.path.join(work, name + ".csv")
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", rewind, "run", case, "-o", out, "--monitor", mon,
           "--set", "time.end=0.6", "--set", "monitor.interval=1", "--set", f"obstacle[0].center=[{cx!r}, 0.2, 0.5]"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        print(f"FAIL rewind run ({name}) exited {r.returncode}: {r.stderr.strip()[-800:]}")
        sys.exit(1)
    with open(mon) as f:
        last = list(csv.DictReader(line for line in f if not line.startswith("#")))[-1]
    at, t = finest_fields(out)
    runs[name] = (float(last["dp"]), {"wall": dp_wall(at, cx), (1, 2): dp_linear(at, cx, 1, 2)})
    check(abs(float(last["time"]) - t) < 1e-12, f"{name}: the monitor's last row is the file's last step (t = {t:.6g})")
    mdp, file_dp = runs[name][0], runs[name][1]["wall"]
    check(abs(mdp - file_dp) <= 1e-7 * abs(file_dp),  # the CSV's 8 digits
          f"{name}: monitor Δp {mdp:.8f} = the file's fields carried to the surface from 3 and 6 cells {file_dp:.8f}")

(m_at, f_at), (m_moved, f_moved) = runs["at"], runs["moved"]
move = abs(m_moved - m_at) / abs(m_at)
layer = abs(f_moved[(1, 2)] - f_at[(1, 2)]) / abs(f_at[(1, 2)])
check(move < 0.01, f"the body moved by h/2: monitor Δp {m_at:.5f} -> {m_moved:.5f} ({100 * move:.2f} %, < 1 %)")
check(layer > 0.02, f"... while from 1 and 2 cells (the forced layer) {f_at[(1, 2)]:.5f} -> {f_moved[(1, 2)]:.5f} "
      f"({100 * layer:.1f} %, > 2 %: the test can tell the two samplings apart)")
subprocess.run(["rm", "-rf", work])
sys.exit(1 if check.failed else 0)

"""The surface pressure as the solver's Δp monitor reads it (solver/src/monitors.cpp,
surface_pressure), for the bench readers of written files: from the pressure p and the
outward normal velocity u_n at two distances s off a no-slip wall. There dp/ds =
nu d2u_n/ds2, and u_n starts as s^2, so u_n = a s^2 + b s^3 through the two samples and
p = p_w + 2 a nu s + c s^2. (tests/solver/dp_alignment.py writes the same formula out on
its own, as the test's independent reading.)"""
import numpy as np


def wall_pressure(s, u_n, p, nu):
    """p_w from the samples at the two distances s = (s1, s2)."""
    s, u_n, p = (np.asarray(v, dtype=float) for v in (s, u_n, p))
    a, _ = np.linalg.solve([[s[0] ** 2, s[0] ** 3], [s[1] ** 2, s[1] ** 3]], u_n)
    p_w, _ = np.linalg.solve([[1, s[0] ** 2], [1, s[1] ** 2]], p - nu * 2 * a * s)
    return p_w

#!/usr/bin/python3
"""Δp of the 3D-1Z cylinder from a `rewind run` HDF5 file, for several sampling distances.

  cylinder3d_dp.py RUN.h5

Reads the last step's finest leaf grids along the line y = 0.2, z = 0.205 (the
Schaefer-Turek points (0.45, 0.2, 0.205) and (0.55, 0.2, 0.205) on the cylinder of
radius 0.05 around x = 0.5), samples p trilinearly at distances d1, d2 from the front
and back points along x and extrapolates linearly to the surface (the solver's monitor
did so with (1, 2) finest cells, then (3, 6)); and as the monitor does now, from 3 and 6
cells carried to the surface by the wall-normal momentum balance (dp/ds = nu d2u_s/ds2,
u_s = a s^2 + b s^3). Prints Δp for each and the raw pressure profile: how far the
immersed boundary's forcing perturbs the pressure (docs/validation.md, 3D-1Z). Needs
h5py and numpy.
"""
import sys
import h5py
import numpy as np
from wall_pressure import wall_pressure

CX, YC, ZC, R, NU = 0.5, 0.2, 0.205, 0.05, 1e-3

f = h5py.File(sys.argv[1], 'r')
steps = sorted([k for k in f['simulation'].keys() if k.startswith('step_')], key=lambda s: int(s[5:]))
st = f['simulation'][steps[-1]]
lev = st['level'][:]
bb = st['bounding_box'][:]
leaf = (st['child_rows'][:] < 0).all(axis=1)
L = lev[leaf].max()
rows = np.where(leaf & (lev == L))[0]
p, u = st['cell_data/p'], st['cell_data/u']
_, sz, sy, sx = p.shape
h = np.array([(bb[rows[0], 1] - bb[rows[0], 0]) / sx, (bb[rows[0], 3] - bb[rows[0], 2]) / sy,
              (bb[rows[0], 5] - bb[rows[0], 4]) / sz])
cells = {}  # global finest-level cell index -> (p, u), for the grids next to the line
for r in rows:
    if not (bb[r, 2] - 2 * h[1] <= YC <= bb[r, 3] + 2 * h[1] and bb[r, 4] - 2 * h[2] <= ZC <= bb[r, 5] + 2 * h[2]):
        continue
    P, U = p[r], u[r]
    o = np.rint(bb[r, [0, 2, 4]] / h).astype(int)
    for k, j, i in np.ndindex(sz, sy, sx):
        cells[(o[0] + i, o[1] + j, o[2] + k)] = (P[k, j, i], U[k, j, i])


def sample(x, var=0):
    s = np.array([x, YC, ZC]) / h - 0.5
    b = np.floor(s).astype(int)
    a = s - b
    acc = 0.0
    for dk, dj, di in np.ndindex(2, 2, 2):
        w = (a[0] if di else 1 - a[0]) * (a[1] if dj else 1 - a[1]) * (a[2] if dk else 1 - a[2])
        acc += w * cells[(b[0] + di, b[1] + dj, b[2] + dk)][var]
    return acc


print(f"{sys.argv[1]}: {steps[-1]}, finest level {L}, h = {h[0]:.5f} (x), {R * 2 / h[0]:.1f} cells per D")
for k1, k2 in [(1, 2), (1.5, 3), (2, 4), (3, 6), (4, 8)]:
    def surface(x, sgn):
        return (k2 * sample(x + sgn * k1 * h[0]) - k1 * sample(x + sgn * k2 * h[0])) / (k2 - k1)
    print(f"dp extrapolated from ({k1}, {k2}) h: {surface(CX - R, -1) - surface(CX + R, 1):.5f}")


def wall(x, sgn):
    d = np.array([3, 6]) * h[0]
    return wall_pressure(d, [sgn * sample(x + sgn * q, 1) for q in d], [sample(x + sgn * q) for q in d], NU)


print(f"dp from (3, 6) h by the wall-normal momentum balance (the monitor): {wall(CX - R, -1) - wall(CX + R, 1):.5f}")
for d in [0.5, 1, 1.5, 2, 3, 4, 6, 8]:
    print(f"  p at {d} h: front {sample(CX - R - d * h[0]):.5f}, back {sample(CX + R + d * h[0]):.5f}")

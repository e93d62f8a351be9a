#!/usr/bin/python3
"""Cylinder forces by surface integration and Δp variants from a `rewind run` HDF5 file.

  cylinder_surface.py RUN.h5 U_MEAN [--nu 0.001]

Reads the last step's finest leaf grids around the Schaefer-Turek cylinder (D = 0.1 at
(0.2, 0.2)), samples p, u, v bilinearly at distances d1, d2 from the surface along the
normal and integrates -p n + nu du/dn over the circle (p extrapolated linearly to the
surface, du/dn one-sided quadratic with u = 0 on the surface). Prints c_d, c_l and Δp
for several (d1, d2): the comparison with the momentum-exchange force of the solver in
docs/validation.md; and Δp as the monitor reads it (from 3 and 6 cells, carried to the
surface by the wall-normal momentum balance). Needs h5py and numpy.
"""
import sys
import h5py
import numpy as np
from wall_pressure import wall_pressure
f = h5py.File(sys.argv[1], 'r')
U = float(sys.argv[2]); nu = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--nu" else 1e-3; D = 0.1; R = 0.05; cx, cy = 0.2, 0.2
steps = sorted([k for k in f['simulation'].keys() if k.startswith('step_')], key=lambda s: int(s[5:]))
st = f['simulation'][steps[-1]]
lev = st['level'][:]; bb = st['bounding_box'][:]; ch = st['child_rows'][:]
leaf = (ch < 0).all(axis=1)
L = lev[leaf].max()
rows = np.where(leaf & (lev == L))[0]
p = st['cell_data/p']; u = st['cell_data/u']; v = st['cell_data/v']
ng, sz, sy, sx = p.shape
hx = (bb[rows[0], 1] - bb[rows[0], 0]) / sx; hy = (bb[rows[0], 3] - bb[rows[0], 2]) / sy
x0 = bb[rows, 0].min(); y0 = bb[rows, 2].min()
NX = int(round((bb[rows, 1].max() - x0) / hx)); NY = int(round((bb[rows, 3].max() - y0) / hy))
P = np.full((NY, NX), np.nan); Uf = P.copy(); Vf = P.copy()
for r in rows:
    i = int(round((bb[r, 0] - x0) / hx)); j = int(round((bb[r, 2] - y0) / hy))
    P[j:j+sy, i:i+sx] = p[r, 0]; Uf[j:j+sy, i:i+sx] = u[r, 0]; Vf[j:j+sy, i:i+sx] = v[r, 0]
def samp(A, x, y):
    s = (x - x0) / hx - 0.5; t = (y - y0) / hy - 0.5
    i = np.floor(s).astype(int); j = np.floor(t).astype(int); a = s - i; b = t - j
    return (A[j, i]*(1-a)*(1-b) + A[j, i+1]*a*(1-b) + A[j+1, i]*(1-a)*b + A[j+1, i+1]*a*b)
h = hx
N = 720
th = (np.arange(N) + 0.5) * 2*np.pi / N
nx, ny = np.cos(th), np.sin(th)
dS = 2*np.pi*R / N
q = 0.5 * U * U * D
for k1, k2 in [(1, 2), (1.5, 3), (2, 4)]:
    d1, d2 = k1*h, k2*h
    p1 = samp(P, cx+(R+d1)*nx, cy+(R+d1)*ny); p2 = samp(P, cx+(R+d2)*nx, cy+(R+d2)*ny)
    ps = (d2*p1 - d1*p2)/(d2 - d1)
    u1 = samp(Uf, cx+(R+d1)*nx, cy+(R+d1)*ny); u2 = samp(Uf, cx+(R+d2)*nx, cy+(R+d2)*ny)
    v1 = samp(Vf, cx+(R+d1)*nx, cy+(R+d1)*ny); v2 = samp(Vf, cx+(R+d2)*nx, cy+(R+d2)*ny)
    dudn = (d2*d2*u1 - d1*d1*u2)/(d1*d2*(d2-d1)); dvdn = (d2*d2*v1 - d1*d1*v2)/(d1*d2*(d2-d1))
    Fx = np.sum(-ps*nx + nu*dudn)*dS; Fy = np.sum(-ps*ny + nu*dvdn)*dS
    Fpx = np.sum(-ps*nx)*dS
    print(f"d=({k1},{k2})h: cd {Fx/q:.4f} (pressure part {Fpx/q:.4f}) cl {Fy/q:.5f}")
for k1, k2 in [(1, 2), (1.5, 3), (2, 4), (3, 6)]:
    pf = [samp(P, cx - R - k*h, cy) for k in (k1, k2)]; pb = [samp(P, cx + R + k*h, cy) for k in (k1, k2)]
    ex = lambda a: (k2*a[0] - k1*a[1])/(k2 - k1)
    print(f"dp extrap ({k1},{k2})h: {ex(pf) - ex(pb):.5f}   raw at {k1}h: {pf[0]-pb[0]:.5f}")
print("dp direct at surface points:", samp(P, cx-R, cy) - samp(P, cx+R, cy))


def wall(xw, side):
    """The monitor's reading: p at 3 and 6 cells carried to the surface by dp/ds = nu u_s''(0)."""
    d = np.array([3 * h, 6 * h])
    return wall_pressure(d, [side * samp(Uf, xw + side * q, cy) for q in d], [samp(P, xw + side * q, cy) for q in d], nu)


print(f"dp from (3, 6) h by the wall-normal momentum balance (the monitor): {wall(cx - R, -1) - wall(cx + R, 1):.5f}")

#!/usr/bin/env python3
"""An independent, body-fitted reference for the Schaefer-Turek cylinder in 2-D.

Taylor-Hood P2/P1 finite elements on a triangle mesh that follows the circle (a polygon
of at least 512 sides), graded from the surface; Dirichlet inflow, walls and cylinder,
do-nothing outflow; forces from the discrete momentum residual tested with a field that
is e_x (drag) or e_y (lift) on the circle (the volume form of John & Matthies). It shares
no code or discretisation with Rewind, so it is the oracle for Rewind's fields, not only
for the benchmark's three numbers.

  fem_cylinder.py steady   [--h-near H] [--h-far H] [--y Y] [--x-in X] [--nu NU]
                           [--radius R] [--save REF.npz]
      2D-1 (Re 20): Newton to machine precision; prints c_d, c_l, dp
  fem_cylinder.py periodic [--h-near H] [--h-far H] [--dt DT] [--end T] --csv OUT.csv
                           [--state-out S.npz] [--state-in S.npz [--append]] [--inflow sine]
      2D-2 (Re 100) from rest or from a saved state (of any mesh: interpolated): BDF2
      with the advecting velocity extrapolated (one Oseen problem a step); writes time,
      c_d, c_l, dp, to be read by validate.py cylinder. With --inflow sine: 2D-3, the
      inflow 1.5 sin(pi t / 8) from rest to --end 8, read by validate.py ramp
  fem_cylinder.py compare  RUN.h5 REF.npz
      Rewind's last step against a steady reference, at every leaf cell centre: errors
      by distance from the surface and by angle, and the flow above and below the body

The peer comes from PyPI in a virtual environment, outside the product's dependencies:
  python3 -m venv /tmp/fem && /tmp/fem/bin/pip install scikit-fem triangle h5py
  /tmp/fem/bin/python bench/solver/fem_cylinder.py steady
"""
import argparse
import sys
import time

import numpy as np
import triangle
from skfem import (Basis, BilinearForm, ElementTriP1, ElementTriP2, ElementVector, LinearForm,
                   MeshTri, asm, bmat, condense, solve)
from skfem.helpers import ddot, div, dot, grad

H, LENGTH, XC, R_DEFAULT = 0.41, 2.2, 0.2, 0.05


def advect(g, w):
    """(w . grad) u for a gradient g[i, j] = d u_i / d x_j."""
    return np.einsum("ij...,j...->i...", g, w)


class Problem:
    """Mesh, spaces and the parts of the system that do not change."""

    def __init__(self, a, u_max):
        self.a, self.u_max = a, u_max
        self.yc, self.r, self.x0 = a.y, a.radius, a.x_in
        t0 = time.time()
        self.mesh = self.build_mesh()
        self.bu = Basis(self.mesh, ElementVector(ElementTriP2()), intorder=4)
        self.bp = Basis(self.mesh, ElementTriP1(), intorder=4)
        nu = a.nu
        self.A = asm(BilinearForm(lambda u, v, w: nu * ddot(grad(u), grad(v))), self.bu)
        self.B = asm(BilinearForm(lambda u, q, w: div(u) * q), self.bu, self.bp)
        self.nU, self.nP = self.A.shape[0], self.B.shape[0]
        m = self.mesh
        bf = m.boundary_facets()
        mid = m.p[:, m.facets[:, bf]].mean(axis=1)
        self.dirichlet = self.bu.get_dofs(bf[mid[0] < self.x0 + LENGTH - 1e-9]).all()
        ux = np.concatenate([self.bu.nodal_dofs[0], self.bu.facet_dofs[0]])
        uy = np.concatenate([self.bu.nodal_dofs[1], self.bu.facet_dofs[1]])
        x = self.bu.doflocs
        self.u_bc = np.zeros(self.nU)
        inflow = np.intersect1d(ux, np.where(np.abs(x[0] - self.x0) < 1e-12)[0])
        self.u_bc[inflow] = 4 * u_max * x[1, inflow] * (H - x[1, inflow]) / H ** 2
        on_body = self.bu.get_dofs(bf[np.hypot(mid[0] - XC, mid[1] - self.yc) < self.r + 1e-6]).all()
        self.test_d, self.test_l = np.zeros(self.nU), np.zeros(self.nU)
        self.test_d[np.intersect1d(on_body, ux)] = 1.0
        self.test_l[np.intersect1d(on_body, uy)] = 1.0
        u_mean = 2.0 / 3.0 * u_max
        self.scale = 2.0 / (u_mean ** 2 * 2 * self.r)
        self.probe = self.bp.probes(np.array([[XC - self.r, XC + self.r], [self.yc, self.yc]]))
        print(f"mesh: {m.nelements} triangles, {self.nU + self.nP} unknowns ({time.time() - t0:.1f} s)", flush=True)

    def size(self, x, y):
        a = self.a
        h = np.minimum(a.h_far, a.h_near + 0.25 * np.maximum(np.hypot(x - XC, y - self.yc) - self.r, 0))
        if a.mode == "periodic":  # the near wake at twice the surface's size
            wake = (x > 0.15) & (x < 1.2) & (y > 0.08) & (y < 0.33)
            h = np.where(wake, np.minimum(h, 2 * a.h_near), h)
        return h

    def build_mesh(self):
        x0 = self.x0
        corners = [(x0, 0.0), (x0 + LENGTH, 0.0), (x0 + LENGTH, H), (x0, H)]
        verts = []
        for k in range(4):  # each side graded by the size function
            p, end = np.array(corners[k], float), np.array(corners[(k + 1) % 4], float)
            while True:
                verts.append(p)
                rest = np.linalg.norm(end - p)
                step = self.size(*p)
                if rest <= 1.2 * step:
                    break
                p = p + (end - p) / rest * step
        n_out = len(verts)
        n_circ = max(512, int(np.ceil(2 * np.pi * self.r / self.a.h_near / 4)) * 4)
        th = np.linspace(0, 2 * np.pi, n_circ, endpoint=False)
        verts += [np.array([XC + self.r * np.cos(t), self.yc + self.r * np.sin(t)]) for t in th]
        segs = [(i, (i + 1) % n_out) for i in range(n_out)]
        segs += [(n_out + i, n_out + (i + 1) % n_circ) for i in range(n_circ)]
        geom = {"vertices": np.array(verts), "segments": np.array(segs), "holes": np.array([[XC, self.yc]])}
        tri = triangle.triangulate(geom, f"pq30Ya{0.433 * self.a.h_far ** 2:g}")
        for _ in range(10):  # refine until every triangle is at most ~its target size
            c = tri["vertices"][tri["triangles"]]
            want = 0.433 * self.size(c[:, :, 0].mean(axis=1), c[:, :, 1].mean(axis=1)) ** 2
            e1, e2 = c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]
            if np.all(0.5 * np.abs(e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]) <= 1.3 * want):
                break
            tri["triangle_max_area"] = want
            tri = triangle.triangulate(tri, "rpq30Ya")
        return MeshTri(tri["vertices"].T.copy(), tri["triangles"].T.copy())

    def solve(self, Kuu, f_u):
        K = self.saddle(Kuu)
        f = np.concatenate([f_u, np.zeros(self.nP)])
        x = np.concatenate([self.u_bc, np.zeros(self.nP)])
        s = solve(*condense(K, f, x=x, D=self.dirichlet))
        return s[:self.nU], s[self.nU:]

    def saddle(self, Kuu):
        """The velocity-pressure system with the velocity block Kuu."""
        return bmat([[Kuu, -self.B.T], [-self.B, None]], "csc")

    def coefficients(self, residual, p):
        pa = self.probe @ p
        return -self.scale * residual @ self.test_d, -self.scale * residual @ self.test_l, pa[0] - pa[1]


CONVECT = BilinearForm(lambda u, v, w: dot(advect(grad(u), w["w"].value) + advect(grad(w["w"]), u.value), v))
CONVECT_OLD = LinearForm(lambda v, w: dot(advect(grad(w["w"]), w["w"].value), v))
ADVECT = BilinearForm(lambda u, v, w: dot(advect(grad(u), w["w"].value), v))
MASS = BilinearForm(lambda u, v, w: dot(u, v))


def probe(basis, q, field, ncomp):
    """A finite-element field at the points q (2 x n), as an ncomp x n array; in chunks,
    since probes build a dense block per chunk."""
    out = []
    for i in range(0, q.shape[1], 2000):
        c = q[:, i:i + 2000]
        out.append((basis.probes(c) @ field).reshape(ncomp, c.shape[1]))
    return np.concatenate(out, axis=1)


def steady(a):
    pb = Problem(a, u_max=0.3)
    u = np.zeros(pb.nU)
    for it in range(30):  # Stokes, then Newton: N(u) ~ N(w) + N'(w)(u - w)
        if it == 0:
            Kuu, f = pb.A, np.zeros(pb.nU)
        else:
            w = pb.bu.interpolate(u)
            Kuu, f = pb.A + asm(CONVECT, pb.bu, w=w), asm(CONVECT_OLD, pb.bu, w=w)
        u_new, p = pb.solve(Kuu, f)
        change = np.max(np.abs(u_new - u))
        u = u_new
        print(f"iteration {it}: max |du| = {change:.2e}", flush=True)
        if it > 0 and change < 1e-10:
            break
    res = pb.A @ u + asm(CONVECT_OLD, pb.bu, w=pb.bu.interpolate(u)) - pb.B.T @ p
    cd, cl, dp = pb.coefficients(res, p)
    print(f"cd = {cd:.6f}  cl = {cl:.7f}  dp = {dp:.6f}")
    if a.save:
        np.savez(a.save, u=u, p=p, vertices=pb.mesh.p, triangles=pb.mesh.t, yc=pb.yc, radius=pb.r)


def load_state(pb, path):
    """A saved periodic state on this mesh: (time, dt it was run with, the two time
    levels, whether they were interpolated). Taken as is on the same mesh, interpolated
    at this mesh's degrees of freedom from another one."""
    try:
        st = np.load(path)
        t, dt, levels, vertices = float(st["time"]), float(st["dt"]), (st["u_old"], st["u_older"]), st["vertices"]
        triangles = st["triangles"]
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"fem_cylinder.py periodic: {path} is not a state written by --state-out ({e})")
    if vertices.shape == pb.mesh.p.shape and np.array_equal(vertices, pb.mesh.p):
        return t, dt, levels[0].copy(), levels[1].copy(), False
    src = Basis(MeshTri(vertices, triangles), ElementVector(ElementTriP2()))
    ux = np.concatenate([pb.bu.nodal_dofs[0], pb.bu.facet_dofs[0]])
    comp = np.ones(pb.nU, dtype=int)
    comp[ux] = 0
    # a domain moved along x (--x-in): points beyond the saved one take its end values
    x_lo, x_hi = max(pb.x0, vertices[0].min()), min(pb.x0 + LENGTH, vertices[0].max())
    # boundary points a rounding error inside: the walls' and outflow's values are read
    # from the other mesh too (the Dirichlet ones are set again below)
    q = pb.bu.doflocs.copy()
    q[0] = np.clip(q[0], x_lo + 1e-10, x_hi - 1e-10)
    q[1] = np.clip(q[1], 1e-10, H - 1e-10)
    centre = np.array([[XC], [pb.yc]])
    rho = np.hypot(q[0] - XC, q[1] - pb.yc)
    near = rho < pb.r + 1e-9
    q[:, near] = centre + (q[:, near] - centre) * ((pb.r + 1e-9) / rho[near])
    out = []
    for field in levels:
        u = np.where(comp == 0, *probe(src, q, field, 2))
        u[pb.dirichlet] = pb.u_bc[pb.dirichlet]
        out.append(u)
    return t, dt, out[0], out[1], True


def periodic(a):
    """BDF2 in time, the advecting velocity extrapolated (an Oseen problem a step). The
    Oseen matrix changes little from step to step, so each step is solved by GMRES
    preconditioned with the LU factors of an earlier step's matrix, refactored when
    GMRES needs more than a few iterations: the direct solve's answer (to 1e-10
    relative), several times faster."""
    from scipy.sparse.linalg import LinearOperator, gmres, splu
    pb = Problem(a, u_max=1.5)
    M = asm(MASS, pb.bu)
    t_start, first = 0.0, 1

    def level(t):  # the inflow's share at time t: 2D-3 ramps it by sin(pi t / 8)
        return np.sin(np.pi * t / 8) if a.inflow == "sine" else 1.0
    u_old = np.zeros(pb.nU)
    u_old[pb.dirichlet] = pb.u_bc[pb.dirichlet] * level(0.0)  # 2D-2 starts with its inflow on, 2D-3 from rest
    u_older = u_old.copy()
    if a.state_in:
        t_start, dt_saved, u_old, u_older, moved = load_state(pb, a.state_in)
        if moved:  # interpolated levels carry the full inflow: set it for their times
            for u, t in ((u_old, t_start), (u_older, t_start - dt_saved)):
                u[pb.dirichlet] = pb.u_bc[pb.dirichlet] * level(t)
        # the same mesh and step continue with BDF2; otherwise one implicit Euler step first
        first = 1 if moved or dt_saved != a.dt else 0
        print(f"from {a.state_in} at t = {t_start:g}" + (", interpolated" if moved else "") +
              (", one implicit Euler step first" if first else ""), flush=True)
    n_all = pb.nU + pb.nP
    free = np.setdiff1d(np.arange(n_all), pb.dirichlet)
    lu, guess, last, factored, iters = None, None, None, 0, 0
    t0 = time.time()

    def save():
        if a.state_out:
            np.savez(a.state_out, vertices=pb.mesh.p, triangles=pb.mesh.t, u_old=u_old, u_older=u_older,
                     time=t_start + n * a.dt, dt=a.dt)

    with open(a.csv, "a" if a.state_in and a.append else "w") as out:
        if not (a.state_in and a.append):
            out.write(f"# fem_cylinder.py periodic: Taylor-Hood P2/P1, BDF2, dt {a.dt:g}, h_near {a.h_near:g}, "
                      f"h_far {a.h_far:g}, {pb.mesh.nelements} triangles, inflow {a.inflow}\ntime,cd,cl,dp\n")
        n = 0
        while t_start + n * a.dt < a.end - 1e-9:
            n += 1
            if n <= first:  # implicit Euler, then BDF2 with the extrapolated advecting velocity
                a0, w, f = 1.0 / a.dt, u_old, M @ u_old / a.dt
            else:
                a0, w, f = 1.5 / a.dt, 2 * u_old - u_older, M @ (2 * u_old - 0.5 * u_older) / a.dt
            Kuu = a0 * M + pb.A + asm(ADVECT, pb.bu, w=pb.bu.interpolate(w))
            K = pb.saddle(Kuu)
            x_bc = np.concatenate([pb.u_bc * level(t_start + n * a.dt), np.zeros(pb.nP)])
            rhs = (np.concatenate([f, np.zeros(pb.nP)]) - K @ x_bc)[free]
            Kff = K[free][:, free]
            info, count = 1, 0
            if lu is not None:
                def cb(_):
                    nonlocal count
                    count += 1
                pre = LinearOperator(Kff.shape, lu.solve)
                sol, info = gmres(Kff, rhs, x0=guess, M=pre, rtol=1e-10, atol=0.0, restart=25, maxiter=1,
                                  callback=cb, callback_type="pr_norm")
            if info != 0:  # no factors yet, or too old to converge: factor this step's matrix
                lu = splu(Kff.tocsc())
                sol = lu.solve(rhs)
                factored += 1
            elif count > 12:  # converged, but slowly: fresh factors for the next step
                lu = None
            iters += count
            guess, last = (2 * sol - last if last is not None else sol), sol  # extrapolated start
            x = x_bc.copy()
            x[free] = sol
            u, p = x[:pb.nU], x[pb.nU:]
            cd, cl, dp = pb.coefficients(Kuu @ u - pb.B.T @ p - f, p)
            out.write(f"{t_start + n * a.dt:.6f},{cd:.8f},{cl:.8f},{dp:.8f}\n")
            u_older, u_old = u_old, u
            if n % 100 == 0:
                out.flush()
                save()
                print(f"t = {t_start + n * a.dt:.3f}  cd {cd:.4f}  cl {cl:+.4f}  ({time.time() - t0:.0f} s, "
                      f"{factored} factorisations, {iters / n:.1f} GMRES iterations a step)", flush=True)
    save()


def compare(a):
    import h5py
    ref = np.load(a.ref)
    yc, r = float(ref["yc"]), float(ref["radius"])
    f = h5py.File(a.run, "r")
    steps = sorted((k for k in f["simulation"] if k.startswith("step_")), key=lambda s: int(s[5:]))
    st = f["simulation"][steps[-1]]
    bb, leaf = st["bounding_box"][:], np.where((st["child_rows"][:] < 0).all(axis=1))[0]
    fields = {k: st[f"cell_data/{k}"][:] for k in ("u", "v", "p")}
    _, _, sy, sx = fields["p"].shape
    cols = {k: [] for k in ("x", "y", "hx", "hy", "u", "v", "p")}
    for g in leaf:
        hx, hy = (bb[g, 1] - bb[g, 0]) / sx, (bb[g, 3] - bb[g, 2]) / sy
        gx, gy = np.meshgrid(bb[g, 0] + (np.arange(sx) + 0.5) * hx, bb[g, 2] + (np.arange(sy) + 0.5) * hy)
        for k, v in (("x", gx), ("y", gy), ("hx", np.full_like(gx, hx)), ("hy", np.full_like(gx, hy))):
            cols[k].append(v.ravel())
        for k in ("u", "v", "p"):
            cols[k].append(fields[k][g, 0].ravel())
    c = {k: np.concatenate(v) for k, v in cols.items()}
    d = np.hypot(c["x"] - XC, c["y"] - yc) - r
    keep = (d > 0) & (c["x"] > 0) & (c["x"] < LENGTH)
    c = {k: v[keep] for k, v in c.items()}
    d = d[keep]
    mesh = MeshTri(ref["vertices"], ref["triangles"])
    bu, bp = Basis(mesh, ElementVector(ElementTriP2())), Basis(mesh, ElementTriP1())
    q = np.vstack([c["x"], c["y"]])
    (uf, vf), (pf,) = probe(bu, q, ref["u"], 2), probe(bp, q, ref["p"], 1)
    h = c["hx"].min()
    print(f"{a.run}: {d.size} fluid cells, finest h = {h:.3g}; errors against {a.ref} (U_mean 0.2)")
    print("distance from the surface   cells   rms(u - u_ref)  rms(v - v_ref)  mean(p - p_ref)")
    for lo, hi in ((0, 3), (3, 6), (6, 12), (12, 32), (32, None)):
        s = (d >= lo * h) & (d < (hi or np.inf) * h)
        rms = lambda e: np.sqrt(np.mean(e[s] ** 2))
        band = f"[{lo:>2} h, {hi:>2} h)" if hi else f"[{lo:>2} h, end)  "
        print(f"  {band}        {s.sum():8d}   {rms(c['u'] - uf):.2e}        {rms(c['v'] - vf):.2e}"
              f"        {np.mean(c['p'][s] - pf[s]):+.2e}")
    th = np.arctan2(c["y"] - yc, c["x"] - XC)
    ut, utf = -c["u"] * np.sin(th) + c["v"] * np.cos(th), -uf * np.sin(th) + vf * np.cos(th)
    print("tangential speed within 3 h, by 30 degrees from -180 (ours - reference, 1e-3):")
    s = d < 3 * h
    print("  " + " ".join(f"{np.mean((ut - utf)[s & (th >= np.radians(t)) & (th < np.radians(t + 30))]) * 1e3:+5.2f}"
                          for t in range(-180, 180, 30)))
    col = (c["x"] - c["hx"] / 2 <= XC) & (c["x"] + c["hx"] / 2 > XC)
    for name, s in (("below", col & (c["y"] < yc)), ("above", col & (c["y"] > yc))):
        q, qf = np.sum(c["u"][s] * c["hy"][s]), np.sum(uf[s] * c["hy"][s])
        print(f"flow {name} the body at x = {XC}: {q:.6f} against {qf:.6f} ({(q - qf) / qf * 100:+.3f} %)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("steady", "periodic", "compare"))
    ap.add_argument("files", nargs="*")
    ap.add_argument("--h-near", type=float, default=0.003, help="element size at the surface")
    ap.add_argument("--h-far", type=float, default=0.015, help="largest element size")
    ap.add_argument("--y", type=float, default=0.2, help="the cylinder's centre y")
    ap.add_argument("--x-in", type=float, default=0.0, help="where the inflow is (the body stays at x = 0.2)")
    ap.add_argument("--nu", type=float, default=1e-3)
    ap.add_argument("--radius", type=float, default=R_DEFAULT)
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--end", type=float, default=10.0)
    ap.add_argument("--csv", help="periodic: the monitor-like output")
    ap.add_argument("--save", help="steady: the field, for compare")
    ap.add_argument("--state-out", help="periodic: the last two time levels, saved every 100 steps and at the end")
    ap.add_argument("--state-in", help="periodic: start from a saved state (interpolated if the mesh differs)")
    ap.add_argument("--append", action="store_true", help="periodic with --state-in: append to --csv")
    ap.add_argument("--inflow", choices=("steady", "sine"), default="steady",
                    help="periodic: 2D-2's constant inflow, or 2D-3's 1.5 sin(pi t / 8) from rest")
    a = ap.parse_args()
    if a.mode == "compare":
        if len(a.files) != 2:
            sys.exit("fem_cylinder.py compare: needs RUN.h5 REF.npz")
        a.run, a.ref = a.files
        compare(a)
    elif a.mode == "periodic":
        if not a.csv:
            sys.exit("fem_cylinder.py periodic: needs --csv OUT.csv")
        if a.append and not a.state_in:
            sys.exit("fem_cylinder.py periodic: --append continues a run, so it needs --state-in")
        periodic(a)
    else:
        steady(a)


if __name__ == "__main__":
    main()

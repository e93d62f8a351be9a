// The pressure solver: V-cycles on the tree levels, conjugate gradients on the root.
#include "solver_impl.hpp"

namespace rwd::solver {

int Solver::Impl::sweeps(int base, int level) const {
  const double f = std::pow(cfg.pressure.coarse_factor, lmax - level);
  return std::min(cfg.pressure.max_sweeps, static_cast<int>(std::lround(base * f)));
}

void Solver::Impl::smooth(int level, int n) {
  const double omega = cfg.pressure.omega;
  static constexpr int xv[] = {kX};
  for (int s = 0; s < n; ++s) {
    exchange_level(xv, level);
    for (const std::size_t g : by_level[static_cast<std::size_t>(level)]) {
      const BlockGeom& G = grids[g].geom;
      double* x = forest.data(g, kX);
      const double* b = forest.data(g, kB);
      double ih2[3] = {0, 0, 0};
      for (int a = 0; a < dim; ++a) ih2[a] = 1.0 / (G.h[a] * G.h[a]);
      const double inv_diag = 1.0 / (2.0 * G.inv_h2_sum());
      const std::int64_t sy = G.sy(), sz = G.sz();
      for (int colour = 0; colour < 2; ++colour)
        for (int k = 0; k < G.s[2]; ++k)
          for (int j = 0; j < G.s[1]; ++j) {
            const int i0 = (colour + j + k) & 1;
            std::int64_t c = G.index(i0, j, k);
            for (int i = i0; i < G.s[0]; i += 2, c += 2) {
              double nb = (x[c + 1] + x[c - 1]) * ih2[0] + (x[c + sy] + x[c - sy]) * ih2[1];
              if (dim == 3) nb += (x[c + sz] + x[c - sz]) * ih2[2];
              const double gs = (nb - b[c]) * inv_diag;
              x[c] = omega == 1.0 ? gs : (1.0 - omega) * x[c] + omega * gs;
            }
          }
    }
  }
}

void Solver::Impl::level_residual(int level) {
  static constexpr int xv[] = {kX};
  exchange_level(xv, level);
  for (const std::size_t g : by_level[static_cast<std::size_t>(level)]) {
    const BlockGeom& G = grids[g].geom;
    const double* x = forest.data(g, kX);
    const double* b = forest.data(g, kB);
    double* r = forest.data(g, kR);
    for_interior(G, [&](std::int64_t c, int, int, int) { r[c] = b[c] - laplacian(x, G, c); });
  }
}

void Solver::Impl::root_halo(double* q, const BlockGeom& G) const {
  for (int a = 0; a < dim; ++a) {
    const int t1 = (a + 1) % 3, t2 = (a + 2) % 3;
    const bool per = forest.shape().periodic[a];
    const double slo = cfg.boundary[static_cast<std::size_t>(2 * a)].type == BcType::outflow ? -1.0 : 1.0;
    const double shi = cfg.boundary[static_cast<std::size_t>(2 * a + 1)].type == BcType::outflow ? -1.0 : 1.0;
    for (int b2 = 0; b2 < G.s[t2]; ++b2)
      for (int b1 = 0; b1 < G.s[t1]; ++b1) {
        std::array<std::int64_t, 3> lo{}, hi{}, in0{}, in1{};
        lo[static_cast<std::size_t>(a)] = -1, hi[static_cast<std::size_t>(a)] = G.s[a];
        in0[static_cast<std::size_t>(a)] = 0, in1[static_cast<std::size_t>(a)] = G.s[a] - 1;
        for (auto* v : {&lo, &hi, &in0, &in1}) (*v)[static_cast<std::size_t>(t1)] = b1, (*v)[static_cast<std::size_t>(t2)] = b2;
        const auto I = [&](const std::array<std::int64_t, 3>& v) { return G.index(v[0], v[1], v[2]); };
        if (per) {
          q[I(lo)] = q[I(in1)];
          q[I(hi)] = q[I(in0)];
        } else {
          q[I(lo)] = slo * q[I(in0)];
          q[I(hi)] = shi * q[I(in1)];
        }
      }
  }
}

void Solver::Impl::coarse_solve() {
  if (root < 0) return;
  const auto g = static_cast<std::size_t>(root);
  const BlockGeom& G = grids[g].geom;
  double* x = forest.data(g, kX);
  double* b = forest.data(g, kB);
  const std::size_t n = G.size();
  std::vector<double> r(n, 0.0), p(n, 0.0), ap(n, 0.0);
  std::int64_t cells = 0;
  double mean = 0;
  for_interior(G, [&](std::int64_t c, int, int, int) { mean += b[c], ++cells; });
  mean /= static_cast<double>(cells);
  // A Neumann/periodic problem is solvable only for a zero-mean right-hand side.
  for_interior(G, [&](std::int64_t c, int, int, int) {
    x[c] = 0.0;
    r[static_cast<std::size_t>(c)] = -(b[c] - (singular ? mean : 0.0));  // residual of (-L) x = -b at x = 0
    p[static_cast<std::size_t>(c)] = r[static_cast<std::size_t>(c)];
  });
  auto dot = [&](const std::vector<double>& a, const std::vector<double>& bb) {
    double s = 0;
    for_interior(G, [&](std::int64_t c, int, int, int) { s += a[static_cast<std::size_t>(c)] * bb[static_cast<std::size_t>(c)]; });
    return s;
  };
  double rr = dot(r, r);
  const double rr0 = rr;
  const int max_it = 4 * static_cast<int>(cells) + 10;
  for (int it = 0; it < max_it && rr > 1e-24 * rr0 && rr > 0; ++it) {
    root_halo(p.data(), G);
    for_interior(G, [&](std::int64_t c, int, int, int) { ap[static_cast<std::size_t>(c)] = -laplacian(p.data(), G, c); });
    const double pap = dot(p, ap);
    if (!(pap > 0)) break;
    const double alpha = rr / pap;
    for_interior(G, [&](std::int64_t c, int, int, int) {
      x[c] += alpha * p[static_cast<std::size_t>(c)];
      r[static_cast<std::size_t>(c)] -= alpha * ap[static_cast<std::size_t>(c)];
    });
    const double rn = dot(r, r);
    const double beta = rn / rr;
    rr = rn;
    for_interior(G, [&](std::int64_t c, int, int, int) {
      p[static_cast<std::size_t>(c)] = r[static_cast<std::size_t>(c)] + beta * p[static_cast<std::size_t>(c)];
    });
  }
}

double Solver::Impl::composite_residual() {
  static constexpr int pv[] = {kPhi};
  exchange(pv);
  double m = 0;
  for (const std::size_t g : leaves) {
    const BlockGeom& G = grids[g].geom;
    const double* x = forest.data(g, kPhi);
    const double* f = forest.data(g, kRhs);
    double* b = forest.data(g, kB);
    for_interior(G, [&](std::int64_t c, int, int, int) {
      b[c] = f[c] - laplacian(x, G, c);
      m = std::max(m, std::abs(b[c]));
    });
  }
  return allreduce_max(m, comm);
}

void Solver::Impl::fill(int var, double v, bool leaves_only) {
  for (std::size_t g = 0; g < forest.size(); ++g)
    if (!leaves_only || grids[g].leaf) std::fill_n(forest.data(g, var), forest.block_size(), v);
}

void Solver::Impl::vcycle() {
  fill(kX, 0.0, false);
  static constexpr int xv[] = {kX};
  static constexpr int rv[] = {kR};
  for (int l = lmax; l >= 1; --l) {
    if (l < lmax)
      for (const std::size_t g : by_level[static_cast<std::size_t>(l)])
        if (!grids[g].leaf) std::copy_n(forest.data(g, kR), forest.block_size(), forest.data(g, kB));
    smooth(l, sweeps(cfg.pressure.pre_smooth, l));
    level_residual(l);
    forest.restrict_level(rv, l);
  }
  if (lmax >= 1)
    for (const std::size_t g : by_level[0])
      if (!grids[g].leaf) std::copy_n(forest.data(g, kR), forest.block_size(), forest.data(g, kB));
  coarse_solve();
  for (int l = 1; l <= lmax; ++l) {
    forest.exchange_halos(xv, l - 1, Interp::linear, bc);
    forest.prolong_level(xv, l, ProlongMode::add, Interp::linear);
    smooth(l, sweeps(cfg.pressure.post_smooth, l));
  }
  for (const std::size_t g : leaves) {
    const BlockGeom& G = grids[g].geom;
    double* phi = forest.data(g, kPhi);
    const double* x = forest.data(g, kX);
    for_interior(G, [&](std::int64_t c, int, int, int) { phi[c] += x[c]; });
  }
}

PressureStats Solver::Impl::solve(double tol, double scale) {
  fill(kPhi, 0.0, false);
  PressureStats ps;
  cycle_residuals.clear();
  double prev = 0;
  for (int cycle = 0;; ++cycle) {
    const double r = composite_residual();
    if (cycle > 0 && prev > 0) cycle_residuals.push_back(r / prev);
    prev = r;
    ps.residual = r * scale;
    ps.cycles = cycle;
    if (ps.residual <= tol) {
      ps.converged = true;
      break;
    }
    if (cycle >= cfg.pressure.max_cycles) break;
    vcycle();
  }
  // Leave phi's halos consistent for the correction.
  static constexpr int pv[] = {kPhi};
  exchange(pv);
  return ps;
}

}  // namespace rwd::solver

// Boundary conditions in the halo, the halo exchange, flux matching at level jumps
// and the reflux of advective fluxes.
#include "solver_impl.hpp"

namespace rwd::solver {

double Solver::Impl::profile_factor(const FaceBc& b, int axis, const std::array<double, 3>& x) const {
  if (b.profile != Profile::parabolic) return 1.0;
  const auto& dom = forest.shape().domain;
  double f = 1.0;
  for (int t = 0; t < dim; ++t) {
    if (t == axis) continue;
    const double L = dom.extent(t);
    f *= 4.0 * (x[t] - dom.lo[t]) * (dom.hi[t] - x[t]) / (L * L);
  }
  return f;
}

void Solver::Impl::fill_boundary(std::size_t g, const std::array<std::int8_t, 3>& dir, int var) {
  GridData& gd = grids[g];
  // The face condition that applies: the first axis of `dir` that leaves the
  // domain. Edge and corner halos (called after the faces) apply it to the halo
  // cell one step back along that axis, which is already filled.
  int axis = -1;
  for (int a = 0; a < 3 && axis < 0; ++a)
    if (dir[a] != 0 && gd.on_face[static_cast<std::size_t>(2 * a + (dir[a] > 0))]) axis = a;
  if (axis < 0) return;
  const int side = dir[axis] > 0 ? 1 : 0;
  const FaceBc& b = cfg.boundary[static_cast<std::size_t>(2 * axis + side)];
  const BlockGeom& G = gd.geom;
  double* q = forest.data(g, var);
  std::array<std::int64_t, 3> lo{}, hi{};
  for (int a = 0; a < 3; ++a) {
    const auto A = static_cast<std::size_t>(a);
    if (dir[a] == 0) lo[A] = 0, hi[A] = G.s[a];
    else lo[A] = dir[a] > 0 ? G.s[a] : -1, hi[A] = lo[A] + 1;
  }
  const std::int64_t back = (side ? -1 : 1) * G.stride(axis);

  // Classify the variable.
  enum Kind { vel, pres, grad, temp, plain } kind = plain;
  int comp = 0;
  if (var >= kU && var <= kW) kind = vel, comp = var - kU;
  else if (var >= kUs && var <= kWs) kind = vel, comp = var - kUs;
  else if (var == kP || var == kPhi || var == kX) kind = pres;
  else if (var >= kGpx && var <= kGpz) kind = grad, comp = var - kGpx;
  else if (var == kT || var == kTs) kind = temp;

  for (std::int64_t k = lo[2]; k < hi[2]; ++k)
    for (std::int64_t j = lo[1]; j < hi[1]; ++j)
      for (std::int64_t i = lo[0]; i < hi[0]; ++i) {
        const std::int64_t cg = G.index(i, j, k), ci = cg + back;
        const double v = q[ci];
        double out = v;
        switch (kind) {
          case vel: {
            const bool normal = comp == axis;
            switch (b.type) {
              case BcType::wall: out = -v; break;
              case BcType::moving_wall: out = normal ? -v : 2.0 * b.velocity[static_cast<std::size_t>(comp)] - v; break;
              case BcType::inflow: {
                std::array<std::int64_t, 3> ii{i, j, k};
                ii[static_cast<std::size_t>(axis)] = side ? G.s[axis] - 1 : 0;
                const auto x = centre(gd, ii[0], ii[1], ii[2]);
                out = 2.0 * b.velocity[static_cast<std::size_t>(comp)] * profile_factor(b, axis, x) - v;
                break;
              }
              case BcType::slip: out = normal ? -v : v; break;
              case BcType::outflow: case BcType::periodic: out = v; break;
            }
            break;
          }
          case pres: out = b.type == BcType::outflow ? -v : v; break;
          case grad: out = (comp == axis && b.type != BcType::outflow) ? -v : v; break;
          case temp: out = b.temperature_fixed ? 2.0 * b.temperature - v : v; break;
          case plain: break;
        }
        q[cg] = out;
      }
}

void Solver::Impl::exchange(std::span<const int> vars) {
  if (full) {
    forest.exchange_halos(vars, lmax, Interp::linear, bc);
    return;
  }
  if (!matched) {
    forest.communicate(vars, Interp::linear, bc);
    return;
  }
  forest.communicate(vars, Interp::constant, bc);
  for (std::size_t g = 0; g < forest.size(); ++g)
    for (const int v : vars) match_coarse_faces(g, v);
}

void Solver::Impl::exchange_level(std::span<const int> vars, int level) {
  if (!matched) {
    forest.exchange_halos(vars, level, Interp::linear, bc);
    return;
  }
  forest.exchange_halos(vars, level, Interp::constant, bc);
  for (const std::size_t g : by_level[static_cast<std::size_t>(level)])
    for (const int v : vars) match_coarse_faces(g, v);
}

void Solver::Impl::match_coarse_faces(std::size_t g, int var) {
  GridData& gd = grids[g];
  if (gd.coarse_faces.empty()) return;
  const BlockGeom& G = gd.geom;
  const auto& r = forest.shape().r;
  double* q = forest.data(g, var);
  for (const CoarseFace& cf : gd.coarse_faces) {
    const int a = cf.axis, t1 = (a + 1) % 3, t2 = (a + 2) % 3;
    const int rn = r[static_cast<std::size_t>(a)];
    const int r1 = r[static_cast<std::size_t>(t1)], r2 = r[static_cast<std::size_t>(t2)];
    if (rn > G.s[a]) continue;
    const std::int64_t in = cf.side ? -G.stride(a) : G.stride(a);  // towards the interior
    const std::int64_t ig = cf.side ? G.s[a] : -1;
    const double inv_n = 1.0 / static_cast<double>(r1 * r2);
    const double inv_nq = 1.0 / static_cast<double>(r1 * r2 * rn);
    std::array<std::int64_t, 3> ijk{};
    ijk[static_cast<std::size_t>(a)] = ig;
    const int n1 = G.s[t1] / r1, n2 = G.s[t2] / r2;
    // Coarse values of the ghost row, before any ghost is overwritten.
    qc_buf.resize(static_cast<std::size_t>(n1 * n2));
    for (int m2 = 0; m2 < n2; ++m2)
      for (int m1 = 0; m1 < n1; ++m1) {
        ijk[static_cast<std::size_t>(t1)] = m1 * r1, ijk[static_cast<std::size_t>(t2)] = m2 * r2;
        qc_buf[static_cast<std::size_t>(m1 + n1 * m2)] = q[G.index(ijk[0], ijk[1], ijk[2])];
      }
    auto qc_at = [&](int m1, int m2) { return qc_buf[static_cast<std::size_t>(m1 + n1 * m2)]; };
    // Tangential slope of the coarse values (per coarse cell), central inside the
    // row, one-sided at its ends.
    auto slope = [&](int m, int n, double lo, double mid, double hi) {
      if (n < 2) return 0.0;
      if (m == 0) return hi - mid;
      if (m == n - 1) return mid - lo;
      return 0.5 * (hi - lo);
    };
    for (int m2 = 0; m2 < n2; ++m2)
      for (int m1 = 0; m1 < n1; ++m1) {
        ijk[static_cast<std::size_t>(t1)] = m1 * r1, ijk[static_cast<std::size_t>(t2)] = m2 * r2;
        const std::int64_t c0 = G.index(ijk[0], ijk[1], ijk[2]);
        const double qc = qc_at(m1, m2);
        const double s1 = r1 > 1 ? slope(m1, n1, qc_at(std::max(m1 - 1, 0), m2), qc, qc_at(std::min(m1 + 1, n1 - 1), m2)) : 0.0;
        const double s2 = r2 > 1 ? slope(m2, n2, qc_at(m1, std::max(m2 - 1, 0)), qc, qc_at(m1, std::min(m2 + 1, n2 - 1))) : 0.0;
        double f1 = 0, all = 0;
        for (int d2 = 0; d2 < r2; ++d2)
          for (int d1 = 0; d1 < r1; ++d1) {
            const std::int64_t c = c0 + d1 * G.stride(t1) + d2 * G.stride(t2);
            f1 += q[c + in];
            for (int m = 1; m <= rn; ++m) all += q[c + m * in];
          }
        // Mean ghost for flux matching; spread tangentially with the coarse slope.
        const double mean = f1 * inv_n - (all * inv_nq - qc) / static_cast<double>(rn);
        for (int d2 = 0; d2 < r2; ++d2)
          for (int d1 = 0; d1 < r1; ++d1) {
            const std::int64_t c = c0 + d1 * G.stride(t1) + d2 * G.stride(t2);
            const double o1 = (d1 + 0.5) / r1 - 0.5, o2 = (d2 + 0.5) / r2 - 0.5;
            q[c] = mean + s1 * o1 + s2 * o2;
          }
      }
  }
}

double Solver::Impl::advective_flux(std::size_t g, int q, std::int64_t c, int a, double dt, int vel) {
  const BlockGeom& G = grids[g].geom;
  const double U =
      face_velocity(forest.data(g, vel + a), forest.data(g, kP), forest.data(g, kGpx + a), G, c, a, st.dt_prev);
  const double* f = forest.data(g, q);
  return U * face_value(f[c], f[c + G.stride(a)], U, upwind_gamma(U, dt, G.h[a], cfg.numerics.upwind));
}

void Solver::Impl::reflux_predictor(double dt, const Stage& s) {
  if (full || !matched) return;
  std::vector<std::pair<int, int>> qs;  // (advected variable, predictor output)
  qs.reserve(4);
  for (int q = 0; q < dim; ++q) qs.emplace_back(s.from + q, s.into + q);
  if (cfg.physics.energy) qs.emplace_back(temperature_of(s.from), temperature_of(s.into));
  const double w = s.keep == 0.0 ? dt : (1.0 - s.keep) * dt;
  for (const auto& [q, out] : qs)
    reflux([&, q = q](std::size_t g, std::int64_t c, int a) { return advective_flux(g, q, c, a, dt, s.from); },
           [&, out = out](std::size_t g, std::int64_t c, int a, int side, double fine, double own) {
             const double d = w * (fine - own) / grids[g].geom.h[a];
             forest.data(g, out)[c] += side ? -d : d;
           });
}

}  // namespace rwd::solver

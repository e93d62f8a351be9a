// Finite-volume / finite-difference operators on one d-grid.
//
// A block is laid out exactly like a Forest variable: interior cells (i, j, k) with
// i in [0, s[0]) etc., a one-cell halo on every side, x fastest. Every operator here
// reads only a cell and its six face neighbours (never edge or corner halos), so a
// one-cell halo is enough and every result depends only on the block and its halos:
// the operators are pure, allocation-free and identical on every rank.
//
// Discretisation (collocated, cell-centred):
//  - face gradient      Gf q (i+1/2) = (q[i+1] - q[i]) / h
//  - cell gradient      Gc q (i)     = (Gf q(i-1/2) + Gf q(i+1/2)) / 2
//  - Laplacian          L q          = sum_a (q[+a] - 2 q + q[-a]) / h_a^2 = div Gf q
//  - face velocity      U(i+1/2)     = (u[i] + u[i+1]) / 2
//                                      + dtp * ((gp[i] + gp[i+1]) / 2 - Gf p(i+1/2))
//    (Rhie–Chow form: with gp = Gc p and dtp the previous step, this reproduces
//    exactly the divergence-free face velocity of the last projection, so the
//    compact pressure Laplacian has no checkerboard mode and the advecting flux is
//    the projected one.)
//  - advective flux of q through a face: U * q_f with
//      q_f = (q_L + q_R) / 2 - gamma * sign(U) * (q_R - q_L) / 2,
//      gamma = min(1, upwind * |U| dt / h)
//    gamma = |U| dt / h adds exactly the numerical diffusion U^2 dt / 2 that the
//    explicit Euler step takes away (Lax–Wendroff-like; stable for CFL <= 1).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace rwd::solver {

/// Shape of one block (a d-grid plus its halo) and its cell size.
struct BlockGeom {
  std::array<int, 3> s{1, 1, 1};
  std::array<double, 3> h{1.0, 1.0, 1.0};
  int dim = 3;

  [[nodiscard]] std::int64_t sy() const { return s[0] + 2; }
  [[nodiscard]] std::int64_t sz() const { return (s[0] + 2) * std::int64_t{s[1] + 2}; }
  /// Offset between neighbours along axis a.
  [[nodiscard]] std::int64_t stride(int a) const { return a == 0 ? 1 : (a == 1 ? sy() : sz()); }
  [[nodiscard]] std::int64_t index(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (i + 1) + sy() * (j + 1) + sz() * (k + 1);
  }
  [[nodiscard]] std::size_t size() const {
    return static_cast<std::size_t>(s[0] + 2) * static_cast<std::size_t>(s[1] + 2) *
           static_cast<std::size_t>(s[2] + 2);
  }
  /// Sum over axes of 1/h^2 (2-D: x and y only).
  [[nodiscard]] double inv_h2_sum() const {
    double r = 0;
    for (int a = 0; a < dim; ++a) r += 1.0 / (h[a] * h[a]);
    return r;
  }
};

/// Calls f(c) for every interior cell index c, in memory order (k, j, i).
template <class F>
inline void for_interior(const BlockGeom& g, F&& f) {
  for (int k = 0; k < g.s[2]; ++k)
    for (int j = 0; j < g.s[1]; ++j) {
      std::int64_t c = g.index(0, j, k);
      for (int i = 0; i < g.s[0]; ++i, ++c) f(c, i, j, k);
    }
}

inline double laplacian(const double* q, const BlockGeom& g, std::int64_t c) {
  double r = 0;
  for (int a = 0; a < g.dim; ++a) {
    const std::int64_t st = g.stride(a);
    r += (q[c + st] - 2.0 * q[c] + q[c - st]) / (g.h[a] * g.h[a]);
  }
  return r;
}

/// Face gradient on the + face of cell c along axis a.
inline double face_gradient(const double* q, const BlockGeom& g, std::int64_t c, int a) {
  return (q[c + g.stride(a)] - q[c]) / g.h[a];
}

/// Cell gradient component a: mean of the two face gradients.
inline double cell_gradient(const double* q, const BlockGeom& g, std::int64_t c, int a) {
  const std::int64_t st = g.stride(a);
  return 0.5 * (q[c + st] - q[c - st]) / g.h[a];
}

/// Rhie–Chow face velocity on the + face of cell c along axis a (see file comment).
inline double face_velocity(const double* u, const double* p, const double* gp, const BlockGeom& g,
                            std::int64_t c, int a, double dtp) {
  const std::int64_t n = c + g.stride(a);
  return 0.5 * (u[c] + u[n]) + dtp * (0.5 * (gp[c] + gp[n]) - (p[n] - p[c]) / g.h[a]);
}

/// Blended central/upwind face value (see file comment). `gamma` in [0, 1].
inline double face_value(double ql, double qr, double U, double gamma) {
  const double sgn = U > 0 ? 1.0 : (U < 0 ? -1.0 : 0.0);
  return 0.5 * (ql + qr) - 0.5 * gamma * sgn * (qr - ql);
}

inline double upwind_gamma(double U, double dt, double h, double factor) {
  return std::min(1.0, factor * std::abs(U) * dt / h);
}

}  // namespace rwd::solver

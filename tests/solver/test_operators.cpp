// The block operators are exact on the polynomials their order promises.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "rewind/solver/operators.hpp"

using namespace rwd::solver;

namespace {
// A block with halo filled from f at the cell centres (cell (i,j,k) at ((i+.5)h, ..)).
template <class F>
std::vector<double> fill(const BlockGeom& g, F f) {
  std::vector<double> q(g.size());
  for (int k = -1; k <= g.s[2]; ++k)
    for (int j = -1; j <= g.s[1]; ++j)
      for (int i = -1; i <= g.s[0]; ++i)
        q[static_cast<std::size_t>(g.index(i, j, k))] = f((i + 0.5) * g.h[0], (j + 0.5) * g.h[1], (k + 0.5) * g.h[2]);
  return q;
}
BlockGeom geom3() {
  BlockGeom g;
  g.s = {6, 5, 4};
  g.h = {0.1, 0.07, 0.13};  // anisotropic on purpose
  g.dim = 3;
  return g;
}
}  // namespace

TEST_CASE("Laplacian is exact on quadratics", "[solver]") {
  const auto g = geom3();
  const auto q = fill(g, [](double x, double y, double z) { return 3 * x * x - 2 * y * y + 0.5 * z * z + x * y - 4 * z + 1; });
  for_interior(g, [&](std::int64_t c, int, int, int) { CHECK(laplacian(q.data(), g, c) == Approx(6 - 4 + 1).epsilon(1e-9)); });
}

TEST_CASE("2-D Laplacian ignores z", "[solver]") {
  BlockGeom g;
  g.s = {5, 5, 1};
  g.h = {0.2, 0.2, 1.0};
  g.dim = 2;
  const auto q = fill(g, [](double x, double y, double z) { return x * x + y * y + 100 * z * z; });
  for_interior(g, [&](std::int64_t c, int, int, int) { CHECK(laplacian(q.data(), g, c) == Approx(4.0).epsilon(1e-9)); });
}

TEST_CASE("Cell and face gradients are exact on quadratics", "[solver]") {
  const auto g = geom3();
  auto f = [](double x, double y, double z) { return 2 * x * x + 3 * y * y - z * z + x * y * z; };
  const auto q = fill(g, f);
  for_interior(g, [&](std::int64_t c, int i, int j, int k) {
    const double x = (i + 0.5) * g.h[0], y = (j + 0.5) * g.h[1], z = (k + 0.5) * g.h[2];
    CHECK(cell_gradient(q.data(), g, c, 0) == Approx(4 * x + y * z).epsilon(1e-9));
    CHECK(cell_gradient(q.data(), g, c, 1) == Approx(6 * y + x * z).epsilon(1e-9));
    CHECK(cell_gradient(q.data(), g, c, 2) == Approx(-2 * z + x * y).epsilon(1e-9));
    // At the + face midpoint along x.
    const double xf = x + 0.5 * g.h[0];
    CHECK(face_gradient(q.data(), g, c, 0) == Approx(4 * xf + y * z).epsilon(1e-9));
  });
}

TEST_CASE("Face velocity: Rhie-Chow term vanishes for quadratic pressure", "[solver]") {
  const auto g = geom3();
  const auto u = fill(g, [](double x, double y, double z) { return 1 + 2 * x - y + 3 * z; });
  const auto p = fill(g, [](double x, double y, double) { return x * x - 3 * x * y + 2 * y * y; });
  std::vector<double> gp(g.size(), 0.0);
  // gp = Gc p inside; the halo is not needed for cells whose + face is interior.
  for_interior(g, [&](std::int64_t c, int, int, int) { gp[static_cast<std::size_t>(c)] = cell_gradient(p.data(), g, c, 0); });
  for_interior(g, [&](std::int64_t c, int i, int j, int k) {
    if (i + 1 >= g.s[0]) return;
    const double xf = (i + 1) * g.h[0], y = (j + 0.5) * g.h[1], z = (k + 0.5) * g.h[2];
    // Linear u: the face average is exact; the pressure term cancels exactly.
    CHECK(face_velocity(u.data(), p.data(), gp.data(), g, c, 0, 0.37) == Approx(1 + 2 * xf - y + 3 * z).epsilon(1e-9));
  });
}

TEST_CASE("Discrete divergence of a linear field is exact", "[solver]") {
  const auto g = geom3();
  const auto u = fill(g, [](double x, double y, double) { return 2 * x + y; });
  const auto v = fill(g, [](double x, double y, double z) { return -5 * y + x * z; });
  const auto w = fill(g, [](double, double, double z) { return 0.5 * z; });
  const std::vector<double> zero(g.size(), 0.0);
  const double* comp[3] = {u.data(), v.data(), w.data()};
  for_interior(g, [&](std::int64_t c, int, int, int) {
    double d = 0;
    for (int a = 0; a < 3; ++a)
      d += (face_velocity(comp[a], zero.data(), zero.data(), g, c, a, 0.0) -
            face_velocity(comp[a], zero.data(), zero.data(), g, c - g.stride(a), a, 0.0)) / g.h[a];
    CHECK(d == Approx(2 - 5 + 0.5).epsilon(1e-9));
  });
}

TEST_CASE("Central advective flux is exact for linear q in uniform flow", "[solver]") {
  const auto g = geom3();
  const auto q = fill(g, [](double x, double y, double) { return 3 * x - y; });
  const double U = 2.0;
  for_interior(g, [&](std::int64_t c, int, int, int) {
    const std::int64_t s = g.stride(0);
    const double div = (U * face_value(q[c], q[c + s], U, 0.0) - U * face_value(q[c - s], q[c], U, 0.0)) / g.h[0];
    CHECK(div == Approx(U * 3).epsilon(1e-9));
    // Full upwinding of a linear field in uniform flow is exact too.
    const double up = (U * face_value(q[c], q[c + s], U, 1.0) - U * face_value(q[c - s], q[c], U, 1.0)) / g.h[0];
    CHECK(up == Approx(U * 3).epsilon(1e-9));
  });
}

TEST_CASE("Upwind blend is the Lax-Wendroff weight, capped at 1", "[solver]") {
  CHECK(upwind_gamma(2.0, 0.01, 0.1, 1.0) == Approx(0.2));
  CHECK(upwind_gamma(-2.0, 0.01, 0.1, 1.0) == Approx(0.2));
  CHECK(upwind_gamma(50.0, 0.01, 0.1, 1.0) == 1.0);
  CHECK(face_value(1.0, 3.0, 1.0, 1.0) == 1.0);   // fully upwind, flow to +
  CHECK(face_value(1.0, 3.0, -1.0, 1.0) == 3.0);  // fully upwind, flow to -
  CHECK(face_value(1.0, 3.0, 1.0, 0.0) == 2.0);   // central
}

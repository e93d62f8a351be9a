// A short Schaefer-Turek 2D-2 run (Re 100) at coarse resolution sheds vortices:
// the lift changes sign periodically and the Strouhal number is near 0.3.
#include <catch2/catch.hpp>

#include <cmath>

#include "mpi_test_util.hpp"
#include "solver_test_util.hpp"

using namespace rwd;

TEST_CASE("Cylinder at Re 100 sheds vortices", "[solver][mpi][slow]") {
  const std::string text = R"(
[domain]
lo = [0.0, 0.0, 0.0]
hi = [2.2, 0.41, 1.0]
[tree]
r = [2, 2, 1]
s = [44, 8, 1]
depth = 3
[physics]
nu = 0.001
[time]
end = 6.0
[boundary.xmin]
type = "inflow"
velocity = [1.5, 0.0, 0.0]
profile = "parabolic"
[boundary.xmax]
type = "outflow"
[[obstacle]]
type = "circle"
center = [0.2, 0.2, 0.5]
radius = 0.05
[initial]
type = "uniform"
velocity = [1.0, 0.0, 0.0]
[solver]
tolerance = 1e-4
)";
  auto s = test::make_solver(text, MPI_COMM_WORLD);
  int sign_changes = 0;
  double prev = 0, cl_min = 0, cl_max = 0;
  while (!s.finished()) {
    s.step();
    const double cl = 2.0 * s.obstacle_force(0).force[1] / (1.0 * 1.0 * 0.1);
    if (s.scalar_state().time > 1.0) {
      if (prev != 0 && (cl > 0) != (prev > 0)) ++sign_changes;
      cl_min = std::min(cl_min, cl), cl_max = std::max(cl_max, cl);
    }
    prev = cl;
    if (sign_changes >= 8) break;
  }
  const auto m = s.monitors();
  INFO("t " << m.time << " sign changes " << sign_changes << " cl in [" << cl_min << ", " << cl_max << "] St "
            << m.strouhal << " cd " << m.cd);
  CHECK(sign_changes >= 6);
  CHECK(cl_max > 0.3);
  CHECK(cl_min < -0.3);
  CHECK(m.strouhal > 0.25);
  CHECK(m.strouhal < 0.35);
}

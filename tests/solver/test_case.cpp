// Case files: physically impossible or malformed settings are refused with one
// line naming the key.
#include <catch2/catch.hpp>

#include <string>

#include "solver_test_util.hpp"

using rwd::config::CaseError;

namespace {
const std::string kBase = R"(
[domain]
lo = [0.0, 0.0, 0.0]
hi = [1.0, 1.0, 1.0]
[tree]
r = [2, 2, 1]
s = [8, 8, 1]
depth = 2
[physics]
nu = 0.01
[time]
end = 1.0
[boundary.ymax]
type = "moving_wall"
velocity = [1.0, 0.0, 0.0]
)";

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    (void)rwd::test::parse_case(text, overrides);
  } catch (const CaseError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("A valid case parses with defaults", "[solver]") {
  const auto c = rwd::test::parse_case(kBase);
  CHECK(c.physics.nu == 0.01);
  CHECK_FALSE(c.physics.energy);
  CHECK(c.boundary[3].type == rwd::solver::BcType::moving_wall);
  CHECK(c.boundary[0].type == rwd::solver::BcType::wall);
  CHECK(c.time.dt == 0.0);
  CHECK(c.pressure.pre_smooth == 2);
}

TEST_CASE("Impossible settings are refused with one clear line", "[solver]") {
  const auto neg = error_of(kBase, {"physics.nu=-0.1"});
  CHECK(neg.find("physics.nu") != std::string::npos);
  CHECK(neg.find("positive") != std::string::npos);
  CHECK(neg.find('\n') == std::string::npos);

  // Heun has no anti-diffusion for the upwind blend to cancel: the default blend is refused.
  const auto rk2 = error_of(kBase, {"solver.time_scheme=\"rk2\""});
  CHECK(rk2.find("solver.time_scheme") != std::string::npos);
  CHECK(rk2.find("solver.upwind = 0") != std::string::npos);
  CHECK(rk2.find('\n') == std::string::npos);
  const auto rk2_up = error_of(kBase, {"solver.time_scheme=\"rk2\"", "solver.upwind=0.5"});
  CHECK(rk2_up.find("test.toml: solver.upwind") != std::string::npos);
  CHECK(error_of(kBase, {"solver.time_scheme=\"rk2\"", "solver.upwind=0"}).empty());
  CHECK(error_of(kBase, {"solver.time_scheme=\"rk3\""}).find("solver.time_scheme") != std::string::npos);

  const auto dt = error_of(kBase, {"time.dt=0.5"});
  CHECK(dt.find("time.dt") != std::string::npos);
  CHECK(dt.find("unstable") != std::string::npos);

  const auto obs = error_of(kBase + "[[obstacle]]\ntype = \"circle\"\ncenter = [0.95, 0.5, 0.5]\nradius = 0.1\n");
  CHECK(obs.find("obstacle[0]") != std::string::npos);
  CHECK(obs.find("outside the domain") != std::string::npos);

  CHECK(error_of(kBase, {"boundary.xmin.type=lid"}).find("boundary.xmin.type") != std::string::npos);
  CHECK(error_of(kBase, {"boundary.xmin.type=periodic"}).find("domain.periodic") != std::string::npos);
  CHECK(error_of(kBase, {"time.safety=1.5"}).find("time.safety") != std::string::npos);
  CHECK(error_of(kBase, {"physics.beta=1"}).find("energy") != std::string::npos);
  CHECK(error_of(kBase, {"solver.omega=2.5"}).find("solver.omega") != std::string::npos);
  CHECK(error_of(kBase + "[boundary.xmin]\ntype = \"inflow\"\nvelocity = [-1.0, 0.0, 0.0]\n").find("into the domain") !=
        std::string::npos);
}

TEST_CASE("Unknown keys are refused by name", "[solver]") {
  auto doc = rwd::config::CaseDocument::parse(kBase + "[physics.extra]\nfoo = 1\n", "t.toml");
  (void)rwd::solver::parse_solver_case(doc);
  try {
    doc.reject_unknown();
    FAIL("unknown key accepted");
  } catch (const CaseError& e) {
    CHECK(std::string(e.what()).find("physics.extra.foo") != std::string::npos);
  }
}

TEST_CASE("A forced dt below the limit is accepted", "[solver]") {
  const auto c = rwd::test::parse_case(kBase, {"time.dt=0.001"});
  CHECK(c.time.dt == 0.001);
}

// Schaefer & Turek's 3D-1Z scaling (their definition is the oracle): c_D = 2 F / (U_mean^2
// D H) with U_mean = 4/9 U_max of the product parabola and H the channel's depth; a sphere
// keeps D^2, a 2-D cylinder D per unit depth.
TEST_CASE("Drag and lift are scaled by the benchmark's reference area", "[solver]") {
  const std::string channel = R"(
[domain]
lo = [0.0, 0.0, 0.0]
hi = [2.5, 0.41, 0.41]
[tree]
r = [2, 2, 2]
s = [48, 8, 8]
depth = 1
[physics]
nu = 0.001
[time]
end = 1.0
[boundary.xmin]
type = "inflow"
velocity = [0.45, 0.0, 0.0]
profile = "parabolic"
[boundary.xmax]
type = "outflow"
[[obstacle]]
center = [0.5, 0.2, 0.205]
radius = 0.05
)";
  const auto cylinder = rwd::test::parse_case(channel + "type = \"circle\"\n");
  CHECK(cylinder.reference_velocity() == Approx(0.2).epsilon(1e-12));
  CHECK(cylinder.reference_length() == Approx(0.1).epsilon(1e-12));
  CHECK(cylinder.reference_area() == Approx(0.1 * 0.41).epsilon(1e-12));
  const auto sphere = rwd::test::parse_case(channel + "type = \"sphere\"\n");
  CHECK(sphere.reference_area() == Approx(0.1 * 0.1).epsilon(1e-12));
  const auto flat =
      rwd::test::parse_case(kBase + "[[obstacle]]\ntype = \"circle\"\ncenter = [0.5, 0.5, 0.5]\nradius = 0.1\n");
  CHECK(flat.reference_area() == Approx(0.2).epsilon(1e-12));
}

// A steering `set` checked against where the run is (driver::steering_override with the
// run's times): an end time not after the current time, an output interval the run cannot
// honour from there. A branch's values (no times given) are left to plan_branch.
#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/driver/steering.hpp"

using rwd::config::RunTimes;
using Parameter = rwd::collector::ParameterInfo;
using rwd::driver::steering_override;

namespace {
Parameter seconds(const std::string& name, double value, bool min_open) {
  return {.name = name,
          .value = value,
          .unit = "s",
          .min = 0.0,
          .max = 1e12,
          .description = "",
          .min_open = min_open,
          .max_open = false};
}
std::vector<Parameter> params() {
  return {seconds("output.checkpoint_interval", 0.05, false), seconds("time.end", 30.0, true)};
}

std::string refusal(const std::string& name, double v, const std::optional<RunTimes>& at) {
  try {
    (void)steering_override(params(), name, {v}, at);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("set: an output interval too short for the run is refused with the reason", "[driver]") {
  const RunTimes at{.end = 30.0, .dt = 0.0, .now = 0.12};
  const auto tiny = refusal("output.checkpoint_interval", 1e-12, at);
  CHECK(tiny.rfind("output.checkpoint_interval: 1e-12 s is too short for this run: 0 (off) or at least 3e-05 s", 0) ==
        0);
  CHECK(tiny.find('\n') == std::string::npos);
  CHECK_THAT(refusal("output.checkpoint_interval", 1e-20, at),
             Catch::Contains("at t = 0.12 it is even lost in round-off"));
  CHECK(refusal("output.checkpoint_interval", 0.05, at).empty());
  CHECK(refusal("output.checkpoint_interval", 0, at).empty());
  CHECK(steering_override(params(), "output.checkpoint_interval", {0.05}, at) == "output.checkpoint_interval=0.05");
}

TEST_CASE("set: time.end at or before the current time is refused, a later one taken", "[driver]") {
  const RunTimes at{.end = 30.0, .dt = 0.0, .now = 0.12};
  CHECK(refusal("time.end", 0.05, at) ==
        "time.end: 0.05 is not after the current time t = 0.12: the run would end at once; give a later time (`stop` "
        "ends the run)");
  CHECK_THAT(refusal("time.end", 0.12, at), Catch::Contains("not after the current time"));
  CHECK(steering_override(params(), "time.end", {0.2}, at) == "time.end=0.2");
  // A branch's values are checked against its branch point later (plan_branch).
  CHECK(refusal("time.end", 0.05, std::nullopt).empty());
}

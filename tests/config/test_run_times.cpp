// The times of a run that only hold together (config/run_times.hpp): an output interval
// too short for the run's end or fixed step, a step that would take more than a billion
// steps, a steered end time not after the current time. Each is refused with one line
// naming the key, the value and the least value the run can honour.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "rewind/config/case_keys.hpp"
#include "rewind/config/run_times.hpp"

using namespace rwd::config;

namespace {
const char* kTimes = "[time]\nend = 4.0\n";

// check_run_times' message on kTimes with `overrides`, "" if it accepts them.
std::string refusal(const std::vector<std::string>& overrides) {
  auto doc = CaseDocument::parse(kTimes, "c.toml", overrides);
  try {
    check_run_times(doc);
  } catch (const CaseError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("An output interval below a millionth of time.end is refused when the case is read", "[config]") {
  for (const char* key : {"output.checkpoint_interval", "output.visualisation_interval"}) {
    INFO(key);
    const auto why = refusal({std::string(key) + "=1e-9"});
    CHECK(why.rfind(std::string("c.toml: ") + key + ": 1e-09 s is too short for this run", 0) == 0);
    CHECK(why.find("0 (off) or at least 4e-06 s") != std::string::npos);
    CHECK(why.find("time.end = 4") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
    CHECK_THAT(refusal({std::string(key) + "=1e-300"}), Catch::Contains("at least 4e-06 s"));
    CHECK(refusal({std::string(key) + "=4e-6"}).empty());  // the least value is allowed
    CHECK(refusal({std::string(key) + "=0"}).empty());     // off
    CHECK(refusal({std::string(key) + "=0.1"}).empty());
  }
  // The bound follows time.end (a restart or branch that extends the run re-reads it).
  CHECK_THAT(refusal({"output.checkpoint_interval=0.001", "time.end=1e4"}), Catch::Contains("at least 0.01 s"));
  CHECK(refusal({"output.checkpoint_interval=0.001", "time.end=1e3"}).empty());
}

TEST_CASE("With a fixed time.dt an output interval is at least the step", "[config]") {
  CHECK_THAT(refusal({"time.dt=0.01", "output.visualisation_interval=0.005"}),
             Catch::Contains("output.visualisation_interval: 0.005 s is too short for this run: 0 (off) or at least "
                             "0.01 s (the fixed time.dt"));
  CHECK(refusal({"time.dt=0.01", "output.visualisation_interval=0.01"}).empty());
  CHECK(refusal({"time.dt=0.01", "output.visualisation_interval=0.015"}).empty());
}

TEST_CASE("A fixed step or a step cap that would take more than a billion steps is refused", "[config]") {
  const auto dt = refusal({"time.dt=1e-300"});
  CHECK(dt ==
        "c.toml: time.dt: 1e-300 s would take more than a billion steps to time.end = 4: give 0 (automatic) "
        "or at least 4e-09 s");
  CHECK(refusal({"time.dt=4e-9"}).empty());
  CHECK(refusal({"time.dt=0"}).empty());
  CHECK_THAT(refusal({"time.dt_max=1e-12"}), Catch::Contains("time.dt_max: 1e-12 s would take more than a billion"));
  CHECK_THAT(refusal({"time.dt_max=1e-12"}), Catch::Contains("give inf (no cap) or at least 4e-09 s"));
  CHECK(refusal({"time.dt_max=inf"}).empty());
  CHECK(refusal({"time.dt_max=1e-3"}).empty());
  // Values outside a key's own range still fail with the table's words first.
  CHECK_THAT(refusal({"output.checkpoint_interval=inf"}), Catch::Contains("must be in [0, 1e+12]"));
  CHECK_THAT(refusal({"time.dt=nan"}), Catch::Contains("time.dt"));
}

TEST_CASE("A safety factor so small the run never ends is outside the table's range", "[config]") {
  auto doc = CaseDocument::parse(kTimes, "c.toml", {"time.safety=1e-300"});
  CHECK_THROWS_WITH(doc.get_double("time.safety"), Catch::Contains("time.safety: must be in [0.001, 1]"));
}

TEST_CASE("Steered: relative to the current time", "[config]") {
  // 1e-20 set at t = 0.12: 0.12 + 1e-20 == 0.12, so no output time would ever be reached.
  const RunTimes late{.end = 30.0, .dt = 0.0, .now = 0.12};
  const auto why = interval_problem(1e-20, late);
  CHECK(why.find("at least 3e-05 s") != std::string::npos);
  CHECK(why.find("at t = 0.12 it is even lost in round-off") != std::string::npos);
  CHECK(interval_problem(1e-12, late).find("too short") != std::string::npos);
  CHECK(interval_problem(0.05, late).empty());
  // A run already past a lowered end (a paused end, say) is bounded by where it is.
  CHECK_FALSE(interval_problem(1e-6, RunTimes{.end = 1.0, .now = 10.0}).empty());
  CHECK(end_problem(0.05, 0.12) ==
        "0.05 is not after the current time t = 0.12: the run would end at once; give a later time (`stop` ends the "
        "run)");
  CHECK_FALSE(end_problem(0.12, 0.12).empty());
  CHECK(end_problem(0.13, 0.12).empty());
}

TEST_CASE("The key table documents the relative ranges it checks", "[config]") {
  for (const char* key : {"output.checkpoint_interval", "output.visualisation_interval"})
    CHECK(case_key(key).range_note == "0 or >= time.end / 1e6 and >= time.dt");
  CHECK(case_key("time.dt").range_note == "0 or >= time.end / 1e9");
  CHECK(case_key("time.dt_max").range_note == ">= time.end / 1e9");
}

// The output schedule (driver::outputs_due, next_output_time): which steps a run
// writes, and as what; and the in-situ hook's (driver::InsituSchedule), which the hook's
// two homes (compute ranks, I/O ranks) share. Pure, so every rule is checked here
// without a file.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "rewind/driver/insitu.hpp"
#include "rewind/driver/output.hpp"

using rwd::driver::Due;
using rwd::driver::next_output_time;
using rwd::driver::OutputSettings;
using rwd::driver::outputs_due;

namespace {
// Steps of a run with a fixed dt from t = 0: which are checkpoints (C), visualisations
// (V) or nothing (.), as a string, with the last step flagged `last`.
std::string schedule(const OutputSettings& s, double dt, int steps) {
  std::string out;
  for (int n = 0; n <= steps; ++n) {
    const Due d = outputs_due(s, n, n * dt, n == 0 ? 0.0 : dt, n == 0, n == steps);
    out += d.checkpoint ? 'C' : d.visualisation ? 'V' : '.';
  }
  return out;
}
}  // namespace

TEST_CASE("the initial and final checkpoints are written unless switched off", "[driver]") {
  OutputSettings s;
  CHECK(schedule(s, 0.1, 5) == "C....C");
  s.initial = false;
  CHECK(schedule(s, 0.1, 5) == ".....C");
  s.final = false;
  CHECK(schedule(s, 0.1, 5) == "......");
}

TEST_CASE("interval outputs fire on the step that crosses a multiple, round-off tolerated", "[driver]") {
  OutputSettings s;
  s.initial = s.final = false;
  s.visualisation_interval = 0.3;
  // dt = 0.1: 0.3, 0.6, 0.9 are reached up to round-off (0.1 * 3 = 0.30000000000000004).
  CHECK(schedule(s, 0.1, 9) == "...V..V..V");
  s.checkpoint_interval = 0.6;
  CHECK(schedule(s, 0.1, 9) == "...V..C..V");  // a checkpoint holds more: it wins
  // A step landing a hair below the multiple still counts as on it.
  const double t = 0.6 * (1 - 1e-9);
  CHECK(outputs_due(s, 6, t, 0.1, false, false).checkpoint);
}

TEST_CASE("every-N-steps outputs and their mix with intervals", "[driver]") {
  OutputSettings s;
  s.initial = s.final = false;
  s.visualisation_every = 2;
  s.checkpoint_every = 3;
  CHECK(schedule(s, 0.01, 7) == "..VCV.C.");  // 2 V, 3 C, 4 V, 6 C (not V)
  // Never at the first boundary: that is the initial checkpoint's business.
  CHECK(outputs_due(s, 0, 0.0, 0.0, true, false) == Due{});
}

TEST_CASE("a run stopped early writes its final checkpoint at the stop", "[driver]") {
  OutputSettings s;
  s.checkpoint_interval = 1.0;
  CHECK(outputs_due(s, 17, 0.37, 0.01, false, /*last=*/true).checkpoint);
  CHECK_FALSE(outputs_due(s, 17, 0.37, 0.01, false, false).checkpoint);
}

TEST_CASE("next_output_time is the next multiple of any interval", "[driver]") {
  OutputSettings s;
  CHECK(std::isinf(next_output_time(s, 0.0)));
  s.checkpoint_interval = 1.0;
  s.visualisation_interval = 0.25;
  CHECK(next_output_time(s, 0.0) == Approx(0.25));
  CHECK(next_output_time(s, 0.25) == Approx(0.5));  // on a multiple: the next one
  CHECK(next_output_time(s, 0.25 * (1 - 1e-9)) == Approx(0.5));  // round-off counts as on it
  CHECK(next_output_time(s, 0.9) == Approx(1.0));
  s.visualisation_interval = 0.0;
  CHECK(next_output_time(s, 1.5) == Approx(2.0));
}

TEST_CASE("the hook is handed the multiples of every, once per timeline, again after a branch", "[driver]") {
  rwd::driver::InsituSchedule sch(3);
  std::string got;
  // A run from step 0 (its first boundary) to 7 with step 6 met twice (handed over
  // once), then an in-job branch from step 3, then one from step 4, no multiple.
  for (auto [step, first] : std::vector<std::pair<int, bool>>{
           {0, true}, {1, false}, {2, false}, {3, false}, {6, false}, {6, false}, {7, false}, {3, true}, {4, false},
           {6, false}, {4, true}, {5, false}, {6, false}})
    got += sch.due(step, first) ? "x" : ".";
  CHECK(got == "x..xx..x.x..x");
}

TEST_CASE("the hook runs on the I/O ranks exactly when it has a library and the strategy is dedicated", "[driver]") {
  rwd::driver::RunSpec spec;
  CHECK_FALSE(rwd::driver::insitu_on_io_ranks(spec));
  spec.output.io.strategy = rwd::kernel::Strategy::dedicated;
  CHECK_FALSE(rwd::driver::insitu_on_io_ranks(spec));  // no hook
  spec.insitu.library = "libx.so";
  CHECK(rwd::driver::insitu_on_io_ranks(spec));
  spec.output.io.strategy = rwd::kernel::Strategy::aggregated;
  CHECK_FALSE(rwd::driver::insitu_on_io_ranks(spec));
}

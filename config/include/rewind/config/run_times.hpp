// The times of a run that only hold together: what time.end, time.dt, time.dt_max and
// the output intervals must satisfy relative to each other for a run to honour them.
//
// Each key's own range (the key table) is checked by the getters; the rules here relate
// keys, so they are checked once every key of a case is read (check_run_times), and
// again while a run is steered (the current time is then a bound too):
//  - an output interval (output.checkpoint_interval, output.visualisation_interval) is
//    0 (off) or at least time.end / kMaxOutputTimes, and at least a fixed time.dt. Time
//    steps land on output times (a step is shortened to reach the next one), so an
//    interval below the step shortens every step to it: 1e-9 made a run of 4 s take
//    4e9 steps. With the bound an interval adds at most a million steps and a million
//    outputs to a run; the schedule counts intervals (t / interval) exactly to 1e-6 of
//    one, and t + interval is never t (at t = 0.12, 0.12 + 1e-20 == 0.12). The automatic
//    step follows the flow, so before the run only a fixed step bounds an interval;
//  - a fixed step (time.dt) and a cap on the automatic one (time.dt_max) are at least
//    time.end / kMaxSteps: a run of at most a billion steps, which ends (a step of
//    1e-300 never moves t past about 1e-284, so the run would never end);
//  - a steered time.end is after the current time (at or before it the run would end at
//    once, silently).
#pragma once
#include <limits>
#include <string>

#include "rewind/config/case_file.hpp"

namespace rwd::config {

/// Output times a run may have at most: an interval is at least time.end / this.
inline constexpr double kMaxOutputTimes = 1e6;
/// Steps a fixed time.dt (or time.dt_max) may make a run take at most.
inline constexpr double kMaxSteps = 1e9;

/// The times a run is checked against.
struct RunTimes {
  double end = 0.0;  ///< time.end
  double dt = 0.0;   ///< time.dt (0: automatic)
  double now = 0.0;  ///< the run's current time (0 before it starts)
};

/// Why `interval` (seconds) cannot be an output interval of a run with these times:
/// "1e-09 s is too short for this run: 0 (off) or at least 4e-06 s (time.end / 1e6: ...)",
/// or "" if it can. Pure.
std::string interval_problem(double interval, const RunTimes& t);
/// Why `step` (seconds) cannot be the run's `key` (time.dt or time.dt_max), or "" if it
/// can; time.dt = 0 (automatic) always can. Pure.
std::string step_problem(const std::string& key, double step, const RunTimes& t);
/// Why `end` cannot become the time.end of a run at `now`, or "" if it can. Pure.
std::string end_problem(double end, double now);
/// Checks the rules above on a case (reads time.end, time.dt, time.dt_max and the output
/// intervals through the key table's getters): throws CaseError "<file>: <key>: <why>"
/// for the first key that breaks one. Pure.
void check_run_times(CaseDocument& doc);

}  // namespace rwd::config

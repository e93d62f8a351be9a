#include "rewind/config/run_times.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rwd::config {

// The messages, the key table's notes and `rewind keys` say "a millionth", "a billion".
static_assert(kMaxOutputTimes == 1e6 && kMaxSteps == 1e9);

std::string interval_problem(double interval, const RunTimes& t) {
  if (interval == 0.0) return "";
  // The run's times reach max(end, now): a steered run may be past a lowered end.
  const double reach = std::max(t.end, t.now);
  const double by_end = reach / kMaxOutputTimes;
  const bool by_step = t.dt > by_end;
  const double least = by_step ? t.dt : by_end;
  if (interval >= least) return "";
  const std::string why = by_step ? std::string("the fixed time.dt: a shorter interval would shorten the steps to it")
                                  : fmt::format(
                                        "a millionth of time.end = {:g}: steps land on every output time, so "
                                        "a shorter interval would shorten every step to it",
                                        reach);
  std::string out =
      fmt::format("{:g} s is too short for this run: 0 (off) or at least {:g} s ({})", interval, least, why);
  if (t.now > 0 && t.now + interval == t.now)
    out += fmt::format("; at t = {:g} it is even lost in round-off (t + {:g} == t)", t.now, interval);
  return out;
}

std::string step_problem(const std::string& key, double step, const RunTimes& t) {
  if (key == "time.dt" && step == 0.0) return "";
  const double reach = std::max(t.end, t.now);
  const double least = reach / kMaxSteps;
  if (step >= least) return "";
  return fmt::format("{:g} s would take more than a billion steps to time.end = {:g}: give {} or at least {:g} s", step,
                     reach, key == "time.dt" ? "0 (automatic)" : "inf (no cap)", least);
}

std::string end_problem(double end, double now) {
  if (end > now * (1 + 1e-12)) return "";  // the tolerance Solver::finished() ends a run with
  return fmt::format(
      "{:g} is not after the current time t = {:g}: the run would end at once; give a later time "
      "(`stop` ends the run)",
      end, now);
}

void check_run_times(CaseDocument& doc) {
  const RunTimes t{.end = doc.get_double("time.end"), .dt = doc.get_double("time.dt")};
  for (const char* key : {"time.dt", "time.dt_max"})
    if (const auto why = step_problem(key, doc.get_double(key), t); !why.empty()) throw doc.error(key, why);
  for (const char* key : {"output.checkpoint_interval", "output.visualisation_interval"})
    if (const auto why = interval_problem(doc.get_double(key), t); !why.empty()) throw doc.error(key, why);
}

}  // namespace rwd::config

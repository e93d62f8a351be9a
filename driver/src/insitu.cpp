#include "rewind/driver/insitu.hpp"

#include <fmt/core.h>
#include <mpi.h>

#include <cstdio>

#include "rewind/driver/output.hpp"

namespace rwd::driver {

InsituSettings parse_insitu_settings(spacetree::CaseDocument& doc) {
  InsituSettings s;
  // Defaults and ranges: the key table (rewind keys insitu).
  s.library = doc.get_string("insitu.library");
  s.every = doc.get_int("insitu.every");
  s.args = doc.get_string("insitu.args");
  return s;
}

InsituObserver::InsituObserver(insitu::Hook hook, InsituSettings settings)
    : hook_(std::move(hook)), settings_(std::move(settings)) {}

void InsituObserver::report(Run& run, const insitu::Outcome& o) const {
  // Every rank has the same outcome; the reporting rank prints it, once, on stderr
  // even with -q: an analysis that stopped is not noise.
  if (o.ok || !run.print()) return;
  fmt::print(stderr, "insitu      error: {}: {}; the hook is disabled, the run goes on\n", hook_.library(), o.message);
  std::fflush(stderr);
}

void InsituObserver::at_boundary(Run& run, const Boundary& b) {
  auto& s = run.solver();
  const auto state = s.scalar_state();
  if (b.first) {
    last_step_ = -1;  // a new timeline (an in-job branch) hands its steps over again
    report(run, hook_.init({.args = settings_.args, .case_name = run.spec().case_name, .every = settings_.every},
                           run.spec().common, 1, run.comm()));
  }
  if (!hook_.enabled() || state.step % settings_.every != 0 || state.step == last_step_) return;
  last_step_ = state.step;
  if (types_.size() != s.forest().size()) types_ = padded_cell_types(s);
  const auto fields = solver::state_fields();
  kernel::StepInfo step;
  step.step = state.step;
  step.time = state.time;
  step.dt = state.dt_prev;
  for (std::size_t i = 0; i < fields.size(); ++i) step.fields.push_back({"cell_data", fields[i].name, static_cast<int>(i)});
  const auto grids = describe_grids(s, fields, types_);
  ++calls_;
  report(run, hook_.step(run.spec().common, step, grids, run.comm()));
}

void InsituObserver::finish(Run& run) {
  report(run, hook_.finalize(run.comm()));
  if (run.print() && !run.spec().quiet)
    fmt::print("insitu      {}: {} steps handed over, every {}\n", hook_.library(), calls_, settings_.every);
}

}  // namespace rwd::driver

#include "rewind/driver/insitu.hpp"

#include <fmt/core.h>
#include <mpi.h>

#include <cstdio>

#include "rewind/driver/output.hpp"

namespace rwd::driver {

namespace {

// Every rank has the same outcome; the reporting rank prints it, once, on stderr even
// with -q: an analysis that stopped is not noise.
void report(const insitu::Hook& hook, const insitu::Outcome& o, bool print) {
  if (o.ok || !print) return;
  fmt::print(stderr, "insitu      error: {}: {}; the hook is disabled, the run goes on\n", hook.library(), o.message);
  std::fflush(stderr);
}

void summary(const insitu::Hook& hook, std::int64_t calls, std::int64_t every, const std::string& where) {
  fmt::print("insitu      {}: {} steps handed over, every {}{}\n", hook.library(), calls, every, where);
  std::fflush(stdout);
}

insitu::InitArgs init_args(const RunSpec& spec) {
  return {.args = spec.insitu.args, .case_name = spec.case_name, .every = spec.insitu.every};
}

}  // namespace

InsituSettings parse_insitu_settings(config::CaseDocument& doc) {
  InsituSettings s;
  // Defaults and ranges: the key table (rewind keys insitu).
  s.library = doc.get_string("insitu.library");
  s.every = doc.get_int("insitu.every");
  s.args = doc.get_string("insitu.args");
  return s;
}

bool insitu_on_io_ranks(const RunSpec& spec) {
  return spec.insitu.enabled() && spec.output.io.strategy == kernel::Strategy::dedicated;
}

bool InsituSchedule::due(std::int64_t step, bool first) {
  if (first) last_ = -1;
  if (step % every_ != 0 || step == last_) return false;
  last_ = step;
  return true;
}

// --- on the compute ranks ----------------------------------------------------------------

InsituObserver::InsituObserver(insitu::Hook hook, InsituSettings settings)
    : hook_(std::move(hook)), settings_(std::move(settings)) {}

void InsituObserver::at_boundary(Run& run, const Boundary& b) {
  auto& s = run.solver();
  if (b.first) report(hook_, hook_.init(init_args(run.spec()), run.spec().common, kGridHalo, run.comm()), run.print());
  const auto state = s.scalar_state();
  auto& t = timelines_.try_emplace(run.timeline(), Timeline{InsituSchedule(settings_.every), {}}).first->second;
  if (!hook_.enabled() || !t.schedule.due(state.step, b.first)) return;
  if (t.types.size() != s.forest().size()) t.types = padded_cell_types(s);
  const auto grids = describe_grids(s, solver::state_fields(), t.types);
  ++calls_;
  report(hook_, hook_.step(run.spec().common, hook_step(state), grids, run.comm(), run.spec().output.file), run.print());
}

void InsituObserver::finish(Run& run) {
  report(hook_, hook_.finalize(run.comm()), run.print());
  if (run.print() && !run.spec().quiet) summary(hook_, calls_, settings_.every, "");
}

void InsituHandOff::at_boundary(Run& run, const Boundary& b) {
  const bool due = schedule_.due(run.solver().scalar_state().step, b.first);
  active_ = active_ && !run.output().hook_declined();
  if (active_ && b.first) run.output().expect_hook();
  if (active_ && due) run.output().hand_next_step_to_hook();
}

// --- on the I/O ranks --------------------------------------------------------------------

InsituConsumer::InsituConsumer(insitu::Hook hook, const RunSpec& spec, MPI_Comm io, bool print)
    : hook_(std::move(hook)), settings_(spec.insitu), common_(spec.common), io_(io), print_(print), quiet_(spec.quiet) {
  // The same constants and halo as on the compute ranks: the hook cannot tell where it runs
  // but by its communicator.
  report(hook_, hook_.init(init_args(spec), common_, kGridHalo, io_), print_);
}

bool InsituConsumer::consume(const kernel::StepInfo& step, const kernel::LocalGrids& grids, MPI_Comm io,
                             const std::string& file) {
  if (!hook_.enabled()) return false;
  ++calls_;
  report(hook_, hook_.step(common_, step, grids, io, file), print_);
  return hook_.enabled();
}

void InsituConsumer::finish() {
  report(hook_, hook_.finalize(io_), print_);
  int n = 0;
  MPI_Comm_size(io_, &n);
  if (print_ && !quiet_) summary(hook_, calls_, settings_.every, fmt::format(", run on the {} I/O rank{}", n, n == 1 ? "" : "s"));
}

}  // namespace rwd::driver

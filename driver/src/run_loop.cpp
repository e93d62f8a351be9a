// The Run (run.hpp): its futures, each a solver and an output on the job's compute
// ranks, stepped in turn, and the loop that calls the observers at their boundaries.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "plan.hpp"
#include "rewind/driver/run.hpp"

namespace rwd::driver {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The [output.io] options that differ from the defaults, or "defaults".
std::string describe_io(const kernel::IoOptions& io) {
  const kernel::IoOptions defaults;
  std::string out;
  for (const auto& row : kernel::options_table()) {
    const auto v = kernel::option_string(io, row.name);
    if (v != kernel::option_string(defaults, row.name)) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", row.name, v);
  }
  return out.empty() ? "the defaults (strategy auto: long row runs by independent transfers; docs/file-format.md section 4)" : out;
}

// A branch whose first step met a full disk: its file was removed, so the way on is to
// branch again, not to continue a file that is not there. Other errors as they are.
[[noreturn]] void rethrow_removed(const std::string& file) {
  const std::string advice = fmt::format("{} was removed: branch again when there is room", file);
  try {
    throw;
  } catch (const NoSpaceError& e) {
    throw NoSpaceError(e.cause(), advice);
  } catch (const kernel::FileError& e) {
    if (e.kind() != kernel::ErrorKind::no_space) throw;
    throw NoSpaceError(fmt::format("{}: {}", e.file(), e.problem()), advice);
  }
}

// Futures share the compute ranks and write their files in turn: only writers that
// finish a step on the compute ranks (in place) can be open side by side.
bool in_place(const kernel::IoOptions& io) {
  return io.strategy != kernel::Strategy::aggregated && io.strategy != kernel::Strategy::dedicated;
}

}  // namespace

/// One future: a timeline with its own solver and output.
struct Lane {
  RunSpec spec;
  std::unique_ptr<solver::Solver> solver;
  std::unique_ptr<RunOutput> output;
  std::uint64_t id = 0;
  bool fresh = true;    ///< its first boundary is due
  bool stop = false;
  bool paused = false;  ///< alone (Run::pause_future)
  bool ended = false;
  bool timed = false;  ///< started by the last fork, its first step not computed yet (ForkClock)
  std::int64_t steps = 0;
  Clock::time_point started = Clock::now();
};

struct Run::Impl {
  spacetree::LocalPlan plan;
  MPI_Comm comm;
  bool print;
  /// Of in-job branch files (on the compute root): released after the outputs (below) have
  /// closed the last of them.
  std::vector<kernel::FileClaim> claims;
  std::vector<Lane> lanes;
  std::size_t cur = 0;  ///< the focused future
  std::size_t at = 0;   ///< the future whose boundary (or end) the loop is at
  std::uint64_t next_id = 0;
  std::vector<Observer*> observers;
  std::vector<std::string> files;
  std::int64_t cells = 0;
  bool branched = false;
  double setup_seconds = 0.0;
  /// The last fork's clock, until every future it started has computed a step: then the
  /// reporting rank prints one `fork` line (docs/benchmarks.md, "Futures").
  struct ForkClock {
    Clock::time_point began;
    double made = 0.0;     ///< the futures' solvers made
    double read = 0.0;     ///< the branch point read once, copied into every future, restored
    double written = 0.0;  ///< the futures' files opened and their first boundaries written
    std::int64_t step = 0;
    std::size_t futures = 0, waiting = 0;
  };
  std::optional<ForkClock> fork_clock;
  void fork_started(const std::array<Clock::time_point, 3>& began_made_read, std::size_t futures, std::int64_t step);
  void first_step_of(Lane& l);

  Lane& lane() { return lanes[cur]; }
  [[nodiscard]] std::size_t running() const {
    return static_cast<std::size_t>(std::count_if(lanes.begin(), lanes.end(), [](const Lane& x) { return !x.ended; }));
  }

  // The solver of `l` restored from its restart point (if any), the steps it may take.
  std::unique_ptr<solver::Solver> make_solver(RunSpec& spec) {
    if (spec.steps >= 0) spec.solver_case.time.max_steps = (spec.restart ? spec.restart->step.step : 0) + spec.steps;
    return std::make_unique<solver::Solver>(spec.solver_case, plan, comm);
  }

  // Opens `l`'s output (its solver made and restored) and says so.
  void open_output(Lane& l) {
    const auto t0 = Clock::now();
    const bool talk = print && !l.spec.quiet;
    const auto& spec = l.spec;
    if (spec.restart && talk)
      fmt::print("restart     from {} step {} (t = {:.6g})\n", spec.restart->file, spec.restart->step.step,
                 spec.restart->step.time);
    l.output = std::make_unique<RunOutput>(comm, spec.output, spec.common, spec.mode, talk);
    l.output->set_overrides(spec.recorded_overrides);
    if (talk && !l.output->path().empty()) {
      fmt::print("output      {} {}\n", spec.mode == RunOutput::Mode::append ? "continuing" : "writing", l.output->path());
      fmt::print("output      io: {}\n", describe_io(spec.output.io));
    } else if (talk) {
      fmt::print("output      none: the case names no output.file (--output FILE writes one)\n");
    }
    if (!spec.output.file.empty()) files.push_back(spec.output.file);
    cells = l.solver->global_leaf_cells();
    l.id = ++next_id;
    setup_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }

  // The loop's parts, for the focused future.
  void schedule() {
    auto& l = lane();
    l.solver->set_event_time(l.output->next_event_time(l.solver->scalar_state().time));
  }
  void boundary(Run& run, const Boundary& b) {
    branched = false;
    for (auto* o : observers) {
      o->at_boundary(run, b);
      if (branched) return;  // forked: the futures start at their turn
    }
    schedule();
  }
  // The focused future has reached its end or a stop: the observers' at_end, in reverse
  // order (the live link, added first, ends last). One of them may still steer: a fork
  // starts futures, a later end time continues this one.
  void end(Run& run) {
    branched = false;
    for (auto o = observers.rbegin(); o != observers.rend() && !branched; ++o) (*o)->at_end(run);
    if (branched) return;
    auto& l = lane();
    if (!l.stop && !l.solver->finished()) {
      schedule();
      return;
    }
    l.ended = true;
    if (l.output) l.output->close();  // the last steps handed off are committed, or their error thrown
  }
};

Run::Run(RunSpec spec, spacetree::LocalPlan plan, MPI_Comm comm, bool print) : impl_(std::make_unique<Impl>()) {
  auto& im = *impl_;
  im.plan = std::move(plan);
  im.comm = comm;
  im.print = print;
  const auto t0 = Clock::now();
  Lane l;
  l.spec = std::move(spec);
  l.solver = im.make_solver(l.spec);
  if (l.spec.restart) restore_solver(*l.solver, *l.spec.restart, comm);
  im.setup_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  im.open_output(l);
  im.lanes.push_back(std::move(l));
}

Run::~Run() = default;

void Run::add(Observer& o) { impl_->observers.push_back(&o); }
solver::Solver& Run::solver() { return *impl_->lane().solver; }
RunOutput& Run::output() { return *impl_->lane().output; }
const RunSpec& Run::spec() const { return impl_->lanes[impl_->cur].spec; }
MPI_Comm Run::comm() const { return impl_->comm; }
bool Run::print() const { return impl_->print; }
std::int64_t Run::leaf_cells() const { return impl_->cells; }
const std::vector<std::string>& Run::files() const { return impl_->files; }
void Run::request_stop() { impl_->lane().stop = true; }
bool Run::stop_requested() const { return impl_->lanes[impl_->cur].stop; }
std::size_t Run::focused() const { return impl_->cur; }
std::uint64_t Run::timeline() const { return impl_->lanes[impl_->cur].id; }
void Run::pause_future(bool paused) { impl_->lane().paused = paused; }

void Run::refocus() { impl_->cur = impl_->at; }

void Run::focus(std::size_t i) {
  if (i >= impl_->lanes.size()) throw std::logic_error("Run::focus: no such future");
  impl_->cur = i;
}

std::size_t Run::running_futures() const { return impl_->running(); }

int Run::future_of(const std::string& file) const {
  const auto& l = impl_->lanes;
  for (std::size_t i = 0; i < l.size(); ++i)
    if (!l[i].spec.output.file.empty() && same_file(l[i].spec.output.file, file)) return static_cast<int>(i);
  return -1;
}

std::vector<Run::Future> Run::futures() const {
  std::vector<Future> out;
  for (const auto& l : impl_->lanes) {
    Future f;
    f.file = l.spec.output.file;
    f.parent = l.spec.restart && l.spec.mode == RunOutput::Mode::create ? l.spec.restart->file : "";
    f.changes = l.spec.overrides;
    if (l.solver) {
      const auto st = l.solver->scalar_state();
      f.step = st.step;
      f.time = st.time;
    }
    f.steps = l.steps;
    f.wall = std::chrono::duration<double>(Clock::now() - l.started).count();
    f.paused = l.paused;
    f.stopping = l.stop;
    f.ended = l.ended;
    out.push_back(std::move(f));
  }
  return out;
}

void Run::apply(const std::vector<std::string>& changes) {
  auto& l = impl_->lane();
  refuse_tree_overrides(changes);
  auto overrides = concat(l.spec.overrides, changes);
  // Parse first: a bad value throws here, identically on every rank, and nothing changed.
  auto parsed = reparse(l.spec, overrides);
  const auto& c = parsed.solver_case;
  l.solver->set_physics(c.physics);
  for (int f = 0; f < 6; ++f) l.solver->set_boundary(f, c.boundary[static_cast<std::size_t>(f)]);
  l.solver->set_time_limits(c.time.end, l.solver->config().time.max_steps);  // --steps stays
  l.output->set_intervals(parsed.output);
  const auto max_steps = l.spec.solver_case.time.max_steps;
  l.spec.solver_case = std::move(parsed.solver_case);
  l.spec.solver_case.time.max_steps = max_steps;
  parsed.output.file = l.spec.output.file;
  l.spec.output = std::move(parsed.output);
  l.spec.overrides = std::move(overrides);
  l.spec.recorded_overrides = concat(l.spec.recorded_overrides, changes);
  l.output->set_overrides(l.spec.recorded_overrides);
}

void Run::close_output() {
  auto& l = impl_->lane();
  if (l.output) l.output->close();
  l.output.reset();
}

void Run::reopen_output() {
  auto& im = *impl_;
  auto& l = im.lane();
  if (l.output || l.ended) return;
  l.output = std::make_unique<RunOutput>(im.comm, l.spec.output, l.spec.common, RunOutput::Mode::append, false);
  l.output->set_overrides(l.spec.recorded_overrides);
}

void Run::branch(RunSpec spec, kernel::FileClaim claim) {
  std::vector<RunSpec> specs;
  specs.push_back(std::move(spec));
  std::vector<kernel::FileClaim> claims;
  claims.push_back(std::move(claim));
  fork(std::move(specs), std::move(claims));
}

void Run::fork(std::vector<RunSpec> specs, std::vector<kernel::FileClaim> claims) {
  auto& im = *impl_;
  if (specs.empty() || claims.size() != specs.size()) throw std::logic_error("Run::fork: one claim per future");
  const auto& parent = im.lane();
  if (im.running() - 1 + specs.size() > 1)  // several futures after the fork
    for (const auto& s : specs)
      if (!in_place(s.output.io) || !in_place(parent.spec.output.io))
        throw std::invalid_argument(
            "several futures need an in-place output strategy (output.io.strategy = auto, collective or "
            "independent): aggregated and dedicated writers hand one file's steps to their ranks at a time");
  const auto first_claim = im.claims.size();
  std::vector<bool> existed;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto& s = specs[i];
    if (s.steps < 0) s.steps = parent.spec.steps;
    // The job's I/O ranks are the launch's, not the case's: the branch's file goes to them too.
    s.output.env = parent.spec.output.env;
    s.quiet = s.quiet || parent.spec.quiet;
    std::error_code ec;
    // plan_branch refused it; a race did not (the empty file the claim made is the branch's)
    existed.push_back(std::filesystem::exists(s.output.file, ec) && !claims[i].created());
    if (claims[i].held()) im.claims.push_back(std::move(claims[i]));
  }
  // All or nothing: the previous timeline stays in memory, untouched, until every future
  // has started and written its first step; if any fails they are gone and it is back.
  const auto previous_files = im.files.size();
  std::vector<Lane> made(specs.size());
  std::size_t opened = 0;
  try {
    const auto t0 = Clock::now();
    std::vector<solver::Solver*> solvers;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      made[i].spec = std::move(specs[i]);
      made[i].solver = im.make_solver(made[i].spec);
      solvers.push_back(made[i].solver.get());
    }
    const auto solvers_made = Clock::now();
    restore_solvers(solvers, *made.front().spec.restart, im.comm);  // read once (one branch point)
    const auto read = Clock::now();
    im.setup_seconds += seconds(read - t0);
    for (auto& l : made) {
      ++opened;
      im.open_output(l);
      l.output->after_step(*l.solver, true, l.solver->finished());  // what the first boundary writes
      l.output->settle();  // ... written, also by I/O ranks
    }
    for (auto& l : made) l.timed = true;
    im.fork_started({t0, solvers_made, read}, made.size(), made.front().spec.restart->step.step);
  } catch (...) {
    std::string removed;
    for (std::size_t i = 0; i < opened; ++i) {
      const std::string file = made[i].spec.output.file;
      discard_output(im.comm, std::move(made[i].output), existed[i] ? std::string() : file);
      if (!existed[i] && removed.empty()) removed = file;
    }
    im.files.resize(previous_files);
    im.claims.resize(first_claim);  // the branch files are gone: so are their claims
    if (!removed.empty()) rethrow_removed(removed);
    throw;
  }
  const auto c = static_cast<std::ptrdiff_t>(im.cur);
  im.lanes.erase(im.lanes.begin() + c);
  im.lanes.insert(im.lanes.begin() + c, std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
  // The future at its boundary forked: its boundary ends here. Another one forked (steered
  // by its file): this boundary goes on, its future perhaps further along the list.
  if (im.cur == im.at) im.branched = true;
  else if (im.cur < im.at) im.at += made.size() - 1;
  im.cur = im.at;
}

// A fork's clock (one at a time: a later fork's futures replace the earlier one's on it).
void Run::Impl::fork_started(const std::array<Clock::time_point, 3>& t, std::size_t futures, std::int64_t step) {
  for (auto& l : lanes) l.timed = false;
  fork_clock = ForkClock{t[0], seconds(t[1] - t[0]), seconds(t[2] - t[1]), seconds(Clock::now() - t[2]), step, futures,
                         futures};
}

// A future's step computed: the last of a fork's futures to compute its first says how long
// the fork took, from its start on the compute ranks (a paused job's fork: until resumed too).
void Run::Impl::first_step_of(Lane& l) {
  if (!fork_clock || !l.timed) return;
  l.timed = false;
  if (--fork_clock->waiting > 0) return;
  const auto& f = *fork_clock;
  if (print && !l.spec.quiet)
    fmt::print("fork        {} futures from step {}: every one's first step computed {:.4g} s after the fork began "
               "(solvers made {:.4g} s, branch point read once and restored {:.4g} s, first boundaries written {:.4g} s)\n",
               f.futures, f.step, seconds(Clock::now() - f.began), f.made, f.read, f.written);
  fork_clock.reset();
}

RunSummary Run::run() {
  auto& im = *impl_;
  RunSummary sum;
  const auto t0 = Clock::now();
  for (;;) {
    // One round: every future not paused takes its turn (its first boundary, a step, or
    // its end), in order. A fork replaces the future at its place; the new futures take
    // their first turn in this round or the next.
    bool moved = false;
    for (std::size_t k = 0; k < im.lanes.size(); k = im.at + 1) {
      im.cur = im.at = k;
      auto& l = im.lanes[k];
      if (l.ended) continue;
      if (l.fresh) {
        l.fresh = false;
        l.started = Clock::now();
        im.boundary(*this, Boundary{.first = true, .step = std::nullopt});
      } else if (l.paused) {
        continue;
      } else if (!l.stop && !l.solver->finished()) {
        const auto info = l.solver->step();
        ++l.steps;
        im.first_step_of(l);
        ++sum.steps;
        sum.pressure_cycles += info.pressure.cycles;
        im.boundary(*this, Boundary{.first = false, .step = info});
      } else {
        // Stopped by steering at another future's boundary: its final checkpoint now, as
        // its own boundary would have written it (a step already written is not again).
        if (l.stop && l.output) l.output->after_step(*l.solver, false, true);
        sum.stopped = sum.stopped || l.stop;
        im.end(*this);
      }
      moved = true;
    }
    if (im.running() == 0) break;
    if (!moved) {  // every future left is paused alone: the live link serves meanwhile
      im.cur = im.at = static_cast<std::size_t>(
          std::find_if(im.lanes.begin(), im.lanes.end(), [](const Lane& x) { return !x.ended; }) - im.lanes.begin());
      for (auto* o : im.observers) o->idle(*this);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  sum.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  sum.setup_seconds = im.setup_seconds;
  return sum;
}

}  // namespace rwd::driver

// The Run (run.hpp): its futures, each a solver and an output, stepped in turn on the
// same ranks or side by side on groups of them (run_groups.cpp), and the loop that calls
// the observers at their boundaries.
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

#include "agree.hpp"
#include "plan.hpp"
#include "run_impl.hpp"

namespace rwd::driver {

namespace {

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

// Futures write their files side by side: only writers that finish a step on the compute
// ranks (in place) can be open side by side.
bool in_place(const kernel::IoOptions& io) {
  return io.strategy != kernel::Strategy::aggregated && io.strategy != kernel::Strategy::dedicated;
}

}  // namespace

std::size_t Run::Impl::running() const {
  return static_cast<std::size_t>(std::count_if(lanes.begin(), lanes.end(), [](const Lane& x) { return !x.ended; }));
}

bool Run::Impl::grouped() const {
  return std::any_of(lanes.begin(), lanes.end(), [&](const Lane& x) { return x.group != whole; });
}

// The solver of a future on `g` (its members), the steps it may take.
std::unique_ptr<solver::Solver> Run::Impl::make_solver(RunSpec& spec, const Group& g) {
  if (spec.steps >= 0) spec.solver_case.time.max_steps = (spec.restart ? spec.restart->step.step : 0) + spec.steps;
  return std::make_unique<solver::Solver>(spec.solver_case, g.plan, g.comm);
}

// A new future, on every rank of the job: its id, its file among the job's.
void Run::Impl::name_output(Lane& l) {
  if (!l.spec.output.file.empty()) files.push_back(l.spec.output.file);
  l.id = ++next_id;
  if (l.spec.restart) {
    l.word.step = static_cast<double>(l.spec.restart->step.step);
    l.word.time = l.spec.restart->step.time;
  }
}

// Opens `l`'s output (its solver made and restored) and says so; its members.
void Run::Impl::open_output(Lane& l) {
  const auto t0 = Clock::now();
  const bool talk = prints(l) && !l.spec.quiet;
  const auto& spec = l.spec;
  if (spec.restart && talk)
    fmt::print("restart     from {} step {} (t = {:.6g})\n", spec.restart->file, spec.restart->step.step,
               spec.restart->step.time);
  l.output = std::make_unique<RunOutput>(l.group->comm, spec.output, spec.common, spec.mode, talk);
  l.output->set_overrides(spec.recorded_overrides);
  if (talk && !l.output->path().empty()) {
    fmt::print("output      {} {}\n", spec.mode == RunOutput::Mode::append ? "continuing" : "writing",
               l.output->path());
    fmt::print("output      io: {}\n", describe_io(spec.output.io));
  } else if (talk) {
    fmt::print("output      none: the case names no output.file (--output FILE writes one)\n");
  }
  cells = l.solver->global_leaf_cells();
  setup_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

// The loop's parts, for the focused future (its members).
void Run::Impl::schedule() {
  auto& l = lane();
  if (l.member() && l.output) l.solver->set_event_time(l.output->next_event_time(l.solver->scalar_state().time));
}

void Run::Impl::boundary(Run& run, const Boundary& b) {
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
void Run::Impl::end(Run& run) {
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

Run::Run(RunSpec spec, spacetree::LocalPlan plan, MPI_Comm comm, bool print) : impl_(std::make_unique<Impl>()) {
  auto& im = *impl_;
  im.comm = comm;
  MPI_Comm_rank(comm, &im.rank);
  MPI_Comm_size(comm, &im.ranks);
  im.print = print;
  int any = print ? 1 : 0, some = 0;
  MPI_Allreduce(&any, &some, 1, MPI_INT, MPI_MAX, comm);
  im.reporting = some != 0;  // the job's root reports: so does each group's first rank
  im.whole = std::make_shared<Group>();
  im.whole->size = im.ranks;
  im.whole->member = true;
  im.whole->comm = comm;
  im.whole->plan = std::move(plan);
  const auto t0 = Clock::now();
  Lane l;
  l.spec = std::move(spec);
  l.group = im.whole;
  l.solver = im.make_solver(l.spec, *l.group);
  if (l.spec.restart) restore_solver(*l.solver, *l.spec.restart, comm);
  im.setup_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  im.name_output(l);
  im.open_output(l);
  im.lanes.push_back(std::move(l));
}

Run::~Run() = default;

void Run::add(Observer& o) { impl_->observers.push_back(&o); }

solver::Solver& Run::solver() {
  if (!member()) throw std::logic_error("Run::solver: this rank does not compute the focused future");
  return *impl_->lane().solver;
}

RunOutput& Run::output() {
  if (!member() || !impl_->lane().output) throw std::logic_error("Run::output: not open on this rank");
  return *impl_->lane().output;
}

const RunSpec& Run::spec() const { return impl_->lanes[impl_->cur].spec; }
MPI_Comm Run::comm() const { return member() ? impl_->lanes[impl_->cur].group->comm : impl_->comm; }
MPI_Comm Run::job_comm() const { return impl_->comm; }
bool Run::member() const { return impl_->lanes[impl_->cur].member(); }
bool Run::print() const { return impl_->prints(impl_->lanes[impl_->cur]); }

solver::ScalarState Run::now() const {
  const auto& l = impl_->lanes[impl_->cur];
  if (l.member()) return l.solver->scalar_state();
  solver::ScalarState s;
  s.step = static_cast<std::int64_t>(l.word.step);
  s.time = l.word.time;
  return s;
}

bool Run::finished() const {
  const auto& l = impl_->lanes[impl_->cur];
  return l.member() ? l.solver->finished() : l.word.finished != 0;
}

std::int64_t Run::last_written_step() const {
  const auto& l = impl_->lanes[impl_->cur];
  if (!l.member()) return static_cast<std::int64_t>(l.word.written);
  return l.output ? l.output->last_written_step() : -1;
}

void Run::checkpoint_now() {
  auto& l = impl_->lane();
  if (l.member() && l.output) l.output->checkpoint_now(*l.solver);
}

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
    if (l.member() && l.solver) {
      const auto st = l.solver->scalar_state();
      f.step = st.step;
      f.time = st.time;
    } else {
      f.step = static_cast<std::int64_t>(l.word.step);
      f.time = l.word.time;
    }
    f.steps = l.steps;
    f.wall = std::chrono::duration<double>(Clock::now() - l.started).count();
    f.paused = l.paused;
    f.stopping = l.stop;
    f.ended = l.ended;
    f.first_rank = l.group->first;
    f.ranks = l.group->size;
    out.push_back(std::move(f));
  }
  return out;
}

void Run::apply(const std::vector<std::string>& changes) {
  auto& l = impl_->lane();
  refuse_tree_overrides(changes, false);
  auto overrides = concat(l.spec.overrides, changes);
  // Parse first: a bad value throws here, identically on every rank, and nothing changed.
  auto parsed = reparse(l.spec, overrides);
  const auto& c = parsed.solver_case;
  if (l.member()) {
    l.solver->set_physics(c.physics);
    for (int f = 0; f < 6; ++f) l.solver->set_boundary(f, c.boundary[static_cast<std::size_t>(f)]);
    l.solver->set_time_limits(c.time.end, l.solver->config().time.max_steps);  // --steps stays
    if (l.output) l.output->set_intervals(parsed.output);
  }
  const auto max_steps = l.spec.solver_case.time.max_steps;
  l.spec.solver_case = std::move(parsed.solver_case);
  l.spec.solver_case.time.max_steps = max_steps;
  parsed.output.file = l.spec.output.file;
  l.spec.output = std::move(parsed.output);
  l.spec.overrides = std::move(overrides);
  l.spec.recorded_overrides = concat(l.spec.recorded_overrides, changes);
  if (l.member() && l.output) l.output->set_overrides(l.spec.recorded_overrides);
}

void Run::close_output() {
  auto& l = impl_->lane();
  if (l.output) l.output->close();
  l.output.reset();
}

void Run::reopen_output() {
  auto& im = *impl_;
  auto& l = im.lane();
  if (l.output || l.ended || !l.member()) return;
  l.output = std::make_unique<RunOutput>(l.group->comm, l.spec.output, l.spec.common, RunOutput::Mode::append, false);
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
  check_fork(specs.size());
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
  const auto groups = im.groups_for(specs.size());
  // On part of the job's ranks only those compute, and may fail: every rank must agree.
  const bool split = std::any_of(groups.begin(), groups.end(), [&](const auto& g) { return g != im.whole; });
  std::vector<Lane> made(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    made[i].spec = std::move(specs[i]);
    made[i].group = groups[i];
    im.name_output(made[i]);
  }
  std::exception_ptr error;
  try {
    im.start_futures(made);
  } catch (...) {
    error = std::current_exception();
  }
  if (split) {  // every group's word: all started, or none
    try {
      agree_error(im.comm, error);
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (error) {
    std::string removed;
    for (std::size_t i = 0; i < made.size(); ++i) {
      if (!made[i].opening) continue;  // this rank's futures whose files were (being) opened
      const std::string file = made[i].spec.output.file;
      discard_output(made[i].group->comm, std::move(made[i].output), existed[i] ? std::string() : file);
      if (!existed[i] && removed.empty()) removed = file;
    }
    im.files.resize(previous_files);
    im.claims.resize(first_claim);  // the branch files are gone: so are their claims
    try {
      std::rethrow_exception(error);
    } catch (...) {
      if (!removed.empty()) rethrow_removed(removed);
      throw;
    }
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

// The futures of a fork, on this rank's groups: solvers made, restored from their branch
// point (read once: by the ranks they share, or over the forked future's ranks and handed
// to each group), files opened, first boundaries written.
void Run::Impl::start_futures(std::vector<Lane>& made) {
  const auto t0 = Clock::now();
  const auto forked = lane().group;  // the forked future's ranks
  std::vector<solver::Solver*> solvers;
  const Group* on = nullptr;
  std::size_t groups = 0;
  for (std::size_t i = 0; i < made.size(); ++i) {
    if (i == 0 || made[i].group != made[i - 1].group) ++groups;
    if (!made[i].member()) continue;
    made[i].solver = make_solver(made[i].spec, *made[i].group);
    solvers.push_back(made[i].solver.get());
    on = made[i].group.get();
  }
  const auto solvers_made = Clock::now();
  const auto& rp = *made.front().spec.restart;
  const bool shared = groups > 1 && forked->member && restore_groups(solvers, rp, forked->comm);
  if (!shared && on) restore_solvers(solvers, rp, on->comm);
  const auto read = Clock::now();
  setup_seconds += seconds(read - t0);
  for (auto& l : made) {
    if (!l.member()) continue;
    l.opening = true;
    open_output(l);
    l.output->after_step(*l.solver, true, l.solver->finished());  // what the first boundary writes
    l.output->settle();                                           // ... written, also by I/O ranks
  }
  for (auto& l : made) l.timed = true;
  fork_started({t0, solvers_made, read}, made.size(), made.front().spec.restart->step.step, groups);
}

// A fork's clock (one at a time: a later fork's futures replace the earlier one's on it).
void Run::Impl::fork_started(const std::array<Clock::time_point, 3>& t, std::size_t futures, std::int64_t step,
                             std::size_t groups) {
  for (auto& l : lanes) l.timed = false;
  fork_clock = ForkClock{
      t[0], seconds(t[1] - t[0]), seconds(t[2] - t[1]), seconds(Clock::now() - t[2]), step, futures, futures, groups};
}

// A future's step computed: the last of a fork's futures to compute its first says how long
// the fork took, from its start on the compute ranks (a paused job's fork: until resumed too).
void Run::Impl::first_step_of(Lane& l) {
  if (!fork_clock || !l.timed) return;
  l.timed = false;
  if (--fork_clock->waiting > 0) return;
  const auto& f = *fork_clock;
  if (print && !l.spec.quiet)
    fmt::print(
        "fork        {} futures from step {}{}: every one's first step computed {:.4g} s after the fork began "
        "(solvers made {:.4g} s, branch point read {} and restored {:.4g} s, first boundaries written {:.4g} s)\n",
        f.futures, f.step, f.groups > 1 ? fmt::format(" on {} groups of compute ranks", f.groups) : "",
        seconds(Clock::now() - f.began), f.made, f.groups > 1 ? "once, handed to each group," : "once", f.read,
        f.written);
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
    if (im.grouped()) moved = im.grouped_round(*this, sum);  // futures side by side (run_groups.cpp)
    for (std::size_t k = 0; k < im.lanes.size() && !im.grouped(); k = im.at + 1) {
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
  // Its accessors speak of a future this rank computed, the last (groups: its group's).
  for (std::size_t k = im.lanes.size(); k-- > 0;)
    if (im.lanes[k].member()) {
      im.cur = im.at = k;
      break;
    }
  sum.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  sum.setup_seconds = im.setup_seconds;
  return sum;
}

}  // namespace rwd::driver

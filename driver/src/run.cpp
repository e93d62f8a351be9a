#include "rewind/driver/run.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace rwd::driver {

namespace {

struct ParsedCase {
  solver::SolverCase solver_case;
  OutputSettings output;
  InsituSettings insitu;
  std::string effective_text;
  std::string case_name;
};

ParsedCase parse_case(const std::string& text, const std::string& source, const std::vector<std::string>& overrides,
                      const std::function<void(config::CaseDocument&)>& check_case) {
  auto doc = config::CaseDocument::parse(text, source, overrides);
  ParsedCase p;
  if (check_case) check_case(doc);
  p.solver_case = solver::parse_solver_case(doc);
  p.output = parse_output_settings(doc);
  p.insitu = parse_insitu_settings(doc);
  p.case_name = doc.get_string("case.name");
  if (check_case) doc.reject_unknown();
  p.effective_text = doc.effective_text();
  return p;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string beside(const std::string& file, const char* ext) {
  return std::filesystem::path(file).replace_extension(ext).string();
}

// A branch file: lineage from the parent, never overwriting the parent.
void make_branch(RunSpec& spec, const RestartPoint& rp, const std::vector<std::string>& changes) {
  const auto parent = kernel::Reader::open(rp.file);
  spec.common.lineage = kernel::make_branch_common(parent, rp.step, changes).lineage;
}

// What plan_run (or, `in_job`, plan_branch) requires of the output file; made again
// under the file's claim (claim_output). Adds a note when the run writes over an empty
// leftover (spec.notes).
void check_output(RunSpec& spec, const RunRequest& o, bool in_job) {
  const auto& file = spec.output.file;
  // A file another process claims: its claim decides (claim_output refuses naming the
  // writer; or that process is this job's claiming rank, which checks again under it).
  if (file.empty() || kernel::claimed_elsewhere(file)) return;
  if (spec.mode == RunOutput::Mode::create && std::filesystem::exists(file)) {
    if (spec.restart && same_file(file, spec.restart->file))
      throw std::runtime_error(fmt::format("{}: a branch never overwrites its parent, not even with --force", file));
    if (empty_leftover(file)) {
      spec.notes.push_back(fmt::format("{} has no committed step (its job ended before writing one): writing over it",
                                       file));
    } else if (in_job) {
      throw std::runtime_error(fmt::format("{} exists; a branch never overwrites a file", file));
    } else if (!o.force) {
      throw std::runtime_error(fmt::format("{} exists; use --force to overwrite it (or --output another file)", file));
    } else {
      // Overwriting a parent would leave its branches pointing at steps that are gone.
      const auto dir = std::filesystem::path(file).parent_path().string();
      const auto branches = kernel::find_branches(file, dir.empty() ? "." : dir);
      if (!branches.empty() && !o.orphan_branches)
        throw std::runtime_error(fmt::format(
            "{} has branches ({}); overwriting it would orphan them: choose another file, or add --orphan-branches",
            file, fmt::join(branches, ", ")));
    }
  }
  if (!in_job && !spec.monitor_append && !spec.monitor_file.empty() && std::filesystem::exists(spec.monitor_file) &&
      !o.force && !empty_leftover(file))
    throw std::runtime_error(fmt::format("monitor file {} exists; use --force to overwrite it (or --monitor another file)",
                                         spec.monitor_file));
}

// Where the run's case comes from: the case file, or a restart's file (its stored case,
// the overrides steered into it first); sets spec.restart, case_text, case_source and
// overrides.
void load_case(RunSpec& spec, const RunRequest& o) {
  if (!o.restart.empty()) {
    if (!o.case_file.empty())
      throw std::runtime_error("give a case file or --restart, not both: a restart runs the case stored in the file");
    spec.restart = find_restart_point(o.restart);
    spec.case_text = spec.restart->case_text;
    spec.case_source = spec.restart->file + " (its stored case)";
    spec.overrides = concat(spec.restart->steered, o.overrides);
    return;
  }
  if (o.case_file.empty()) throw std::runtime_error("no case file given (or --restart FILE[@STEP])");
  std::ifstream in(o.case_file);
  if (!in) throw config::CaseError(fmt::format("{}: cannot open case file", o.case_file));
  std::ostringstream ss;
  ss << in.rdbuf();
  spec.case_text = ss.str();
  spec.case_source = o.case_file;
  spec.overrides = o.overrides;
}

}  // namespace

RunSpec plan_run(const RunRequest& o, const std::function<void(config::CaseDocument&)>& check_case) {
  RunSpec spec;
  load_case(spec, o);
  auto parsed = parse_case(spec.case_text, spec.case_source, spec.overrides, check_case);  // unknown keys first
  if (spec.restart) {
    refuse_tree_overrides(o.overrides);
    const double t0 = spec.restart->step.time, end = parsed.solver_case.time.end;
    if (end <= t0 * (1 + 1e-12))
      throw std::runtime_error(fmt::format(
          "time.end = {:g} is not after the restart step's time (t = {:g}): nothing to run; give a later "
          "--set time.end=...",
          end, t0));
  }
  spec.solver_case = std::move(parsed.solver_case);
  spec.output = std::move(parsed.output);
  spec.insitu = std::move(parsed.insitu);
  spec.case_name = std::move(parsed.case_name);
  // The monitor CSV: --monitor; else beside --output (runs into different files keep
  // different monitors); else the case's monitor.file.
  spec.monitor_file = !o.monitor.empty()                     ? o.monitor
                      : !o.output.empty() && !spec.restart ? beside(o.output, ".monitor.csv")
                                                           : spec.solver_case.monitor.file;
  // A restart never takes output.file from the stored case: that names the parent's
  // own file. Its output is --output, or the same file / a branch beside it (below).
  if (!o.output.empty() || spec.restart) spec.output.file = o.output;
  spec.common = make_common(spec.solver_case, parsed.effective_text);
  if (spec.restart) {
    const auto& rp = *spec.restart;
    // Extending a run from its latest step (only the end changed) continues the same
    // file; anything else — an earlier step, changed physics or boundaries — branches.
    // What really changes: not time.end / time.max_steps, not a value equal to the one
    // the step ran with (a restart with --set nu=<the same nu> continues, unrecorded).
    std::vector<std::string> changes;
    {
      const auto before = config::CaseDocument::parse(spec.case_text, spec.case_source, rp.steered);
      const auto after = config::CaseDocument::parse(spec.case_text, spec.case_source, spec.overrides);
      for (const auto& kv : changing_overrides(o.overrides)) {
        const auto key = kv.substr(0, kv.find('='));
        if (before.value_text(key) != after.value_text(key)) changes.push_back(kv);
      }
    }
    // From the file's last checkpoint, only visualisation steps can follow (a run killed
    // between two checkpoints): the continuation recomputes them bit-identically and
    // leaves the ones already in the file as they are (RunOutput skips them).
    const bool continues = rp.step.step == rp.last_checkpoint && changes.empty();
    if (spec.output.file.empty() || same_file(spec.output.file, rp.file)) {
      if (!o.output.empty() && same_file(o.output, rp.file) && !continues)
        throw std::runtime_error(fmt::format(
            "--output {}: a branch never writes into its parent; choose another file", o.output));
      if (continues) {
        spec.output.file = rp.file;  // continue the same run in the same file
        spec.mode = RunOutput::Mode::append;
        // The monitor CSV the run wrote: beside its file (it was run with --output),
        // else the case's; continued if it exists, else started with its header.
        if (o.monitor.empty() && std::filesystem::exists(beside(rp.file, ".monitor.csv")))
          spec.monitor_file = beside(rp.file, ".monitor.csv");
        spec.monitor_append = o.monitor.empty() && std::filesystem::exists(spec.monitor_file);
        spec.recorded_overrides = rp.steered;  // the file's case text does not hold them
      } else {
        spec.output.file = branch_name(rp.file, rp.step.step);
      }
    }
    if (spec.mode == RunOutput::Mode::create) {
      make_branch(spec, rp, concat(rp.steered, changes));
      if (o.monitor.empty()) spec.monitor_file = beside(spec.output.file, ".monitor.csv");
    }
  }
  check_output(spec, o, false);
  return spec;
}

RunSpec plan_branch(const RestartPoint& rp, const std::vector<std::string>& changes, const std::string& output) {
  refuse_tree_overrides(changes);
  RunSpec spec;
  spec.restart = rp;
  spec.case_text = rp.case_text;
  spec.case_source = rp.file + " (its stored case)";
  spec.overrides = concat(rp.steered, changes);
  auto parsed = parse_case(spec.case_text, spec.case_source, spec.overrides, {});
  spec.solver_case = std::move(parsed.solver_case);
  spec.output = std::move(parsed.output);
  spec.insitu = std::move(parsed.insitu);
  spec.case_name = std::move(parsed.case_name);
  spec.output.file = output.empty() ? branch_name(rp.file, rp.step.step) : output;
  if (same_file(spec.output.file, rp.file))
    throw std::runtime_error(fmt::format("{}: a branch never writes into its parent", spec.output.file));
  spec.common = make_common(spec.solver_case, parsed.effective_text);
  make_branch(spec, rp, spec.overrides);
  spec.monitor_file = beside(spec.output.file, ".monitor.csv");
  check_output(spec, RunRequest{}, true);
  return spec;
}

namespace {
// A continued file must still end where the plan saw it end: another job may have
// continued it meanwhile (and ended: its claim is gone).
void check_unchanged(const RestartPoint& planned) {
  const auto now = find_restart_point(planned.file + "@" + std::to_string(planned.step.step));
  if (now.last_committed != planned.last_committed || now.last_checkpoint != planned.last_checkpoint)
    throw std::runtime_error(fmt::format(
        "{}: another job wrote to it since this run looked at it (its last committed step is now {}, was {}): "
        "start the restart again",
        planned.file, now.last_committed, planned.last_committed));
}

void bcast_string(MPI_Comm comm, int root, std::string& s) {
  int n = static_cast<int>(s.size());
  MPI_Bcast(&n, 1, MPI_INT, root, comm);
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(s.data(), n, MPI_CHAR, root, comm);
}
}  // namespace

kernel::FileClaim claim_output(const RunSpec& spec, const RunRequest& request, MPI_Comm comm, int root, bool in_job) {
  if (spec.output.file.empty()) return {};
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  kernel::FileClaim claim;
  std::string error;
  if (rank == root) {
    try {
      claim = kernel::FileClaim::take(spec.output.file, {.break_lock = request.break_lock});
      RunSpec again = spec;  // the checks may add notes; the plan's are printed already
      check_output(again, request, in_job);
      if (spec.mode == RunOutput::Mode::append && spec.restart) check_unchanged(*spec.restart);
    } catch (const std::exception& e) {
      claim.release();
      error = e.what();
      if (error.empty()) error = "could not claim " + spec.output.file;
    }
  }
  bcast_string(comm, root, error);
  if (!error.empty()) throw std::runtime_error(error);
  return claim;
}

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
}  // namespace

// ---------------------------------------------------------------------------------

struct Run::Impl {
  RunSpec spec;
  spacetree::LocalPlan plan;
  MPI_Comm comm;
  bool print;
  /// Of in-job branch files (on the compute root): released after the output (below) has
  /// closed the last of them.
  std::vector<kernel::FileClaim> claims;
  std::unique_ptr<solver::Solver> solver;
  std::unique_ptr<RunOutput> output;
  std::vector<Observer*> observers;
  std::vector<std::string> files;
  std::int64_t cells = 0;
  bool stop = false;
  bool branched = false;
  double setup_seconds = 0.0;

  void start_timeline() {
    const auto t0 = std::chrono::steady_clock::now();
    const bool talk = print && !spec.quiet;
    solver.reset();
    if (output) output->close();  // the previous file (collective), before the next is created
    output.reset();
    if (spec.steps >= 0) spec.solver_case.time.max_steps = (spec.restart ? spec.restart->step.step : 0) + spec.steps;
    solver = std::make_unique<solver::Solver>(spec.solver_case, plan, comm);
    if (spec.restart) {
      restore_solver(*solver, *spec.restart, comm);
      if (talk)
        fmt::print("restart     from {} step {} (t = {:.6g})\n", spec.restart->file, spec.restart->step.step,
                   spec.restart->step.time);
    }
    output = std::make_unique<RunOutput>(comm, spec.output, spec.common, spec.mode, talk);
    output->set_overrides(spec.recorded_overrides);
    if (talk && !output->path().empty()) {
      fmt::print("output      {} {}\n", spec.mode == RunOutput::Mode::append ? "continuing" : "writing", output->path());
      fmt::print("output      io: {}\n", describe_io(spec.output.io));
    } else if (talk) {
      fmt::print("output      none: the case names no output.file (--output FILE writes one)\n");
    }
    if (!spec.output.file.empty()) files.push_back(spec.output.file);
    cells = solver->global_leaf_cells();
    setup_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

Run::Run(RunSpec spec, spacetree::LocalPlan plan, MPI_Comm comm, bool print) : impl_(std::make_unique<Impl>()) {
  impl_->spec = std::move(spec);
  impl_->plan = std::move(plan);
  impl_->comm = comm;
  impl_->print = print;
  impl_->start_timeline();
}

Run::~Run() = default;

void Run::add(Observer& o) { impl_->observers.push_back(&o); }
solver::Solver& Run::solver() { return *impl_->solver; }
RunOutput& Run::output() { return *impl_->output; }
const RunSpec& Run::spec() const { return impl_->spec; }
MPI_Comm Run::comm() const { return impl_->comm; }
bool Run::print() const { return impl_->print; }
std::int64_t Run::leaf_cells() const { return impl_->cells; }
const std::vector<std::string>& Run::files() const { return impl_->files; }
void Run::request_stop() { impl_->stop = true; }
bool Run::stop_requested() const { return impl_->stop; }

void Run::apply(const std::vector<std::string>& changes) {
  auto& im = *impl_;
  refuse_tree_overrides(changes);
  auto overrides = concat(im.spec.overrides, changes);
  // Parse first: a bad value throws here, identically on every rank, and nothing changed.
  auto parsed = parse_case(im.spec.case_text, im.spec.case_source, overrides, {});
  const auto& c = parsed.solver_case;
  im.solver->set_physics(c.physics);
  for (int f = 0; f < 6; ++f) im.solver->set_boundary(f, c.boundary[static_cast<std::size_t>(f)]);
  im.solver->set_time_limits(c.time.end, im.solver->config().time.max_steps);  // --steps stays
  im.output->set_intervals(parsed.output);
  const auto max_steps = im.spec.solver_case.time.max_steps;
  im.spec.solver_case = std::move(parsed.solver_case);
  im.spec.solver_case.time.max_steps = max_steps;
  parsed.output.file = im.spec.output.file;
  im.spec.output = std::move(parsed.output);
  im.spec.overrides = std::move(overrides);
  im.spec.recorded_overrides = concat(im.spec.recorded_overrides, changes);
  im.output->set_overrides(im.spec.recorded_overrides);
}

void Run::close_output() {
  if (impl_->output) impl_->output->close();
  impl_->output.reset();
}

void Run::reopen_output() {
  auto& im = *impl_;
  if (im.output) return;
  im.output = std::make_unique<RunOutput>(im.comm, im.spec.output, im.spec.common, RunOutput::Mode::append, false);
  im.output->set_overrides(im.spec.recorded_overrides);
}

void Run::branch(RunSpec spec, kernel::FileClaim claim) {
  auto& im = *impl_;
  const bool claimed = claim.held();
  if (claimed) im.claims.push_back(std::move(claim));
  if (spec.steps < 0) spec.steps = im.spec.steps;
  // The job's I/O ranks are the launch's, not the case's: the branch's file goes to them too.
  spec.output.env = im.spec.output.env;
  spec.quiet = spec.quiet || im.spec.quiet;
  // All or nothing: the previous timeline stays in memory, untouched, until the branch
  // has started and written its first step; if that fails it comes back as it was.
  RunSpec previous_spec = std::exchange(im.spec, std::move(spec));
  auto previous_solver = std::move(im.solver);
  const auto previous_files = im.files.size();
  const bool previous_stop = std::exchange(im.stop, false);
  std::error_code ec;
  const bool existed = std::filesystem::exists(im.spec.output.file, ec);  // plan_branch refused it; a race did not
  try {
    im.start_timeline();
    im.output->after_step(*im.solver, true, im.solver->finished());  // what the first boundary writes
    im.output->settle();  // ... written, also by I/O ranks
  } catch (...) {
    discard_output(im.comm, std::move(im.output), existed ? std::string() : im.spec.output.file);
    im.solver = std::move(previous_solver);
    im.spec = std::move(previous_spec);
    im.files.resize(previous_files);
    im.stop = previous_stop;
    if (claimed) im.claims.pop_back();  // the branch file is gone: so is its claim
    throw;
  }
  im.branched = true;
}

RunSummary Run::run() {
  using clock = std::chrono::steady_clock;
  auto& im = *impl_;
  RunSummary sum;
  // The solver lands exactly on the output schedule's next time.
  const auto schedule = [&] { im.solver->set_event_time(im.output->next_event_time(im.solver->scalar_state().time)); };
  const auto boundary = [&](Boundary b) {
    for (;;) {
      im.branched = false;
      for (auto* o : im.observers) {
        o->at_boundary(*this, b);
        if (im.branched) break;
      }
      if (!im.branched) break;
      b = Boundary{.first = true, .step = std::nullopt};  // a new timeline: start it
    }
    schedule();
  };
  const auto t0 = clock::now();
  bool first = true;
  for (;;) {
    if (first) boundary(Boundary{.first = true, .step = std::nullopt});
    while (!im.stop && !im.solver->finished()) {
      const auto info = im.solver->step();
      ++sum.steps;
      sum.pressure_cycles += info.pressure.cycles;
      boundary(Boundary{.first = false, .step = info});
    }
    // The end, in reverse order: the observers added first (the live link) end last,
    // after the output and the monitors are complete. One of them may still steer: a
    // branch starts a new timeline, a later end time continues this one.
    im.branched = false;
    for (auto o = im.observers.rbegin(); o != im.observers.rend() && !im.branched; ++o) (*o)->at_end(*this);
    if (im.branched) {
      first = true;
      continue;
    }
    if (im.stop || im.solver->finished()) break;
    first = false;
    schedule();
  }
  if (im.output) im.output->close();  // the last steps handed off are committed, or their error thrown
  sum.wall_seconds = std::chrono::duration<double>(clock::now() - t0).count();
  sum.setup_seconds = im.setup_seconds;
  sum.stopped = im.stop;
  return sum;
}

}  // namespace rwd::driver

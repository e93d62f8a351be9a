// The live link's host for a Run (live.hpp): where the run is, its grids for windows,
// steering, and the branch inside the job.
#include "rewind/driver/live.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include "agree.hpp"
#include "rewind/driver/output.hpp"
#include "rewind/driver/restart.hpp"
#include "rewind/driver/steering.hpp"
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/lineage.hpp"
#include "rewind/kernel/output_target.hpp"

namespace rwd::driver {

namespace {

// The values as `--set` overrides, checked; `set`: also against the run's times now (a
// branch's are checked against its branch point by plan_branch).
std::vector<std::string> overrides_of(Run& run, const collector::ParamValues& values, bool set) {
  const auto params = steerable_parameters(run.spec());
  std::optional<config::RunTimes> at;
  if (set) {
    const auto& t = run.spec().solver_case.time;
    at = config::RunTimes{.end = t.end, .dt = t.dt, .now = run.now().time};
  }
  std::vector<std::string> out;
  for (const auto& [name, value] : values)
    out.push_back(steering_override(params, name, collector::components(value), at));
  return out;
}

// At most this many futures from one branch command (each a solver and a file).
constexpr std::size_t kMaxFutures = 16;

// Two names of one file, whether it exists yet or not ("x.h5" and "./x.h5", a symlink):
// the same name for its claim.
bool same_path(const std::string& a, const std::string& b) { return kernel::claim_path(a) == kernel::claim_path(b); }

// The branch file can be created: made and removed again (one rank only: O_EXCL).
void probe_create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot create the branch file: {}", path, std::strerror(errno)));
  ::close(fd);
  ::unlink(path.c_str());
}

// `from` as a FILE@SELECTOR find_restart_point takes: as it is when it names a file; "@SEL"
// (no file: the collector's default) names a step on the timeline of the file being
// written, through its parents (kernel::select_on_timeline, docs/file-format.md §6,
// "A branch's timeline"): that file's steps (and `pending`), then its parents' up to the branch point.
std::string on_timeline(Run& run, const std::string& from, const std::optional<PendingCheckpoint>& pending) {
  const auto [file, sel] = kernel::split_step_spec(from);
  if (!file.empty()) return from;
  return kernel::timeline_spec(run.spec().output.file, sel, pending ? &pending->step : nullptr);
}

// Everything an in-job branch needs, checked before the run changes anything: `from`
// names a committed checkpoint of one of the job's files (or `pending`, the one the
// branch writes first), the values and the output name pass plan_branch, and (on the
// `probing` rank) no other job claims the output. Serial; throws one line; returns the
// branch file's name. steer_branch probes that name (probe_create) only after every rank
// has checked: the probe creates the file for a moment, and a rank still checking would
// see it and refuse the branch as "exists".
std::string check_branch(Run& run, const std::string& from, const std::vector<std::string>& changes,
                         const std::string& output, const std::optional<PendingCheckpoint>& pending, bool probing,
                         const std::vector<std::string>& taken) {
  const auto file = kernel::split_step_spec(from).first;
  const auto& files = run.files();
  if (!file.empty() && std::none_of(files.begin(), files.end(), [&](const std::string& f) { return same_file(f, file); }))
    throw std::invalid_argument(fmt::format("{} is not one of this job's files", file));
  std::error_code ec;  // a name the system refuses (too long, a loop), in its words
  if (!output.empty()) (void)std::filesystem::symlink_status(output, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw std::invalid_argument(fmt::format("{}: {}", output, ec.message()));
  if (!output.empty()) kernel::check_output_target(output);  // before anything opens it (a FIFO, a device)
  // A file another job writes: its claim names that job (FileClaim::take refuses it). This
  // job's own files are refused below, in this job's words.
  const bool ours = std::any_of(files.begin(), files.end(), [&](const std::string& f) { return same_file(f, output); });
  if (probing && !output.empty() && !ours && kernel::claimed_elsewhere(output)) (void)kernel::FileClaim::take(output);
  if (std::any_of(taken.begin(), taken.end(), [&](const std::string& f) { return !output.empty() && same_path(f, output); }))
    throw std::invalid_argument(fmt::format("{}: two futures cannot write one file", output));
  return plan_branch(find_restart_point(on_timeline(run, from, pending), pending), changes, output, taken).output.file;
}

// The `branch` command: its reply's fields. Checked on every rank before anything
// changes (before the current state is checkpointed, too); undone if the branch cannot
// start (Run::branch). On any failure the run is where it was: same solver, same file,
// reopened. Only if that file cannot be reopened does the run pause there (`pause`),
// saying so (resume, stop, set and branch retry the reopening).
void steer_branch(Run& run, const live::BranchCommand& c, MPI_Comm compute, live::Reply& reply) {
  int rank = 0;
  MPI_Comm_rank(compute, &rank);
  if (c.futures.empty() || c.futures.size() > kMaxFutures)
    throw std::invalid_argument(fmt::format("a branch has 1 to {} futures, not {}", kMaxFutures, c.futures.size()));
  run.check_fork(c.futures.size());
  std::vector<std::vector<std::string>> changes;
  for (const auto& f : c.futures) changes.push_back(overrides_of(run, f.values, false));
  std::string from = c.from;  // resolved on the timeline below, once the file is closed
  const auto now = run.now();
  std::optional<PendingCheckpoint> pending;
  if (!run.spec().output.file.empty() && now.step > run.last_written_step()) {
    kernel::StepEntry e;
    e.step = now.step;
    e.time = now.time;
    e.kind = kernel::StepKind::checkpoint;
    e.committed = true;
    e.case_overrides = run.spec().recorded_overrides;
    pending = PendingCheckpoint{run.spec().output.file, e};
  }
  const auto back = [&](const std::string& why) {
    try {
      run.reopen_output();
    } catch (const std::exception& e) {
      throw live::PausedError(fmt::format("{}; the run is paused at step {}: its file cannot be reopened ({})", why,
                                          now.step, e.what()));
    }
    throw std::runtime_error(why);
  };
  RestartPoint rp;
  std::vector<RunSpec> specs;
  std::vector<kernel::FileClaim> claims;  // held on the compute root
  run.close_output();  // its steps are read below
  try {
    std::vector<std::string> files;  // the futures' files, each checked (names chosen apart)
    agreed(compute, [&] {
      files.clear();
      for (std::size_t i = 0; i < c.futures.size(); ++i)
        files.push_back(check_branch(run, from, changes[i], c.futures[i].output, pending, rank == 0, files));
      from = on_timeline(run, from, pending);
    });
    agreed(compute, [&] {
      if (rank == 0)
        for (const auto& f : files) probe_create(f);
    });
    agreed(compute, [&] {  // nothing is lost (on the future's ranks)
      run.reopen_output();
      run.checkpoint_now();
      run.close_output();
    });
    agreed(compute, [&] {
      rp = find_restart_point(from);
      specs.clear();
      for (std::size_t i = 0; i < files.size(); ++i) specs.push_back(plan_branch(rp, changes[i], files[i]));
    });
    for (const auto& spec : specs) claims.push_back(claim_output(spec, RunRequest{}, compute, 0, true));  // before it is created
  } catch (const std::exception& e) {
    back(e.what());
  }
  for (const auto& claim : claims)
    if (run.print() && !claim.note().empty()) fmt::print(stderr, "rewind run: note: {}\n", claim.note());
  reply.file = specs.front().output.file;
  for (const auto& s : specs) reply.files.push_back(s.output.file);
  reply.parent = rp.file;
  reply.step = rp.step.step;
  reply.time = rp.step.time;
  try {
    run.fork(std::move(specs), std::move(claims));
  } catch (const std::exception& e) {
    back(fmt::format("the branch did not start: {}; the run goes on from step {} (t = {:.6g}) in {}", e.what(),
                     now.step, now.time, run.spec().output.file));
  }
}

}  // namespace

class LiveLink::Host final : public live::Host {
 public:
  Host(Run& run, std::uint64_t timeline) : run_(run), timeline_(timeline) {}

  live::Status where() override {
    const auto st = run_.now();
    const auto& spec = run_.spec();
    live::Status s;
    s.step = st.step;
    s.time = st.time;
    s.file = spec.output.file;
    s.parent = spec.restart && spec.mode == RunOutput::Mode::create ? spec.restart->file : "";
    s.files = run_.files();
    for (const auto& f : run_.futures()) {
      const auto state = f.ended      ? collector::RunState::finished
                         : f.stopping ? collector::RunState::stopping
                         : f.paused   ? collector::RunState::paused
                                      : collector::RunState::running;
      s.futures.push_back({f.file, f.parent, state, f.step, f.time, f.steps, f.wall, f.changes, f.first_rank, f.ranks});
    }
    return s;
  }
  void focus(const std::string& file) override {
    types_.clear();
    if (file.empty()) return run_.refocus();
    run_.focus(future(file));
  }
  const kernel::LocalGrids& grids() override {
    if (!run_.member()) {  // the future computes on other ranks: none of its grids here
      const auto& sh = run_.spec().solver_case.tree.shape;
      grids_ = {};
      grids_.block = {sh.s[0], sh.s[1], sh.s[2]};
      grids_.halo = kGridHalo;
      return grids_;
    }
    auto& s = run_.solver();
    if (types_.size() != s.forest().size()) types_ = padded_cell_types(s);
    grids_ = describe_grids_as_they_are(s, solver::state_fields(), types_);  // parents: sync_parents()
    return grids_;
  }
  void sync_parents() override {
    if (run_.member()) run_.solver().sync_coarse_levels();
  }
  int variable(const std::string& name) override {
    const auto fields = solver::state_fields();
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].name == name) return static_cast<int>(i);
    throw std::invalid_argument(fmt::format("unknown variable '{}'", name));
  }
  std::vector<collector::ParameterInfo> parameters() override { return steerable_parameters(run_.spec()); }
  std::vector<std::string> set(const collector::ParamValues& values, const std::string& file) override {
    // Every future it names checks the values first (its times): all take them, or none.
    const auto targets = futures_named(file);
    std::vector<std::vector<std::string>> changes;
    for (const auto i : targets) {
      run_.focus(i);
      run_.reopen_output();  // closed only after a failed branch that could not reopen it
      changes.push_back(overrides_of(run_, values, true));
    }
    for (std::size_t k = 0; k < targets.size(); ++k) {
      run_.focus(targets[k]);
      run_.apply(changes[k]);
    }
    run_.refocus();
    return changes.empty() ? std::vector<std::string>{} : changes.front();
  }
  void branch(const live::BranchCommand& b, live::Reply& reply) override {
    // With several futures, the one to fork is named by the step's file.
    const auto file = kernel::split_step_spec(b.from).first;
    if (run_.running_futures() > 1) {
      if (file.empty() || run_.future_of(file) < 0)
        throw std::invalid_argument(fmt::format("this job computes {} futures ({}): name the one to fork (--file)",
                                                run_.running_futures(), running_files()));
      run_.focus(static_cast<std::size_t>(run_.future_of(file)));
    }
    run_.reopen_output();
    steer_branch(run_, b, run_.job_comm(), reply);  // the new timeline's first boundary shares its tree
    run_.refocus();
  }
  void control(collector::ControlAction a, const std::string& file) override {
    if (file.empty() && a == collector::ControlAction::pause) return;  // the link pauses the job
    for (const auto i : futures_named(file)) {
      run_.focus(i);
      if (a == collector::ControlAction::pause) {
        run_.pause_future(true);
        continue;
      }
      run_.reopen_output();  // whatever would write again tries first
      run_.pause_future(false);
      if (a == collector::ControlAction::stop) run_.request_stop();
    }
    run_.refocus();
  }
  std::uint64_t tree_version() override { return timeline_; }
  [[nodiscard]] std::uint64_t timeline() const { return timeline_; }

 private:
  // The future writing `file`, or a refusal naming the ones there are.
  std::size_t future(const std::string& file) {
    const int i = run_.future_of(file);
    if (i < 0) throw std::invalid_argument(fmt::format("{} is not a future of this job ({})", file, running_files()));
    return static_cast<std::size_t>(i);
  }
  // "" = every future not ended; else the one writing `file`.
  std::vector<std::size_t> futures_named(const std::string& file) {
    if (!file.empty()) return {future(file)};
    std::vector<std::size_t> out;
    const auto all = run_.futures();
    for (std::size_t i = 0; i < all.size(); ++i)
      if (!all[i].ended) out.push_back(i);
    return out;
  }
  std::string running_files() const {
    std::string out;
    for (const auto& f : run_.futures())
      if (!f.ended) out += (out.empty() ? "" : ", ") + f.file;
    return out.empty() ? std::string("none running") : out;
  }

  Run& run_;
  std::uint64_t timeline_;
  std::vector<std::vector<std::uint8_t>> types_;
  kernel::LocalGrids grids_;
};

LiveLink::LiveLink(live::Link link, bool pause_at_end) : link_(std::move(link)), pause_at_end_(pause_at_end) {}
LiveLink::~LiveLink() = default;

void LiveLink::at_boundary(Run& run, const Boundary& b) {
  if (b.first) ++timeline_;  // a new tree, perhaps: the collector may need it again
  Host host(run, timeline_);
  link_.at_boundary(host, b.first, b.step.has_value());
  timeline_ = host.timeline();
}

void LiveLink::idle(Run& run) {
  Host host(run, timeline_);
  link_.at_boundary(host, false, false);
  timeline_ = host.timeline();
}

void LiveLink::at_end(Run& run) {
  if (run.running_futures() > 1) return;  // another future goes on: the link stays
  Host host(run, timeline_);
  if (pause_at_end_ && !run.stop_requested()) {
    const bool goes_on = link_.pause_at_end(host);
    timeline_ = host.timeline();
    if (goes_on && !run.stop_requested() && !run.finished()) return;  // resumed with more to do, or branched
  }
  const auto s = link_.finish(host);
  if (run.print() && !run.spec().quiet && s.windows > 0)
    fmt::print(
        "live:       {} windows copied at step boundaries, {:.3f} s in them on the slowest compute rank "
        "({:.2f} ms per window); {} of {} compute ranks wrote into the collector's shared memory; windows "
        "above the leaves: {} ({:.3f} s restricting the coarse levels first)\n",
        s.windows, s.slowest, 1e3 * s.slowest / static_cast<double>(s.windows), s.ranks_in_place, s.ranks,
        s.above_leaves, s.parents);
}

}  // namespace rwd::driver

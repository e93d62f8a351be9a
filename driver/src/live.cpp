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

#include "rewind/driver/output.hpp"
#include "rewind/driver/restart.hpp"
#include "rewind/driver/steering.hpp"
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/lineage.hpp"

namespace rwd::driver {

namespace {

std::vector<std::string> overrides_of(Run& run, const std::vector<live::ParamValue>& values) {
  const auto params = steerable_parameters(run.spec());
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(steering_override(params, v.name, v.value));
  return out;
}

// Runs `f` on every compute rank; if it throws on any, every rank throws the message
// of the lowest failing rank. Collective over `comm`.
template <class F>
void agreed(MPI_Comm comm, F f) {
  std::string message;
  bool failed = false;
  try {
    f();
  } catch (const std::exception& e) {
    failed = true;
    message = e.what();
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = failed ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  long long n = static_cast<long long>(message.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, first, comm);
  message.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(message.data(), static_cast<int>(n), MPI_CHAR, first, comm);
  throw std::runtime_error(message);
}

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
                         const std::string& output, const std::optional<PendingCheckpoint>& pending, bool probing) {
  const auto file = kernel::split_step_spec(from).first;
  const auto& files = run.files();
  if (!file.empty() && std::none_of(files.begin(), files.end(), [&](const std::string& f) { return same_file(f, file); }))
    throw std::invalid_argument(fmt::format("{} is not one of this job's files", file));
  std::error_code ec;  // a name the system refuses (too long, a loop), in its words
  if (!output.empty()) (void)std::filesystem::symlink_status(output, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw std::invalid_argument(fmt::format("{}: {}", output, ec.message()));
  // A file another job writes: its claim names that job (FileClaim::take refuses it). This
  // job's own files are refused below, in this job's words.
  const bool ours = std::any_of(files.begin(), files.end(), [&](const std::string& f) { return same_file(f, output); });
  if (probing && !output.empty() && !ours && kernel::claimed_elsewhere(output)) (void)kernel::FileClaim::take(output);
  return plan_branch(find_restart_point(on_timeline(run, from, pending), pending), changes, output).output.file;
}

// The `branch` command: its reply's fields. Checked on every rank before anything
// changes (before the current state is checkpointed, too); undone if the branch cannot
// start (Run::branch). On any failure the run is where it was: same solver, same file,
// reopened. Only if that file cannot be reopened does the run pause there (`pause`),
// saying so (resume, stop, set and branch retry the reopening).
void steer_branch(Run& run, const live::BranchCommand& c, MPI_Comm compute, live::Reply& reply) {
  int rank = 0;
  MPI_Comm_rank(compute, &rank);
  const auto changes = overrides_of(run, c.values);
  std::string from = c.from;  // resolved on the timeline below, once the file is closed
  const auto& output = c.output;
  const auto now = run.solver().scalar_state();
  std::optional<PendingCheckpoint> pending;
  if (!run.spec().output.file.empty() && now.step > run.output().last_written_step()) {
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
  RunSpec spec;
  kernel::FileClaim claim;  // held on the compute root
  run.close_output();  // its steps are read below
  try {
    std::string branch_file;
    agreed(compute, [&] {
      branch_file = check_branch(run, from, changes, output, pending, rank == 0);
      from = on_timeline(run, from, pending);
    });
    agreed(compute, [&] {
      if (rank == 0) probe_create(branch_file);
    });
    run.reopen_output();
    run.output().checkpoint_now(run.solver());  // nothing is lost
    run.close_output();
    agreed(compute, [&] {
      rp = find_restart_point(from);
      spec = plan_branch(rp, changes, output);
    });
    claim = claim_output(spec, RunRequest{}, compute, 0, true);  // the branch file's, before it is created
  } catch (const std::exception& e) {
    back(e.what());
  }
  if (run.print() && !claim.note().empty()) fmt::print(stderr, "rewind run: note: {}\n", claim.note());
  reply.file = spec.output.file;
  reply.parent = rp.file;
  reply.step = rp.step.step;
  reply.time = rp.step.time;
  try {
    run.branch(std::move(spec), std::move(claim));
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
    const auto st = run_.solver().scalar_state();
    const auto& spec = run_.spec();
    live::Status s;
    s.step = st.step;
    s.time = st.time;
    s.file = spec.output.file;
    s.parent = spec.restart && spec.mode == RunOutput::Mode::create ? spec.restart->file : "";
    s.files = run_.files();
    return s;
  }
  const kernel::LocalGrids& grids() override {
    auto& s = run_.solver();
    if (types_.size() != s.forest().size()) types_ = padded_cell_types(s);
    grids_ = describe_grids_as_they_are(s, solver::state_fields(), types_);  // parents: sync_parents()
    return grids_;
  }
  void sync_parents() override { run_.solver().sync_coarse_levels(); }
  int variable(const std::string& name) override {
    const auto fields = solver::state_fields();
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].name == name) return static_cast<int>(i);
    throw std::invalid_argument(fmt::format("unknown variable '{}'", name));
  }
  std::vector<live::Parameter> parameters() override { return steerable_parameters(run_.spec()); }
  std::vector<std::string> set(const std::vector<live::ParamValue>& values) override {
    run_.reopen_output();  // closed only after a failed branch that could not reopen it
    const auto changes = overrides_of(run_, values);
    run_.apply(changes);
    return changes;
  }
  void branch(const live::BranchCommand& b, live::Reply& reply) override {
    run_.reopen_output();
    steer_branch(run_, b, run_.comm(), reply);  // the new timeline's first boundary shares its tree
  }
  void control(live::Action a) override {
    if (a == live::Action::pause) return;
    run_.reopen_output();  // whatever would write again tries first
    if (a == live::Action::stop) run_.request_stop();
  }
  std::uint64_t tree_version() override { return timeline_; }
  [[nodiscard]] std::uint64_t timeline() const { return timeline_; }

 private:
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

void LiveLink::at_end(Run& run) {
  Host host(run, timeline_);
  if (pause_at_end_ && !run.stop_requested()) {
    const bool goes_on = link_.pause_at_end(host);
    timeline_ = host.timeline();
    if (goes_on && !run.stop_requested() && !run.solver().finished()) return;  // resumed with more to do, or branched
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

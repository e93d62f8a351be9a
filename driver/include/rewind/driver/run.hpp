// The run loop as a library: a simulation's time loop with observers at step
// boundaries, and the branch policy that decides what a run writes.
//
// Futures. A job computes one timeline, or after a fork (Run::fork, `rewind steer branch
// --future ... --future ...`) several: each future its own solver, file and monitor CSV.
// K futures forked from a future on G compute ranks each get a group of those ranks
// (floor(G/K) or one more, the job's partition joined onto it; K > G is refused) and
// compute side by side; with an in-situ hook (collective over the job) they share all the ranks and grids. Either way
// each computes exactly what it would alone (restarts are bit-exact across rank counts). Observers are called at every
// future's boundaries with that future focused: solver(), output(), spec(), apply(), request_stop() speak of it, on the
// ranks that compute it (member()); a job_wide() observer (the live link) is called on every rank, which know where
// each future is (now(), finished()) from its ranks' word once a round. Run::timeline() tells one future's boundaries
// from another's.
//
//   plan_run(request)      which case, which restart point, which file, create or
//                          append, branch lineage (serial, reads files; one error line)
//   Run run(spec, plan)    builds the solver on this rank's grids (collective)
//   run.add(observer)      output, monitors, progress, the live link and steering
//   run.run()              the loop (collective over the compute ranks)
//
// At every step boundary — once before the first step (first = true, also after an
// in-job branch) and after every step — the observers are called in the order they
// were added, identically on every compute rank. An observer may change the run only
// through Run's steering calls (apply, request_stop, branch), which every rank must
// make identically at the same boundary (the live link broadcasts each command first).
// MPI stays on the calling thread.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rewind/driver/output.hpp"
#include "rewind/driver/restart.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/plan.hpp"

namespace rwd::driver {

/// The [insitu] section of a case file (the observer: rewind/driver/insitu.hpp).
struct InsituSettings {
  std::string library;     ///< insitu.library: the hook's shared library ("" = none)
  std::int64_t every = 1;  ///< insitu.every: steps between calls (>= 1)
  std::string args;        ///< insitu.args: passed to rewind_insitu_init verbatim
  [[nodiscard]] bool enabled() const { return !library.empty(); }
};

/// Reads [insitu]. Throws CaseError naming the key (every < 1, ...). Pure.
InsituSettings parse_insitu_settings(config::CaseDocument& doc);

/// What the user asked for (`rewind run` options).
struct RunRequest {
  std::string case_file;                ///< a case file, or empty with restart
  std::string restart;                  ///< FILE[@STEP]
  std::vector<std::string> overrides;   ///< --set key=value
  std::string output;                   ///< --output FILE
  std::string monitor;                  ///< --monitor FILE
  bool force = false;                   ///< overwrite an existing output file
  bool orphan_branches = false;         ///< ... even one that has branches
  bool break_lock = false;              ///< take over a claim left on another host (claim_output)
};

/// What a run does, decided before anything is computed. Plain values: the same on
/// every rank that computes it from the same request.
struct RunSpec {
  std::string case_text;               ///< the base case (the file, or the parent's stored case)
  std::string case_source;             ///< where it came from, for error messages
  std::string case_name;               ///< case.name ("" if the case has none): plot titles
  /// Applied on top of case_text, in order: the restart point's steered overrides,
  /// then --set, then any steering of this run.
  std::vector<std::string> overrides;
  solver::SolverCase solver_case;
  OutputSettings output;
  InsituSettings insitu;               ///< [insitu]: the in-situ hook ("" library: none)
  kernel::CommonInfo common;
  RunOutput::Mode mode = RunOutput::Mode::create;
  std::optional<RestartPoint> restart;
  std::string monitor_file;
  bool monitor_append = false;         ///< continue the parent's monitor CSV (same-file restart)
  /// Overrides the run's file must record with every step (steering in force relative
  /// to common.case_text): the restart point's steered list when appending, else empty.
  std::vector<std::string> recorded_overrides;
  /// --steps: at most this many steps per timeline, counted from its start or restart
  /// point (-1: no limit). An in-job branch inherits it, like `--restart ... --steps`.
  std::int64_t steps = -1;
  /// -q: no report lines (restart, output, io); the files are written all the same.
  /// An in-job branch inherits it.
  bool quiet = false;
  /// One line each for the user ("rewind run: note: ..."): e.g. an output file with no
  /// committed step that the run writes over (empty_leftover).
  std::vector<std::string> notes;
};

/// The branch policy. Reads the case (or the restart point's file), applies the
/// overrides, and decides: a fresh run creates output.file; a restart from the latest
/// checkpoint with nothing but time.end / time.max_steps changed continues the same file
/// (and its monitor CSV: beside the file, else the case's);
/// any other restart branches into --output or a new file beside the parent
/// (branch_name) whose lineage names the parent, the step and the changes. Refuses to
/// overwrite an existing file without `force`, and a parent always. Serial; throws
/// std::runtime_error / CaseError / kernel::FileError with one line. `check_case` is
/// called on the parsed document before unknown keys are refused (the CLI marks the
/// sections of other modules there).
RunSpec plan_run(const RunRequest& request,
                 const std::function<void(config::CaseDocument&)>& check_case = {});

/// The single-writer rule (kernel/claim.hpp): rank `root` of `comm` claims the run's
/// output file, then makes plan_run's (or plan_branch's: `in_job`) checks of it again
/// under the claim — the file may have appeared, or another job may have written to it,
/// since the plan looked — and, for a run that continues the file, checks that its last
/// committed steps are still the plan's. Every rank learns the verdict: all throw the same
/// one-line std::runtime_error (FileError's text: another job writes it, naming that job;
/// it exists now; ...) or all return; the claim is held on `root` (empty elsewhere, and
/// without an output file). Nothing is created or truncated before. Collective over comm.
kernel::FileClaim claim_output(const RunSpec& spec, const RunRequest& request, MPI_Comm comm, int root, bool in_job = false);

/// An in-job branch (steering): from `from` (a committed checkpoint of one of the
/// run's files) with `changes` ("key=value") into `output` ("" = branch_name).
/// Serial; throws like plan_run. `monitor_file` of the result is beside the branch.
/// `taken`: names the default output must not take (the other futures of a fork).
RunSpec plan_branch(const RestartPoint& from, const std::vector<std::string>& changes, const std::string& output,
                    const std::vector<std::string>& taken = {});

class Run;

/// One step boundary, as the observers see it.
struct Boundary {
  bool first = false;                   ///< before the first step of this timeline
  std::optional<solver::StepResult> step; ///< the step just taken (none when first)
};

/// Something called at every step boundary. Collective over the ranks that compute the
/// future (Run::comm()); a job_wide() one over the job's compute ranks.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void at_boundary(Run& run, const Boundary& b) = 0;
  /// After the last boundary (the run finished or was stopped), in the reverse order of
  /// add(). An observer may still steer here (collectively): after Run::branch the
  /// loop continues with the branch; after a later end time (apply) with this timeline,
  /// and at_end is called again when it ends.
  virtual void at_end(Run&) {}
  /// While every future left is paused alone (Run::pause_future), instead of boundaries,
  /// about every millisecond: a live link serves its commands here. Collective.
  virtual void idle(Run&) {}
  /// Called on every rank of the job at every future's boundary (the live link), not only
  /// on the ranks that compute it: once futures compute on groups of ranks, such an
  /// observer may use only Run's calls that every rank answers (now(), spec(), ...).
  /// Default: the observer belongs to the future's ranks (output, monitors, progress).
  [[nodiscard]] virtual bool job_wide() const { return false; }
};

struct RunSummary {
  std::int64_t steps = 0;          ///< steps taken by this process's loop (all timelines)
  double wall_seconds = 0.0;       ///< the loop, setup excluded
  double setup_seconds = 0.0;
  double pressure_cycles = 0.0;    ///< summed over steps
  bool stopped = false;            ///< ended by request_stop(), not by the end time
};

class Run {
 public:
  /// Builds the solver on `plan` (restoring the restart point) and opens the output.
  /// Collective over `comm` (the compute ranks). `print`: this rank reports.
  Run(RunSpec spec, spacetree::LocalPlan plan, MPI_Comm comm, bool print);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// Observers are called in this order; they must outlive the run. Add output first
  /// if others should see a step's file commit.
  void add(Observer& o);
  /// The loop until the end time, the step limit or a stop request. Collective.
  RunSummary run();

  /// The focused future's solver and output: only on the ranks that compute it
  /// (member()); std::logic_error elsewhere.
  [[nodiscard]] solver::Solver& solver();
  [[nodiscard]] RunOutput& output();
  [[nodiscard]] const RunSpec& spec() const;
  /// The ranks that compute the focused future (the job's compute ranks, or after a fork
  /// onto groups its group's); job_comm() is always the job's.
  [[nodiscard]] MPI_Comm comm() const;
  [[nodiscard]] MPI_Comm job_comm() const;
  /// This rank computes the focused future. Every rank does until a fork puts futures on
  /// groups of ranks (see fork); the others know where it is (now(), finished(),
  /// last_written_step()) from its ranks' word at the end of each round.
  [[nodiscard]] bool member() const;
  /// The focused future's step and time, whether its solver has finished, the last step
  /// its file holds (-1: none): on every rank.
  [[nodiscard]] solver::ScalarState now() const;
  [[nodiscard]] bool finished() const;
  [[nodiscard]] std::int64_t last_written_step() const;
  /// The focused future's ranks write its state now as a checkpoint (RunOutput::checkpoint_now);
  /// nothing on the others. Collective over the job.
  void checkpoint_now();
  /// This rank reports on the focused future: the job's compute root, or the first rank of
  /// the future's group.
  [[nodiscard]] bool print() const;
  /// Leaf cells over all ranks (constant: the tree does not change).
  [[nodiscard]] std::int64_t leaf_cells() const;
  /// Every file this job has written (the run's, then its in-job branches).
  [[nodiscard]] const std::vector<std::string>& files() const;

  // --- Futures ---------------------------------------------------------------------
  /// One future the job computes (ended ones stay listed, ended = true).
  struct Future {
    std::string file;                  ///< the file it writes ("" none)
    std::string parent;                ///< the file it branched from ("" for the original run)
    std::vector<std::string> changes;  ///< against its parent, then steered ("key=value")
    std::int64_t step = 0;
    double time = 0.0;
    std::int64_t steps = 0;            ///< steps it computed
    double wall = 0.0;                 ///< seconds since it started
    bool paused = false, stopping = false, ended = false;
    int first_rank = 0, ranks = 1;  ///< the compute ranks it computes on: [first_rank, first_rank + ranks)
  };
  [[nodiscard]] std::vector<Future> futures() const;
  /// Futures not ended yet.
  [[nodiscard]] std::size_t running_futures() const;
  /// The future writing `file` (the same file under any name), or -1.
  [[nodiscard]] int future_of(const std::string& file) const;
  /// The future the run's accessors and steering calls speak of now.
  [[nodiscard]] std::size_t focused() const;
  /// Makes future `i` the focused one (steering a future by its file); the loop focuses
  /// each future at its own boundaries. Local: every rank, identically.
  void focus(std::size_t i);
  /// Focuses the future whose boundary this is again (after steering another).
  void refocus();
  /// An id of the focused future's timeline, new for every future a fork starts.
  [[nodiscard]] std::uint64_t timeline() const;
  /// Pauses (or resumes) the focused future alone: it takes no step meanwhile, the others
  /// go on. While every future left is paused, the observers' idle() is called.
  void pause_future(bool paused);

  // --- Steering: every rank, identically, at a boundary ---------------------------
  /// Ends the focused future after this boundary (the job, once every future has
  /// ended); its output writes its final checkpoint. Local,
  /// but every rank must call it at the same boundary (as the steering observer does).
  void request_stop();
  [[nodiscard]] bool stop_requested() const;
  /// Adds `changes` ("key=value", steerable keys only) to the run's overrides,
  /// re-reads the case with them and applies what changed to the solver and the
  /// output schedule from the next step on. Every later step records them. Throws
  /// CaseError / std::invalid_argument (the same on every rank) and then changes
  /// nothing. Collective: every rank, the same changes, at the same boundary.
  void apply(const std::vector<std::string>& changes);
  /// Continues from `spec` (plan_branch) in this job: the current file is left as it
  /// is (its committed steps stay), a new solver restores the branch point on the
  /// same grids, the branch file is created and its first step written. `claim`: its
  /// claim (claim_output, in_job), held on the compute root until the run ends. The next
  /// boundary has first = true. All or nothing: if any of that fails (the restart read,
  /// the file's creation, a full disk in its first step), the branch file is removed, the
  /// previous timeline is back exactly as it was (its solver is kept in memory meanwhile:
  /// a branch briefly needs room for two) and the error is rethrown, the same on every
  /// rank; the previous output stays closed (reopen_output()).
  /// Collective.
  void branch(RunSpec spec, kernel::FileClaim claim);
  /// Throws std::invalid_argument (one line: how many ranks the fork needs, how many
  /// processes to start) if the focused future cannot be forked into `n` futures: on G
  /// compute ranks, every future gets a group of its own, so n <= G (a run with an in-situ
  /// hook shares its ranks, any n). Local, the same on every rank.
  void check_fork(std::size_t n) const;
  /// Continues the focused future as several (a fork), each as branch() continues one:
  /// `specs[i]` from plan_branch, `claims[i]` its claim. The focused future's G ranks are
  /// split into K groups (K <= G, check_fork; floor(G/K) ranks each, the first G % K one
  /// more; the job's partition joined onto each group, spacetree::join_ranks) and the
  /// futures compute side by side; the branch point is read once over the focused future's
  /// ranks and handed to each group's ranks for their grids (restore_groups).
  /// With an in-situ hook in the run they all share the ranks, stepped in turn. All or
  /// nothing, as branch(), on every rank of the job. Several futures need an in-place output
  /// strategy (auto, collective, independent): refused otherwise (std::invalid_argument),
  /// nothing changed. Collective over the job.
  void fork(std::vector<RunSpec> specs, std::vector<kernel::FileClaim> claims);
  /// Closes the output file, e.g. so the job can read it for a branch; reopen_output()
  /// continues it (append). output() must not be used in between. Both collective.
  void close_output();
  void reopen_output();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::driver

// The Run's inside (run.hpp), shared by run_loop.cpp (its futures stepped in turn on the
// same ranks, and forks) and run_groups.cpp (futures on groups of ranks, side by side).
// Private to rewind::driver.
#pragma once
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "groups.hpp"
#include "rewind/driver/run.hpp"

namespace rwd::driver {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// One future: a timeline with its own solver and output, on the ranks of its group.
struct Lane {
  RunSpec spec;
  std::shared_ptr<Group> group;
  std::unique_ptr<solver::Solver> solver;  ///< members of its group only
  std::unique_ptr<RunOutput> output;       ///< members of its group only
  std::uint64_t id = 0;
  bool fresh = true;  ///< its first boundary is due
  bool stop = false;
  bool paused = false;  ///< alone (Run::pause_future)
  bool ended = false;
  bool timed = false;    ///< started by the last fork, its first step not computed yet (ForkClock)
  bool opening = false;  ///< its file's opening was tried (a failed fork removes it)
  std::int64_t steps = 0;
  Clock::time_point started = Clock::now();
  /// What its members last said (share_lanes): where it is, for the ranks not on its group.
  LaneWord word;
  std::optional<solver::StepResult> last;  ///< members: its last step (the boundary's)

  [[nodiscard]] bool member() const { return group->member; }
};

struct Run::Impl {
  MPI_Comm comm = MPI_COMM_NULL;    ///< the job's compute ranks
  int rank = 0, ranks = 1;          ///< this one's rank among them, and how many
  bool print = false;               ///< this rank reports (the job's compute root)
  bool reporting = false;           ///< some rank of the job reports (a group's first rank reports its futures)
  std::shared_ptr<Group> whole;     ///< the job's ranks, the first future's group
  std::optional<JobTree> job_tree;  ///< gathered at the first fork onto groups
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
    std::size_t groups = 1;  ///< the groups of ranks they compute on
  };
  std::optional<ForkClock> fork_clock;
  void fork_started(const std::array<Clock::time_point, 3>& began_made_read, std::size_t futures, std::int64_t step,
                    std::size_t groups);
  void first_step_of(Lane& l);

  Lane& lane() { return lanes[cur]; }
  [[nodiscard]] std::size_t running() const;
  /// Some future computes on a group of the job's ranks, not on all: the rounds of
  /// run_groups.cpp.
  [[nodiscard]] bool grouped() const;
  /// `l`'s reports: the first rank of its group, in a job that reports.
  [[nodiscard]] bool prints(const Lane& l) const { return reporting && rank == l.group->first; }

  std::unique_ptr<solver::Solver> make_solver(RunSpec& spec, const Group& g);
  void name_output(Lane& l);
  void open_output(Lane& l);
  void schedule();
  void boundary(Run& run, const Boundary& b);
  void end(Run& run);
  void start_futures(std::vector<Lane>& made);

  // run_groups.cpp: a round of a grouped job, and a fork onto groups.
  bool grouped_round(Run& run, RunSummary& sum);
  void local_turn(Run& run, Lane& l, RunSummary& sum);
  void job_turn(Run& run, std::size_t k);
  /// The groups of `n` futures forked from the focused one (n <= its ranks, check_fork):
  /// one each; its own group for all with an in-situ hook.
  std::vector<std::shared_ptr<Group>> groups_for(std::size_t n);
};

}  // namespace rwd::driver

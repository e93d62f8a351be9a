// The run's in-situ hook ([insitu] of the case; InsituSettings is in run.hpp): where it
// runs and which steps it is handed (rewind/insitu/hook.hpp is the hook; docs/insitu.md
// the guide).
//
// Without dedicated I/O ranks the hook runs on the compute ranks: InsituObserver calls
// it with the solver's own arrays. With them (output.io.strategy = "dedicated") it runs
// on the I/O ranks, as in Damaris, and the compute ranks never load it: InsituHandOff
// marks the due steps, RunOutput hands them over with their halos (kernel::Writer::
// hand_off: in the output's hand-off, or alone when no output is due), and the I/O
// ranks' loop gives them to InsituConsumer (a kernel::StepConsumer). The kernel sees only
// that interface, so it needs neither the hook's loader nor its ABI. Either way the hook
// gets the same steps, the same grids and the same halo values.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rewind/driver/run.hpp"
#include "rewind/insitu/hook.hpp"
#include "rewind/kernel/io_ranks.hpp"

namespace rwd::driver {

/// True when the run's hook runs on the dedicated I/O ranks (a hook and output.io.strategy
/// = "dedicated"). Pure: the same on every rank.
bool insitu_on_io_ranks(const RunSpec& spec);

/// Which boundaries hand a step to the hook: those at a multiple of `every` (the first
/// boundary included when it is one); a step is never handed over twice in a timeline;
/// an in-job branch starts a new timeline whose steps are handed over again. Pure.
class InsituSchedule {
 public:
  explicit InsituSchedule(std::int64_t every) : every_(every) {}
  /// At a boundary at `step`; `first`: the first boundary of a timeline.
  bool due(std::int64_t step, bool first);

 private:
  std::int64_t every_;
  std::int64_t last_ = -1;
};

/// The hook on the compute ranks: calls it at the boundaries InsituSchedule picks, each
/// timeline (a branch, each future of a fork) on its own schedule, with its file. Init
/// runs at the first boundary, finalize in finish(). Collective over the compute ranks.
/// A hook error is reported once (stderr, one line, by the reporting rank) and disables
/// the hook; the run goes on. The state fields (u, v, w, p, T) are handed over with their
/// halos as the solver left them after the step. Add it after the OutputObserver: a step
/// the hook fails at is in the file.
class InsituObserver final : public Observer {
 public:
  InsituObserver(insitu::Hook hook, InsituSettings settings);
  void at_boundary(Run& run, const Boundary& b) override;
  /// rewind_insitu_finalize; call once after Run::run(). Collective.
  void finish(Run& run);
  /// The steps handed to the hook so far (this process; the same on every rank).
  [[nodiscard]] std::int64_t calls() const { return calls_; }

 private:
  insitu::Hook hook_;
  InsituSettings settings_;
  struct Timeline {  ///< one timeline's (the futures of a fork reach the same steps)
    InsituSchedule schedule;
    std::vector<std::vector<std::uint8_t>> types;  ///< its solver's padded cell types
  };
  std::map<std::uint64_t, Timeline> timelines_;  ///< by Run::timeline()
  std::int64_t calls_ = 0;
};

/// The compute ranks' side of a hook on the I/O ranks: marks the steps InsituSchedule
/// picks for the output to hand over (RunOutput::hand_next_step_to_hook), until the I/O
/// ranks say the hook failed. Add it before the OutputObserver, which hands the marked
/// step over at the same boundary. Local; every compute rank decides the same.
class InsituHandOff final : public Observer {
 public:
  explicit InsituHandOff(std::int64_t every) : schedule_(every) {}
  void at_boundary(Run& run, const Boundary& b) override;

 private:
  InsituSchedule schedule_;
  bool active_ = true;  ///< across files: an in-job branch's new file does not revive it
};

/// The hook on the dedicated I/O ranks: init when constructed, every step the compute
/// ranks hand over (from kernel::serve_io_ranks), finalize in finish(). Collective over
/// `io`, the I/O ranks' communicator, which is the one the hook is given. The grids are
/// the compute ranks' padded arrays as they were at the step, in shared memory. A hook
/// error is reported once (stderr, one line, by the first I/O rank) and disables the hook.
class InsituConsumer final : public kernel::StepConsumer {
 public:
  /// `spec`: the run's (constants, case name, [insitu], quiet); `print`: this rank reports.
  InsituConsumer(insitu::Hook hook, const RunSpec& spec, MPI_Comm io, bool print);
  bool consume(const kernel::StepInfo& step, const kernel::LocalGrids& grids, MPI_Comm io,
               const std::string& file) override;
  /// rewind_insitu_finalize and the summary line; once, after serve_io_ranks. Collective.
  void finish();
  [[nodiscard]] std::int64_t calls() const { return calls_; }

 private:
  insitu::Hook hook_;
  InsituSettings settings_;
  kernel::CommonInfo common_;
  MPI_Comm io_;
  bool print_, quiet_;
  std::int64_t calls_ = 0;
};

}  // namespace rwd::driver

// What a run writes ([output] of the case) and when: the bridge between a running
// simulation and the HDF5 kernel.
//
// The kernel knows nothing of trees or solvers; the solver knows nothing of files.
// This module is the only place that knows both: it describes the forest's grids to the
// kernel as plain GridRecords (pointers into the forest, no copies).
//
// The schedule (which steps are written, and as what) is the pure function
// outputs_due(); RunOutput applies it to the open file. Both are unit-tested
// (tests/driver/test_schedule.cpp).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rewind/kernel/kernel.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/config/case_file.hpp"

namespace rwd::driver {

/// The [output] section of a case file.
struct OutputSettings {
  std::string file;                        ///< output.file; empty = no output file
  double checkpoint_interval = 0.0;        ///< simulated time between checkpoints (0 = off)
  std::int64_t checkpoint_every = 0;       ///< steps between checkpoints (0 = off)
  double visualisation_interval = 0.0;     ///< simulated time between visualisation outputs
  std::int64_t visualisation_every = 0;    ///< steps between visualisation outputs
  std::vector<std::string> variables;      ///< visualisation variables (default: all state)
  bool float32 = false;                    ///< visualisation in 32-bit floats
  bool initial = true;                     ///< checkpoint the initial state (step 0)
  bool final = true;                       ///< checkpoint the last step
  kernel::IoOptions io;                    ///< [output.io]: the kernel's options table
  kernel::WriterEnv env;                   ///< not a case's: set by the launcher (rewind run's
                                           ///< I/O group, strategy "dedicated")
};

/// Reads [output]. Throws CaseError naming the key.
/// The rows of the kernel's options table a case may set as output.io.<name>: all but
/// flush_on_commit (a crash could lose the file) and write_views (`rewind run` always
/// writes them). Pure.
std::vector<kernel::OptionDoc> case_io_options();
/// Why output.io.<name> cannot be set in a case, "" if it can. Pure.
std::string case_io_refusal(const std::string& name);
/// `c`: the case's solver part, whose solved fields are the variables there are.
OutputSettings parse_output_settings(config::CaseDocument& doc, const solver::SolverCase& c);

/// Constants of a run for /common.
kernel::CommonInfo make_common(const solver::SolverCase& c, const std::string& case_text);

// --- The solver's grids as plain data --------------------------------------------------

/// The halo of every array describe_grids() hands over: the forest's one cell.
inline constexpr int kGridHalo = 1;

/// The solver's cell types (CellType codes) with the fields' one-cell halo (zeros), one
/// padded array per grid of this rank. Static: compute once. Local.
std::vector<std::vector<std::uint8_t>> padded_cell_types(solver::Solver& s);
/// This rank's grids as the kernel (and an in-situ hook) takes them: one GridRecord per
/// grid, fields[i] pointing into the forest's array of `fields[i]` (no copies, valid
/// until the solver's next step), cell_type into `padded_types` (none if it does not
/// match the forest). Parents hold their children's averages for the current step
/// (Solver::sync_coarse_levels, called first). Collective over the solver's ranks.
kernel::LocalGrids describe_grids(solver::Solver& s, const std::vector<solver::Variable>& fields,
                                  const std::vector<std::vector<std::uint8_t>>& padded_types);
/// describe_grids() without Solver::sync_coarse_levels(): the leaves of the current step,
/// the parents as they are (of an earlier step on a uniform tree, until
/// sync_coarse_levels(), which updates them in place, the records staying valid). Local.
kernel::LocalGrids describe_grids_as_they_are(solver::Solver& s, const std::vector<solver::Variable>& fields,
                                              const std::vector<std::vector<std::uint8_t>>& padded_types);
/// The step the in-situ hook is handed at `state`: step, time, dt and every state field
/// ("cell_data", name, slot i for solver::state_fields()[i], as describe_grids() numbers
/// them when given solver::state_fields()). Pure.
kernel::StepInfo hook_step(const solver::ScalarState& state);

// --- The schedule (pure) ---------------------------------------------------------------

/// What is due at one step boundary.
struct Due {
  bool checkpoint = false;
  bool visualisation = false;  ///< only when no checkpoint is due (a checkpoint holds more)
  bool operator==(const Due&) const = default;
};

/// The outputs due after a step that went from `time - dt` to `time` (step number
/// `step`). `first`: the boundary before the first step (the initial state, or the
/// restart point); `last`: the run ends here (end time, --steps, or a stop request).
/// Interval outputs fire when the step crosses a multiple of the interval; instants
/// within 1e-6 intervals of a multiple count as on it (steps land on output times only
/// up to round-off). Pure.
Due outputs_due(const OutputSettings& s, std::int64_t step, double time, double dt, bool first, bool last);

/// The next simulated time after `now` an output must land on exactly (+inf if none):
/// the solver aims its time steps at it, so outputs — and restarts — hit the same times.
/// Pure.
double next_output_time(const OutputSettings& s, double now);

// --- The open file ---------------------------------------------------------------------

/// A step not written for lack of room (kernel::ErrorKind::no_space), as RunOutput throws
/// it: what() is the user's line, with how to continue the file; cause() is that line
/// without the advice (for a caller whose advice differs: a branch whose file is gone).
class NoSpaceError : public std::runtime_error {
 public:
  NoSpaceError(const std::string& cause, const std::string& advice)
      : std::runtime_error(cause + "; " + advice), cause_(cause) {}
  [[nodiscard]] const std::string& cause() const { return cause_; }

 private:
  std::string cause_;
};

/// When to write what, and the open file. Collective over the compute ranks.
class RunOutput {
 public:
  enum class Mode { create, append };
  /// Opens (creates, or appends to) settings.file; no file if it is empty. Collective.
  /// Throws kernel::FileError.
  RunOutput(MPI_Comm comm, OutputSettings settings, const kernel::CommonInfo& common, Mode mode, bool print);
  /// Closes the file without reporting (an error is on its way already); close() first
  /// at a normal end.
  ~RunOutput();
  /// Closes the file: the steps still handed off are committed first (aggregated,
  /// dedicated: the line says which step is the last in the file). Throws as after_step.
  /// Collective; a no-op without a file or when closed.
  void close();
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  /// See next_output_time(); +inf without a file.
  [[nodiscard]] double next_event_time(double now) const;
  /// Writes the outputs due at the solver's current step (outputs_due). `last`: the
  /// run ends here. Collective. A step that cannot be written throws one line naming the
  /// step and the cause (a full disk: NoSpaceError, with how to continue the file); the
  /// file keeps its committed steps.
  void after_step(solver::Solver& s, bool first, bool last);
  /// Writes a checkpoint of the current step now, unless that step is already in the
  /// file. Collective.
  void checkpoint_now(solver::Solver& s);
  /// Returns once the steps written so far are in the file (Writer::settle: with
  /// dedicated or aggregated I/O ranks they are written after write() returns); throws
  /// their error. Collective.
  void settle() {
    if (writer_) writer_->settle();
  }
  [[nodiscard]] const std::string& path() const { return settings_.file; }
  [[nodiscard]] const OutputSettings& settings() const { return settings_; }
  /// Changes the intervals (steering); the file and variables stay. Not collective,
  /// but every rank must make the same change at the same boundary.
  void set_intervals(const OutputSettings& s);
  /// The steering overrides in force ("key=value", TOML values, in the order given),
  /// stored with every step written from now on (step attribute `case_overrides`), so
  /// that a restart from any later checkpoint continues with them.
  void set_overrides(std::vector<std::string> overrides) { overrides_ = std::move(overrides); }
  /// The last step in the file (-1 if none).
  [[nodiscard]] std::int64_t last_written_step() const { return last_written_step_; }
  /// The in-situ hook on the dedicated I/O ranks (InsituHandOff): the step of the next
  /// after_step() goes to the hook too — in the output's hand-off when an output is due
  /// (one copy of the written variables and the hook's, halos included), else alone (an
  /// analysis-only step: the I/O ranks hand it to the hook and do not write it). Local,
  /// but every rank must call it at the same boundary.
  void hand_next_step_to_hook() { hook_next_ = true; }
  /// The run hands steps to a hook on the I/O ranks (InsituHandOff, from the first
  /// boundary on): the hand-off's memory is prepared for such steps, halos included.
  void expect_hook() { hook_expected_ = true; }
  /// True once the I/O ranks have said the hook takes no more steps (it failed), and
  /// without a file (no I/O ranks to hand steps to). The same on every rank.
  [[nodiscard]] bool hook_declined() const { return !writer_ || writer_->consumer_declined(); }

 private:
  /// `hook`: the hook's fields go along (kernel::Writer::hand_off).
  /// The step as written: its description and the grids (every state field with `hook`).
  std::pair<kernel::StepInfo, kernel::LocalGrids> describe_step(solver::Solver& s, kernel::StepKind kind, bool hook);
  kernel::WriteStats write(solver::Solver& s, kernel::StepKind kind, bool hook);
  void hand_to_hook(solver::Solver& s);  ///< an analysis-only step
  MPI_Comm comm_;
  OutputSettings settings_;
  bool print_;
  std::unique_ptr<kernel::Writer> writer_;
  std::int64_t last_written_step_ = -1;
  std::int64_t committed_step_ = -1;  // the last step known to be committed (handed off: as the writers replied)
  bool handed_off_ = false;           // steps go to other ranks (aggregated, dedicated)
  std::vector<std::string> overrides_;
  std::vector<std::vector<std::uint8_t>> padded_types_;  // cell types with a 1-cell halo
  bool hook_next_ = false;
  bool hook_expected_ = false;
  bool prepared_ = false;  // Writer::prepare called (at the first boundary)
  std::string view_error_;  // the last step's, said once until it changes
};

/// After a branch failed to start: closes its output (collective over `comm`; a failed
/// close is ignored) and removes `file`, which the branch created (compute rank 0), so a
/// retry under the same name is not refused and no half-written file is left. Never
/// throws.
void discard_output(MPI_Comm comm, std::unique_ptr<RunOutput> output, const std::string& file) noexcept;

}  // namespace rwd::driver

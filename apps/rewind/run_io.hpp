// The bridge between a running simulation and the HDF5 kernel: what `rewind run`
// writes ([output] of the case), and how it restarts and branches from a file.
//
// The kernel knows nothing of trees or solvers; the solver knows nothing of files.
// This file is the only place that knows both: it describes the forest's grids to the
// kernel as plain GridRecords (pointers into the forest, no copies), and fills a new
// forest from a checkpoint.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rewind/kernel/kernel.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/case_file.hpp"
#include "rewind/spacetree/tree.hpp"

namespace rwd::cli {

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
};

/// Reads [output]. Throws CaseError naming the key.
OutputSettings parse_output_settings(spacetree::CaseDocument& doc);

/// Constants of a run for /common.
kernel::CommonInfo make_common(const solver::SolverCase& c, const std::string& case_text);

/// A committed checkpoint to restart from: FILE[@STEP], STEP any kernel selector
/// ("latest" = the latest committed checkpoint, "42", "#-1", "t=0.5").
struct RestartPoint {
  std::string file;
  kernel::StepEntry step;
  std::string case_text;              ///< the case the parent ran with
  std::int64_t last_committed = -1;   ///< last committed step of the file (any kind)
};
/// Serial, read-only. Throws kernel::FileError / std::runtime_error with one line.
RestartPoint find_restart_point(const std::string& spec);
/// The tree stored in the checkpoint (serial, read-only).
spacetree::Tree restart_tree(const RestartPoint& rp, const spacetree::TreeShape& shape);
/// Collective over `comm`: fills the solver's state from the checkpoint and restores
/// its scalar state, so the run continues bit-identically.
void restore_solver(solver::Solver& s, const RestartPoint& rp, MPI_Comm comm);

/// When to write what, and the open file. Collective over the compute ranks.
class RunOutput {
 public:
  enum class Mode { create, append };
  RunOutput(MPI_Comm comm, OutputSettings settings, const kernel::CommonInfo& common, Mode mode, bool print);
  ~RunOutput();
  RunOutput(const RunOutput&) = delete;
  RunOutput& operator=(const RunOutput&) = delete;

  /// The next simulated time an output must land on exactly (+inf if none); the
  /// solver aims its time steps at it so outputs — and restarts — hit the same times.
  [[nodiscard]] double next_event_time(double now) const;
  /// Writes the outputs due at the solver's current step. `last`: the run ends here.
  void after_step(solver::Solver& s, bool first, bool last);
  [[nodiscard]] const std::string& path() const { return settings_.file; }

 private:
  kernel::WriteStats write(solver::Solver& s, kernel::StepKind kind);
  MPI_Comm comm_;
  OutputSettings settings_;
  bool print_;
  std::unique_ptr<kernel::Writer> writer_;
  std::int64_t last_written_step_ = -1;
  std::vector<std::vector<std::uint8_t>> padded_types_;  // cell types with a 1-cell halo
};

}  // namespace rwd::cli

// Collective, buffered writer of one shared Rewind HDF5 file.
//
// Typical use (every call is collective over `comm` unless marked otherwise):
//
//   CommonInfo common = ...;                         // constants of the run
//   auto w = Writer::create(comm, "run.h5", common);  // truncates
//   StepInfo s{.step = 10, .time = 0.1, .dt = 0.01, .kind = StepKind::checkpoint,
//              .fields = {{"cell_data", "u", 0}, {"previous_cell_data", "u", 1}}};
//   LocalGrids g = ...;                               // this rank's grids (may be empty)
//   WriteStats st = w.write_step(s, g);               // committed when it returns
//   w.close();
//
// IoOptions::strategy picks who writes: every rank (collective, independent), one rank per
// node (aggregated), or dedicated I/O ranks (io_ranks.hpp); the file is the same.
//
// Restart continues either in a branch file (Writer::create with common.lineage set,
// the parent is never opened for writing) or in the same file (Writer::append).
//
// Errors: every rank throws the same FileError (ranks agree on success with an
// allreduce before each collective HDF5 call sequence), so no rank is left inside a
// collective. After a failed write_step the file still holds every earlier committed
// step. Destructors never throw; they close without flushing pending work twice.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/metadata.hpp"
#include "rewind/kernel/options.hpp"

namespace rwd::kernel {

/// One dataset of cell data to write in a step: `<group>/<name>` from slot `slot` of
/// every GridRecord::fields, optionally converted to float32 (visualisation only).
struct FieldSpec {
  std::string group = "cell_data";  ///< "cell_data" (current), "previous_cell_data", ...
  std::string name;                 ///< variable name (snake_case, no '/' or '.')
  int slot = 0;                     ///< index into GridRecord::fields
  bool float32 = false;
};

/// What to write in one step.
struct StepInfo {
  std::int64_t step = 0;  ///< step (cycle) number; strictly increasing within a file
  double time = 0.0;      ///< simulated time
  double dt = 0.0;
  StepKind kind = StepKind::visualisation;
  std::vector<FieldSpec> fields;
  bool write_cell_type = true;  ///< also write cell_type (needs GridRecord::cell_type)
  /// Case overrides in force at this step (steering), stored as the step attribute
  /// `case_overrides` when non-empty; none may hold a newline. Same on every rank.
  std::vector<std::string> case_overrides;
  /// The solver's monitor state at this step (e.g. the Strouhal estimator), stored as
  /// the step attribute `monitor_state` when non-empty (format 1.4), so that a restart
  /// continues the monitors too. Same on every rank.
  std::vector<double> monitor_state;
  /// The code's named scalars of this step (its monitors), stored as the step attributes
  /// `scalar_names` and `scalar_values` when non-empty (format 1.8). Names: letters,
  /// digits and '_', each once. Same on every rank.
  std::vector<Scalar> scalars;
};

/// What a write did (identical on every rank except the *_local fields).
struct WriteStats {
  std::int64_t n_grids = 0;        ///< grids in the step, all ranks
  std::int64_t bytes = 0;          ///< bytes of all datasets, all ranks
  std::int64_t bytes_local = 0;    ///< bytes this rank wrote
  std::int64_t stored_bytes = 0;   ///< what the step takes on disk: `bytes` with the filtered
                                   ///< datasets at HDF5's storage size (== bytes unfiltered)
  double compression_ratio = 1.0;  ///< cell data's bytes / their storage (as
                                   ///< Reader::cell_data_storage); 1 without filters
  double seconds = 0.0;            ///< wall time of write_step (max over ranks), flushes included
  double bandwidth = 0.0;          ///< bytes / seconds, bytes per second
  bool all_collective = true;      ///< every bulk write reported a collective transfer
                                   ///< (H5Pget_mpio_actual_io_mode), all ranks
  std::string view_error;          ///< non-empty if the (derived) view could not be written
  /// Strategies "auto", "collective", "independent": how this rank wrote its rows (zero
  /// where the step was handed off).
  struct InPlace {
    std::int64_t buffer_bytes = 0;  ///< bytes of this rank's linear write buffer the step used
                                    ///< (two halves when pipelined; <= bytes_local)
    bool buffer_reused = false;     ///< this rank's buffer was the one kept from a step before
    std::int64_t writeback_datasets = 0;  ///< datasets whose early writeback this rank started
                                          ///< (node leaders of durable steps only)
    std::int64_t direct_datasets = 0;  ///< datasets written zero-copy from the grids' arrays
                                       ///< (IoOptions::zero_copy), the same on every rank
  } in_place;
  /// Strategies "aggregated", "dedicated" (io_ranks.hpp): the hand-off.
  struct HandOff {
    bool handed_off = false;         ///< the step was handed to the rank that writes it;
                                     ///< `seconds` is then the compute ranks' cost, not the write's
    double wait_seconds = 0.0;       ///< of `seconds`: waiting for a free slot (max over ranks)
    std::int64_t written_step = -1;  ///< the last step whose write finished meanwhile, or -1
    double written_seconds = 0.0;    ///< that write's time on the writing ranks, flushes included
    double written_bandwidth = 0.0;  ///< its bytes / written_seconds
    std::int64_t copied_bytes = 0;   ///< bytes this rank copied into the hand-off's shared
                                     ///< memory (0 for a step written from span())
  } handoff;
};

/// What the launcher or a test gives a Writer besides the user's IoOptions (none of it is
/// an option of the table, a case's or a C caller's).
struct WriterEnv {
  /// Strategy "dedicated", compute ranks only: this rank's I/O group — the compute ranks
  /// one I/O rank serves and that I/O rank, last (io_ranks.hpp). Set by the launcher.
  MPI_Comm io_group = MPI_COMM_NULL;
  /// Fault-injection hook for tests: called on every rank at protocol points
  /// ("created", "data_written", "flushed", "marked" (the committed marker flushed),
  /// "indexed" (the index row written), "committed": an exception thrown there is the
  /// writer dying), and inside the step's phases, where an exception is what a failing
  /// write there would be — agreed by every rank, the step abandoned (its group unlinked,
  /// its space given back), the earlier steps kept: "data" (after the data writes),
  /// "statistics" (after the statistics' write, with IoOptions::statistics), "checksums",
  /// "commit" (the flush before the committed marker), "index" (the marker,
  /// before the index row); on rank 0 only, where a failure costs the step nothing:
  /// "view" (the step's VTKHDF view) and "registry" (a branch's line in its parent's
  /// F.branches). A std::system_error(ENOSPC) thrown there reads as a full disk
  /// (FileError no_space). Under "aggregated" the node leaders' writers call it; under
  /// "dedicated" the I/O ranks' (serve_io_ranks' own hook). Empty by default.
  std::function<void(const char* phase)> on_phase;
};

namespace detail {
class Engine;
}  // namespace detail

class Writer {
 public:
  /// Collective. Creates `path` (truncating it) and writes /common. `common.lineage`
  /// marks a branch file; use make_branch_common() to fill it from a parent.
  static Writer create(MPI_Comm comm, const std::string& path, const CommonInfo& common,
                       const IoOptions& options = {}, const WriterEnv& env = {});
  /// Collective. Opens an existing Rewind file to continue writing after a restart.
  /// Uncommitted steps (a crash) are unlinked; new steps must be numbered after the
  /// last committed one.
  static Writer append(MPI_Comm comm, const std::string& path, const IoOptions& options = {},
                       const WriterEnv& env = {});

  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();  ///< closes if still open; never throws (logs to stderr)

  /// Collective. Writes one step: collective creation, one MPI_Allreduce + one MPI_Exscan
  /// for row offsets, one collective exchange of (uid,row) pairs for parent/child rows,
  /// one linear buffer per rank, one collective write per dataset (a union of <= n_levels
  /// hyperslabs), then the crash protocol flush -> committed marker -> flush. Ranks with
  /// no grids take part. Throws FileError (same on all ranks).
  WriteStats write_step(const StepInfo& info, const LocalGrids& grids);

  /// Collective. Under "dedicated" and "aggregated", sizes the hand-off's shared memory for
  /// steps like this one (`info.fields` of `grids`, as write_step would take them) and
  /// touches this rank's part of it now, so the first write_step does not pay for it (as a
  /// collective writer pays for creating its file at create, not at its first step). A
  /// step that needs more later still gets a larger window. With `consume` (dedicated
  /// only), sized for hand_off(info, grids, true, *consume) instead: the steps a consumer
  /// on the I/O ranks will take, halos included. No effect under the other strategies.
  /// Throws FileError (same on all ranks).
  void prepare(const StepInfo& info, const LocalGrids& grids, const std::vector<FieldSpec>* consume = nullptr);

  /// Collective. Memory for the arrays of the next step, owned by the writer: what ADIOS2
  /// offers as Put(span) and Damaris as damaris_alloc, for a code that computes its output
  /// there instead of in arrays of its own. Returns `like`'s grids (records, block) with
  /// halo 0, whose fields[f.slot] for info.fields (and cell_type, if info.write_cell_type)
  /// point at interiors for the caller to fill (x fastest, as GridRecord's arrays);
  /// write_step(info, span) then takes them as they are. Under "dedicated" and
  /// "aggregated" they lie in the hand-off's shared memory, so handing the step over costs
  /// a message, not a copy (WriteStats::handoff.copied_bytes 0); under the other strategies, a
  /// buffer of the writer's, reused from step to step. Waits for a free slot as write_step
  /// would (steps_in_flight); the next write_step's wait_seconds includes that wait. The
  /// span is valid until the next write_step or hand_off, which must get the same
  /// info.fields and write_cell_type; the caller must not touch it afterwards (the I/O
  /// ranks may still be writing from it). Throws FileError (same on all ranks).
  LocalGrids span(const StepInfo& info, const LocalGrids& like);

  /// Collective. Strategy "dedicated" only: hands the step to the I/O ranks' StepConsumer
  /// (io_ranks.hpp), which sees `consume` (names and GridRecord::fields slots) as the
  /// step's fields with their halos (the padded arrays, one copy each); if `write`, the I/O
  /// ranks also write it as write_step() would (info.fields, from the same copy; the file
  /// is the same as from an interior-only hand-off), else they do not write it and
  /// info.fields are ignored. Such a step counts against steps_in_flight like any other.
  /// Throws FileError under any other strategy (invalid_argument) and as write_step.
  WriteStats hand_off(const StepInfo& info, const LocalGrids& grids, bool write, const std::vector<FieldSpec>& consume);
  /// Strategy "dedicated": true once the I/O ranks have said that no StepConsumer takes
  /// further steps (a hook that failed, or none given to serve_io_ranks), as learnt from
  /// their replies to the steps: every compute rank learns it at the same call. False
  /// before the first reply and under the other strategies (nothing declined: there is no
  /// consumer to ask, and hand_off throws).
  [[nodiscard]] bool consumer_declined() const;

  /// Collective. Flushes and closes. Further calls throw.
  void close();
  /// Collective. Returns once every step handed to the ranks that write them
  /// ("dedicated", "aggregated") is written; throws the first one's FileError (the same
  /// on all ranks). A no-op where this rank writes (write_step returns once written).
  void settle();

  [[nodiscard]] const std::string& path() const;
  [[nodiscard]] const CommonInfo& common() const;
  /// Step number of the last committed step in this file, or -1.
  [[nodiscard]] std::int64_t last_step() const;

 private:
  // kernel/src/write/engine.hpp: one engine per strategy family, chosen at create / append
  // (in place: auto, collective, independent; forwarded: aggregated, dedicated).
  explicit Writer(std::unique_ptr<detail::Engine> engine);
  detail::Engine& engine() const;
  std::unique_ptr<detail::Engine> engine_;
};

/// Unmaps the linear write buffer kept for the next step (IoOptions::keep_buffer) and the
/// statistics' message memory, e.g. before a memory-hungry phase. Not collective; never
/// needed for correctness.
void release_kept_write_buffer();

}  // namespace rwd::kernel

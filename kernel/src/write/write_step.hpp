// Private: the in-place engine's state (engine.hpp) and the phases of its write_step, one
// file each.
//
//   writer.cpp      create / append a file (and Writer, the engines' façade)
//   write_step.cpp  the phases in order; validation, offsets, creation (phases 1, 2, 4)
//   data_plan.cpp   what phase 4 creates and how each dataset is written (pure)
//   links.cpp       parent and child rows from one exchange of (uid, row) pairs (3)
//   write_data.cpp  the linear buffer, packing, zero copy, early writeback (5)
//   statistics.cpp  the fields' per-grid statistics, taken while phase 5's data go to the disk (5)
//   commit.cpp      flush -> committed marker + index row -> flush (6)
//   row_layout.cpp  where each grid's row lands (pure; used by 2 and 3)
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "write/data_plan.hpp"
#include "format/format.hpp"
#include "rewind/mpi/comm.hpp"
#include "io/h5util.hpp"
#include "format/row_layout.hpp"
#include "rewind/kernel/step_lock.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel {

namespace detail {

constexpr int kHashAnyCpu = -1;  ///< WriterState::hash_cpu: an unpinned helper
constexpr int kHashInline = -2;  ///< WriterState::hash_cpu: the writing thread, chunk by chunk

/// Writer's state: the open file, its communicators and settings.
struct WriterState {
  mpi::Comm comm;  ///< the writer's duplicate of the caller's communicator
  int rank = 0, size = 1;
  std::string path;
  CommonInfo common;
  IoOptions opts;
  std::function<void(const char*)> on_phase;  ///< WriterEnv::on_phase
  h5::Ctx ctx;
  h5::File file;
  h5::Plist dxpl_coll;   ///< bulk transfers: collective unless IoOptions::collective_transfer is off
  h5::Plist dxpl_indep;  ///< independent transfers (strategy "auto", large row runs)
  std::int64_t last_step = -1;
  bool helper_threads = false;  ///< MPI_THREAD_FUNNELED or more: helpers may exist
  bool one_cpu = false;         ///< bound to one CPU (mpirun's default for ranks <= cores):
                                ///< a helper thread takes the writer's own CPU time
  int hash_cpu = kHashInline;   ///< where zero-copy rows are hashed as they are written
                                ///< (write_hashing): a CPU number (a bound rank's spare CPU,
                                ///< IoOptions::spare_cpus), kHashAnyCpu (a helper the scheduler
                                ///< places: the node has CPUs to spare) or kHashInline
  mpi::Comm node_comm;          ///< the ranks sharing this node (and page cache)
  int node_size = 1;
  bool early_writeback = false;     ///< the node leader starts writeback after each dataset
  int writeback_fd = -1;            ///< node leader only: descriptor for sync_file_range, or -1
  std::vector<double> span_memory;  ///< Writer::span's arrays (doubles: aligned for any of them)
  /// The step group write_step created and has not committed ("" otherwise), and its
  /// datasets' paths: what abandon_step removes and whose bytes it gives back.
  std::string open_step;
  std::vector<std::string> open_datasets;
  /// Room held past the file's end for the step being written (reserve_room), or {0, 0}.
  std::pair<std::int64_t, std::int64_t> reserved{0, 0};
  bool failed = false;  ///< a step failed: a failing close is expected, not reported again

  void hook(const char* phase_name) const {
    if (on_phase) on_phase(phase_name);
  }
  void open_common(MPI_Comm c, const std::string& p, const IoOptions& o, const WriterEnv& env);
  void open_writeback();
  void flush() const;
  ~WriterState();  ///< closes the file (errors reported, not thrown); the communicators free themselves
};

/// Rank 0 keeps readers that follow the file out while the file's metadata changes (a
/// lock no other rank takes; step_lock.hpp), waiting a bounded time for them.
StepLock readers_out(const WriterState& w);
/// A group or dataset name a step may use: not empty, no '/', '.' or ' '.
bool valid_name(const std::string& n);

/// This rank's grids in the step: their order, rows and links.
class StepStatistics;  // write/statistics.hpp

struct StepRows {
  std::vector<std::size_t> perm;  ///< local order (row_layout.hpp)
  RowLayout layout;
  std::vector<std::int64_t> parent_row;  ///< by local order; -1 for the root
  std::vector<int> parent_rank;          ///< by local order: the rank writing the parent; -1 for the root
  std::vector<std::int64_t> child_rows;  ///< by local order × max_children; -1 unused
};

/// Collective. Fills rows.parent_row and rows.child_rows: one Allgatherv of every rank's
/// (uid, row) pairs, then each rank resolves its own links. Returns "" or what is wrong
/// with the tree (the same on every rank is not required: the caller agrees).
std::string exchange_links(MPI_Comm comm, int max_children, const LocalGrids& grids, StepRows& rows);

struct DataStats {
  std::int64_t buffer_bytes = 0;
  bool buffer_reused = false;
  std::int64_t writeback_datasets = 0;
  bool all_collective = true;
  /// With DataPlan::checksums: the hash of each local row (local order) of each
  /// dataset, row-major (nloc, datasets.size()).
  std::vector<std::uint64_t> checksums;
};

/// Collective. Writes every dataset of the step (created, in `dsets`) from the grids but
/// the statistics and shares (write_statistics). `stats` (null: none): the step's
/// statistics, each grid's taken as its field's rows are read to be hashed or packed.
DataStats write_data(WriterState& w, const StepInfo& info, const LocalGrids& grids, const StepRows& rows,
                     const DataPlan& plan, const std::vector<h5::Dataset>& dsets, const std::string& gpath,
                     StepStatistics* stats);

/// Collective, after write_data, for a plan with statistics: takes those write_data's
/// visits did not, exchanges the remote children's shares (their per-octant shares come
/// back), writes the small statistics and shares datasets and puts their rows' hashes in
/// `written` (the commit's flush makes data and statistics durable before the marker).
void write_statistics(WriterState& w, const DataPlan& plan, const StepRows& rows, StepStatistics& stats,
                      const std::vector<h5::Dataset>& dsets, const std::string& gpath, DataStats& written);

/// Collective, before a step with compressed datasets is created: rank 0 holds room for
/// all of its bytes past the file's end (fallocate, the file's size unchanged), so that
/// HDF5's filtered write — which leaves its metadata cache unusable when a write fails —
/// does not meet a full disk. Throws FileError(no_space) on every rank, with nothing
/// changed, when the file system has not that room; does nothing where it cannot tell
/// (fallocate not supported) or for a step stored as it is.
void reserve_room(WriterState& w, const DataPlan& data);
/// Collective (no communication): gives back what reserve_room held and the step did
/// not use, and HDF5's free space in the file (it holds nothing).
void release_room(WriterState& w);
/// Rank 0, once every rank closed the file: gives back what file systems keep past a
/// file's end until its size is set (ext4), by setting it to what it is.
void close_room(const std::string& path);

/// Collective (every rank with the same error `e`, as write_step throws it): after a
/// failed step, unlinks its uncommitted group (so the file holds its committed steps
/// only, and the next step can take the number), gives its bytes back to the file system
/// (hole punching, where supported) and flushes, best effort. Returns the error to
/// throw: `e` — as FileError(no_space) when the file system is full although the error
/// text did not say so — beginning "step N (t = T) not written: " for a failed write.
FileError abandon_step(WriterState& w, const StepInfo& step, const FileError& e);

/// Collective. The crash protocol: flush, mark the step committed, flush, append its
/// index row, flush. Closes the step's objects before the last flush.
void commit_step(WriterState& w, const IndexRow& row, h5::Group& step_group, std::vector<h5::Dataset>& dsets);

/// For Writer::append after a crash: how the index's tail is made to agree with the step
/// groups, which are the authority (docs/file-format.md §5). Rows at its end that list a
/// step no group commits (a commit torn by a writer before format 1.7's protocol) go
/// (`keep` of `rows` stay); committed steps after its last row (a writer stopped between
/// a step's marker and its index row) get rows from their attributes (`added`).
struct IndexRepair {
  std::size_t rows = 0, keep = 0;
  std::vector<IndexRow> added;
  [[nodiscard]] bool needed() const { return keep != rows || !added.empty(); }
};
/// Reads the index (local); `committed`: the file's committed steps.
IndexRepair plan_index_repair(const WriterState& w, const std::vector<StepEntry>& committed);
/// Collective: applies a repair the same on every rank (flush after it).
void repair_index(WriterState& w, const IndexRepair& r);

}  // namespace detail
}  // namespace rwd::kernel

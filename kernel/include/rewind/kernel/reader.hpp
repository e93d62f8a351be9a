// Read-only access to a Rewind HDF5 file: steps, topology, cell data of any rows.
//
// A Reader never opens a file for writing. Two modes:
// - Reader::open(path): serial (HDF5 sec2 driver), needs no MPI at all. For tools,
//   `rewind info`, offline traversals, tests.
// - Reader::open(path, comm): collective (MPI-IO driver) over `comm`. read_rows and
//   read_cell_types are then collective: every rank calls them, each with its own rows
//   (possibly none), and the transfer is collective. All other calls are local.
//
// The same topology + row-read API serves restart (each rank reads the rows it owns
// after repartitioning, see partition_rows) and an offline sliding-window traversal
// (walk child_rows from row 0, read only the visited rows).
//
// Errors: FileError naming the file and the problem (see error.hpp); in collective
// mode every rank throws the same error kind.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/metadata.hpp"

namespace rwd::kernel {

/// The tree of one step as a file stores it, one entry per row (row i = the same grid
/// in every dataset). Not spacetree::Topology, the live tree with its neighbour queries.
struct StepTopology {
  std::int64_t n_grids = 0;
  int max_children = 0;
  std::vector<std::uint64_t> uid;
  std::vector<std::uint64_t> sort_key;
  std::vector<std::int32_t> level;
  std::vector<std::int32_t> rank;            ///< the rank that computed the grid (informational)
  std::vector<std::uint64_t> parent_uid;
  std::vector<std::int64_t> parent_row;      ///< -1 for the root
  std::vector<std::uint64_t> child_uids;     ///< n_grids * max_children, kNoUid = none
  std::vector<std::int64_t> child_rows;      ///< n_grids * max_children, -1 = none
  std::vector<BoxRow> bbox;
  std::vector<std::int64_t> level_offsets;   ///< rows [off[l], off[l+1]) are level l
  [[nodiscard]] int n_levels() const { return static_cast<int>(level_offsets.size()) - 1; }
};
/// Some rows of a step's tree (Reader::read_topology_rows): entry i of every array (row i
/// of child_rows) is row rows[i] of the step.
struct TopologyRows {
  std::vector<std::int64_t> rows;        ///< ascending, distinct
  std::vector<std::uint64_t> uid;
  std::vector<std::int32_t> level;
  std::vector<std::int64_t> child_rows;  ///< rows.size() * max_children, -1 = none
  std::vector<BoxRow> bbox;
};
namespace detail {
struct ReaderState;
}  // namespace detail

class Reader {
 public:
  /// Serial open, read-only, no MPI needed. Validates the format name and version.
  static Reader open(const std::string& path);
  /// Collective open over `comm`, read-only.
  static Reader open(const std::string& path, MPI_Comm comm);

  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader();

  [[nodiscard]] const std::string& path() const;
  [[nodiscard]] const CommonInfo& common() const;
  /// Format version stored in the file {major, minor}.
  [[nodiscard]] std::pair<int, int> format_version() const;
  /// Bytes the file lacks at its end (0: whole). A truncated file (a copy cut short, a
  /// writer killed while the file grew) is opened all the same: what is missing reads as
  /// zeros, so every read of a step that reaches into it fails its checksums (or HDF5's
  /// metadata checks) naming the step, and the intact steps read, verify and restart as
  /// ever.
  [[nodiscard]] std::int64_t bytes_missing() const;

  /// Steps in time order. committed_only: only steps whose committed marker is set
  /// (the only ones restart may use); else every step group, a damaged one (the index
  /// lists it as committed, its group cannot be read or says otherwise) with
  /// StepEntry::damage set.
  [[nodiscard]] std::vector<StepEntry> steps(bool committed_only = true) const;
  /// The committed steps and the damaged ones (StepEntry::damage), in step order: what a
  /// selector chooses among (find_step, select_step), so that none passes over damage.
  [[nodiscard]] std::vector<StepEntry> selectable_steps() const;
  /// A committed step by selector: "latest", a step number "42", "#i" (i-th committed
  /// step, negative counts from the end), or "t=0.5" (the last step with time <= 0.5:
  /// the step in force at that time). The one rule for every command and the ParaView
  /// plugin. Throws FileError(no_such_step) for a malformed selector ("#", "t=", "t=x")
  /// or one that matches nothing (t before the first step, an index out of range, t
  /// after the last committed step: a time not reached, whose step is not known yet).
  /// A selector that lands on a damaged committed step (StepEntry::damage), or may (t=T
  /// just after one: its time is not known), throws FileError(corrupt) naming it and the
  /// last intact step before it, never choosing another step (docs/file-format.md §5).
  [[nodiscard]] StepEntry find_step(const std::string& selector) const;
  /// The step with this step number; committed unless allow_uncommitted. A damaged step
  /// throws FileError(corrupt) naming it.
  [[nodiscard]] StepEntry step(std::int64_t step_number, bool allow_uncommitted = false) const;

  /// The tree of a step (small: ~150 bytes per grid). Local (each rank reads it).
  [[nodiscard]] StepTopology read_topology(std::int64_t step) const;
  /// A step's level offsets alone (rows [off[l], off[l+1]) are level l; n_levels + 1
  /// entries), checked against their checksum and the step's grid count. Local.
  [[nodiscard]] std::vector<std::int64_t> read_level_offsets(std::int64_t step) const;
  /// The tree entries (uid, level, child rows, bbox) of `rows` only (ascending, distinct,
  /// in range; else FileError(invalid_argument)), checked against their row checksums
  /// and child rows range-checked as read_topology does: for walks that visit a few rows
  /// of a big step (a window, rewind/window/kernel_view.hpp), whose cost then follows the
  /// rows visited, not the step. Local.
  [[nodiscard]] TopologyRows read_topology_rows(std::int64_t step, const std::vector<std::int64_t>& rows) const;
  /// Whether a step stores the per-grid statistics of cell_data variable `var`
  /// (statistics/<var>, format 1.9; docs/file-format.md §3 "Statistics"). Local.
  [[nodiscard]] bool has_statistics(std::int64_t step, const std::string& var) const;
  /// Rows `rows` (ascending, distinct, in range; else FileError(invalid_argument)) of
  /// statistics/<var>: {min, max, detail} each, checked against their row checksums
  /// (FileError(corrupt)), the detail finite and >= 0. Its cost follows the rows asked
  /// for, as read_topology_rows'. Local.
  [[nodiscard]] std::vector<std::array<double, 3>> read_statistics_rows(std::int64_t step, const std::string& var,
                                                                        const std::vector<std::int64_t>& rows) const;
  /// Whether a step stores each grid's per-octant shares of its parent's detail for
  /// cell_data variable `var` (shares/<var>, format 1.10; docs/file-format.md §3
  /// "Statistics": only with the statistics, and only where every refined axis's cell
  /// count is divisible by 4). Local.
  [[nodiscard]] bool has_shares(std::int64_t step, const std::string& var) const;
  /// Rows `rows` (ascending, distinct, in range; else FileError(invalid_argument)) of
  /// shares/<var>: rows.size() × max_children values, row after row; value o of a row is
  /// the L2 norm over the grid's cells in its octant o of the grid's values minus its
  /// parent's cells covering them (0 for the root). Checked against their row checksums
  /// (FileError(corrupt)); a share that is negative or not finite is refused the same
  /// way, naming the dataset, the row and the value. Its cost follows the rows asked for.
  /// Local.
  [[nodiscard]] std::vector<double> read_shares_rows(std::int64_t step, const std::string& var,
                                                     const std::vector<std::int64_t>& rows) const;
  /// Cell-data datasets present in a step (not the statistics nor the shares, which hold no cells).
  [[nodiscard]] std::vector<FieldInfo> fields(std::int64_t step) const;
  /// What a step's cell-data datasets hold (elements x element size) and what they take
  /// on disk after the compression filters (HDF5's storage size); equal without them.
  struct Storage {
    std::int64_t data = 0, stored = 0;
  };
  [[nodiscard]] Storage cell_data_storage(std::int64_t step) const;

  /// Reads `<group>/<name>` of the given rows (any order, any subset) into `out`:
  /// rows.size() * cells doubles (interior, x fastest), row after row in the order
  /// given. float32 datasets are converted. Collective in collective mode.
  void read_rows(std::int64_t step, const std::string& group, const std::string& name,
                 const std::vector<std::int64_t>& rows, double* out) const;
  /// A cell dataset by name, for read_fields.
  struct FieldRef {
    std::string group, name;
  };
  /// read_rows of several datasets at once (outs[i] receives fields[i]): one agreement
  /// between ranks for all of them instead of one per dataset, so with large row runs
  /// (independent transfers) no rank waits for the others between datasets. Restart
  /// reads use it. Collective in collective mode.
  void read_fields(std::int64_t step, const std::vector<FieldRef>& fields, const std::vector<std::int64_t>& rows,
                   const std::vector<double*>& outs) const;
  /// read_fields straight into the caller's padded arrays: dest[f][i] is the array (with
  /// `halo` ghost layers, the LocalGrids layout) that receives fields[f] of rows[i]; ghosts
  /// are left alone. With a collective reader and the kernel's contiguous float64
  /// datasets, each rank reads its rows past the page cache (O_DIRECT, Linux AIO: four
  /// 4 MiB chunks of rows adjacent in the file in flight, into aligned buffers, each row
  /// then copied or, for halo'd arrays, unpacked into its array), so the disk keeps
  /// reading while the calling thread checks and places the chunk that landed. Where the
  /// file system refuses O_DIRECT, where most of a dataset's rows are in the page cache
  /// already (a step written moments ago), or with REWIND_READ_DIRECT=0 in the
  /// environment, independent MPI-IO reads go through the page cache instead: straight
  /// into halo-free arrays (4 MiB calls along runs adjacent in the file and in memory;
  /// without checksums one call per run), through a 4 MiB bounce buffer for halo'd ones.
  /// A serial reader reads through a buffer. Rows with checksums are verified as each
  /// chunk lands, on the calling thread (no helper thread, any thread level). Collective.
  void read_fields_into(std::int64_t step, const std::vector<FieldRef>& fields, const std::vector<std::int64_t>& rows,
                        const std::vector<std::vector<double*>>& dest, int halo) const;
  /// Same for cell_type (uint8).
  void read_cell_types(std::int64_t step, const std::vector<std::int64_t>& rows,
                       std::uint8_t* out) const;

  /// What verify_step found.
  struct Verification {
    std::int64_t datasets = 0;          ///< datasets with checksums (0: the step has none)
    std::int64_t rows = 0;              ///< rows checked, all datasets
    /// One entry per damaged dataset of the step: its path in the step group ("cell_data/u",
    /// "level_offsets", "checksums"), how many of its rows do not match their checksums
    /// (0 when the dataset as a whole is damaged: unreadable, or not matching its whole-
    /// dataset checksum), and one line saying what is wrong.
    struct Damage {
      std::string dataset;
      std::int64_t rows = 0;
      std::string problem;
    };
    std::vector<Damage> damaged;
    std::vector<std::string> problems;  ///< one line per row that does not match (step, dataset, row)
    /// What the step's format cannot prove, once per kind: "row checksums" (before 1.4,
    /// or written with checksums = false), "level_offsets" (before 1.6).
    std::vector<std::string> uncovered;
  };
  /// Reads every row of every dataset of a step that has checksums (format 1.4) and
  /// compares it with its stored checksum; checks the step's topology as a restart and a
  /// window read it (level_offsets against its checksum, format 1.6, and the links). A
  /// dataset that cannot be read is damage, not an error. Local (reads serially on this
  /// rank); throws only if the step itself cannot be found or read. Every read of cell
  /// data (read_rows, read_fields, read_fields_into, read_cell_types) verifies the rows
  /// it returns the same way and throws FileError(corrupt) naming the step, dataset and
  /// row; read_topology checks level_offsets.
  [[nodiscard]] Verification verify_step(std::int64_t step) const;

  /// A disagreement between /simulation/index and the step groups: `step` (-1 when the
  /// index itself cannot be read) and one line.
  struct IndexProblem {
    std::int64_t step = -1;
    std::string problem;
  };
  /// Every way the index and the steps disagree, each of which is damage: an index row
  /// for a step whose group is missing, cannot be read or is not committed, or whose
  /// time, dt, kind, n_grids, n_levels or bytes differ from the step's attributes; a
  /// committed step the index does not list (but the last committed step when it is after
  /// every listed one: a writer stopped between its marker and its index row, format 1.7
  /// §5, which Writer::append completes); a step group HDF5 cannot read (a damaged
  /// object header: Reader::steps counts such a step as not committed). A step group
  /// that merely lacks attributes and is not in the index (a writer killed while
  /// creating it) is not a problem. Local.
  [[nodiscard]] std::vector<IndexProblem> check_index() const;

 private:
  using Impl = detail::ReaderState;  // kernel/src/read/reader_state.hpp: the open file and its settings
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The rule of find_step("t=T"): the index of the last of `times` (ascending) at or
/// before `t` (within a relative 1e-12, so a time printed and parsed back still finds its
/// step), or -1 if every time is later. Pure. Also picks a step on a branch's continuous
/// timeline (lineage.hpp: timeline()), so the ParaView plugin and the kernel share it.
/// `times` points at `n` values (C++17: no std::span in the kernel's headers).
std::ptrdiff_t index_at_or_before(const double* times, std::size_t n, double t);
inline std::ptrdiff_t index_at_or_before(const std::vector<double>& times, double t) {
  return index_at_or_before(times.data(), times.size(), t);
}

/// Reader::find_step's rule over a list: the step `selector` names among `committed`
/// (a file's committed steps, ascending by step, damaged ones among them as
/// Reader::selectable_steps lists them). Pure; throws FileError(no_such_step), or
/// FileError(corrupt) for a damaged step, naming `file` as find_step does. An in-job branch resolves its selector with
/// it before the run's pending checkpoint is in the file.
StepEntry select_step(const std::vector<StepEntry>& committed, const std::string& selector, const std::string& file);

/// The checkpoint a restart at `selector` takes among `committed` (as select_step's):
/// "latest" the last checkpoint; "t=T" the last checkpoint at or before the step in force
/// at T; a step number or #i must name a checkpoint. `note` (if not null) receives one
/// line when the checkpoint is not exactly what was asked for (t=T between outputs, or
/// on a visualisation step), else "". The one rule of `rewind run --restart FILE@SEL`,
/// the C API's rewind_reader_find_checkpoint and Fortran's. A choice that lands on or
/// passes over a damaged step throws FileError(corrupt) naming it; no such checkpoint,
/// FileError(no_such_step) naming the checkpoints there are. Pure.
StepEntry select_checkpoint(const std::vector<StepEntry>& committed, const std::string& selector,
                            const std::string& file, std::string* note = nullptr);

/// Splits "FILE[@STEP]" at the last '@' into {file, selector}; the selector (for
/// Reader::find_step) is "latest" when absent. Pure.
std::pair<std::string, std::string> split_step_spec(const std::string& spec);

/// For a "t=T" selector whose step is not at T: one line saying which step stands for
/// it (T is not an output time: the step in force then), for the commands to print as a
/// note. "" when the step is at T, or for other selectors. Pure.
std::string time_selector_note(const std::string& selector, const StepEntry& chosen);

/// Restart partition: the rows `rank` of `nranks` should own. Splits the grids into
/// nranks contiguous pieces of the (level-major, curve-ordered) row list within every
/// level, so each rank gets <= n_levels contiguous row ranges and about
/// n_grids/nranks grids. Pure function; any other partition works with read_rows too.
std::vector<std::int64_t> partition_rows(const StepTopology& topo, int rank, int nranks);

/// Copies packed interior cells (as read_rows returns them) of one grid into a padded
/// array with `halo` ghost layers (ghosts untouched).
void unpack_interior(const double* packed, const BlockShape& block, int halo, double* padded);
void unpack_interior(const std::uint8_t* packed, const BlockShape& block, int halo,
                     std::uint8_t* padded);

/// CommonInfo for a branch file: the parent's constants with lineage pointing at
/// (parent file, step) and the list of changed settings. The caller then applies the
/// changes to the returned constants. Serial, read-only on the parent.
CommonInfo make_branch_common(const Reader& parent, std::int64_t parent_step,
                              const std::vector<std::string>& changes);
/// The same for a step given by its entry, which need not be in the parent yet (an
/// in-job branch checks its plan before the run checkpoints the step it branches from).
CommonInfo make_branch_common(const Reader& parent, const StepEntry& parent_step,
                              const std::vector<std::string>& changes);

}  // namespace rwd::kernel

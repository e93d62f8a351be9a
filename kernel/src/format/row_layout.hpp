// Private: where each grid's row lands in a step's datasets. Pure: no MPI, no HDF5.
//
// A step's rows are ordered by (level, sort_key, uid); the ranks' grids of one level
// are consecutive in rank order (their sort keys follow the space-filling curve the
// partition cut). Writer::write_step gathers the per-level counts (Allreduce, Exscan)
// and calls these functions with them; the tests call them with hand-made counts.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "rewind/kernel/grids.hpp"

namespace rwd::kernel::detail {

/// Rows [start, start + count) of a dataset whose first dimension is rows.
struct RowRun {
  std::int64_t start = 0, count = 0;
  bool operator==(const RowRun&) const = default;
};

/// Two-phase collective buffering pays only for small interleaved pieces; for runs of
/// whole grids it shuffles every byte through the aggregators (2.5-4x slower restart reads
/// on 4 ranks; 1.1-4x slower page-cache writes, docs/benchmarks.md). Row runs at least
/// this long on average are read, and under strategy "auto" written, with independent
/// transfers: ROMIO's romio_cb_write = automatic makes the same choice for accesses that
/// do not interleave.
constexpr std::int64_t kIndependentRunBytes = 64 * 1024;

/// Runs of consecutive rows, in the order given.
std::vector<RowRun> runs_of(const std::vector<std::int64_t>& rows);

/// The runs sorted by start, adjacent ones merged (several ranks' runs of one node).
std::vector<RowRun> merge_runs(std::vector<RowRun> runs);

/// The local write order: indices into `grids`, sorted by (level, sort_key, uid).
std::vector<std::size_t> local_order(const std::vector<GridRecord>& grids);

/// The rows of one rank's grids.
struct RowLayout {
  std::vector<std::int64_t> level_start;  ///< first row of each level, then the total (size levels + 1)
  std::int64_t n_grids = 0;               ///< rows in the step, all ranks
  int n_levels = 0;                       ///< 1 + the finest level that has a grid
  std::vector<std::int64_t> row_of;       ///< row of the k-th grid in local order
  std::vector<RowRun> runs;               ///< row_of as runs, in local order
};

/// `levels`: each grid's level, in local order (ascending). `total[l]`: grids on level l,
/// all ranks; `before[l]`: grids on level l of the ranks before this one. Both of size
/// max_levels.
RowLayout assign_rows(const std::vector<int>& levels, const std::vector<std::int64_t>& total,
                      const std::vector<std::int64_t>& before);

/// Rows by uid, from every rank's (uid, row) pairs.
class RowLookup {
 public:
  explicit RowLookup(std::vector<std::pair<std::uint64_t, std::int64_t>> pairs);
  /// A uid listed twice, if any.
  std::optional<std::uint64_t> duplicate() const;
  /// The row of `uid`; nullopt if no rank has it.
  std::optional<std::int64_t> find(std::uint64_t uid) const;

 private:
  std::vector<std::pair<std::uint64_t, std::int64_t>> sorted_;
};

}  // namespace rwd::kernel::detail

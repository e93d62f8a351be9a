// Private: phase 4's plan of a step's datasets (write_step.hpp), pure: from counts every
// rank shares, the datasets to create and how each is written — its storage (contiguous,
// or chunked through a filter), whether its rows are hashed, written zero copy from the
// grids' arrays, or with independent transfers. Every rank computes the same plan, so all
// take the same path with no message. tests/kernel/test_data_plan.cpp checks it.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compression/compression.hpp"
#include "rewind/kernel/metadata.hpp"
#include "rewind/kernel/options.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel::detail {

/// One dataset of a step.
struct DatasetPlan {
  std::string path;
  hid_t file_type;
  hid_t mem_type;
  std::vector<hsize_t> shape;  ///< full file shape
  std::size_t elem_bytes;
  std::int64_t per_row;  ///< elements per row
};

/// What the plan depends on: the step's counts after phase 2, the same on every rank
/// except `n_local` and `rank0`.
struct StepCounts {
  std::int64_t n_grids = 0;  ///< grids of the step, all ranks
  std::int64_t n_local = 0;  ///< this rank's grids
  int n_levels = 0;
  int levels_used = 0;    ///< levels that hold grids
  int ranks = 1;          ///< ranks writing the step
  bool rank0 = true;      ///< this rank writes level_offsets
  bool halo_free = true;  ///< no rank's arrays have a halo: each array is exactly its row
};

/// The datasets a step writes, and how.
struct DataPlan {
  std::vector<DatasetPlan> datasets;
  std::size_t first_field = 0;          ///< datasets[first_field + i] is StepInfo::fields[i]
  /// datasets[first_statistics + j] is statistics/<name>, the per-grid statistics of
  /// StepInfo::fields[statistics_of[j]]: every field of group cell_data (IoOptions::statistics,
  /// where the block's refinement gives them a meaning: refinement_of). None: first_statistics
  /// is datasets.size().
  std::size_t first_statistics = 0;
  std::vector<std::size_t> statistics_of;
  /// datasets[first_shares + j] is shares/<name>, the per-octant shares of the same field
  /// as datasets[first_statistics + j] (Refinement::shares: where every refined axis's cell
  /// count is divisible by 4). None: first_shares is datasets.size(); the statistics are
  /// datasets [first_statistics, first_shares).
  std::size_t first_shares = 0;
  std::vector<Storage> storage;         ///< contiguous, or chunked through a filter
  std::vector<char> direct;             ///< written zero-copy from the grids' arrays (after
                                        ///< creation: only those with a file offset)
  std::vector<char> independent;        ///< written with independent transfers (strategy
                                        ///< "auto": large row runs, not filtered)
  std::vector<std::int64_t> direct_at;  ///< their file offsets (allocated at creation)
  bool checksums = false;               ///< hash rows (IoOptions::checksums) ...
  std::vector<char> hashed;             ///< ... of these datasets (not of lossy ones)
  std::int64_t n_hashed = 0;            ///< columns of the checksum table
  std::int64_t bytes = 0;               ///< the step's bytes, all ranks (attribute `bytes`)
  std::int64_t bytes_local = 0;         ///< of them, this rank's
};

/// The plan of a step of `info` in a file of `block` and `max_children` written with
/// `opts` (after Strategy::independent turned collective_transfer off). `double_as_is`:
/// the host's double is the file's (IEEE little-endian), so a double array is its row.
/// Pure.
DataPlan plan_data(const StepCounts& counts, const StepInfo& info, const IoOptions& opts, const BlockShape& block,
                   int max_children, bool double_as_is);

}  // namespace rwd::kernel::detail

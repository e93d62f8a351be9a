// Phase 4's plan (data_plan.hpp): pure.
#include "write/data_plan.hpp"

#include <algorithm>

#include "format/row_layout.hpp"
#include "write/statistics.hpp"

namespace rwd::kernel::detail {

namespace {

/// The datasets of a step, in the file's order: the topology, cell_type, the fields, their
/// statistics, their shares.
void list_datasets(DataPlan& data, const StepCounts& n, const StepInfo& info, const IoOptions& o, const BlockShape& blk,
                   int nc) {
  const auto rows = static_cast<hsize_t>(n.n_grids);
  const std::vector<hsize_t> row_shape{rows};
  const std::vector<hsize_t> cell_shape{rows, static_cast<hsize_t>(blk.sz), static_cast<hsize_t>(blk.sy),
                                        static_cast<hsize_t>(blk.sx)};
  const std::vector<hsize_t> child_shape{rows, static_cast<hsize_t>(nc)};
  const std::int64_t cells = blk.cells();
  data.datasets = {
      {"uid", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"sort_key", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"level", H5T_STD_I32LE, H5T_NATIVE_INT32, row_shape, 4, 1},
      {"rank", H5T_STD_I32LE, H5T_NATIVE_INT32, row_shape, 4, 1},
      {"parent_uid", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"parent_row", H5T_STD_I64LE, H5T_NATIVE_INT64, row_shape, 8, 1},
      {"child_uids", H5T_STD_U64LE, H5T_NATIVE_UINT64, child_shape, 8, nc},
      {"child_rows", H5T_STD_I64LE, H5T_NATIVE_INT64, child_shape, 8, nc},
      {"bounding_box", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {rows, 6}, 8, 6},
  };
  auto& plan = data.datasets;
  if (info.write_cell_type) plan.push_back({"cell_type", H5T_STD_U8LE, H5T_NATIVE_UINT8, cell_shape, 1, cells});
  data.first_field = plan.size();
  for (const auto& f : info.fields)
    plan.push_back({f.group + "/" + f.name, f.float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                    f.float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, cell_shape, f.float32 ? 4u : 8u, cells});
  data.first_statistics = plan.size();
  if (o.statistics && refinement_of(blk, nc).ok)
    for (std::size_t i = 0; i < info.fields.size(); ++i)
      if (info.fields[i].group == kCellData) {
        plan.push_back(
            {std::string(kStatistics) + "/" + info.fields[i].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {rows, 3}, 8, 3});
        data.statistics_of.push_back(i);
      }
  data.first_shares = plan.size();
  if (refinement_of(blk, nc).shares)  // statistics_of is empty without statistics
    for (const std::size_t i : data.statistics_of)
      plan.push_back(
          {std::string(kShares) + "/" + info.fields[i].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, child_shape, 8, nc});
}

/// Storage of each dataset (IoOptions::compression, visualisation_compression): cell
/// datasets may be chunked and filtered; zfp (lossy) only for a visualisation step's
/// fields. An all-empty step stays contiguous (no chunk of zero rows). Rows of lossy
/// datasets read back different values: they have no row checksum (HDF5's Fletcher-32
/// checks their chunks instead).
void choose_storage(DataPlan& data, const StepCounts& n, const StepInfo& info, const IoOptions& o) {
  const std::size_t count = data.datasets.size();
  data.storage.assign(count, Storage::contiguous);
  const std::size_t first_cell = info.write_cell_type ? data.first_field - 1 : data.first_field;
  if (n.n_grids > 0)
    for (std::size_t d = first_cell; d < data.first_statistics; ++d) {
      if (d >= data.first_field && info.kind == StepKind::visualisation && o.visualisation_compression == Codec::zfp)
        data.storage[d] = Storage::zfp;
      else if (o.compression != Codec::none) data.storage[d] = Storage::lossless;
    }
  data.checksums = o.checksums;
  data.hashed.assign(count, data.checksums ? 1 : 0);
  for (std::size_t d = 0; d < count; ++d)
    if (data.storage[d] == Storage::zfp) data.hashed[d] = 0;
  data.n_hashed = data.checksums ? static_cast<std::int64_t>(std::count(data.hashed.begin(), data.hashed.end(), 1)) : 0;
}

/// Zero-copy candidates (IoOptions::zero_copy): cell datasets whose every array already
/// is the grid's row, byte for byte (no halo on any rank, the file's element type).
/// Halo'd arrays only with collective transfers: ROMIO's independent write of a subarray
/// memory type issues one pwrite per interior row (30 s instead of 3 s for 1.1 GiB).
/// Filtered datasets never: HDF5 filters the chunks, there is no file offset to write at.
void choose_direct(DataPlan& data, const StepCounts& n, const StepInfo& info, const IoOptions& o, bool double_as_is) {
  data.direct.assign(data.datasets.size(), 0);
  const bool halo_ok = o.zero_copy_halo && o.collective_transfer;
  if (!(o.zero_copy && o.alloc_early && (n.halo_free || halo_ok) && n.n_grids > 0)) return;
  for (std::size_t d = 0; d < data.first_statistics; ++d) {
    if (data.storage[d] != Storage::contiguous) continue;
    if (data.datasets[d].path == "cell_type") data.direct[d] = 1;
    else if (d >= data.first_field && !info.fields[d - data.first_field].float32) data.direct[d] = double_as_is ? 1 : 0;
  }
}

/// Transfers (strategy "auto"): each rank's rows of a level are one run (the partition
/// follows the curve), so a dataset whose runs are long on average skips two-phase
/// buffering (kIndependentRunBytes). Filtered datasets need collective writes, and so
/// does a halo'd zero-copy array (its subarray type). The runs are counted as ranks x
/// levels that have grids: the same estimate on every rank, with no message.
void choose_transfers(DataPlan& data, const StepCounts& n, const IoOptions& o) {
  data.independent.assign(data.datasets.size(), 0);
  if (!(o.strategy == Strategy::automatic && o.collective_transfer && n.n_grids > 0)) return;
  const std::int64_t runs = std::max<std::int64_t>(1, n.levels_used) * n.ranks;
  for (std::size_t d = 0; d < data.datasets.size(); ++d) {
    const auto& p = data.datasets[d];
    const std::int64_t bytes = n.n_grids * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
    data.independent[d] = data.storage[d] == Storage::contiguous && !(data.direct[d] && !n.halo_free) &&
                          bytes / runs >= kIndependentRunBytes;
  }
}

}  // namespace

DataPlan plan_data(const StepCounts& n, const StepInfo& info, const IoOptions& opts, const BlockShape& block,
                   int max_children, bool double_as_is) {
  DataPlan data;
  list_datasets(data, n, info, opts, block, max_children);
  choose_storage(data, n, info, opts);
  choose_direct(data, n, info, opts, double_as_is);
  choose_transfers(data, n, opts);
  // Bytes: level_offsets (rank 0's), every dataset's rows, the checksum table's.
  data.bytes = 8 * (n.n_levels + 1);
  data.bytes_local = n.rank0 ? 8 * (n.n_levels + 1) : 0;
  for (const auto& p : data.datasets) {
    data.bytes += n.n_grids * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
    data.bytes_local += n.n_local * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
  }
  data.bytes += n.n_grids * data.n_hashed * 8;
  data.bytes_local += n.n_local * data.n_hashed * 8;
  return data;
}

}  // namespace rwd::kernel::detail

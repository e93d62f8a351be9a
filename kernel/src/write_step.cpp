// The in-place engine's step (engine.hpp): write_step's phases 1, 2 and 4 (validation,
// offsets, the datasets' creation; the plan itself is pure, data_plan.hpp) and the order of
// all of them. The other phases have a file each; see write_step.hpp.
#include "rewind/kernel/writer.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <set>

#include "collective.hpp"
#include "format.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/step_lock.hpp"
#include "rewind/kernel/views.hpp"
#include "checksum.hpp"
#include "compression.hpp"
#include "engine.hpp"
#include "write_step.hpp"

namespace rwd::kernel {

using h5::Ctx;
namespace names = fmt_names;
using detail::agree;
using detail::phase;
using detail::readers_out;
using detail::valid_name;

namespace detail {

/// How long a writer waits for readers following the file to finish their request
/// before it writes anyway (step_lock.hpp): a reader never stalls a run for long.
constexpr std::chrono::milliseconds kReadersWait{10000};

/// Rank 0 keeps readers that follow the file out while the file's metadata changes.
StepLock readers_out(const WriterState& w) {
  return w.rank == 0 ? StepLock::take(w.path, StepLock::Mode::exclusive, kReadersWait) : StepLock{};
}

bool valid_name(const std::string& n) {
  return !n.empty() && n.find('/') == std::string::npos && n.find('.') == std::string::npos &&
         n.find(' ') == std::string::npos;
}

}  // namespace detail

namespace {

/// What is wrong with this rank's part of the step, or "" (no collective).
std::string local_problem(const detail::WriterState& w, const StepInfo& info, const LocalGrids& grids) {
  const BlockShape blk = w.common.block;
  const int nc = w.common.max_children;
  const int h = grids.halo;
  std::string bad;
  if (grids.block != blk && !grids.grids.empty())
    bad = fmt::format("grid block {}x{}x{} differs from the file's {}x{}x{}", grids.block.sx, grids.block.sy,
                      grids.block.sz, blk.sx, blk.sy, blk.sz);
  if (h < 0) bad = "negative halo";
  if (info.step <= w.last_step)
    bad = fmt::format("step {} is not after the last committed step {}", info.step, w.last_step);
  {
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& f : info.fields) {
      if (!valid_name(f.group) || !valid_name(f.name)) bad = "bad field name '" + f.group + "/" + f.name + "'";
      if (!seen.insert({f.group, f.name}).second) bad = "field '" + f.group + "/" + f.name + "' listed twice";
      if (f.group == "cell_type" || f.group == "uid") bad = "field group '" + f.group + "' is reserved";
    }
  }
  for (const auto& g : grids.grids) {
    if (!bad.empty()) break;
    if (g.level < 0 || g.level >= names::kMaxLevels) bad = fmt::format("grid {:#x}: level {} out of range", g.uid, g.level);
    else if (g.uid == kNoUid) bad = "a grid has no uid";
    else if (static_cast<int>(g.child_uids.size()) > nc)
      bad = fmt::format("grid {:#x} has {} children, more than max_children {}", g.uid, g.child_uids.size(), nc);
    else if (info.write_cell_type && !g.cell_type) bad = fmt::format("grid {:#x} has no cell_type array", g.uid);
    for (const auto& f : info.fields)
      if (f.slot < 0 || f.slot >= static_cast<int>(g.fields.size()) || !g.fields[static_cast<std::size_t>(f.slot)])
        bad = fmt::format("grid {:#x} has no array in slot {} for field {}/{}", g.uid, f.slot, f.group, f.name);
  }

  return bad;
}


/// A written step's filtered datasets (compression) at their storage size, after the
/// collective write (the same on every rank): st.stored_bytes, and the cell data's ratio
/// as Reader::cell_data_storage gives it (the fields from `first_field` on).
void filtered_storage(const std::vector<detail::DatasetPlan>& plan, const std::vector<detail::Storage>& storage,
                      const std::vector<h5::Dataset>& dsets, std::size_t first_field, std::int64_t n_grids,
                      WriteStats& st) {
  std::int64_t data = 0, stored = 0, cell_data = 0, cell_stored = 0;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    if (storage[d] == detail::Storage::contiguous) continue;
    const std::int64_t bytes = n_grids * plan[d].per_row * static_cast<std::int64_t>(plan[d].elem_bytes);
    const auto on_disk = static_cast<std::int64_t>(H5Dget_storage_size(dsets[d]));
    data += bytes;
    stored += on_disk;
    if (d >= first_field) {
      cell_data += bytes;
      cell_stored += on_disk;
    }
  }
  st.stored_bytes = st.bytes - data + stored;
  if (cell_stored > 0 && cell_stored < cell_data)
    st.compression_ratio = static_cast<double>(cell_data) / static_cast<double>(cell_stored);
}

/// Collective. Rank 0 gets every grid's level and box, for the derived view.
StepTopology gather_view_topology(const detail::WriterState& w, const LocalGrids& grids, const detail::StepRows& rows) {
  const std::size_t nloc = rows.perm.size();
  const auto& perm = rows.perm;
  const auto& row_of = rows.layout.row_of;
  const auto& level_start = rows.layout.level_start;
  const std::int64_t n_grids = rows.layout.n_grids;
  const int n_levels = rows.layout.n_levels;
  StepTopology view_topo;
  {
    std::vector<int> cnt(static_cast<std::size_t>(w.size)), dsp(static_cast<std::size_t>(w.size));
    int n7 = static_cast<int>(nloc) * 7;
    MPI_Gather(&n7, 1, MPI_INT, cnt.data(), 1, MPI_INT, 0, w.comm);
    std::vector<double> mine7(nloc * 7), all7;
    for (std::size_t k = 0; k < nloc; ++k) {
      mine7[7 * k] = static_cast<double>(row_of[k]);
      std::copy_n(grids.grids[perm[k]].bbox.begin(), 6, &mine7[7 * k + 1]);
    }
    int tot = 0;
    if (w.rank == 0)
      for (int r = 0; r < w.size; ++r) {
        dsp[static_cast<std::size_t>(r)] = tot;
        tot += cnt[static_cast<std::size_t>(r)];
      }
    all7.resize(static_cast<std::size_t>(tot));
    MPI_Gatherv(mine7.data(), n7, MPI_DOUBLE, all7.data(), cnt.data(), dsp.data(), MPI_DOUBLE, 0, w.comm);
    if (w.rank == 0) {
      view_topo.n_grids = n_grids;
      view_topo.bbox.resize(static_cast<std::size_t>(n_grids));
      view_topo.level_offsets.assign(level_start.begin(), level_start.begin() + n_levels + 1);
      for (std::size_t i = 0; i + 7 <= all7.size(); i += 7)
        std::copy_n(&all7[i + 1], 6, view_topo.bbox[static_cast<std::size_t>(all7[i])].begin());
      view_topo.level.resize(static_cast<std::size_t>(n_grids));
      for (int l = 0; l < n_levels; ++l)
        for (std::int64_t r = level_start[l]; r < level_start[l + 1]; ++r) view_topo.level[static_cast<std::size_t>(r)] = l;
    }
  }

  return view_topo;
}

}  // namespace
namespace {

// A field's unit as /common lists it, stored on its dataset too (format 1.7): "" for a
// name /common does not list.
std::string unit_of(const CommonInfo& common, const std::string& name) {
  for (const auto& v : common.variables)
    if (v.name == name) return v.unit;
  return "";
}

WriteStats write_here(detail::WriterState& w, const StepInfo& info, const LocalGrids& grids) {
  const Ctx& c = w.ctx;
  MPI_Barrier(w.comm);
  const double t0 = MPI_Wtime();
  // Held from before any rank changes the file to after its last flush (commit_step).
  StepLock lock = readers_out(w);
  const BlockShape blk = w.common.block;
  const std::int64_t cells = blk.cells();
  const int nc = w.common.max_children;
  const int h = grids.halo;
  const std::size_t nloc = grids.grids.size();

  // ---- 1. local validation (no collective yet) ----
  const std::string bad = local_problem(w, info, grids);
  detail::StepRows rows;
  rows.perm = detail::local_order(grids.grids);

  // ---- 2. offsets: one Allreduce (totals per level, error flag, halo flag), one Exscan ----
  constexpr int L = names::kMaxLevels;
  // [0, L) grids per level, L error flag, L+1 halo flag, [L+2, 2L+2) leaf grids per level.
  std::vector<std::int64_t> local(2 * L + 2, 0), total(2 * L + 2, 0), before(L, 0);
  if (bad.empty())
    for (const auto& g : grids.grids) {
      ++local[static_cast<std::size_t>(g.level)];
      if (g.child_uids.empty()) ++local[static_cast<std::size_t>(L + 2 + g.level)];
    }
  local[L] = bad.empty() ? 0 : 1;
  local[L + 1] = h != 0 ? 1 : 0;
  MPI_Allreduce(local.data(), total.data(), 2 * L + 2, MPI_INT64_T, MPI_SUM, w.comm);
  const bool halo_free = total[L + 1] == 0;  // every rank's arrays are exactly its rows
  if (total[L] > 0) agree(w.comm, bad.empty() ? std::nullopt : std::optional<FileError>(FileError(ErrorKind::invalid_argument, w.path, bad)), w.path);
  MPI_Exscan(local.data(), before.data(), L, MPI_INT64_T, MPI_SUM, w.comm);
  if (w.rank == 0) std::fill(before.begin(), before.end(), 0);  // Exscan leaves rank 0 undefined
  {
    std::vector<int> levels(nloc);
    for (std::size_t k = 0; k < nloc; ++k) levels[k] = grids.grids[rows.perm[k]].level;
    rows.layout = detail::assign_rows(levels, std::vector<std::int64_t>(total.begin(), total.begin() + L), before);
  }
  const std::int64_t n_grids = rows.layout.n_grids;
  const int n_levels = rows.layout.n_levels;
  const std::vector<std::int64_t>& level_start = rows.layout.level_start;

  // ---- 3. links: one exchange of (uid, row) pairs, then every rank resolves its own ----
  const std::string link_bad = detail::exchange_links(w, grids, rows);
  phase(w.comm, w.path, [&] {
    if (!link_bad.empty()) c.fail(ErrorKind::invalid_argument, "bad tree: " + link_bad);
  });

  // ---- 4. plan datasets and create them collectively ----
  const std::vector<hsize_t> row_shape{static_cast<hsize_t>(n_grids)};
  const std::vector<hsize_t> cell_shape{static_cast<hsize_t>(n_grids), static_cast<hsize_t>(blk.sz),
                                        static_cast<hsize_t>(blk.sy), static_cast<hsize_t>(blk.sx)};
  const std::vector<hsize_t> child_shape{static_cast<hsize_t>(n_grids), static_cast<hsize_t>(nc)};
  detail::DataPlan data;
  std::vector<detail::DatasetPlan>& plan = data.datasets;
  plan = {
      {"uid", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"sort_key", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"level", H5T_STD_I32LE, H5T_NATIVE_INT32, row_shape, 4, 1},
      {"rank", H5T_STD_I32LE, H5T_NATIVE_INT32, row_shape, 4, 1},
      {"parent_uid", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"parent_row", H5T_STD_I64LE, H5T_NATIVE_INT64, row_shape, 8, 1},
      {"child_uids", H5T_STD_U64LE, H5T_NATIVE_UINT64, child_shape, 8, nc},
      {"child_rows", H5T_STD_I64LE, H5T_NATIVE_INT64, child_shape, 8, nc},
      {"bounding_box", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {static_cast<hsize_t>(n_grids), 6}, 8, 6},
  };
  if (info.write_cell_type) plan.push_back({"cell_type", H5T_STD_U8LE, H5T_NATIVE_UINT8, cell_shape, 1, cells});
  data.first_field = plan.size();
  for (const auto& f : info.fields)
    plan.push_back({f.group + "/" + f.name, f.float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                    f.float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, cell_shape, f.float32 ? 4u : 8u, cells});

  std::int64_t bytes_global = 8 * (n_levels + 1), bytes_local = w.rank == 0 ? 8 * (n_levels + 1) : 0;
  for (const auto& p : plan) {
    bytes_global += n_grids * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
    bytes_local += static_cast<std::int64_t>(nloc) * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
  }
  // Zero-copy candidates (IoOptions::zero_copy): cell datasets whose every array already
  // is the grid's row, byte for byte (no halo on any rank, the file's element type).
  // Decided from values every rank shares, so all ranks take the same path. Halo'd
  // arrays only with collective transfers: ROMIO's independent write of a subarray
  // memory type issues one pwrite per interior row (30 s instead of 3 s for 1.1 GiB).
  // Storage of each dataset (IoOptions::compression, visualisation_compression): cell
  // datasets may be chunked and filtered; zfp (lossy) only for a visualisation step's
  // fields. An all-empty step stays contiguous (no chunk of zero rows).
  using detail::Storage;
  std::vector<Storage> storage(plan.size(), Storage::contiguous);
  const std::size_t first_cell = info.write_cell_type ? data.first_field - 1 : data.first_field;
  if (n_grids > 0)
    for (std::size_t d = first_cell; d < plan.size(); ++d) {
      if (d >= data.first_field && info.kind == StepKind::visualisation && w.opts.visualisation_compression == Codec::zfp)
        storage[d] = Storage::zfp;
      else if (w.opts.compression != Codec::none)
        storage[d] = Storage::lossless;
    }
  // Rows of lossy datasets read back different values: they have no row checksum (HDF5's
  // Fletcher-32 checks their chunks instead).
  data.checksums = w.opts.checksums;
  data.hashed.assign(plan.size(), data.checksums ? 1 : 0);
  for (std::size_t d = 0; d < plan.size(); ++d)
    if (storage[d] == Storage::zfp) data.hashed[d] = 0;
  const auto n_hashed = static_cast<std::int64_t>(std::count(data.hashed.begin(), data.hashed.end(), 1));
  if (data.checksums) {
    bytes_global += n_grids * n_hashed * 8;
    bytes_local += static_cast<std::int64_t>(nloc) * n_hashed * 8;
  }
  data.direct.assign(plan.size(), 0);
  const bool halo_ok = w.opts.zero_copy_halo && w.opts.collective_transfer;
  if (w.opts.zero_copy && w.opts.alloc_early && (halo_free || halo_ok) && n_grids > 0) {
    const bool double_as_is = H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0;
    for (std::size_t d = 0; d < plan.size(); ++d) {
      if (storage[d] != Storage::contiguous) continue;  // HDF5 filters the chunks: no file offset to write at
      if (plan[d].path == "cell_type") data.direct[d] = 1;
      else if (d >= data.first_field && !info.fields[d - data.first_field].float32) data.direct[d] = double_as_is ? 1 : 0;
    }
  }

  // Transfers (strategy "auto"): each rank's rows of a level are one run (the partition
  // follows the curve), so a dataset whose runs are long on average skips two-phase
  // buffering (detail::kIndependentRunBytes). Filtered datasets need collective writes,
  // and so does a halo'd zero-copy array (its subarray type). The runs are counted as
  // ranks x levels that have grids: the same estimate on every rank, with no message.
  data.independent.assign(plan.size(), 0);
  if (w.opts.strategy == Strategy::automatic && w.opts.collective_transfer && n_grids > 0) {
    std::int64_t levels_used = 0;
    for (int l = 0; l < L; ++l) levels_used += total[static_cast<std::size_t>(l)] > 0 ? 1 : 0;
    const std::int64_t runs = std::max<std::int64_t>(1, levels_used) * w.size;
    for (std::size_t d = 0; d < plan.size(); ++d) {
      const std::int64_t bytes = n_grids * plan[d].per_row * static_cast<std::int64_t>(plan[d].elem_bytes);
      data.independent[d] = storage[d] == Storage::contiguous && !(data.direct[d] && !halo_free) &&
                            bytes / runs >= detail::kIndependentRunBytes;
    }
  }

  const std::string gpath = detail::step_group_path(info.step);
  h5::Group step_group;
  std::vector<h5::Dataset> dsets;
  h5::Dataset checksums;
  phase(w.comm, w.path, [&] {
    if (h5::exists(w.file, gpath)) c.fail(ErrorKind::invalid_argument, gpath + " already exists");
    step_group = h5::Group(c.check(H5Gcreate2(w.file, gpath.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create " + gpath));
    w.open_step = gpath;  // from here a failure abandons it (detail::abandon_step)
    h5::write_attr_i64(c, step_group, "step", {info.step});
    h5::write_attr_f64(c, step_group, "time", {info.time});
    h5::write_attr_f64(c, step_group, "dt", {info.dt});
    h5::write_attr_string(c, step_group, "kind", to_string(info.kind));
    h5::write_attr_i64(c, step_group, "n_grids", {n_grids});
    h5::write_attr_i64(c, step_group, "n_levels", {n_levels});
    h5::write_attr_i64_array(c, step_group, "leaf_grids_per_level",
                       std::vector<std::int64_t>(total.begin() + L + 2, total.begin() + L + 2 + n_levels));
    h5::write_attr_i64(c, step_group, "bytes", {bytes_global});
    if (!info.case_overrides.empty()) {
      std::string lines;
      for (const auto& o : info.case_overrides) {
        if (o.find('\n') != std::string::npos) c.fail(ErrorKind::invalid_argument, "a case override holds a newline");
        lines += o + "\n";
      }
      h5::write_attr_string(c, step_group, "case_overrides", lines);
    }
    if (!info.monitor_state.empty()) h5::write_attr_f64(c, step_group, "monitor_state", info.monitor_state);
    h5::write_attr_u8(c, step_group, "committed", 0);
    std::set<std::string> groups;
    for (const auto& f : info.fields) groups.insert(f.group);
    for (const auto& g : groups)
      h5::Group(c.check(H5Gcreate2(step_group, g.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create " + g));
    h5::Plist dcpl = detail::make_dcpl(c, w.opts);
    for (std::size_t d = 0; d < plan.size(); ++d) {
      const auto& p = plan[d];
      h5::Dataspace sp(c.check(H5Screate_simple(static_cast<int>(p.shape.size()), p.shape.data(), nullptr), "space"));
      const h5::Plist filtered =
          storage[d] == Storage::contiguous ? h5::Plist() : detail::make_filtered_dcpl(c, w.opts, storage[d], p.shape);
      dsets.emplace_back(c.check(H5Dcreate2(step_group, p.path.c_str(), p.file_type, sp, H5P_DEFAULT,
                                            filtered.valid() ? filtered.get() : dcpl.get(), H5P_DEFAULT),
                                 "create dataset " + p.path));
      if (storage[d] == Storage::zfp) h5::write_attr_f64(c, dsets.back(), detail::kZfpAccuracy, {w.opts.zfp_accuracy});
      if (d >= data.first_field) h5::write_attr_string(c, dsets.back(), "units", unit_of(w.common, info.fields[d - data.first_field].name));
    }
    if (data.checksums) {
      const hsize_t shape[2] = {static_cast<hsize_t>(n_grids), static_cast<hsize_t>(n_hashed)};
      h5::Dataspace sp(c.check(H5Screate_simple(2, shape, nullptr), "space"));
      checksums = h5::Dataset(c.check(H5Dcreate2(step_group, detail::kChecksums, H5T_STD_U64LE, sp, H5P_DEFAULT, dcpl,
                                                 H5P_DEFAULT), "create checksums"));
      std::string names;
      for (std::size_t d = 0; d < plan.size(); ++d)
        if (data.hashed[d]) names += (names.empty() ? "" : "\n") + plan[d].path;
      h5::write_attr_string(c, checksums, "datasets", names);
      h5::write_attr_string(c, checksums, "algorithm", detail::kChecksumAlgorithm);
    }
    hsize_t nl = static_cast<hsize_t>(n_levels + 1);
    h5::Dataspace sp(c.check(H5Screate_simple(1, &nl, nullptr), "space"));
    h5::Dataset lo(c.check(H5Dcreate2(step_group, "level_offsets", H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                           "create level_offsets"));
    hsize_t mine_n = w.rank == 0 ? nl : 0;
    h5::Dataspace ms(c.check(H5Screate_simple(1, &mine_n, nullptr), "space"));
    if (w.rank != 0) {
      H5Sselect_none(sp);
      H5Sselect_none(ms);
    }
    c.check_status(H5Dwrite(lo, H5T_NATIVE_INT64, ms, sp, w.dxpl_coll, level_start.data()), "write level_offsets");
    h5::write_whole_checksum(c, lo, level_start.data(), nl * sizeof(std::int64_t));  // little-endian hosts (verify)
  });
  w.hook("created");
  // Where the step's bytes lie, to give them back if it fails (contiguous datasets; the
  // chunks of compressed ones have no single offset).
  w.open_extents.clear();
  for (const auto& ds : dsets)
    if (const haddr_t at = H5Dget_offset(ds); at != HADDR_UNDEF)
      w.open_extents.emplace_back(static_cast<std::int64_t>(at), static_cast<std::int64_t>(H5Dget_storage_size(ds)));
  // The file offset of every zero-copy dataset (allocated at creation: the same on all
  // ranks); a dataset without one falls back to the linear buffer.
  data.direct_at.assign(plan.size(), -1);
  std::int64_t direct_datasets = 0;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    const haddr_t at = data.direct[d] ? H5Dget_offset(dsets[d]) : HADDR_UNDEF;
    data.direct[d] = at != HADDR_UNDEF ? 1 : 0;
    if (data.direct[d]) {
      data.direct_at[d] = static_cast<std::int64_t>(at);
      ++direct_datasets;
    }
  }

  // ---- 5. the data: one linear buffer, one collective write per dataset ----
  const detail::DataStats written = detail::write_data(w, info, grids, rows, data, dsets, gpath);
  if (data.checksums) phase(w.comm, w.path, [&] {
    if (n_grids == 0) return;  // all ranks empty: no collective write (see write_data)
    w.hook("checksums");
    // The table's columns: the hashed datasets, in plan order.
    std::vector<std::uint64_t> table;
    table.reserve(nloc * static_cast<std::size_t>(n_hashed));
    for (std::size_t k = 0; k < nloc; ++k)
      for (std::size_t d = 0; d < plan.size(); ++d)
        if (data.hashed[d]) table.push_back(written.checksums[k * plan.size() + d]);
    h5::Dataspace fs(c.check(H5Dget_space(checksums), "space"));
    h5::select_rows(c, fs, rows.layout.runs);
    hsize_t n = static_cast<hsize_t>(table.size());
    h5::Dataspace ms(c.check(H5Screate_simple(1, &n, nullptr), "memory space"));
    if (n == 0) H5Sselect_none(ms);
    c.check_status(H5Dwrite(checksums, H5T_NATIVE_UINT64, ms, fs, w.dxpl_coll, table.data()),
                   "write " + gpath + "/" + detail::kChecksums);
    checksums.reset();
  });
  WriteStats st;
  st.bytes = bytes_global;
  filtered_storage(plan, storage, dsets, data.first_field, n_grids, st);
  // Views need every grid's level and box on rank 0 (collective gather, before commit).
  const StepTopology view_topo = w.opts.write_views ? gather_view_topology(w, grids, rows) : StepTopology{};

  // ---- 6. crash protocol: flush -> committed marker + index row -> flush ----
  const detail::IndexRow index_row{info.step, info.time, info.dt, static_cast<std::uint8_t>(info.kind), 1,
                                   n_grids, n_levels, bytes_global};
  detail::commit_step(w, index_row, step_group, dsets);
  w.open_step.clear();
  lock.release();
  w.last_step = info.step;
  const double t1 = MPI_Wtime();
  w.hook("committed");

  st.n_grids = n_grids;
  st.bytes_local = bytes_local;
  st.buffer_bytes = written.buffer_bytes;
  st.buffer_reused = written.buffer_reused;
  st.writeback_datasets = written.writeback_datasets;
  st.direct_datasets = direct_datasets;
  double dt = t1 - t0;
  MPI_Allreduce(&dt, &st.seconds, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  st.bandwidth = st.seconds > 0 ? static_cast<double>(bytes_global) / st.seconds : 0.0;
  int coll = written.all_collective ? 1 : 0, coll_all = 1;
  MPI_Allreduce(&coll, &coll_all, 1, MPI_INT, MPI_MIN, w.comm);
  st.all_collective = coll_all == 1 && n_grids > 0;

  // ---- 7. derived view (rank 0; a failure here never affects the committed step) ----
  if (w.opts.write_views && w.rank == 0 && n_grids > 0) {
    try {
      StepEntry e;
      e.step = info.step;
      e.time = info.time;
      e.dt = info.dt;
      e.kind = info.kind;
      e.committed = true;
      e.n_grids = n_grids;
      e.n_levels = n_levels;
      e.group = gpath;
      std::vector<FieldInfo> fields;
      for (const auto& f : info.fields)
        if (f.group == "cell_data") fields.push_back({f.group, f.name, f.float32});
      w.hook("view");
      write_step_view(w.path, w.common, e, view_topo, fields);
    } catch (const std::exception& ex) {
      st.view_error = ex.what();
    }
  }
  return st;
}

}  // namespace

WriteStats detail::write_in_place(WriterState& w, const StepInfo& info, const LocalGrids& grids) {
  return write_here(w, info, grids);
}

}  // namespace rwd::kernel

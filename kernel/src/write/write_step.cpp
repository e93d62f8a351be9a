// The in-place engine's step (engine.hpp): write_step's phases 1, 2 and 4 (validation,
// offsets, the datasets' creation; the plan itself is pure, data_plan.hpp) and the order of
// all of them. The other phases have a file each; see write_step.hpp.
#include "rewind/kernel/writer.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <set>

#include "io/collective.hpp"
#include "format/format.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/step_lock.hpp"
#include "rewind/kernel/views.hpp"
#include "integrity/checksum.hpp"
#include "compression/compression.hpp"
#include "write/engine.hpp"
#include "write/statistics.hpp"
#include "write/write_step.hpp"

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
      if (f.group == "cell_type" || f.group == "uid" || f.group == kStatistics || f.group == kShares)
        bad = "field group '" + f.group + "' is reserved";
    }
  }
  for (const auto& g : grids.grids) {
    if (!bad.empty()) break;
    if (g.level < 0 || g.level >= names::kMaxLevels)
      bad = fmt::format("grid {}: level {} out of range", g.uid, g.level);
    else if (g.uid == kNoUid) bad = "a grid has no uid";
    else if (static_cast<int>(g.child_uids.size()) > nc)
      bad = fmt::format("grid {} has {} children, more than max_children {}", g.uid, g.child_uids.size(), nc);
    else if (info.write_cell_type && !g.cell_type) bad = fmt::format("grid {} has no cell_type array", g.uid);
    for (const auto& f : info.fields)
      if (f.slot < 0 || f.slot >= static_cast<int>(g.fields.size()) || !g.fields[static_cast<std::size_t>(f.slot)])
        bad = fmt::format("grid {} has no array in slot {} for field {}/{}", g.uid, f.slot, f.group, f.name);
  }

  return bad;
}

/// A written step's filtered datasets (compression) at their storage size, after the
/// collective write (the same on every rank): st.stored_bytes, and the cell data's ratio
/// as Reader::cell_data_storage gives it (the fields from `first_field` on).
void filtered_storage(const detail::DataPlan& data_plan, const std::vector<h5::Dataset>& dsets, std::int64_t n_grids,
                      WriteStats& st) {
  const auto& plan = data_plan.datasets;
  const std::size_t first_field = data_plan.first_field;
  std::int64_t data = 0, stored = 0, cell_data = 0, cell_stored = 0;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    if (data_plan.storage[d] == detail::Storage::contiguous) continue;
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

/// Collective. Every rank's `mine` concatenated in rank order on rank 0 (empty elsewhere).
template <typename T>
std::vector<T> gather_to_root(const detail::WriterState& w, const std::vector<T>& mine, MPI_Datatype type) {
  std::vector<int> cnt(static_cast<std::size_t>(w.size)), dsp(static_cast<std::size_t>(w.size));
  const int n = static_cast<int>(mine.size());
  MPI_Gather(&n, 1, MPI_INT, cnt.data(), 1, MPI_INT, 0, w.comm);
  int tot = 0;
  if (w.rank == 0)
    for (int r = 0; r < w.size; ++r) {
      dsp[static_cast<std::size_t>(r)] = tot;
      tot += cnt[static_cast<std::size_t>(r)];
    }
  std::vector<T> all(static_cast<std::size_t>(tot));
  MPI_Gatherv(mine.data(), n, type, all.data(), cnt.data(), dsp.data(), type, 0, w.comm);
  return all;
}

/// What the derived view needs on rank 0: every grid's level and box, and the cells it hides.
struct ViewInput {
  StepTopology topo;
  bool types = false;           ///< the step has cell types (the view gets a vtkGhostType)
  std::vector<CellRun> hidden;  ///< sorted
};

/// This rank's hidden cells (cell_type kHiddenCellType, interior) as (first, count) pairs,
/// in its rows' numbering.
std::vector<std::int64_t> local_hidden(const LocalGrids& grids, const detail::StepRows& rows, const BlockShape& b) {
  const int h = grids.halo, px = b.sx + 2 * h, py = b.sy + 2 * h;
  std::vector<std::uint8_t> interior(static_cast<std::size_t>(b.cells()));
  std::vector<CellRun> runs;
  for (std::size_t k = 0; k < rows.perm.size(); ++k) {
    const std::uint8_t* t = grids.grids[rows.perm[k]].cell_type;
    if (!t) continue;
    auto* out = interior.data();
    for (int z = 0; z < b.sz; ++z)
      for (int y = 0; y < b.sy; ++y)
        out = std::copy_n(t + ((static_cast<std::size_t>(z + h) * py + (y + h)) * px + h), b.sx, out);
    append_hidden_runs(interior.data(), rows.layout.row_of[k], b.cells(), runs);
  }
  std::vector<std::int64_t> flat;
  for (const auto& r : runs) flat.insert(flat.end(), {r.first, r.count});
  return flat;
}

/// Collective. Rank 0 gets every grid's level and box and every hidden cell, for the derived view.
ViewInput gather_view_input(const detail::WriterState& w, const StepInfo& info, const LocalGrids& grids,
                            const detail::StepRows& rows) {
  const std::size_t nloc = rows.perm.size();
  const auto& perm = rows.perm;
  const auto& row_of = rows.layout.row_of;
  const auto& level_start = rows.layout.level_start;
  const std::int64_t n_grids = rows.layout.n_grids;
  const int n_levels = rows.layout.n_levels;
  ViewInput view;
  std::vector<double> mine7(nloc * 7);
  for (std::size_t k = 0; k < nloc; ++k) {
    mine7[7 * k] = static_cast<double>(row_of[k]);
    std::copy_n(grids.grids[perm[k]].bbox.begin(), 6, &mine7[7 * k + 1]);
  }
  const std::vector<double> all7 = gather_to_root(w, mine7, MPI_DOUBLE);
  view.types = info.write_cell_type;
  const std::vector<std::int64_t> runs = gather_to_root(
      w, view.types ? local_hidden(grids, rows, w.common.block) : std::vector<std::int64_t>{}, MPI_INT64_T);
  if (w.rank != 0) return view;
  StepTopology& topo = view.topo;
  topo.n_grids = n_grids;
  topo.bbox.resize(static_cast<std::size_t>(n_grids));
  topo.level_offsets.assign(level_start.begin(), level_start.begin() + n_levels + 1);
  for (std::size_t i = 0; i + 7 <= all7.size(); i += 7)
    std::copy_n(&all7[i + 1], 6, topo.bbox[static_cast<std::size_t>(all7[i])].begin());
  topo.level.resize(static_cast<std::size_t>(n_grids));
  for (int l = 0; l < n_levels; ++l)
    for (std::int64_t r = level_start[l]; r < level_start[l + 1]; ++r) topo.level[static_cast<std::size_t>(r)] = l;
  for (std::size_t i = 0; i + 2 <= runs.size(); i += 2) view.hidden.push_back({runs[i], runs[i + 1]});
  std::sort(view.hidden.begin(), view.hidden.end(),
            [](const CellRun& a, const CellRun& b) { return a.first < b.first; });
  return view;
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

/// The step's counts after phases 1 and 2, and its leaf grids per level (an attribute).
struct Counted {
  detail::StepCounts counts;
  std::vector<std::int64_t> leaves;
};

/// Phases 1 and 2: this rank's part checked (no collective), then one Allreduce (totals
/// per level, error flag, halo flag) and one Exscan place every grid's row. Collective;
/// a rank's problem is thrown on every rank.
Counted count_rows(const detail::WriterState& w, const StepInfo& info, const LocalGrids& grids,
                   detail::StepRows& rows) {
  const std::string bad = local_problem(w, info, grids);
  rows.perm = detail::local_order(grids.grids);
  constexpr int L = names::kMaxLevels;
  // [0, L) grids per level, L error flag, L+1 halo flag, [L+2, 2L+2) leaf grids per level.
  std::vector<std::int64_t> local(2 * L + 2, 0), total(2 * L + 2, 0), before(L, 0);
  if (bad.empty())
    for (const auto& g : grids.grids) {
      ++local[static_cast<std::size_t>(g.level)];
      if (g.child_uids.empty()) ++local[static_cast<std::size_t>(L + 2 + g.level)];
    }
  local[L] = bad.empty() ? 0 : 1;
  local[L + 1] = grids.halo != 0 ? 1 : 0;
  MPI_Allreduce(local.data(), total.data(), 2 * L + 2, MPI_INT64_T, MPI_SUM, w.comm);
  if (total[L] > 0)
    agree(w.comm,
          bad.empty() ? std::nullopt : std::optional<FileError>(FileError(ErrorKind::invalid_argument, w.path, bad)),
          w.path);
  MPI_Exscan(local.data(), before.data(), L, MPI_INT64_T, MPI_SUM, w.comm);
  if (w.rank == 0) std::fill(before.begin(), before.end(), 0);  // Exscan leaves rank 0 undefined
  std::vector<int> levels(rows.perm.size());
  for (std::size_t k = 0; k < levels.size(); ++k) levels[k] = grids.grids[rows.perm[k]].level;
  rows.layout = detail::assign_rows(levels, std::vector<std::int64_t>(total.begin(), total.begin() + L), before);
  Counted c;
  c.counts.n_grids = rows.layout.n_grids;
  c.counts.n_local = static_cast<std::int64_t>(grids.grids.size());
  c.counts.n_levels = rows.layout.n_levels;
  c.counts.levels_used =
      static_cast<int>(std::count_if(total.begin(), total.begin() + L, [](std::int64_t n) { return n > 0; }));
  c.counts.ranks = w.size;
  c.counts.rank0 = w.rank == 0;
  c.counts.halo_free = total[L + 1] == 0;  // every rank's arrays are exactly its rows
  c.leaves.assign(total.begin() + L + 2, total.begin() + L + 2 + c.counts.n_levels);
  return c;
}

/// The code's named scalars (format 1.8): their names, one a line, and their values in
/// the same order; nothing when there are none.
void write_scalars(const Ctx& c, const h5::Group& g, const std::vector<Scalar>& scalars) {
  if (scalars.empty()) return;
  std::string names;
  std::vector<double> values;
  for (const auto& s : scalars) {
    if (s.name.empty() || s.name.find('\n') != std::string::npos)
      c.fail(ErrorKind::invalid_argument, "a scalar's name is empty or holds a newline");
    names += s.name + "\n";
    values.push_back(s.value);
  }
  h5::write_attr_string(c, g, "scalar_names", names);
  h5::write_attr_f64_array(c, g, "scalar_values", values);  // (ns) even for one
}

/// The step group's attributes, `committed` = 0 (phase 4).
void write_step_attributes(const Ctx& c, const h5::Group& g, const StepInfo& info, const Counted& counted,
                           std::int64_t bytes) {
  h5::write_attr_i64(c, g, "step", {info.step});
  h5::write_attr_f64(c, g, "time", {info.time});
  h5::write_attr_f64(c, g, "dt", {info.dt});
  h5::write_attr_string(c, g, "kind", to_string(info.kind));
  h5::write_attr_i64(c, g, "n_grids", {counted.counts.n_grids});
  h5::write_attr_i64(c, g, "n_levels", {counted.counts.n_levels});
  h5::write_attr_i64_array(c, g, "leaf_grids_per_level", counted.leaves);
  h5::write_attr_i64(c, g, "bytes", {bytes});
  if (!info.case_overrides.empty()) {
    std::string lines;
    for (const auto& o : info.case_overrides) {
      if (o.find('\n') != std::string::npos) c.fail(ErrorKind::invalid_argument, "a case override holds a newline");
      lines += o + "\n";
    }
    h5::write_attr_string(c, g, "case_overrides", lines);
  }
  if (!info.monitor_state.empty()) h5::write_attr_f64(c, g, "monitor_state", info.monitor_state);
  write_scalars(c, g, info.scalars);
  h5::write_attr_u8(c, g, "committed", 0);
}

/// A step's objects, as phase 4 creates them.
struct CreatedStep {
  h5::Group group;
  std::vector<h5::Dataset> dsets;
  h5::Dataset checksums;
};

/// The field groups and every planned dataset, as the plan stores them; the checksum
/// table (its columns named) when hashed.
void create_datasets(const detail::WriterState& w, const StepInfo& info, const detail::DataPlan& data,
                     const h5::Plist& dcpl, std::int64_t n_grids, CreatedStep& out) {
  const Ctx& c = w.ctx;
  std::set<std::string> groups;
  for (const auto& f : info.fields) groups.insert(f.group);
  if (data.first_statistics < data.datasets.size()) groups.insert(kStatistics);
  if (data.first_shares < data.datasets.size()) groups.insert(kShares);
  for (const auto& g : groups)
    h5::Group(c.check(H5Gcreate2(out.group, g.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create " + g));
  for (std::size_t d = 0; d < data.datasets.size(); ++d) {
    const auto& p = data.datasets[d];
    const detail::Storage storage = data.storage[d];
    h5::Dataspace sp(c.check(H5Screate_simple(static_cast<int>(p.shape.size()), p.shape.data(), nullptr), "space"));
    const h5::Plist filtered =
        storage == detail::Storage::contiguous ? h5::Plist() : detail::make_filtered_dcpl(c, w.opts, storage, p.shape);
    out.dsets.emplace_back(c.check(H5Dcreate2(out.group, p.path.c_str(), p.file_type, sp, H5P_DEFAULT,
                                              filtered.valid() ? filtered.get() : dcpl.get(), H5P_DEFAULT),
                                   "create dataset " + p.path));
    if (storage == detail::Storage::zfp)
      h5::write_attr_f64(c, out.dsets.back(), detail::kZfpAccuracy, {w.opts.zfp_accuracy});
    if (d >= data.first_field && d < data.first_statistics)
      h5::write_attr_string(c, out.dsets.back(), "units", unit_of(w.common, info.fields[d - data.first_field].name));
  }
  if (!data.checksums) return;
  const hsize_t shape[2] = {static_cast<hsize_t>(n_grids), static_cast<hsize_t>(data.n_hashed)};
  h5::Dataspace sp(c.check(H5Screate_simple(2, shape, nullptr), "space"));
  out.checksums =
      h5::Dataset(c.check(H5Dcreate2(out.group, detail::kChecksums, H5T_STD_U64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                          "create checksums"));
  std::string names;
  for (std::size_t d = 0; d < data.datasets.size(); ++d)
    if (data.hashed[d]) names += (names.empty() ? "" : "\n") + data.datasets[d].path;
  h5::write_attr_string(c, out.checksums, "datasets", names);
  h5::write_attr_string(c, out.checksums, "algorithm", detail::kChecksumAlgorithm);
}

/// level_offsets, written by rank 0 (a collective write), with its whole checksum.
void write_level_offsets(const detail::WriterState& w, const h5::Group& group, const h5::Plist& dcpl,
                         const std::vector<std::int64_t>& level_start, int n_levels) {
  const Ctx& c = w.ctx;
  hsize_t nl = static_cast<hsize_t>(n_levels + 1);
  h5::Dataspace sp(c.check(H5Screate_simple(1, &nl, nullptr), "space"));
  h5::Dataset lo(c.check(H5Dcreate2(group, "level_offsets", H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                         "create level_offsets"));
  hsize_t mine_n = w.rank == 0 ? nl : 0;
  h5::Dataspace ms(c.check(H5Screate_simple(1, &mine_n, nullptr), "space"));
  if (w.rank != 0) {
    H5Sselect_none(sp);
    H5Sselect_none(ms);
  }
  c.check_status(H5Dwrite(lo, H5T_NATIVE_INT64, ms, sp, w.dxpl_coll, level_start.data()), "write level_offsets");
  h5::write_whole_checksum(c, lo, level_start.data(), nl * sizeof(std::int64_t));  // little-endian hosts (verify)
}

/// Phase 4's creation, collective: the step group with its attributes, its datasets and
/// level_offsets. From here a failure abandons the step (detail::abandon_step).
CreatedStep create_step(detail::WriterState& w, const StepInfo& info, const detail::DataPlan& data,
                        const Counted& counted, const std::vector<std::int64_t>& level_start,
                        const std::string& gpath) {
  const Ctx& c = w.ctx;
  CreatedStep out;
  phase(w.comm, w.path, [&] {
    if (h5::exists(w.file, gpath)) c.fail(ErrorKind::invalid_argument, gpath + " already exists");
    out.group =
        h5::Group(c.check(H5Gcreate2(w.file, gpath.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create " + gpath));
    w.open_step = gpath;
    w.open_datasets = {gpath + "/level_offsets", gpath + "/" + detail::kChecksums};
    for (const auto& d : data.datasets) w.open_datasets.push_back(gpath + "/" + d.path);
    write_step_attributes(c, out.group, info, counted, data.bytes);
    const h5::Plist dcpl = detail::make_dcpl(c, w.opts);
    create_datasets(w, info, data, dcpl, counted.counts.n_grids, out);
    write_level_offsets(w, out.group, dcpl, level_start, counted.counts.n_levels);
  });
  return out;
}

/// After creation: the file offset of every zero-copy dataset (allocated at creation: the
/// same on all ranks); a dataset without one falls back to the linear buffer. Returns the
/// zero-copy datasets.
std::int64_t locate_datasets(detail::DataPlan& data, const std::vector<h5::Dataset>& dsets) {
  data.direct_at.assign(data.datasets.size(), -1);
  std::int64_t direct = 0;
  for (std::size_t d = 0; d < data.datasets.size(); ++d) {
    const haddr_t at = data.direct[d] ? H5Dget_offset(dsets[d]) : HADDR_UNDEF;
    data.direct[d] = at != HADDR_UNDEF ? 1 : 0;
    if (data.direct[d]) {
      data.direct_at[d] = static_cast<std::int64_t>(at);
      ++direct;
    }
  }
  return direct;
}

/// Phase 5's checksum table: this rank's rows of the hashed datasets' hashes, in plan
/// order. Collective.
void write_checksums(const detail::WriterState& w, const detail::DataPlan& data, const detail::StepRows& rows,
                     const detail::DataStats& written, std::int64_t n_grids, h5::Dataset& checksums,
                     const std::string& gpath) {
  const Ctx& c = w.ctx;
  phase(w.comm, w.path, [&] {
    if (n_grids == 0) return;  // all ranks empty: no collective write (see write_data)
    w.hook("checksums");
    const std::size_t n_sets = data.datasets.size();
    std::vector<std::uint64_t> table;
    table.reserve(rows.perm.size() * static_cast<std::size_t>(data.n_hashed));
    for (std::size_t k = 0; k < rows.perm.size(); ++k)
      for (std::size_t d = 0; d < n_sets; ++d)
        if (data.hashed[d]) table.push_back(written.checksums[k * n_sets + d]);
    h5::Dataspace fs(c.check(H5Dget_space(checksums), "space"));
    h5::select_rows(c, fs, rows.layout.runs);
    hsize_t n = static_cast<hsize_t>(table.size());
    h5::Dataspace ms(c.check(H5Screate_simple(1, &n, nullptr), "memory space"));
    if (n == 0) H5Sselect_none(ms);
    c.check_status(H5Dwrite(checksums, H5T_NATIVE_UINT64, ms, fs, w.dxpl_coll, table.data()),
                   "write " + gpath + "/" + detail::kChecksums);
    checksums.reset();
  });
}

/// Phase 7: the derived view (rank 0); what went wrong, or "" — a failure here never
/// affects the committed step.
std::string write_view(const detail::WriterState& w, const StepInfo& info, const detail::StepCounts& n,
                       const std::string& gpath, const ViewInput& view) {
  try {
    StepEntry e;
    e.step = info.step;
    e.time = info.time;
    e.dt = info.dt;
    e.kind = info.kind;
    e.committed = true;
    e.n_grids = n.n_grids;
    e.n_levels = n.n_levels;
    e.group = gpath;
    std::vector<FieldInfo> fields;
    for (const auto& f : info.fields)
      if (f.group == "cell_data") fields.push_back({f.group, f.name, f.float32});
    w.hook("view");
    write_step_view(w.path, w.common, e, view.topo, fields, view.types ? &view.hidden : nullptr);
  } catch (const std::exception& ex) {
    return ex.what();
  }
  return "";
}

/// The step's figures, agreed over the ranks (phase 6 done): its time (this rank's
/// `seconds`), bandwidth, transfers.
void finish_stats(const detail::WriterState& w, const detail::DataStats& written, double seconds, WriteStats& st) {
  double dt = seconds;
  MPI_Allreduce(&dt, &st.seconds, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  st.bandwidth = st.seconds > 0 ? static_cast<double>(st.bytes) / st.seconds : 0.0;
  int coll = written.all_collective ? 1 : 0, coll_all = 1;
  MPI_Allreduce(&coll, &coll_all, 1, MPI_INT, MPI_MIN, w.comm);
  st.all_collective = coll_all == 1 && st.n_grids > 0;
  st.in_place.buffer_bytes = written.buffer_bytes;
  st.in_place.buffer_reused = written.buffer_reused;
  st.in_place.writeback_datasets = written.writeback_datasets;
}

}  // namespace

WriteStats detail::write_in_place(WriterState& w, const StepInfo& info, const LocalGrids& grids) {
  MPI_Barrier(w.comm);
  const double t0 = MPI_Wtime();
  StepLock lock = readers_out(w);  // from before any rank changes the file to after its last flush
  // ---- 1, 2. validation, offsets ----
  StepRows rows;
  const Counted counted = count_rows(w, info, grids, rows);
  const StepCounts& n = counted.counts;
  // ---- 3. links: one exchange of (uid, row) pairs, then every rank resolves its own ----
  const std::string link_bad = exchange_links(w.comm, w.common.max_children, grids, rows);
  phase(w.comm, w.path, [&] {
    if (!link_bad.empty()) w.ctx.fail(ErrorKind::invalid_argument, "bad tree: " + link_bad);
  });
  // ---- 4. plan the datasets (pure) and create them collectively ----
  DataPlan data = plan_data(n, info, w.opts, w.common.block, w.common.max_children,
                            H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0);
  const std::string gpath = step_group_path(info.step);
  reserve_room(w, data);
  CreatedStep created = create_step(w, info, data, counted, rows.layout.level_start, gpath);
  w.hook("created");
  WriteStats st;
  st.in_place.direct_datasets = locate_datasets(data, created.dsets);
  // ---- 5. the data: one linear buffer, one collective write per dataset ----
  // The statistics are taken as the data are read to be written, finished and written
  // before the commit's flush. Their room is agreed on before the data's collectives.
  std::optional<StepStatistics> stats;
  if (data.first_statistics < data.datasets.size())
    phase(w.comm, w.path, [&] {
      stats.emplace(w.comm, w.common.block, w.common.max_children, info.fields, grids, rows, data.statistics_of);
    });
  DataStats written = write_data(w, info, grids, rows, data, created.dsets, gpath, stats ? &*stats : nullptr);
  if (stats) {
    write_statistics(w, data, rows, *stats, created.dsets, gpath, written);
    stats.reset();
    if (!w.opts.keep_buffer) release_kept_statistics_memory();  // as the linear buffer
  }
  if (data.checksums) write_checksums(w, data, rows, written, n.n_grids, created.checksums, gpath);
  st.n_grids = n.n_grids;
  st.bytes = data.bytes;
  st.bytes_local = data.bytes_local;
  filtered_storage(data, created.dsets, n.n_grids, st);
  // Views need every grid's level and box and the hidden cells on rank 0 (collective gather, before commit).
  const ViewInput view = w.opts.write_views ? gather_view_input(w, info, grids, rows) : ViewInput{};
  // ---- 6. crash protocol: flush -> committed marker + index row -> flush ----
  const IndexRow index_row{info.step, info.time, info.dt,    static_cast<std::uint8_t>(info.kind),
                           1,         n.n_grids, n.n_levels, data.bytes};
  release_room(w);  // what the data did not use is the room of the commit's metadata
  commit_step(w, index_row, created.group, created.dsets);
  w.open_step.clear();
  w.open_datasets.clear();
  lock.release();
  w.last_step = info.step;
  const double seconds = MPI_Wtime() - t0;
  w.hook("committed");
  finish_stats(w, written, seconds, st);
  // ---- 7. derived view (rank 0) ----
  if (w.opts.write_views && w.rank == 0 && n.n_grids > 0) st.view_error = write_view(w, info, n, gpath, view);
  return st;
}

}  // namespace rwd::kernel

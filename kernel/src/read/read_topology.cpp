// Reader's reads of a step's tree: the whole topology, its level offsets, or some rows;
// every row checked against the step's checksums.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "integrity/checksum.hpp"
#include "read/reader_state.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::kernel {

using h5::Ctx;

namespace {
/// Dataset `name` of group g, checked to have `shape` and type class `cls`.
h5::Dataset checked_dataset(const Ctx& c, hid_t g, const std::string& gpath, const char* name, H5T_class_t cls,
                            const std::vector<hsize_t>& shape) {
  h5::Dataset d = h5::open_dataset(c, g, name);
  auto dm = h5::dims(c, d, gpath + "/" + name);
  if (dm != shape) {
    c.fail(ErrorKind::bad_shape,
           fmt::format("{}/{} has shape ({}), expected ({})", gpath, name, fmt::join(dm, ","), fmt::join(shape, ",")));
  }
  h5::Datatype t(H5Dget_type(d));
  if (H5Tget_class(t) != cls) c.fail(ErrorKind::bad_shape, fmt::format("{}/{} has the wrong type", gpath, name));
  return d;
}

template <typename T>
std::vector<T> read_all(const Ctx& c, hid_t g, const std::string& gpath, const char* name, hid_t memtype,
                        H5T_class_t cls, const std::vector<hsize_t>& shape) {
  h5::Dataset d = checked_dataset(c, g, gpath, name, cls, shape);
  std::size_t n = 1;
  for (auto x : shape) n *= x;
  std::vector<T> v(n);
  if (n > 0)
    c.check_status(H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
                   fmt::format("cannot read {}/{}", gpath, name), ErrorKind::corrupt);
  return v;
}
}  // namespace

StepTopology Reader::read_topology(std::int64_t step_number) const {
  const Ctx& c = impl_->ctx;
  StepEntry e = step(step_number, true);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  StepTopology t;
  const auto ng = static_cast<hsize_t>(e.n_grids);
  const int nc = impl_->common.max_children;
  t.n_grids = e.n_grids;
  t.max_children = nc;
  const std::vector<hsize_t> rows{ng};
  t.uid = read_all<std::uint64_t>(c, g, e.group, "uid", H5T_NATIVE_UINT64, H5T_INTEGER, rows);
  t.sort_key = read_all<std::uint64_t>(c, g, e.group, "sort_key", H5T_NATIVE_UINT64, H5T_INTEGER, rows);
  t.level = read_all<std::int32_t>(c, g, e.group, "level", H5T_NATIVE_INT32, H5T_INTEGER, rows);
  t.rank = read_all<std::int32_t>(c, g, e.group, "rank", H5T_NATIVE_INT32, H5T_INTEGER, rows);
  t.parent_uid = read_all<std::uint64_t>(c, g, e.group, "parent_uid", H5T_NATIVE_UINT64, H5T_INTEGER, rows);
  t.parent_row = read_all<std::int64_t>(c, g, e.group, "parent_row", H5T_NATIVE_INT64, H5T_INTEGER, rows);
  t.child_uids = read_all<std::uint64_t>(c, g, e.group, "child_uids", H5T_NATIVE_UINT64, H5T_INTEGER,
                                         {ng, static_cast<hsize_t>(nc)});
  t.child_rows = read_all<std::int64_t>(c, g, e.group, "child_rows", H5T_NATIVE_INT64, H5T_INTEGER,
                                        {ng, static_cast<hsize_t>(nc)});
  auto bb = read_all<double>(c, g, e.group, "bounding_box", H5T_NATIVE_DOUBLE, H5T_FLOAT, {ng, 6});
  t.bbox.resize(ng);
  for (std::size_t i = 0; i < ng; ++i) std::copy_n(&bb[6 * i], 6, t.bbox[i].begin());
  t.level_offsets = read_all<std::int64_t>(c, g, e.group, "level_offsets", H5T_NATIVE_INT64, H5T_INTEGER,
                                           {static_cast<hsize_t>(e.n_levels + 1)});
  h5::check_whole_checksum(c, h5::open_dataset(c, g, "level_offsets"), t.level_offsets.data(),
                           t.level_offsets.size() * sizeof(std::int64_t));
  // The rows as stored (little-endian, native here) against their checksums: a window or a
  // restart never walks a silently damaged tree.
  const auto sums = detail::StepChecksums::read(c, g, e.n_grids);
  const auto check_rows = [&](const char* name, const void* data, std::size_t row_bytes) {
    const int col = sums.column(name);
    for (std::int64_t i = 0; col >= 0 && i < e.n_grids; ++i)
      if (detail::hash_bytes(static_cast<const unsigned char*>(data) + static_cast<std::size_t>(i) * row_bytes,
                             row_bytes) != sums.at(i, col))
        c.fail(ErrorKind::corrupt, detail::checksum_mismatch(e.group, name, i));
  };
  check_rows("uid", t.uid.data(), 8);
  check_rows("sort_key", t.sort_key.data(), 8);
  check_rows("level", t.level.data(), 4);
  check_rows("rank", t.rank.data(), 4);
  check_rows("parent_uid", t.parent_uid.data(), 8);
  check_rows("parent_row", t.parent_row.data(), 8);
  check_rows("child_uids", t.child_uids.data(), 8 * static_cast<std::size_t>(nc));
  check_rows("child_rows", t.child_rows.data(), 8 * static_cast<std::size_t>(nc));
  check_rows("bounding_box", bb.data(), 48);
  if (ng == 0) t.level_offsets = {0};
  // Cheap consistency checks: a damaged topology must not crash a traversal.
  if (t.level_offsets.front() != 0 || t.level_offsets.back() != e.n_grids)
    c.fail(ErrorKind::corrupt, e.group + "/level_offsets does not cover all rows");
  for (std::size_t i = 0; i < ng; ++i) {
    if (t.parent_row[i] < -1 || t.parent_row[i] >= e.n_grids)
      c.fail(ErrorKind::corrupt, e.group + "/parent_row out of range");
    for (int j = 0; j < nc; ++j) {
      auto r = t.child_rows[i * nc + j];
      if (r < -1 || r >= e.n_grids) c.fail(ErrorKind::corrupt, e.group + "/child_rows out of range");
    }
  }
  return t;
}

namespace {
/// The rows `runs` (n rows in all) of a dataset shaped `shape` ({grids, ...}), row after row.
template <typename T>
std::vector<T> read_some(const Ctx& c, hid_t g, const std::string& gpath, const char* name, hid_t memtype,
                         H5T_class_t cls, const std::vector<hsize_t>& shape, const std::vector<h5::RowRun>& runs,
                         std::size_t n) {
  h5::Dataset d = checked_dataset(c, g, gpath, name, cls, shape);
  std::size_t per_row = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) per_row *= shape[i];
  std::vector<T> v(n * per_row);
  if (v.empty()) return v;
  h5::Dataspace fs(c.check(H5Dget_space(d), "space"));
  h5::select_rows(c, fs, runs);
  const auto total = static_cast<hsize_t>(v.size());
  h5::Dataspace ms(c.check(H5Screate_simple(1, &total, nullptr), "memory space"));
  c.check_status(H5Dread(d, memtype, ms, fs, H5P_DEFAULT, v.data()), fmt::format("cannot read {}/{}", gpath, name),
                 ErrorKind::corrupt);
  return v;
}

/// Refuses rows that are not ascending, distinct and in [0, n_grids) (a caller's mistake).
void check_rows(const Ctx& c, const char* who, const std::vector<std::int64_t>& rows, std::int64_t n_grids) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= n_grids || (i > 0 && rows[i] <= rows[i - 1]))
      c.fail(ErrorKind::invalid_argument,
             fmt::format("{}: rows must be ascending, distinct and in [0, {})", who, n_grids));
}

/// Checks rows[i]'s bytes (row_bytes each, row after row in `data`) against `name`'s checksums.
void check_some(const Ctx& c, const std::string& gpath, const detail::StepChecksums& sums, const char* name,
                const void* data, std::size_t row_bytes, const std::vector<std::int64_t>& rows) {
  const int col = sums.column(name);
  for (std::size_t i = 0; col >= 0 && i < rows.size(); ++i)
    if (detail::hash_bytes(static_cast<const unsigned char*>(data) + i * row_bytes, row_bytes) != sums.at(rows[i], col))
      c.fail(ErrorKind::corrupt, detail::checksum_mismatch(gpath, name, rows[i]));
}

/// Rows `rows` of the (n_grids, width) float64 per-grid dataset `name` of step `e` (in
/// group `g`), checked against their row checksums: the statistics' and the shares' read.
std::vector<double> read_row_doubles(const Ctx& c, hid_t g, const StepEntry& e, const std::string& name,
                                     std::size_t width, const std::vector<std::int64_t>& rows) {
  auto v = read_some<double>(c, g, e.group, name.c_str(), H5T_NATIVE_DOUBLE, H5T_FLOAT,
                             {static_cast<hsize_t>(e.n_grids), width}, h5::runs_of(rows), rows.size());
  check_some(c, e.group, detail::StepChecksums::read(c, g, e.n_grids, rows), name.c_str(), v.data(),
             width * sizeof(double), rows);
  return v;
}
}  // namespace

bool Reader::has_statistics(std::int64_t step_number, const std::string& var) const {
  const Ctx& c = impl_->ctx;
  const StepEntry e = step(step_number, true);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  return h5::exists(g, kStatistics) && h5::exists(g, std::string(kStatistics) + "/" + var);
}

std::vector<std::array<double, 3>> Reader::read_statistics_rows(std::int64_t step_number, const std::string& var,
                                                                const std::vector<std::int64_t>& rows) const {
  const Ctx& c = impl_->ctx;
  const StepEntry e = step(step_number, true);
  check_rows(c, "read_statistics_rows", rows, e.n_grids);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  const std::string name = std::string(kStatistics) + "/" + var;
  const auto v = read_row_doubles(c, g, e, name, 3, rows);
  std::vector<std::array<double, 3>> out(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(&v[3 * i], 3, out[i].begin());
    if (!(std::isfinite(out[i][2]) && out[i][2] >= 0))
      c.fail(ErrorKind::corrupt,
             fmt::format("{}/{} row {}: detail {} is not a finite value >= 0", e.group, name, rows[i], out[i][2]));
  }
  return out;
}

bool Reader::has_shares(std::int64_t step_number, const std::string& var) const {
  const Ctx& c = impl_->ctx;
  const StepEntry e = step(step_number, true);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  return h5::exists(g, kShares) && h5::exists(g, std::string(kShares) + "/" + var);
}

std::vector<double> Reader::read_shares_rows(std::int64_t step_number, const std::string& var,
                                             const std::vector<std::int64_t>& rows) const {
  const Ctx& c = impl_->ctx;
  const StepEntry e = step(step_number, true);
  check_rows(c, "read_shares_rows", rows, e.n_grids);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  const std::string name = std::string(kShares) + "/" + var;
  const auto nc = static_cast<std::size_t>(impl_->common.max_children);
  auto v = read_row_doubles(c, g, e, name, nc, rows);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::isfinite(v[i]) && v[i] >= 0))
      c.fail(ErrorKind::corrupt,
             fmt::format("{}/{} row {}: share {} is not a finite value >= 0", e.group, name, rows[i / nc], v[i]));
  return v;
}

std::vector<std::int64_t> Reader::read_level_offsets(std::int64_t step_number) const {
  const Ctx& c = impl_->ctx;
  const StepEntry e = step(step_number, true);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  auto off = read_all<std::int64_t>(c, g, e.group, "level_offsets", H5T_NATIVE_INT64, H5T_INTEGER,
                                    {static_cast<hsize_t>(e.n_levels + 1)});
  h5::check_whole_checksum(c, h5::open_dataset(c, g, "level_offsets"), off.data(), off.size() * sizeof(std::int64_t));
  if (e.n_grids == 0) off = {0};
  if (off.front() != 0 || off.back() != e.n_grids || !std::is_sorted(off.begin(), off.end()))
    c.fail(ErrorKind::corrupt, e.group + "/level_offsets does not cover all rows");
  return off;
}

TopologyRows Reader::read_topology_rows(std::int64_t step_number, const std::vector<std::int64_t>& rows) const {
  const Ctx& c = impl_->ctx;
  const StepEntry e = step(step_number, true);
  check_rows(c, "read_topology_rows", rows, e.n_grids);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  const auto ng = static_cast<hsize_t>(e.n_grids);
  const int nc = impl_->common.max_children;
  const auto runs = h5::runs_of(rows);
  TopologyRows t;
  t.rows = rows;
  t.uid = read_some<std::uint64_t>(c, g, e.group, "uid", H5T_NATIVE_UINT64, H5T_INTEGER, {ng}, runs, rows.size());
  t.level = read_some<std::int32_t>(c, g, e.group, "level", H5T_NATIVE_INT32, H5T_INTEGER, {ng}, runs, rows.size());
  t.child_rows = read_some<std::int64_t>(c, g, e.group, "child_rows", H5T_NATIVE_INT64, H5T_INTEGER,
                                         {ng, static_cast<hsize_t>(nc)}, runs, rows.size());
  auto bb = read_some<double>(c, g, e.group, "bounding_box", H5T_NATIVE_DOUBLE, H5T_FLOAT, {ng, 6}, runs, rows.size());
  const auto sums = detail::StepChecksums::read(c, g, e.n_grids, rows);
  check_some(c, e.group, sums, "uid", t.uid.data(), 8, rows);
  check_some(c, e.group, sums, "level", t.level.data(), 4, rows);
  check_some(c, e.group, sums, "child_rows", t.child_rows.data(), 8 * static_cast<std::size_t>(nc), rows);
  check_some(c, e.group, sums, "bounding_box", bb.data(), 48, rows);
  t.bbox.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) std::copy_n(&bb[6 * i], 6, t.bbox[i].begin());
  for (const auto r : t.child_rows)
    if (r < -1 || r >= e.n_grids) c.fail(ErrorKind::corrupt, e.group + "/child_rows out of range");
  return t;
}

}  // namespace rwd::kernel

// Reader: open a Rewind file, list and select steps, read topology and cell data, verify
// checksums. One file over 500 lines on purpose: every read path (rows, fields, fields
// straight into padded arrays, cell types) shares the open checks, the transfer-mode
// agreement and the checksum verification kept here beside them.
#include "rewind/kernel/reader.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "collective.hpp"
#include "direct_io.hpp"
#include "checksum.hpp"
#include "compression.hpp"
#include "format.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::kernel {

using h5::Ctx;
namespace names = fmt_names;

namespace detail {
/// Reader's state: the open file and its transfer settings.
struct ReaderState {
  std::string path;
  Ctx ctx;
  mpi::Comm comm;  ///< a duplicate; empty for a serial reader
  h5::File file;
  h5::Plist dxpl;        ///< bulk reads: collective (MPI) or default (serial)
  h5::Plist dxpl_indep;  ///< bulk reads made of large contiguous runs (see read_rows_impl)
  CommonInfo common;
  int major = 0, minor = 0;
  std::int64_t missing = 0;  ///< bytes the file lacks at its end (open_readonly_serial)

  ~ReaderState() { file.reset(); }  // before `comm`, which the file's MPI-IO handle uses
};
}  // namespace detail

namespace {
// From format 1.7 an index row follows its step's committed flag in a flush of its own.
bool witnessed_flags(const detail::ReaderState& r) { return r.major > 1 || r.minor >= 7; }
}  // namespace

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

Reader Reader::open(const std::string& path) {
  detail::register_filters();  // compressed datasets (format 1.5)
  auto im = std::make_unique<Impl>();
  im->path = path;
  im->ctx = Ctx{path};
  im->file = detail::open_readonly_serial(path, &im->missing);
  im->common = detail::read_header(im->ctx, im->file, &im->major, &im->minor);
  im->dxpl = h5::Plist(H5Pcreate(H5P_DATASET_XFER));
  return Reader(std::move(im));
}

Reader Reader::open(const std::string& path, MPI_Comm comm) {
  h5::silence_errors();
  detail::register_filters();
  auto im = std::make_unique<Impl>();
  im->path = path;
  im->ctx = Ctx{path};
  im->comm = mpi::Comm::dup(comm, "rewind kernel");
  Impl& r = *im;
  detail::phase(r.comm, path, [&] {
    // Classify bad files with a serial probe first (stat, signature, truncation).
    h5::File probe = detail::open_readonly_serial(path, &r.missing);
    probe.close();
  });
  detail::phase(r.comm, path, [&] {
    IoOptions o;
    h5::Plist fapl = detail::make_fapl(r.ctx, r.comm, o);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    if (r.missing > 0) detail::skip_eof_check(r.ctx, fapl);
    r.file = h5::File(r.ctx.check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "HDF5 cannot open the file", ErrorKind::corrupt));
  });
  detail::phase(r.comm, path, [&] { r.common = detail::read_header(r.ctx, r.file, &r.major, &r.minor); });
  r.dxpl = h5::Plist(H5Pcreate(H5P_DATASET_XFER));
  H5Pset_dxpl_mpio(r.dxpl, H5FD_MPIO_COLLECTIVE);
  r.dxpl_indep = h5::Plist(H5Pcreate(H5P_DATASET_XFER));
  H5Pset_dxpl_mpio(r.dxpl_indep, H5FD_MPIO_INDEPENDENT);
  return Reader(std::move(im));
}

const std::string& Reader::path() const { return impl_->path; }
const CommonInfo& Reader::common() const { return impl_->common; }
std::pair<int, int> Reader::format_version() const { return {impl_->major, impl_->minor}; }
std::int64_t Reader::bytes_missing() const { return impl_->missing; }

std::vector<StepEntry> Reader::steps(bool committed_only) const {
  std::vector<StepEntry> out;
  for (auto& s : detail::list_steps(impl_->ctx, impl_->file, impl_->common.block.cells(), witnessed_flags(*impl_)))
    if (!committed_only || s.entry.committed) out.push_back(std::move(s.entry));
  return out;
}

std::vector<StepEntry> Reader::selectable_steps() const {
  std::vector<StepEntry> out = steps(false);
  std::erase_if(out, [](const StepEntry& e) { return !e.committed && e.damage.empty(); });
  return out;
}

StepEntry Reader::step(std::int64_t step_number, bool allow_uncommitted) const {
  // The group named after the number first: one step's attributes instead of every
  // step's, so reading step N of a long run (a restart, a time slider) does not cost
  // O(steps). Anything unusual (no such group, a half-created one, a name that does not
  // match its step attribute) falls back to the full listing, which decides as before.
  const Ctx& c = impl_->ctx;
  if (step_number >= 0 && h5::exists(impl_->file, detail::step_group_path(step_number))) {
    try {
      StepEntry e = detail::read_step_entry(c, impl_->file, detail::step_group_name(step_number), impl_->common.block.cells());
      if (e.step == step_number && (e.committed || allow_uncommitted)) return e;
    } catch (const FileError& e) {
      // A group without attributes is a writer killed while creating it: not committed. One
      // HDF5 cannot read is damaged, which "no committed step" would hide.
      if (e.kind() != ErrorKind::missing_object)
        c.fail(ErrorKind::corrupt, fmt::format("step {}: its group cannot be read ({})", step_number, e.problem()));
    }
  }
  for (const auto& e : steps(false)) {
    if (e.step != step_number) continue;
    if (!e.damage.empty()) c.fail(ErrorKind::corrupt, fmt::format("step {} is damaged: {}", e.step, e.damage));
    if (e.committed || allow_uncommitted) return e;
  }
  impl_->ctx.fail(ErrorKind::no_such_step, fmt::format("no {}step {}", allow_uncommitted ? "" : "committed ", step_number));
}

StepEntry Reader::find_step(const std::string& sel) const {
  char* end = nullptr;
  const long long s = std::strtoll(sel.c_str(), &end, 10);
  if (!sel.empty() && sel[0] != '#' && *end == '\0' && end != sel.c_str()) return step(s);  // one step's attributes
  return select_step(selectable_steps(), sel, impl_->path);
}

namespace {
/// Dataset `name` of group g, checked to have `shape` and type class `cls`.
h5::Dataset checked_dataset(const Ctx& c, hid_t g, const std::string& gpath, const char* name, H5T_class_t cls,
                            const std::vector<hsize_t>& shape) {
  h5::Dataset d = h5::open_dataset(c, g, name);
  auto dm = h5::dims(c, d, gpath + "/" + name);
  if (dm != shape) {
    c.fail(ErrorKind::bad_shape, fmt::format("{}/{} has shape ({}), expected ({})", gpath, name, fmt::join(dm, ","),
                                             fmt::join(shape, ",")));
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
  t.child_uids = read_all<std::uint64_t>(c, g, e.group, "child_uids", H5T_NATIVE_UINT64, H5T_INTEGER, {ng, static_cast<hsize_t>(nc)});
  t.child_rows = read_all<std::int64_t>(c, g, e.group, "child_rows", H5T_NATIVE_INT64, H5T_INTEGER, {ng, static_cast<hsize_t>(nc)});
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
      if (detail::hash_bytes(static_cast<const unsigned char*>(data) + static_cast<std::size_t>(i) * row_bytes, row_bytes) !=
          sums.at(i, col))
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
    if (t.parent_row[i] < -1 || t.parent_row[i] >= e.n_grids) c.fail(ErrorKind::corrupt, e.group + "/parent_row out of range");
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

/// Checks rows[i]'s bytes (row_bytes each, row after row in `data`) against `name`'s checksums.
void check_some(const Ctx& c, const std::string& gpath, const detail::StepChecksums& sums, const char* name,
                const void* data, std::size_t row_bytes, const std::vector<std::int64_t>& rows) {
  const int col = sums.column(name);
  for (std::size_t i = 0; col >= 0 && i < rows.size(); ++i)
    if (detail::hash_bytes(static_cast<const unsigned char*>(data) + i * row_bytes, row_bytes) != sums.at(rows[i], col))
      c.fail(ErrorKind::corrupt, detail::checksum_mismatch(gpath, name, rows[i]));
}
}  // namespace

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
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= e.n_grids || (i > 0 && rows[i] <= rows[i - 1]))
      c.fail(ErrorKind::invalid_argument,
             fmt::format("read_topology_rows: rows must be ascending, distinct and in [0, {})", e.n_grids));
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

std::vector<FieldInfo> Reader::fields(std::int64_t step_number) const {
  const Ctx& c = impl_->ctx;
  StepEntry e = step(step_number, true);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  std::vector<FieldInfo> out;
  for (const auto& n : h5::list_links(c, g)) {
    H5O_info_t oi;
    if (H5Oget_info_by_name2(g, n.c_str(), &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP) continue;
    h5::Group sub = h5::open_group(c, g, n);
    for (const auto& v : h5::list_links(c, sub)) {
      h5::Dataset d = h5::open_dataset(c, sub, v);
      h5::Datatype t(H5Dget_type(d));
      out.push_back({n, v, H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == 4});
    }
  }
  return out;
}

Reader::Storage Reader::cell_data_storage(std::int64_t step_number) const {
  const Ctx& c = impl_->ctx;
  h5::Group g = h5::open_group(c, impl_->file, step(step_number, true).group);
  Storage out;
  for (const auto& f : fields(step_number)) {
    h5::Dataset d = h5::open_dataset(c, g, f.group + "/" + f.name);
    const h5::Datatype t(H5Dget_type(d));
    const h5::Dataspace sp(H5Dget_space(d));
    out.data += H5Sget_simple_extent_npoints(sp) * static_cast<std::int64_t>(H5Tget_size(t));
    out.stored += static_cast<std::int64_t>(H5Dget_storage_size(d));
  }
  return out;
}

namespace {
std::size_t element_size(hid_t dataset) {
  const h5::Datatype t(H5Dget_type(dataset));
  return t.valid() ? H5Tget_size(t) : 0;
}

/// One dataset of a multi-dataset read and where its rows go.
template <typename T>
struct ReadTarget {
  std::string dpath;
  T* out = nullptr;
};

/// Opens the cell datasets `dpaths` of step `e` and checks them (shape (grids, sz, sy, sx),
/// type class) and `rows` (in range). Throws FileError.
std::vector<h5::Dataset> open_cell_datasets(const detail::ReaderState& r, const StepEntry& e,
                                            const std::vector<std::string>& dpaths, H5T_class_t cls,
                                            const std::vector<std::int64_t>& rows) {
  const Ctx& c = r.ctx;
  const BlockShape b = r.common.block;
  h5::Group g = h5::open_group(c, r.file, e.group);
  const std::vector<hsize_t> want{static_cast<hsize_t>(e.n_grids), static_cast<hsize_t>(b.sz),
                                  static_cast<hsize_t>(b.sy), static_cast<hsize_t>(b.sx)};
  std::vector<h5::Dataset> ds;
  for (const auto& dpath : dpaths) {
    h5::Dataset d = h5::open_dataset(c, g, dpath);
    if (h5::dims(c, d, e.group + "/" + dpath) != want)
      c.fail(ErrorKind::bad_shape, fmt::format("{}/{} is not shaped (grids, sz, sy, sx) = ({},{},{},{})", e.group, dpath,
                                               e.n_grids, b.sz, b.sy, b.sx));
    h5::Datatype t(H5Dget_type(d));
    if (H5Tget_class(t) != cls) c.fail(ErrorKind::bad_shape, fmt::format("{}/{} has the wrong type", e.group, dpath));
    ds.push_back(std::move(d));
  }
  for (auto row : rows)
    if (row < 0 || row >= e.n_grids)
      c.fail(ErrorKind::invalid_argument, fmt::format("row {} out of range (step has {} grids)", row, e.n_grids));
  return ds;
}

/// Reads the same rows of every target dataset. Ranks agree three times in all (after
/// opening and checking every dataset, on the transfer mode, after every read), not per
/// dataset: with independent transfers a rank that finishes one dataset early goes on to
/// the next instead of waiting for the slowest rank.
template <typename T>
void read_rows_impl(const detail::ReaderState& r, const StepEntry& e, const std::vector<ReadTarget<T>>& targets, hid_t memtype,
                    H5T_class_t cls, const std::vector<std::int64_t>& rows) {
  const Ctx& c = r.ctx;
  const BlockShape b = r.common.block;
  const std::size_t cells = static_cast<std::size_t>(b.cells());
  std::vector<h5::Dataset> ds;
  std::vector<std::int64_t> sorted;
  bool direct = true;
  detail::StepChecksums sums;
  std::vector<char> stored_f32(targets.size(), 0);  // float32 on disk, read as double
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i] <= rows[i - 1]) direct = false;
  // HDF5 returns a union of hyperslabs in file order: read sorted rows, then scatter.
  std::vector<T> tmp;
  if (!direct) {
    sorted = rows;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    tmp.resize(sorted.size() * cells);
  }
  const auto& use = direct ? rows : sorted;
  detail::phase(r.comm, r.path, [&] {
    std::vector<std::string> dpaths;
    for (const auto& tg : targets) dpaths.push_back(tg.dpath);
    ds = open_cell_datasets(r, e, dpaths, cls, rows);  // checks the rows are in range
    for (std::size_t k = 0; k < ds.size(); ++k) stored_f32[k] = element_size(ds[k]) == 4;
    // Only the rows' checksums: a window of a few rows of a big step reads a few.
    sums = detail::StepChecksums::read(c, h5::open_group(c, r.file, e.group), e.n_grids, use);
  });
  const std::vector<h5::RowRun> runs = h5::runs_of(use);
  long long mine[2] = {static_cast<long long>(use.size()), static_cast<long long>(runs.size())};
  long long all[2] = {mine[0], mine[1]};
  if (r.comm != MPI_COMM_NULL) MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, r.comm);
  const long long total = all[0];
  // Transfer mode, the same on every rank (from the allreduce): when the ranks' row runs
  // are large on average (detail::kIndependentRunBytes), each rank reads its runs with
  // independent MPI-IO calls. Small runs keep the collective transfer.
  const bool independent = r.comm != MPI_COMM_NULL && all[1] > 0 &&
                           total * static_cast<long long>(cells * sizeof(T)) / all[1] >= detail::kIndependentRunBytes;
  detail::phase(r.comm, r.path, [&] {
    if (total == 0) return;  // every rank empty: skip the collective (addr overflow on 1.10.8)
    if (independent && use.empty()) return;  // nothing to read, and no collective to join
    hsize_t n = static_cast<hsize_t>(use.size() * cells);
    h5::Dataspace ms(c.check(H5Screate_simple(1, &n, nullptr), "memory space"));
    if (n == 0) H5Sselect_none(ms);
    std::string failed;  // collective reads: every rank still joins every dataset's read
    for (std::size_t k = 0; k < targets.size(); ++k) {
      h5::Dataspace fs(c.check(H5Dget_space(ds[k]), "space"));
      h5::select_rows(c, fs, runs);
      T* dst = direct ? targets[k].out : tmp.data();
      if (H5Dread(ds[k], memtype, ms, fs, independent ? r.dxpl_indep : r.dxpl, dst) < 0 && failed.empty()) {
        failed = targets[k].dpath;
        if (independent) break;
      }
      if (!direct && failed.empty())
        for (std::size_t i = 0; i < rows.size(); ++i) {
          auto it = std::lower_bound(sorted.begin(), sorted.end(), rows[i]);
          std::memcpy(targets[k].out + i * cells, tmp.data() + static_cast<std::size_t>(it - sorted.begin()) * cells,
                      cells * sizeof(T));
        }
    }
    if (!failed.empty()) c.fail(ErrorKind::corrupt, "cannot read " + e.group + "/" + failed);
    if (sums.empty()) return;
    for (std::size_t k = 0; k < targets.size(); ++k) {
      const int col = sums.column(targets[k].dpath);
      if (col < 0) continue;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const T* row = targets[k].out + i * cells;
        std::uint64_t h = 0;
        if constexpr (std::is_same_v<T, double>)
          h = stored_f32[k] ? detail::hash_interior<float>(row, b, 0) : detail::hash_bytes(row, cells * sizeof(T));
        else
          h = detail::hash_bytes(row, cells * sizeof(T));
        if (h != sums.at(rows[i], col)) c.fail(ErrorKind::corrupt, detail::checksum_mismatch(e.group, targets[k].dpath, rows[i]));
      }
    }
  });
}
}  // namespace

void Reader::read_rows(std::int64_t step_number, const std::string& group, const std::string& name,
                       const std::vector<std::int64_t>& rows, double* out) const {
  StepEntry e;
  detail::phase(impl_->comm, impl_->path, [&] { e = step(step_number, true); });
  read_rows_impl<double>(*impl_, e, {{group + "/" + name, out}}, H5T_NATIVE_DOUBLE, H5T_FLOAT, rows);
}

void Reader::read_fields(std::int64_t step_number, const std::vector<FieldRef>& fields,
                         const std::vector<std::int64_t>& rows, const std::vector<double*>& outs) const {
  if (fields.size() != outs.size())
    throw FileError(ErrorKind::invalid_argument, impl_->path, "read_fields: one output per field");
  StepEntry e;
  detail::phase(impl_->comm, impl_->path, [&] { e = step(step_number, true); });
  std::vector<ReadTarget<double>> targets;
  for (std::size_t i = 0; i < fields.size(); ++i) targets.push_back({fields[i].group + "/" + fields[i].name, outs[i]});
  read_rows_impl<double>(*impl_, e, targets, H5T_NATIVE_DOUBLE, H5T_FLOAT, rows);
}

namespace {
/// Checks read_fields_into's arguments (one array per row for every field, halo >= 0).
void check_destinations(const std::string& path, std::size_t n_fields, std::size_t n_rows,
                        const std::vector<std::vector<double*>>& dest, int halo) {
  if (dest.size() != n_fields || halo < 0)
    throw FileError(ErrorKind::invalid_argument, path, "read_fields_into: one list of arrays per field, halo >= 0");
  for (const auto& d : dest)
    if (d.size() != n_rows)
      throw FileError(ErrorKind::invalid_argument, path, "read_fields_into: one array per row for every field");
}

/// The file offsets of `fields`' datasets when every one can be read straight into the
/// arrays (open with MPI-IO, contiguous float64 little-endian: what the kernel writes
/// uncompressed), else empty (e.g. chunked and filtered: no file offset); and the step's
/// checksums into `sums`. Decided from the file's metadata, so every rank decides the same.
std::vector<std::int64_t> direct_offsets(const detail::ReaderState& r, const StepEntry& e,
                                         const std::vector<Reader::FieldRef>& fields,
                                         const std::vector<std::int64_t>& rows, detail::StepChecksums& sums) {
  const Ctx& c = r.ctx;
  std::vector<std::int64_t> at(fields.size(), -1);
  bool direct = r.comm != MPI_COMM_NULL && H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0;
  detail::phase(r.comm, r.path, [&] {
    sums = detail::StepChecksums::read(c, h5::open_group(c, r.file, e.group), e.n_grids);
    std::vector<std::string> dpaths;
    for (const auto& f : fields) dpaths.push_back(f.group + "/" + f.name);
    const auto ds = open_cell_datasets(r, e, dpaths, H5T_FLOAT, rows);
    for (std::size_t f = 0; f < ds.size(); ++f) {
      h5::Datatype t(H5Dget_type(ds[f]));
      const haddr_t off = H5Dget_offset(ds[f]);
      if (H5Tequal(t, H5T_IEEE_F64LE) <= 0 || off == HADDR_UNDEF) direct = false;
      else at[f] = static_cast<std::int64_t>(off);
    }
  });
  return direct ? at : std::vector<std::int64_t>{};
}

/// One field of read_fields_into: its rows (file order) with where each goes, how it is
/// placed, and each row's check against the step's checksums.
struct FieldRead {
  std::string dpath;
  std::int64_t row_bytes = 0;
  std::vector<detail::ReadRow> want;
  std::function<void(const unsigned char*, void*)> place;
  detail::RowCheck check;
  std::int64_t bad_row = -1;  ///< the first row whose hash differs from its checksum
};

/// The read of one field's rows (file order `order`) at byte `base` of the file into
/// `dest`, each row checked against column `dpath` of `sums` (if it has one).
std::unique_ptr<FieldRead> field_read(const BlockShape& b, std::int64_t base, const std::vector<std::int64_t>& rows,
                                      const std::vector<std::size_t>& order, const std::vector<double*>& dest, int halo,
                                      const detail::StepChecksums& sums, std::string dpath) {
  auto fr = std::make_unique<FieldRead>();
  fr->dpath = std::move(dpath);
  fr->row_bytes = b.cells() * 8;
  for (std::size_t i : order) fr->want.push_back({dest[i], base + rows[i] * fr->row_bytes});
  if (halo > 0)
    fr->place = [b, halo](const unsigned char* row, void* dst) {
      unpack_interior(reinterpret_cast<const double*>(row), b, halo, static_cast<double*>(dst));
    };
  const int col = sums.empty() ? -1 : sums.column(fr->dpath);
  if (col >= 0)
    fr->check = [&rows, &order, &sums, col, f = fr.get()](std::size_t i, std::uint64_t hash) {
      const std::int64_t row = rows[order[i]];
      if (f->bad_row < 0 && hash != sums.at(row, col)) f->bad_row = row;
    };
  return fr;
}
}  // namespace

void Reader::read_fields_into(std::int64_t step_number, const std::vector<FieldRef>& fields,
                              const std::vector<std::int64_t>& rows, const std::vector<std::vector<double*>>& dest,
                              int halo) const {
  const Impl& r = *impl_;
  check_destinations(r.path, fields.size(), rows.size(), dest, halo);
  StepEntry e;
  detail::phase(r.comm, r.path, [&] { e = step(step_number, true); });
  const BlockShape b = r.common.block;
  detail::StepChecksums sums;
  auto& breakdown = detail::read_breakdown();
  breakdown = {};
  const double setup_from = MPI_Wtime();
  const std::vector<std::int64_t> at = direct_offsets(r, e, fields, rows, sums);
  breakdown.setup = MPI_Wtime() - setup_from;
  if (at.empty()) {  // through a buffer and HDF5
    std::vector<double> buf(rows.size() * static_cast<std::size_t>(b.cells()));
    for (std::size_t f = 0; f < fields.size(); ++f) {
      read_rows(step_number, fields[f].group, fields[f].name, rows, buf.data());
      for (std::size_t i = 0; i < rows.size(); ++i)
        unpack_interior(buf.data() + i * static_cast<std::size_t>(b.cells()), b, halo, dest[f][i]);
    }
    return;
  }
  // Contiguous memory only: halo-free rows go straight into the arrays (one read per run
  // adjacent in file and memory), halo'd rows through bounce buffers. With noncontiguous
  // MPI memory types ROMIO 3.2.1 read 5x slower (bench/kernel/HISTORY.md, "Restart reads: the access pattern").
  detail::phase(r.comm, r.path, [&] {
    const MPI_File fh = detail::mpi_file_of(r.ctx, r.file);
    std::vector<std::size_t> order(rows.size());  // file order
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return rows[x] < rows[y]; });
    std::string err;
    const char* env = std::getenv("REWIND_READ_DIRECT");
    std::optional<detail::DirectReads> direct;
    if (!env || std::string(env) != "0") direct.emplace(r.path);
    // Each chunk of 4 MiB is checked (and placed) on this thread right after it lands. Past
    // the page cache (O_DIRECT, 8 chunks in flight, every field's rows one stream of reads)
    // the disk keeps streaming while the CPU hashes, and the CPU no longer fills and copies
    // out of the cache: the checksums then cost (almost) nothing (bench/kernel/HISTORY.md,
    // §8 "Restart reads past the page cache", §16, §17, §19). Rows mostly in the cache
    // already (a step written moments ago) are copied from it, as everywhere O_DIRECT
    // cannot be used. A helper thread hashing beside the reads was slower on shared CPUs
    // ("Restart reads: rows checked as they land").
    std::vector<std::unique_ptr<FieldRead>> reads;
    std::vector<detail::DirectReads::Job> jobs;
    std::vector<std::size_t> job_field;
    for (std::size_t f = 0; f < fields.size() && err.empty(); ++f) {
      reads.push_back(field_read(b, at[f], rows, order, dest[f], halo, sums, fields[f].group + "/" + fields[f].name));
      FieldRead& fr = *reads.back();
      const bool past_cache =
          direct && direct->usable() && at[f] % 8 == 0 && !direct->mostly_cached(fr.want, fr.row_bytes);
      if (past_cache) {
        jobs.push_back({&fr.want, fr.row_bytes, fr.place, fr.check});
        job_field.push_back(f);
      } else {
        err = detail::read_rows(fh, fr.want, fr.row_bytes, fr.place, fr.check, std::int64_t{4} << 20);
        if (!err.empty()) err = fr.dpath + ": " + err;
      }
    }
    if (err.empty() && !jobs.empty()) {
      std::size_t failed = 0;
      err = direct->read(jobs, &failed);
      if (!err.empty()) err = reads[job_field[failed]]->dpath + ": " + err;
    }
    // A row that differs from its checksum, the first in field order (rows after a failed
    // read were not checked).
    for (const auto& fr : reads)
      if (fr->bad_row >= 0) r.ctx.fail(ErrorKind::corrupt, detail::checksum_mismatch(e.group, fr->dpath, fr->bad_row));
    if (!err.empty()) r.ctx.fail(ErrorKind::corrupt, "cannot read " + e.group + "/" + err);
  });
}

namespace {
// Rows of dataset `name` of step `e` that do not match column `col` of `sums`.
std::int64_t verify_column(const detail::ReaderState& r, const StepEntry& e, hid_t g, const detail::StepChecksums& sums,
                           std::size_t col, Reader::Verification& v) {
  const Ctx& c = r.ctx;
  const std::string& name = sums.datasets()[col];
  const h5::Dataset d = h5::open_dataset(c, g, name);
  const h5::Datatype file_type(c.check(H5Dget_type(d), "type of " + name, ErrorKind::corrupt));
  const h5::Datatype mem_type(c.check(H5Tget_native_type(file_type, H5T_DIR_ASCEND), "type of " + name));
  const auto dims = h5::dims(c, d, name);
  if (dims.empty() || dims[0] != static_cast<hsize_t>(e.n_grids))
    c.fail(ErrorKind::bad_shape, e.group + "/" + name + " does not have one row per grid");
  std::size_t row_bytes = H5Tget_size(mem_type);
  for (std::size_t k = 1; k < dims.size(); ++k) row_bytes *= dims[k];
  // Stored little-endian: on a big-endian host the native copy would hash differently.
  if (H5Tget_order(mem_type) != H5T_ORDER_LE && H5Tget_size(mem_type) > 1)
    c.fail(ErrorKind::invalid_argument, "verifying checksums needs a little-endian host");
  const std::int64_t chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>((std::size_t{64} << 20) / row_bytes));
  std::vector<unsigned char> buf;
  std::int64_t bad = 0;
  for (std::int64_t r0 = 0; r0 < e.n_grids; r0 += chunk) {
    const std::int64_t n = std::min(chunk, e.n_grids - r0);
    buf.resize(static_cast<std::size_t>(n) * row_bytes);
    h5::Dataspace fs(c.check(H5Dget_space(d), "space"));
    h5::select_rows(c, fs, {{r0, n}});
    const hsize_t count = buf.size() / H5Tget_size(mem_type);
    h5::Dataspace ms(c.check(H5Screate_simple(1, &count, nullptr), "memory space"));
    c.check_status(H5Dread(d, mem_type, ms, fs, H5P_DEFAULT, buf.data()), "read " + e.group + "/" + name,
                   ErrorKind::corrupt);
    for (std::int64_t i = 0; i < n; ++i) {
      ++v.rows;
      if (detail::hash_bytes(buf.data() + static_cast<std::size_t>(i) * row_bytes, row_bytes) ==
          sums.at(r0 + i, static_cast<int>(col)))
        continue;
      ++bad;
      v.problems.push_back(detail::checksum_mismatch(e.group, name, r0 + i));
    }
  }
  return bad;
}
}  // namespace

Reader::Verification Reader::verify_step(std::int64_t step_number) const {
  const Impl& r = *impl_;
  const Ctx& c = r.ctx;
  const StepEntry e = step(step_number, true);
  const h5::Group g = h5::open_group(c, r.file, e.group);
  Verification v;
  // What cannot be read is damage of that dataset: reported, and the others still checked.
  const auto checked = [&](const std::string& dataset, auto f) {
    try {
      f();
    } catch (const FileError& err) {
      if (err.kind() == ErrorKind::invalid_argument) throw;
      v.damaged.push_back({dataset, 0, err.problem()});
    }
  };
  detail::StepChecksums sums;
  checked("checksums", [&] { sums = detail::StepChecksums::read(c, g, e.n_grids); });
  if (sums.empty() && (v.damaged.empty())) v.uncovered.emplace_back("row checksums");
  v.datasets = static_cast<std::int64_t>(sums.datasets().size());
  for (std::size_t col = 0; col < sums.datasets().size(); ++col) {
    const std::string& name = sums.datasets()[col];
    checked(name, [&] {
      if (const auto bad = verify_column(r, e, g, sums, col, v); bad > 0)
        v.damaged.push_back({name, bad, bad == 1 ? std::string("1 row does not match its checksum")
                                           : fmt::format("{} rows do not match their checksums", bad)});
    });
  }
  // The topology as a restart and a window read it (level_offsets, links), its damage
  // named after the dataset read_topology names, and once: a row already reported above
  // stops read_topology again.
  checked("level_offsets", [&] {
    if (!h5::has_attr(h5::open_dataset(c, g, "level_offsets"), h5::kWholeChecksum)) v.uncovered.emplace_back("level_offsets");
    (void)read_level_offsets(step_number);
  });
  try {
    (void)read_topology(step_number);
  } catch (const FileError& err) {
    if (err.kind() == ErrorKind::invalid_argument) throw;
    const std::string& p = err.problem();
    const std::string prefix = e.group + "/";
    const std::string name = p.rfind(prefix, 0) == 0
                                 ? p.substr(prefix.size(), p.find_first_of(": ", prefix.size()) - prefix.size())
                                 : "topology";
    if (std::none_of(v.damaged.begin(), v.damaged.end(), [&](const auto& d) { return d.dataset == name; }))
      v.damaged.push_back({name, 0, p});
  }
  return v;
}

std::vector<Reader::IndexProblem> Reader::check_index() const {
  const Impl& r = *impl_;
  const Ctx& c = r.ctx;
  std::vector<IndexProblem> out;
  std::vector<detail::IndexRow> rows;
  try {
    rows = detail::read_index(c, r.file);
  } catch (const FileError& e) {
    return {{-1, std::string(names::kIndex) + ": " + e.problem()}};
  }
  // The step groups as Reader::steps reads them, keeping why one could not be read.
  std::map<std::int64_t, StepEntry> groups;
  std::map<std::int64_t, FileError> unreadable;
  for (auto& s : detail::list_steps(c, r.file, r.common.block.cells(), witnessed_flags(r))) {
    const std::int64_t number = std::strtoll(s.entry.group.c_str() + s.entry.group.rfind('_') + 1, nullptr, 10);
    if (s.unreadable) unreadable.emplace(number, *s.unreadable);
    else groups.emplace(number, std::move(s.entry));
  }
  std::map<std::int64_t, int> listed;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& x = rows[i];
    const auto say = [&](const std::string& what) { out.push_back({x.step, fmt::format("index row {}: {}", i, what)}); };
    if (++listed[x.step] == 2) say(fmt::format("step {} is listed twice", x.step));
    if (x.committed != 1) say(fmt::format("step {} is not marked committed (only committed steps are indexed)", x.step));
    if (const auto u = unreadable.find(x.step); u != unreadable.end()) {
      say(fmt::format("step {} is listed as committed, but its group cannot be read ({})", x.step, u->second.problem()));
      continue;
    }
    const auto it = groups.find(x.step);
    if (it == groups.end()) {
      say(fmt::format("step {} is listed, but the file has no such step", x.step));
      continue;
    }
    const StepEntry& s = it->second;
    if (!s.committed) say(fmt::format("step {} is listed as committed, but its group says it is not", x.step));
    // Bit for bit (a flipped low bit of a time is a denormal, which a build may compare as 0).
    const auto differs = [&](const char* what, auto index_value, auto step_value) {
      static_assert(sizeof index_value == sizeof step_value);
      if (std::memcmp(&index_value, &step_value, sizeof index_value) != 0)
        say(fmt::format("step {}: {} = {} in the index, {} in the step", x.step, what, index_value, step_value));
    };
    differs("time", x.time, s.time);
    differs("dt", x.dt, s.dt);
    differs("kind", int{x.kind}, static_cast<int>(s.kind));
    differs("n_grids", x.n_grids, s.n_grids);
    differs("n_levels", x.n_levels, std::int64_t{s.n_levels});
    differs("bytes", x.bytes, s.bytes);
  }
  // The last committed step may lack its row when it is after every listed step: a writer
  // stopped between the commit's marker and its index row (docs/file-format.md §5), which
  // Writer::append completes. Any other unlisted committed step is damage.
  const std::int64_t last_listed = listed.empty() ? -1 : listed.rbegin()->first;
  std::int64_t lagging = -1;
  for (const auto& [number, s] : groups)
    if (s.committed) lagging = listed.count(number) == 0 && number > last_listed ? number : -1;
  for (const auto& [number, s] : groups)
    if (s.committed && listed.count(number) == 0 && number != lagging)
      out.push_back({number, fmt::format("step {} is committed but not in the index", number)});
  for (const auto& [number, e] : unreadable)
    if (listed.count(number) == 0 && e.kind() != ErrorKind::missing_object)
      out.push_back({number, fmt::format("step {}: its group cannot be read ({})", number, e.problem())});
  return out;
}

void Reader::read_cell_types(std::int64_t step_number, const std::vector<std::int64_t>& rows, std::uint8_t* out) const {
  StepEntry e;
  detail::phase(impl_->comm, impl_->path, [&] { e = step(step_number, true); });
  read_rows_impl<std::uint8_t>(*impl_, e, {{"cell_type", out}}, H5T_NATIVE_UINT8, H5T_INTEGER, rows);
}

ReadBreakdown last_read_breakdown() { return detail::read_breakdown(); }

std::vector<std::int64_t> partition_rows(const StepTopology& topo, int rank, int nranks) {
  std::vector<std::int64_t> rows;
  for (int l = 0; l + 1 < static_cast<int>(topo.level_offsets.size()); ++l) {
    const std::int64_t a = topo.level_offsets[l], n = topo.level_offsets[l + 1] - a;
    const std::int64_t lo = a + n * rank / nranks, hi = a + n * (rank + 1) / nranks;
    for (std::int64_t r = lo; r < hi; ++r) rows.push_back(r);
  }
  return rows;
}

namespace {
template <typename T>
void unpack(const T* packed, const BlockShape& b, int h, T* padded) {
  const int px = b.sx + 2 * h, py = b.sy + 2 * h;
  for (int z = 0; z < b.sz; ++z)
    for (int y = 0; y < b.sy; ++y)
      std::memcpy(padded + ((static_cast<std::size_t>(z + h) * py + (y + h)) * px + h),
                  packed + (static_cast<std::size_t>(z) * b.sy + y) * b.sx, sizeof(T) * static_cast<std::size_t>(b.sx));
}
}  // namespace

void unpack_interior(const double* packed, const BlockShape& b, int h, double* padded) { unpack(packed, b, h, padded); }
void unpack_interior(const std::uint8_t* packed, const BlockShape& b, int h, std::uint8_t* padded) {
  unpack(packed, b, h, padded);
}

CommonInfo make_branch_common(const Reader& parent, std::int64_t parent_step, const std::vector<std::string>& changes) {
  return make_branch_common(parent, parent.step(parent_step), changes);
}

CommonInfo make_branch_common(const Reader& parent, const StepEntry& e, const std::vector<std::string>& changes) {
  CommonInfo cm = parent.common();
  char buf[PATH_MAX];
  cm.lineage.parent_file = ::realpath(parent.path().c_str(), buf) ? std::string(buf) : parent.path();
  cm.lineage.parent_step = e.step;
  cm.lineage.parent_time = e.time;
  cm.lineage.changes = changes;
  cm.code_version = kKernelVersion;
  return cm;
}

}  // namespace rwd::kernel

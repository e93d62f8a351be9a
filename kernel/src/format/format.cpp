#include "format/format.hpp"

#include <fmt/core.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>

namespace rwd::kernel::detail {

using h5::Ctx;

std::string step_group_name(std::int64_t step) { return fmt::format("step_{:08d}", step); }
std::string step_group_path(std::int64_t step) { return "/simulation/" + step_group_name(step); }

h5::Plist make_fapl(const Ctx& c, MPI_Comm comm, const IoOptions& o) {
  h5::Plist fapl(c.check(H5Pcreate(H5P_FILE_ACCESS), "create fapl"));
  if (comm != MPI_COMM_NULL) {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    auto set = [&](const char* k, const std::string& v) {
      if (!v.empty()) MPI_Info_set(info, k, v.c_str());
    };
    // zero_copy_halo hands MPI-IO each grid's interior as a subarray memory type; ROMIO
    // writes those well only through two-phase collective buffering, so "automatic"
    // means "enable" then (docs/file-format.md, options).
    set("romio_cb_write", o.zero_copy_halo && o.romio_cb_write == "automatic" ? "enable" : o.romio_cb_write);
    set("romio_cb_read", o.romio_cb_read);
    set("romio_ds_write", o.romio_ds_write);
    set("romio_ds_read", o.romio_ds_read);
    if (o.cb_buffer_size > 0) set("cb_buffer_size", std::to_string(o.cb_buffer_size));
    if (o.cb_nodes > 0) set("cb_nodes", std::to_string(o.cb_nodes));
    herr_t st = H5Pset_fapl_mpio(fapl, comm, info);
    MPI_Info_free(&info);
    c.check_status(st, "set MPI-IO driver");
    c.check_status(H5Pset_coll_metadata_write(fapl, o.coll_metadata_write), "set collective metadata write");
    c.check_status(H5Pset_all_coll_metadata_ops(fapl, o.all_coll_metadata_ops), "set collective metadata ops");
  }
  c.check_status(H5Pset_file_locking(fapl, o.file_locking, true), "set file locking");
  if (o.alignment > 1)
    c.check_status(
        H5Pset_alignment(fapl, static_cast<hsize_t>(o.alignment_threshold), static_cast<hsize_t>(o.alignment)),
        "set alignment");
  if (o.meta_block_size > 0)
    c.check_status(H5Pset_meta_block_size(fapl, static_cast<hsize_t>(o.meta_block_size)), "set meta block size");
  if (o.libver_v18) c.check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18), "set libver bounds");
  return fapl;
}

h5::Plist make_dcpl(const Ctx& c, const IoOptions& o) {
  h5::Plist dcpl(c.check(H5Pcreate(H5P_DATASET_CREATE), "create dcpl"));
  c.check_status(H5Pset_layout(dcpl, H5D_CONTIGUOUS), "set layout");
  if (o.fill_never) c.check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "set fill time");
  if (o.alloc_early) c.check_status(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "set alloc time");
  return dcpl;
}

h5::Datatype index_type(const Ctx& c, bool kind_enum) {
  h5::Datatype kind(
      c.check(kind_enum ? H5Tenum_create(H5T_NATIVE_UINT8) : H5Tcopy(H5T_NATIVE_UINT8), "step kind type"));
  for (const StepKind k : {StepKind::visualisation, StepKind::checkpoint})
    if (kind_enum) c.check_status(H5Tenum_insert(kind, to_string(k), &k), "step kind type");
  h5::Datatype t(c.check(H5Tcreate(H5T_COMPOUND, sizeof(IndexRow)), "index type"));
  H5Tinsert(t, "step", HOFFSET(IndexRow, step), H5T_NATIVE_INT64);
  H5Tinsert(t, "time", HOFFSET(IndexRow, time), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "dt", HOFFSET(IndexRow, dt), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "kind", HOFFSET(IndexRow, kind), kind);
  H5Tinsert(t, "committed", HOFFSET(IndexRow, committed), H5T_NATIVE_UINT8);
  H5Tinsert(t, "n_grids", HOFFSET(IndexRow, n_grids), H5T_NATIVE_INT64);
  H5Tinsert(t, "n_levels", HOFFSET(IndexRow, n_levels), H5T_NATIVE_INT64);
  H5Tinsert(t, "bytes", HOFFSET(IndexRow, bytes), H5T_NATIVE_INT64);
  return t;
}

h5::Datatype index_type_of(const Ctx& c, hid_t index) {
  const h5::Datatype stored(c.check(H5Dget_type(index), "index type", ErrorKind::corrupt));
  const int member = H5Tget_member_index(stored, "kind");
  return index_type(c, member >= 0 && H5Tget_member_class(stored, static_cast<unsigned>(member)) == H5T_ENUM);
}

namespace {
void write_kv_group(const Ctx& c, hid_t parent, const char* name, const std::map<std::string, double>& kv) {
  h5::Group g(c.check(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), std::string("create ") + name));
  for (const auto& [k, v] : kv) h5::write_attr_f64(c, g, k.c_str(), {v});
}

herr_t attr_name_cb(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

std::map<std::string, double> read_kv_group(const Ctx& c, hid_t parent, const char* name) {
  h5::Group g = h5::open_group(c, parent, name);
  std::vector<std::string> names;
  hsize_t idx = 0;
  c.check_status(H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_name_cb, &names),
                 std::string("list attributes of ") + name, ErrorKind::corrupt);
  std::map<std::string, double> kv;
  for (const auto& n : names) {
    auto v = h5::read_attr_f64(c, g, n.c_str());
    if (v.size() != 1) c.fail(ErrorKind::bad_shape, std::string(name) + "/" + n + " is not a scalar");
    kv[n] = v[0];
  }
  return kv;
}
}  // namespace

void write_header(const Ctx& c, hid_t file, const CommonInfo& cm, hid_t dxpl, bool i_write) {
  h5::Group root(c.check(H5Gopen2(file, "/", H5P_DEFAULT), "open root"));
  h5::write_attr_string(c, root, "format", kFormatName);
  h5::write_attr_i64(c, root, "format_version", {kFormatMajor, kFormatMinor});
  h5::write_attr_string(c, root, "creator", cm.creator);
  h5::write_attr_string(c, root, "parent_file", cm.lineage.parent_file);
  h5::write_attr_i64(c, root, "parent_step", {cm.lineage.parent_step});

  h5::Group g(c.check(H5Gcreate2(file, fmt_names::kCommon, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /common"));
  h5::write_attr_i64(c, g, "dim", {cm.dim});
  h5::write_attr_i64(c, g, "block_cells", {cm.block.sx, cm.block.sy, cm.block.sz});
  h5::write_attr_i64(c, g, "refinement", {cm.refinement});
  h5::write_attr_i64(c, g, "max_children", {cm.max_children});
  h5::write_attr_f64(c, g, "domain", std::vector<double>(cm.domain.begin(), cm.domain.end()));
  h5::write_attr_string(c, g, "code_version", cm.code_version);
  write_kv_group(c, g, "time_stepping", cm.time_stepping);
  write_kv_group(c, g, "fluid", cm.fluid);
  std::vector<std::string> names, units;
  for (const auto& v : cm.variables) {
    names.push_back(v.name);
    units.push_back(v.unit);
  }
  h5::write_string_dataset(c, g, "variable_names", names, dxpl, i_write);
  h5::write_string_dataset(c, g, "variable_units", units, dxpl, i_write);
  h5::write_string_dataset(c, g, "case_file", {cm.case_text}, dxpl, i_write);
  h5::Group lg(c.check(H5Gcreate2(g, "lineage", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /common/lineage"));
  h5::write_attr_string(c, lg, "parent_file", cm.lineage.parent_file);
  h5::write_attr_string(c, lg, "parent_file_absolute", cm.lineage.parent_file_absolute);
  h5::write_attr_i64(c, lg, "parent_step", {cm.lineage.parent_step});
  h5::write_attr_f64(c, lg, "parent_time", {cm.lineage.parent_time});
  h5::write_string_dataset(c, lg, "changes", cm.lineage.changes, dxpl, i_write);

  h5::Group sim(
      c.check(H5Gcreate2(file, fmt_names::kSimulation, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /simulation"));
  // The step index: small, extendible, so chunked (the only chunked dataset).
  hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 64;
  h5::Dataspace sp(c.check(H5Screate_simple(1, &zero, &unlimited), "index space"));
  h5::Plist dcpl(c.check(H5Pcreate(H5P_DATASET_CREATE), "index dcpl"));
  c.check_status(H5Pset_chunk(dcpl, 1, &chunk), "index chunk");
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  h5::Datatype t = index_type(c);
  h5::Dataset idx(
      c.check(H5Dcreate2(file, fmt_names::kIndex, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), "create /simulation/index"));
}

CommonInfo read_header(const Ctx& c, hid_t file, int* major, int* minor) {
  h5::Group root(c.check(H5Gopen2(file, "/", H5P_DEFAULT), "open root group", ErrorKind::corrupt));
  if (!h5::has_attr(root, "format"))
    c.fail(ErrorKind::not_rewind, "not a Rewind file (no 'format' attribute at the root)");
  std::string fmt_name = h5::read_attr_string(c, root, "format");
  if (fmt_name != kFormatName)
    c.fail(ErrorKind::not_rewind, "not a Rewind file (format is '" + fmt_name + "', expected '" + kFormatName + "')");
  auto ver = h5::read_attr_i64(c, root, "format_version");
  if (ver.size() != 2) c.fail(ErrorKind::bad_shape, "attribute 'format_version' must hold 2 integers");
  if (major) *major = static_cast<int>(ver[0]);
  if (minor) *minor = static_cast<int>(ver[1]);
  if (ver[0] > kFormatMajor)
    c.fail(ErrorKind::newer_version, fmt::format("format version {}.{} is newer than this reader ({}.{}); "
                                                 "upgrade Rewind",
                                                 ver[0], ver[1], kFormatMajor, kFormatMinor));

  CommonInfo cm;
  cm.creator = h5::read_attr_string(c, root, "creator");
  h5::Group g = h5::open_group(c, file, fmt_names::kCommon);
  auto one = [&](const char* n) {
    auto v = h5::read_attr_i64(c, g, n);
    if (v.size() != 1) c.fail(ErrorKind::bad_shape, std::string("/common attribute '") + n + "' is not a scalar");
    return static_cast<int>(v[0]);
  };
  cm.dim = one("dim");
  auto bc = h5::read_attr_i64(c, g, "block_cells");
  if (bc.size() != 3 || bc[0] < 1 || bc[1] < 1 || bc[2] < 1)
    c.fail(ErrorKind::bad_shape, "/common attribute 'block_cells' must hold 3 positive integers");
  cm.block = {static_cast<int>(bc[0]), static_cast<int>(bc[1]), static_cast<int>(bc[2])};
  cm.refinement = one("refinement");
  cm.max_children = one("max_children");
  if (cm.max_children < 0 || cm.max_children > 4096) c.fail(ErrorKind::bad_shape, "/common max_children out of range");
  auto dom = h5::read_attr_f64(c, g, "domain");
  if (dom.size() != 6) c.fail(ErrorKind::bad_shape, "/common attribute 'domain' must hold 6 numbers");
  std::copy(dom.begin(), dom.end(), cm.domain.begin());
  cm.code_version = h5::read_attr_string(c, g, "code_version");
  cm.time_stepping = read_kv_group(c, g, "time_stepping");
  cm.fluid = read_kv_group(c, g, "fluid");
  auto names = h5::read_string_dataset(c, g, "variable_names");
  auto units = h5::read_string_dataset(c, g, "variable_units");
  if (names.size() != units.size())
    c.fail(ErrorKind::bad_shape, "/common variable_names and variable_units differ in length");
  for (std::size_t i = 0; i < names.size(); ++i) cm.variables.push_back({names[i], units[i]});
  auto cf = h5::read_string_dataset(c, g, "case_file");
  cm.case_text = cf.empty() ? "" : cf[0];
  h5::Group lg = h5::open_group(c, g, "lineage");
  cm.lineage.parent_file = h5::read_attr_string(c, lg, "parent_file");
  if (H5Aexists(lg, "parent_file_absolute") > 0)  // format 1.3 and later
    cm.lineage.parent_file_absolute = h5::read_attr_string(c, lg, "parent_file_absolute");
  auto ps = h5::read_attr_i64(c, lg, "parent_step");
  cm.lineage.parent_step = ps.empty() ? -1 : ps[0];
  auto pt = h5::read_attr_f64(c, lg, "parent_time");
  cm.lineage.parent_time = pt.empty() ? 0.0 : pt[0];
  cm.lineage.changes = h5::read_string_dataset(c, lg, "changes");
  if (!h5::exists(file, fmt_names::kSimulation)) c.fail(ErrorKind::missing_object, "group '/simulation' is missing");
  return cm;
}

namespace {
// Why a path cannot be opened, in the words a user knows (the kernel's one line).
std::string cannot_open(int err) {
  switch (err) {
    case ENOENT: return "no such file";
    case EACCES: return "permission denied";
    case ELOOP: return "too many levels of symbolic links";
    case ENOTDIR: return "a component of the path is not a directory";
    case ENAMETOOLONG: return "file name too long";
    default: return std::string("cannot open: ") + std::strerror(err);
  }
}

// An HDF5 file whose signature differs in one byte: damaged, not some other kind of file.
bool signature_damaged(const std::string& path) {
  static constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const auto n = ::read(fd, head, sizeof head);
  ::close(fd);
  int differ = 0;
  for (std::size_t i = 0; i < sizeof head; ++i) differ += head[i] != kSignature[i] ? 1 : 0;
  return n == static_cast<ssize_t>(sizeof head) && differ == 1;
}
}  // namespace

void skip_eof_check(const Ctx& c, hid_t fapl) {
  hbool_t skip = 1;  // a property HDF5 registers for h5clear; set through the generic call
  c.check_status(H5Pset(fapl, "skip_eof_check", &skip), "set skip_eof_check");
}

h5::File open_readonly_serial(const std::string& path, std::int64_t* missing) {
  h5::silence_errors();
  Ctx c{path};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) c.fail(ErrorKind::not_found, cannot_open(errno));
  if (S_ISDIR(st.st_mode)) c.fail(ErrorKind::not_found, "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) c.fail(ErrorKind::not_found, "not a regular file");
  // Readable? (HDF5 would call an unreadable file "not an HDF5 file".)
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd < 0)
    c.fail(ErrorKind::not_found, cannot_open(errno));
  else ::close(fd);
  htri_t is = H5Fis_hdf5(path.c_str());
  if (is <= 0) {
    h5::error_stack();
    if (signature_damaged(path)) c.fail(ErrorKind::corrupt, "its HDF5 signature (bytes 0-7) is damaged");
    c.fail(ErrorKind::not_hdf5, "not an HDF5 file");
  }
  IoOptions o;
  h5::Plist fapl = make_fapl(c, MPI_COMM_NULL, o);
  // Readers never take a write lock and never open for writing.
  H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
  if (missing) *missing = 0;
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  if (f < 0) {
    std::string stack = h5::error_stack();
    const bool truncated = stack.find("truncated file") != std::string::npos;
    if (truncated && missing) {
      skip_eof_check(c, fapl);
      f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
      haddr_t eoa = 0;
      if (f >= 0 && H5Fget_eoa(f, &eoa) >= 0)
        *missing = std::max<std::int64_t>(1, static_cast<std::int64_t>(eoa) - st.st_size);
      if (f >= 0) return h5::File(f);
      stack = h5::error_stack();
    }
    if (truncated)
      throw FileError(ErrorKind::truncated, path, "file is truncated (shorter than its metadata says)", stack);
    throw FileError(ErrorKind::corrupt, path, "HDF5 cannot open the file (damaged metadata?)", stack);
  }
  return h5::File(f);
}

std::vector<IndexRow> read_index(const Ctx& c, hid_t file) {
  const h5::Dataset idx = h5::open_dataset(c, file, fmt_names::kIndex);
  const auto d = h5::dims(c, idx, fmt_names::kIndex);
  std::vector<IndexRow> rows(d.empty() ? 0 : d[0]);
  const h5::Datatype t = index_type_of(c, idx);
  if (!rows.empty())
    c.check_status(H5Dread(idx, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), "read the step index",
                   ErrorKind::corrupt);
  return rows;
}

std::vector<ListedStep> list_steps(const Ctx& c, hid_t file, std::int64_t cells, bool flag_witnessed) {
  std::set<std::int64_t> indexed;
  try {
    for (const auto& r : read_index(c, file))
      if (r.committed == 1) indexed.insert(r.step);
  } catch (const FileError&) {
  }
  std::vector<ListedStep> out;
  const h5::Group sim = h5::open_group(c, file, fmt_names::kSimulation);
  for (const auto& n : h5::list_links(c, sim)) {
    if (n.rfind("step_", 0) != 0) continue;
    ListedStep s;
    try {
      s.entry = read_step_entry(c, file, n, cells);
      if (!s.entry.committed && flag_witnessed && indexed.count(s.entry.step) > 0)
        s.entry.damage = "the index lists it as committed, but its group says it is not";
    } catch (const FileError& e) {
      // A writer killed while creating the group (no index row yet), or damage.
      s.unreadable = e;
      s.entry.group = std::string(fmt_names::kSimulation) + "/" + n;
      s.entry.step = std::strtoll(n.c_str() + 5, nullptr, 10);
      if (indexed.count(s.entry.step) > 0) s.entry.damage = "its group cannot be read: " + e.problem();
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const ListedStep& a, const ListedStep& b) { return a.entry.step < b.entry.step; });
  return out;
}

namespace {

// The non-empty lines of a newline-separated attribute.
std::vector<std::string> lines_of(const std::string& lines) {
  std::vector<std::string> out;
  for (std::size_t a = 0, b; a < lines.size(); a = b + 1) {
    b = lines.find('\n', a);
    if (b == std::string::npos) b = lines.size();
    if (b > a) out.push_back(lines.substr(a, b - a));
  }
  return out;
}

// A step's named scalars (format 1.8): as many values as names, or the step is misshapen.
std::vector<Scalar> read_scalars(const Ctx& c, const h5::Group& g, const std::string& group) {
  std::vector<Scalar> out;
  for (const auto& name : lines_of(h5::read_attr_string(c, g, "scalar_names"))) out.push_back({name, 0.0});
  const auto values = h5::read_attr_f64(c, g, "scalar_values");
  if (values.size() != out.size())
    c.fail(ErrorKind::bad_shape,
           fmt::format("{} names {} scalars but holds {} values", group, out.size(), values.size()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i].value = values[i];
  return out;
}

}  // namespace

StepEntry read_step_entry(const Ctx& c, hid_t file, const std::string& group_name, std::int64_t cells) {
  StepEntry e;
  e.group = std::string(fmt_names::kSimulation) + "/" + group_name;
  h5::Group g = h5::open_group(c, file, e.group);
  auto i1 = [&](const char* n) {
    auto v = h5::read_attr_i64(c, g, n);
    if (v.size() != 1) c.fail(ErrorKind::bad_shape, e.group + " attribute '" + n + "' is not a scalar");
    return v[0];
  };
  auto f1 = [&](const char* n) {
    auto v = h5::read_attr_f64(c, g, n);
    if (v.size() != 1) c.fail(ErrorKind::bad_shape, e.group + " attribute '" + n + "' is not a scalar");
    return v[0];
  };
  e.committed = h5::has_attr(g, "committed") && h5::read_attr_u8(c, g, "committed") == 1;
  e.step = i1("step");
  e.time = f1("time");
  e.dt = f1("dt");
  std::string kind = h5::read_attr_string(c, g, "kind");
  if (kind == "checkpoint") e.kind = StepKind::checkpoint;
  else if (kind == "visualisation") e.kind = StepKind::visualisation;
  else c.fail(ErrorKind::bad_shape, e.group + " has unknown kind '" + kind + "'");
  e.n_grids = i1("n_grids");
  e.n_levels = static_cast<int>(i1("n_levels"));
  if (h5::has_attr(g, "leaf_grids_per_level")) e.leaf_grids_per_level = h5::read_attr_i64(c, g, "leaf_grids_per_level");
  e.bytes = i1("bytes");
  if (h5::has_attr(g, "case_overrides")) e.case_overrides = lines_of(h5::read_attr_string(c, g, "case_overrides"));
  if (h5::has_attr(g, "monitor_state")) e.monitor_state = h5::read_attr_f64(c, g, "monitor_state");
  if (h5::has_attr(g, "scalar_names")) e.scalars = read_scalars(c, g, e.group);
  e.n_cells = e.n_grids * cells;
  return e;
}

}  // namespace rwd::kernel::detail

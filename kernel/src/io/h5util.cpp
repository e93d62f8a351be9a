#include "io/h5util.hpp"

#include "integrity/checksum.hpp"
#include "io/collective.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace rwd::kernel::h5 {}  // namespace rwd::kernel::h5

namespace rwd::kernel {
void keep_hdf5_until_exit() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    // Both before HDF5 starts: H5dont_atexit has no effect after, and H5open hooks its
    // shutdown onto MPI_Finalize only when MPI is already running.
    H5dont_atexit();
    H5open();
  });
}
}  // namespace rwd::kernel

namespace rwd::kernel::h5 {

void silence_errors() {
  static std::once_flag once;
  std::call_once(once, [] {
    H5open();
    // The kernel reports errors through exceptions carrying the stack; HDF5's own
    // printing to stderr would duplicate them and bury the one-line message.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

namespace {
herr_t walk_cb(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  std::string msg = err->desc ? err->desc : "";
  if (msg.empty()) {
    char buf[256] = {0};
    if (H5Eget_msg(err->maj_num, nullptr, buf, sizeof buf) > 0) msg = buf;
  }
  if (!msg.empty()) out->push_back(std::string(err->func_name ? err->func_name : "?") + ": " + msg);
  (void)n;
  return 0;
}
}  // namespace

std::string error_stack() {
  std::vector<std::string> items;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, &items);
  H5Eclear2(H5E_DEFAULT);
  std::string s;
  // Upward walk lists innermost first; keep outermost first and drop duplicates.
  std::reverse(items.begin(), items.end());
  for (const auto& i : items) {
    if (!s.empty()) s += " <- ";
    s += i;
  }
  for (auto& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

void Ctx::fail(ErrorKind kind, const std::string& problem) const { throw FileError(kind, file, problem); }

namespace {
[[noreturn]] void throw_checked(const std::string& file, const std::string& what, ErrorKind kind) {
  std::string stack = error_stack();
  if (const auto cause = detail::no_space_cause(stack); !cause.empty())
    throw FileError(ErrorKind::no_space, file, what + ": " + cause, std::move(stack));
  throw FileError(kind, file, what, std::move(stack));
}
}  // namespace

hid_t Ctx::check(hid_t id, const std::string& what, ErrorKind kind) const {
  if (id < 0) throw_checked(file, what, kind);
  return id;
}

void Ctx::check_status(herr_t status, const std::string& what, ErrorKind kind) const {
  if (status < 0) throw_checked(file, what, kind);
}

namespace {
Datatype string_type(const Ctx& c, std::size_t len) {
  Datatype t(c.check(H5Tcopy(H5T_C_S1), "copy string type"));
  c.check_status(H5Tset_size(t, std::max<std::size_t>(len, 1)), "set string size");
  c.check_status(H5Tset_strpad(t, H5T_STR_NULLPAD), "set string pad");
  c.check_status(H5Tset_cset(t, H5T_CSET_UTF8), "set string charset");
  return t;
}

template <typename T>
void write_attr_array(const Ctx& c, hid_t obj, const char* name, hid_t type, const std::vector<T>& v,
                      bool one_is_scalar = true) {
  hsize_t n = v.size();
  Dataspace sp(c.check(n == 1 && one_is_scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr),
                       "create attribute space"));
  Attribute a(
      c.check(H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT), std::string("create attribute ") + name));
  if (n > 0) c.check_status(H5Awrite(a, type, v.data()), std::string("write attribute ") + name);
}

template <typename T>
std::vector<T> read_attr_array(const Ctx& c, hid_t obj, const char* name, hid_t memtype, H5T_class_t cls) {
  if (!has_attr(obj, name))
    throw FileError(ErrorKind::missing_object, c.file, std::string("attribute '") + name + "' is missing");
  Attribute a(c.check(H5Aopen(obj, name, H5P_DEFAULT), std::string("open attribute ") + name, ErrorKind::corrupt));
  Datatype ft(c.check(H5Aget_type(a), "attribute type", ErrorKind::corrupt));
  if (H5Tget_class(ft) != cls)
    throw FileError(ErrorKind::bad_shape, c.file, std::string("attribute '") + name + "' has the wrong type");
  Dataspace sp(c.check(H5Aget_space(a), "attribute space", ErrorKind::corrupt));
  hssize_t n = H5Sget_simple_extent_npoints(sp);
  if (n < 0) c.fail(ErrorKind::corrupt, std::string("attribute '") + name + "' has no extent");
  std::vector<T> v(static_cast<std::size_t>(n));
  if (n > 0) c.check_status(H5Aread(a, memtype, v.data()), std::string("read attribute ") + name, ErrorKind::corrupt);
  return v;
}
}  // namespace

void write_attr_string(const Ctx& c, hid_t obj, const char* name, const std::string& value) {
  Datatype t = string_type(c, value.size());
  Dataspace sp(c.check(H5Screate(H5S_SCALAR), "create scalar space"));
  Attribute a(c.check(H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT), std::string("create attribute ") + name));
  std::string buf = value;
  buf.resize(std::max<std::size_t>(value.size(), 1), '\0');
  c.check_status(H5Awrite(a, t, buf.data()), std::string("write attribute ") + name);
}

void write_attr_i64(const Ctx& c, hid_t obj, const char* name, const std::vector<std::int64_t>& v) {
  write_attr_array(c, obj, name, H5T_NATIVE_INT64, v);
}
void write_attr_i64_array(const Ctx& c, hid_t obj, const char* name, const std::vector<std::int64_t>& v) {
  write_attr_array(c, obj, name, H5T_NATIVE_INT64, v, false);
}
void write_attr_f64(const Ctx& c, hid_t obj, const char* name, const std::vector<double>& v) {
  write_attr_array(c, obj, name, H5T_NATIVE_DOUBLE, v);
}
void write_attr_f64_array(const Ctx& c, hid_t obj, const char* name, const std::vector<double>& v) {
  write_attr_array(c, obj, name, H5T_NATIVE_DOUBLE, v, false);
}
void write_attr_u8(const Ctx& c, hid_t obj, const char* name, std::uint8_t v) {
  write_attr_array(c, obj, name, H5T_NATIVE_UINT8, std::vector<std::uint8_t>{v});
}
void write_attr_u64(const Ctx& c, hid_t obj, const char* name, std::uint64_t v) {
  write_attr_array(c, obj, name, H5T_NATIVE_UINT64, std::vector<std::uint64_t>{v});
}
void rewrite_attr_u8(const Ctx& c, hid_t obj, const char* name, std::uint8_t v) {
  Attribute a(c.check(H5Aopen(obj, name, H5P_DEFAULT), std::string("open attribute ") + name));
  c.check_status(H5Awrite(a, H5T_NATIVE_UINT8, &v), std::string("write attribute ") + name);
}

void write_string_dataset(const Ctx& c, hid_t parent, const char* name, const std::vector<std::string>& values,
                          hid_t dxpl, bool i_write) {
  std::size_t len = 1;
  for (const auto& s : values) len = std::max(len, s.size());
  Datatype t = string_type(c, len);
  hsize_t n = values.size();
  Dataspace fs(c.check(H5Screate_simple(1, &n, nullptr), "create string dataset space"));
  Plist dcpl(c.check(H5Pcreate(H5P_DATASET_CREATE), "dcpl"));
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  Dataset d(
      c.check(H5Dcreate2(parent, name, t, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT), std::string("create dataset ") + name));
  if (n == 0) {
    write_whole_checksum(c, d, "", 0);
    return;
  }
  std::vector<char> buf(n * len, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) std::memcpy(&buf[i * len], values[i].data(), values[i].size());
  hsize_t mn = i_write ? n : 0;
  Dataspace ms(c.check(H5Screate_simple(1, &mn, nullptr), "memory space"));
  if (!i_write) {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  c.check_status(H5Dwrite(d, t, ms, fs, dxpl, buf.data()), std::string("write dataset ") + name);
  write_whole_checksum(c, d, buf.data(), buf.size());
}

void write_whole_checksum(const Ctx& c, hid_t dataset, const void* bytes, std::size_t n) {
  write_attr_u64(c, dataset, kWholeChecksum, detail::hash_bytes(bytes, n));
}

void check_whole_checksum(const Ctx& c, hid_t dataset, const void* bytes, std::size_t n) {
  if (!has_attr(dataset, kWholeChecksum)) return;  // before format 1.6
  if (read_attr_u64(c, dataset, kWholeChecksum) == detail::hash_bytes(bytes, n)) return;
  char path[512] = "?";
  H5Iget_name(dataset, path, sizeof path);
  throw FileError(ErrorKind::corrupt, c.file, std::string(path) + " does not match its checksum");
}

namespace {
// An HDF5 error where only absence was expected (an object header or link that fails its
// own checksum): damage, not absence.
[[noreturn]] void unreadable(hid_t obj, const std::string& what) {
  char file[4096] = "?";
  H5Fget_name(obj, file, sizeof file);
  const std::string stack = error_stack();
  throw FileError(ErrorKind::corrupt, file, what + " cannot be read (damaged metadata?)", stack);
}
}  // namespace

bool exists(hid_t parent, const std::string& path) {
  // Check each component so a missing intermediate group is not an error.
  std::size_t pos = 0;
  while (true) {
    std::size_t next = path.find('/', pos + 1);
    std::string part = path.substr(0, next);
    if (!part.empty() && part != "/") {
      const htri_t link = H5Lexists(parent, part.c_str(), H5P_DEFAULT);
      if (link < 0) unreadable(parent, "'" + part + "'");
      if (link == 0) return false;
    }
    if (next == std::string::npos) break;
    pos = next;
  }
  const htri_t object = H5Oexists_by_name(parent, path.c_str(), H5P_DEFAULT);
  if (object < 0) unreadable(parent, "'" + path + "'");
  return object > 0;
}

std::string read_attr_string(const Ctx& c, hid_t obj, const char* name) {
  if (!has_attr(obj, name))
    throw FileError(ErrorKind::missing_object, c.file, std::string("attribute '") + name + "' is missing");
  Attribute a(c.check(H5Aopen(obj, name, H5P_DEFAULT), std::string("open attribute ") + name, ErrorKind::corrupt));
  Datatype ft(c.check(H5Aget_type(a), "attribute type", ErrorKind::corrupt));
  if (H5Tget_class(ft) != H5T_STRING)
    throw FileError(ErrorKind::bad_shape, c.file, std::string("attribute '") + name + "' is not a string");
  if (H5Tis_variable_str(ft) > 0) {
    char* p = nullptr;
    Datatype mt(H5Tcopy(H5T_C_S1));
    H5Tset_size(mt, H5T_VARIABLE);
    c.check_status(H5Aread(a, mt, &p), std::string("read attribute ") + name, ErrorKind::corrupt);
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  std::size_t len = H5Tget_size(ft);
  std::string s(len, '\0');
  c.check_status(H5Aread(a, ft, s.data()), std::string("read attribute ") + name, ErrorKind::corrupt);
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::vector<std::int64_t> read_attr_i64(const Ctx& c, hid_t obj, const char* name) {
  return read_attr_array<std::int64_t>(c, obj, name, H5T_NATIVE_INT64, H5T_INTEGER);
}
std::vector<double> read_attr_f64(const Ctx& c, hid_t obj, const char* name) {
  return read_attr_array<double>(c, obj, name, H5T_NATIVE_DOUBLE, H5T_FLOAT);
}
std::uint8_t read_attr_u8(const Ctx& c, hid_t obj, const char* name) {
  auto v = read_attr_array<std::uint8_t>(c, obj, name, H5T_NATIVE_UINT8, H5T_INTEGER);
  if (v.size() != 1)
    throw FileError(ErrorKind::bad_shape, c.file, std::string("attribute '") + name + "' is not a scalar");
  return v[0];
}
std::uint64_t read_attr_u64(const Ctx& c, hid_t obj, const char* name) {
  auto v = read_attr_array<std::uint64_t>(c, obj, name, H5T_NATIVE_UINT64, H5T_INTEGER);
  if (v.size() != 1)
    throw FileError(ErrorKind::bad_shape, c.file, std::string("attribute '") + name + "' is not a scalar");
  return v[0];
}
bool has_attr(hid_t obj, const char* name) {
  const htri_t r = H5Aexists(obj, name);
  if (r < 0) unreadable(obj, std::string("attribute '") + name + "'");
  return r > 0;
}

std::vector<std::string> read_string_dataset(const Ctx& c, hid_t parent, const char* name) {
  Dataset d = open_dataset(c, parent, name);
  Datatype ft(c.check(H5Dget_type(d), "dataset type", ErrorKind::corrupt));
  if (H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) > 0)
    throw FileError(ErrorKind::bad_shape, c.file,
                    std::string("dataset '") + name + "' is not a fixed-length string array");
  auto d1 = dims(c, d, name);
  if (d1.size() != 1) throw FileError(ErrorKind::bad_shape, c.file, std::string("dataset '") + name + "' is not 1-D");
  std::size_t len = H5Tget_size(ft);
  std::vector<char> buf(d1[0] * len + 1, '\0');
  if (d1[0] > 0)
    c.check_status(H5Dread(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), std::string("read dataset ") + name,
                   ErrorKind::corrupt);
  check_whole_checksum(c, d, buf.data(), d1[0] * len);
  std::vector<std::string> out;
  for (hsize_t i = 0; i < d1[0]; ++i) {
    std::string s(&buf[i * len], len);
    s.resize(std::strlen(s.c_str()));
    out.push_back(s);
  }
  return out;
}

namespace {
herr_t link_cb(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> list_links(const Ctx& c, hid_t group) {
  std::vector<std::string> names;
  c.check_status(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, link_cb, &names), "list group",
                 ErrorKind::corrupt);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<hsize_t> dims(const Ctx& c, hid_t dset, const std::string& what) {
  Dataspace sp(c.check(H5Dget_space(dset), "space of " + what, ErrorKind::corrupt));
  int nd = H5Sget_simple_extent_ndims(sp);
  if (nd < 0) c.fail(ErrorKind::corrupt, "cannot read the shape of " + what);
  std::vector<hsize_t> d(static_cast<std::size_t>(nd));
  if (nd > 0) H5Sget_simple_extent_dims(sp, d.data(), nullptr);
  return d;
}

Group open_group(const Ctx& c, hid_t parent, const std::string& path) {
  if (!exists(parent, path)) c.fail(ErrorKind::missing_object, "group '" + path + "' is missing");
  return Group(c.check(H5Gopen2(parent, path.c_str(), H5P_DEFAULT), "open group " + path, ErrorKind::corrupt));
}

Dataset open_dataset(const Ctx& c, hid_t parent, const std::string& path) {
  if (!exists(parent, path)) c.fail(ErrorKind::missing_object, "dataset '" + path + "' is missing");
  return Dataset(c.check(H5Dopen2(parent, path.c_str(), H5P_DEFAULT), "open dataset " + path, ErrorKind::corrupt));
}

void select_rows(const Ctx& c, hid_t space, const std::vector<RowRun>& runs) {
  int nd = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> d(static_cast<std::size_t>(nd));
  H5Sget_simple_extent_dims(space, d.data(), nullptr);
  bool any = false;
  for (const auto& r : runs) {
    if (r.count <= 0) continue;
    // One block per run: count of ones, block = extent (rule 1 of the house style).
    std::vector<hsize_t> start(d.size(), 0), count(d.size(), 1), block(d);
    start[0] = static_cast<hsize_t>(r.start);
    block[0] = static_cast<hsize_t>(r.count);
    c.check_status(H5Sselect_hyperslab(space, any ? H5S_SELECT_OR : H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                       block.data()),
                   "select rows");
    any = true;
  }
  if (!any) c.check_status(H5Sselect_none(space), "select none");
}

}  // namespace rwd::kernel::h5

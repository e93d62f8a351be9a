// The zfp chunk codec (see zfp_codec.hpp). Written from H5Z-ZFP's documented stored
// form; no H5Z-ZFP code. Filter callbacks report failure by returning 0 / -1 (HDF5
// pushes its own error). Chunk buffers are malloc'd and freed, as HDF5's own filters and
// H5Z-ZFP do (HDF5's allocator is malloc in release builds), so decoding calls no HDF5
// function: the plugin module also works where HDF5's symbols are not global (h5py).
#include "compression/zfp_codec.hpp"

// zfp's bit stream functions compiled into this file (static inline) rather than called
// by name: their names are generic (stream_open, stream_close), and cfitsio (loaded by
// pvpython) exports functions of the same names.
#define inline_ static inline
#include <zfp/bitstream.inl>
#undef inline_
#include <zfp.h>

#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace rwd::kernel::detail {

namespace {

// H5Z-ZFP's version word (cd_values[0]): zfp's library version << 16, zfp's codec
// version << 12, H5Z-ZFP's version (1.1.1 = 0x111: readers at 1.1.0 or later compare
// the codec versions and decode).
constexpr unsigned kH5zZfpVersion = 0x111;
constexpr unsigned kZfpVersionWord = (static_cast<unsigned>(ZFP_VERSION) << 16) | (ZFP_CODEC << 12) | kH5zZfpVersion;
// H5Z-ZFP's in-memory cd_values for fixed accuracy (what callers pass to H5Pset_filter):
// [3 = accuracy mode, 0, the double's two 32-bit halves]. set_local turns them into the
// stored form.
constexpr unsigned kModeAccuracy = 3;
constexpr std::size_t kMaxCd = 6;  // H5Z-ZFP's limit for the stored cd_values

// zfp's functions, from libzfp opened with RTLD_DEEPBIND so that its calls to its own
// bit stream functions (stream_size, stream_flush, ...) stay inside it: in a process that
// also loads cfitsio, which exports functions of those names (pvpython does), a normally
// linked libzfp called cfitsio's and the first zfp read crashed.
// The names in rows, as written (not as clang-format would lay the macro out):
// clang-format off
#define REWIND_ZFP_FUNCTIONS(X)                                                                                  \
  X(zfp_compress) X(zfp_decompress) X(zfp_field_1d) X(zfp_field_2d) X(zfp_field_3d) X(zfp_field_4d)              \
  X(zfp_field_alloc) X(zfp_field_free) X(zfp_field_set_pointer) X(zfp_field_size) X(zfp_field_type)              \
  X(zfp_read_header) X(zfp_stream_close) X(zfp_stream_flush) X(zfp_stream_maximum_size) X(zfp_stream_mode)       \
  X(zfp_stream_open) X(zfp_stream_rewind) X(zfp_stream_set_accuracy) X(zfp_stream_set_bit_stream)                \
  X(zfp_stream_set_mode) X(zfp_type_size) X(zfp_write_header)
// clang-format on
struct ZfpApi {
#define REWIND_ZFP_MEMBER(f) decltype(&::f) f = nullptr;
  REWIND_ZFP_FUNCTIONS(REWIND_ZFP_MEMBER)
#undef REWIND_ZFP_MEMBER
  bool ok = false;
};
// The sanitizers' runtimes refuse RTLD_DEEPBIND (they abort the program): their builds,
// which never load cfitsio, open libzfp without it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kZfpDlopenFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kZfpDlopenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
const ZfpApi& zfp() {
  static const ZfpApi api = [] {
    ZfpApi a;
    void* lib = dlopen("libzfp.so.1", kZfpDlopenFlags);
    if (!lib) return a;
    a.ok = true;
#define REWIND_ZFP_LOOKUP(f) a.ok = (a.f = reinterpret_cast<decltype(&::f)>(dlsym(lib, #f))) != nullptr && a.ok;
    REWIND_ZFP_FUNCTIONS(REWIND_ZFP_LOOKUP)
#undef REWIND_ZFP_LOOKUP
    return a;
  }();
  return api;
}

zfp_type zfp_type_of(hid_t type) {
  if (H5Tget_class(type) != H5T_FLOAT) return zfp_type_none;
  const std::size_t n = H5Tget_size(type);
  return n == 4 ? zfp_type_float : n == 8 ? zfp_type_double : zfp_type_none;
}

/// The chunk's dimensions larger than one, x (fastest) first: zfp's nx, ny, nz, nw.
std::vector<std::size_t> zfp_dims(hid_t chunk_space) {
  std::array<hsize_t, H5S_MAX_RANK> d{};
  const int n = H5Sget_simple_extent_dims(chunk_space, d.data(), nullptr);
  std::vector<std::size_t> out;
  for (int i = n - 1; i >= 0; --i)
    if (d[static_cast<std::size_t>(i)] > 1) out.push_back(static_cast<std::size_t>(d[static_cast<std::size_t>(i)]));
  return out;
}

struct ZfpField {
  zfp_field* f = nullptr;
  ~ZfpField() {
    if (f) zfp().zfp_field_free(f);
  }
};
struct ZfpStream {
  zfp_stream* z = nullptr;
  bitstream* b = nullptr;
  ~ZfpStream() {
    if (z) zfp().zfp_stream_close(z);
    if (b) stream_close(b);
  }
};

htri_t zfp_can_apply(hid_t, hid_t type, hid_t chunk_space) {
  const auto dims = zfp_dims(chunk_space);
  return zfp_type_of(type) != zfp_type_none && !dims.empty() && dims.size() <= 4 ? 1 : 0;
}

// Writes zfp's full header for this chunk shape, type and accuracy into the stored
// cd_values, as H5Z-ZFP's set_local does.
herr_t zfp_set_local(hid_t dcpl, hid_t type, hid_t chunk_space) {
  unsigned flags = 0;
  std::size_t n = kMaxCd;
  std::array<unsigned, kMaxCd> cd{};
  if (H5Pget_filter_by_id2(dcpl, kZfpFilterId, &flags, &n, cd.data(), 0, nullptr, nullptr) < 0) return -1;
  if (n < 4 || cd[0] != kModeAccuracy) return -1;
  double accuracy = 0;
  std::memcpy(&accuracy, &cd[2], sizeof accuracy);
  const auto dims = zfp_dims(chunk_space);
  const zfp_type zt = zfp_type_of(type);
  ZfpField field;
  switch (dims.size()) {
    case 1: field.f = zfp().zfp_field_1d(nullptr, zt, dims[0]); break;
    case 2: field.f = zfp().zfp_field_2d(nullptr, zt, dims[0], dims[1]); break;
    case 3: field.f = zfp().zfp_field_3d(nullptr, zt, dims[0], dims[1], dims[2]); break;
    case 4: field.f = zfp().zfp_field_4d(nullptr, zt, dims[0], dims[1], dims[2], dims[3]); break;
    default: return -1;
  }
  std::array<std::uint64_t, 4> words{};  // room for a full header (at most 148 bits) in whole stream words
  ZfpStream s;
  s.b = stream_open(words.data(), sizeof words);
  s.z = zfp().zfp_stream_open(s.b);
  if (!field.f || !s.z) return -1;
  zfp().zfp_stream_set_accuracy(s.z, accuracy);
  const std::size_t bits = zfp().zfp_write_header(s.z, field.f, ZFP_HEADER_FULL);
  if (bits == 0) return -1;
  zfp().zfp_stream_flush(s.z);
  const std::size_t header_words = (bits + 31) / 32;
  if (1 + header_words > kMaxCd) return -1;
  std::array<unsigned, kMaxCd> stored{};
  stored[0] = kZfpVersionWord;
  std::memcpy(&stored[1], words.data(), header_words * sizeof(unsigned));  // little-endian words, as H5Z-ZFP
  return H5Pmodify_filter(dcpl, kZfpFilterId, flags, 1 + header_words, stored.data());
}

// The chunk codec: zfp's stream for the field and mode of the header in cd_values[1..].
std::size_t zfp_filter(unsigned flags, std::size_t cd_n, const unsigned cd[], std::size_t nbytes, std::size_t* buf_size,
                       void** buf) {
  if (cd_n < 2 || cd_n > kMaxCd) return 0;
  const unsigned writer_codec = (cd[0] >> 12) & 0xF;
  std::array<std::uint64_t, 4> words{};
  std::memcpy(words.data(), &cd[1], (cd_n - 1) * sizeof(unsigned));
  ZfpStream header;
  header.b = stream_open(words.data(), sizeof words);
  header.z = zfp().zfp_stream_open(header.b);
  ZfpField field;
  field.f = zfp().zfp_field_alloc();
  if (!header.z || !field.f || zfp().zfp_read_header(header.z, field.f, ZFP_HEADER_FULL) == 0) return 0;
  const std::uint64_t mode = zfp().zfp_stream_mode(header.z);
  const std::size_t elem = zfp().zfp_type_size(zfp().zfp_field_type(field.f));
  const std::size_t raw = zfp().zfp_field_size(field.f, nullptr) * elem;
  ZfpStream s;
  s.z = zfp().zfp_stream_open(nullptr);
  if (!s.z || zfp().zfp_stream_set_mode(s.z, mode) == zfp_mode_null || elem == 0) return 0;
  if (flags & H5Z_FLAG_REVERSE) {
    if (writer_codec > ZFP_CODEC) return 0;  // a newer codec than this zfp decodes
    void* out = std::malloc(raw);
    if (!out) return 0;
    s.b = stream_open(*buf, nbytes);
    zfp().zfp_stream_set_bit_stream(s.z, s.b);
    zfp().zfp_field_set_pointer(field.f, out);
    if (zfp().zfp_decompress(s.z, field.f) == 0) {
      std::free(out);
      return 0;
    }
    std::free(*buf);
    *buf = out;
    *buf_size = raw;
    return raw;
  }
  if (nbytes != raw) return 0;
  zfp().zfp_field_set_pointer(field.f, *buf);
  const std::size_t cap = zfp().zfp_stream_maximum_size(s.z, field.f);
  void* out = std::malloc(cap);
  if (!out) return 0;
  s.b = stream_open(out, cap);
  zfp().zfp_stream_set_bit_stream(s.z, s.b);
  zfp().zfp_stream_rewind(s.z);
  const std::size_t n = zfp().zfp_compress(s.z, field.f);
  if (n == 0 || n > cap) {
    std::free(out);
    return 0;
  }
  std::free(*buf);
  *buf = out;
  *buf_size = cap;
  return n;
}

const H5Z_class2_t kZfpClass = {
    H5Z_CLASS_T_VERS, kZfpFilterId,  1,         1, "H5Z-ZFP 1.1.1 compatible (rewind, zfp " ZFP_VERSION_STRING ")",
    zfp_can_apply,    zfp_set_local, zfp_filter};
}  // namespace

const H5Z_class2_t* zfp_filter_class() { return zfp().ok ? &kZfpClass : nullptr; }

std::array<unsigned, 4> zfp_accuracy_cd_values(double accuracy) {
  std::array<unsigned, 4> cd{kModeAccuracy, 0, 0, 0};
  std::memcpy(&cd[2], &accuracy, sizeof(double));
  return cd;
}

}  // namespace rwd::kernel::detail

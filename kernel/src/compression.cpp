#include "compression.hpp"

#include <fmt/core.h>
#include <zfp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>

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
  ~ZfpField() { if (f) zfp_field_free(f); }
};
struct ZfpStream {
  zfp_stream* z = nullptr;
  bitstream* b = nullptr;
  ~ZfpStream() {
    if (z) zfp_stream_close(z);
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
  if (H5Pget_filter_by_id2(dcpl, kFilterZfp, &flags, &n, cd.data(), 0, nullptr, nullptr) < 0) return -1;
  if (n < 4 || cd[0] != kModeAccuracy) return -1;
  double accuracy = 0;
  std::memcpy(&accuracy, &cd[2], sizeof accuracy);
  const auto dims = zfp_dims(chunk_space);
  const zfp_type zt = zfp_type_of(type);
  ZfpField field;
  switch (dims.size()) {
    case 1: field.f = zfp_field_1d(nullptr, zt, dims[0]); break;
    case 2: field.f = zfp_field_2d(nullptr, zt, dims[0], dims[1]); break;
    case 3: field.f = zfp_field_3d(nullptr, zt, dims[0], dims[1], dims[2]); break;
    case 4: field.f = zfp_field_4d(nullptr, zt, dims[0], dims[1], dims[2], dims[3]); break;
    default: return -1;
  }
  std::array<std::uint64_t, 4> words{};  // room for a full header (at most 148 bits) in whole stream words
  ZfpStream s;
  s.b = stream_open(words.data(), sizeof words);
  s.z = zfp_stream_open(s.b);
  if (!field.f || !s.z) return -1;
  zfp_stream_set_accuracy(s.z, accuracy);
  const std::size_t bits = zfp_write_header(s.z, field.f, ZFP_HEADER_FULL);
  if (bits == 0) return -1;
  zfp_stream_flush(s.z);
  const std::size_t header_words = (bits + 31) / 32;
  if (1 + header_words > kMaxCd) return -1;
  std::array<unsigned, kMaxCd> stored{};
  stored[0] = kZfpVersionWord;
  std::memcpy(&stored[1], words.data(), header_words * sizeof(unsigned));  // little-endian words, as H5Z-ZFP
  return H5Pmodify_filter(dcpl, kFilterZfp, flags, 1 + header_words, stored.data());
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
  header.z = zfp_stream_open(header.b);
  ZfpField field;
  field.f = zfp_field_alloc();
  if (!header.z || !field.f || zfp_read_header(header.z, field.f, ZFP_HEADER_FULL) == 0) return 0;
  const std::uint64_t mode = zfp_stream_mode(header.z);
  const std::size_t elem = zfp_type_size(zfp_field_type(field.f));
  const std::size_t raw = zfp_field_size(field.f, nullptr) * elem;
  ZfpStream s;
  s.z = zfp_stream_open(nullptr);
  if (!s.z || zfp_stream_set_mode(s.z, mode) == zfp_mode_null || elem == 0) return 0;
  if (flags & H5Z_FLAG_REVERSE) {
    if (writer_codec > ZFP_CODEC) return 0;  // a newer codec than this zfp decodes
    void* out = H5allocate_memory(raw, false);
    if (!out) return 0;
    s.b = stream_open(*buf, nbytes);
    zfp_stream_set_bit_stream(s.z, s.b);
    zfp_field_set_pointer(field.f, out);
    if (zfp_decompress(s.z, field.f) == 0) {
      H5free_memory(out);
      return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = raw;
    return raw;
  }
  if (nbytes != raw) return 0;
  zfp_field_set_pointer(field.f, *buf);
  const std::size_t cap = zfp_stream_maximum_size(s.z, field.f);
  void* out = H5allocate_memory(cap, false);
  if (!out) return 0;
  s.b = stream_open(out, cap);
  zfp_stream_set_bit_stream(s.z, s.b);
  zfp_stream_rewind(s.z);
  const std::size_t n = zfp_compress(s.z, field.f);
  if (n == 0 || n > cap) {
    H5free_memory(out);
    return 0;
  }
  H5free_memory(*buf);
  *buf = out;
  *buf_size = cap;
  return n;
}

const H5Z_class2_t kZfpClass = {
    H5Z_CLASS_T_VERS, static_cast<H5Z_filter_t>(kFilterZfp), 1, 1,
    "H5Z-ZFP 1.1.1 compatible (rewind, zfp " ZFP_VERSION_STRING ")", zfp_can_apply, zfp_set_local, zfp_filter};

bool can_encode(H5Z_filter_t id) {
  unsigned config = 0;
  return H5Zfilter_avail(id) > 0 && H5Zget_filter_info(id, &config) >= 0 && (config & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

// Debian installs hdf5-filter-plugin's LZ4 only beside the serial library
// (.../hdf5/serial/plugins); the parallel library searches .../hdf5/openmpi/plugins.
// The plugin calls nothing but HDF5's allocator and error stack, and writes and reads
// correctly from the parallel library (ROMIO and OMPIO, 1-4 ranks; docs/file-format.md).
void add_serial_plugin_dir() {
  if (H5Zfilter_avail(kFilterLz4) > 0) return;
  unsigned n = 0;
  if (H5PLsize(&n) < 0) return;
  for (unsigned i = 0; i < n; ++i) {
    char dir[4096] = {};
    if (H5PLget(i, dir, sizeof dir) <= 0) continue;
    std::string d(dir);
    const auto at = d.find("/hdf5/openmpi/plugins");
    if (at == std::string::npos) continue;
    d.replace(at, 21, "/hdf5/serial/plugins");
    std::error_code ec;
    if (std::filesystem::is_directory(d, ec)) H5PLappend(d.c_str());
    return;
  }
}
}  // namespace

void register_filters() {
  static std::once_flag once;
  std::call_once(once, [] {
    h5::silence_errors();
    H5Zregister(&kZfpClass);
    add_serial_plugin_dir();
  });
}

std::string filter_unavailable(const std::string& compression) {
  register_filters();
  if (compression == "none") return "";
  if (compression == "deflate")
    return can_encode(H5Z_FILTER_DEFLATE) && can_encode(H5Z_FILTER_SHUFFLE) ? "" : "this HDF5 library has no deflate";
  if (compression == "lz4")
    return can_encode(kFilterLz4) ? ""
                                  : "HDF5 cannot load the LZ4 filter (32004): install Debian's hdf5-filter-plugin, or "
                                    "put the directory of an LZ4 plugin on HDF5_PLUGIN_PATH";
  if (compression == "bitshuffle")
    return can_encode(kFilterBitshuffle) ? ""
                                         : "HDF5 cannot load the bitshuffle filter (32008): install Debian's bitshuffle "
                                           "package, or put the directory of a bitshuffle plugin on HDF5_PLUGIN_PATH";
  return "unknown compression";
}

h5::Plist make_filtered_dcpl(const h5::Ctx& c, const IoOptions& o, Storage storage, const std::vector<hsize_t>& shape) {
  register_filters();
  h5::Plist dcpl(c.check(H5Pcreate(H5P_DATASET_CREATE), "create dcpl"));
  std::vector<hsize_t> chunk = shape;
  chunk[0] = std::clamp<hsize_t>(static_cast<hsize_t>(o.chunk_grids), 1, std::max<hsize_t>(shape[0], 1));
  c.check_status(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), "set chunk");
  if (o.fill_never) c.check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "set fill time");
  c.check_status(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "set alloc time");
  if (storage == Storage::zfp) {
    std::array<unsigned, 4> cd{kModeAccuracy, 0, 0, 0};
    std::memcpy(&cd[2], &o.zfp_accuracy, sizeof(double));
    c.check_status(H5Pset_filter(dcpl, kFilterZfp, H5Z_FLAG_MANDATORY, cd.size(), cd.data()), "set zfp filter");
    c.check_status(H5Pset_fletcher32(dcpl), "set fletcher32");
  } else if (o.compression == "deflate") {
    c.check_status(H5Pset_shuffle(dcpl), "set shuffle");
    c.check_status(H5Pset_deflate(dcpl, static_cast<unsigned>(o.compression_level)), "set deflate");
  } else if (o.compression == "lz4") {
    c.check_status(H5Pset_filter(dcpl, kFilterLz4, H5Z_FLAG_MANDATORY, 0, nullptr), "set lz4 filter");
  } else if (o.compression == "bitshuffle") {
    const unsigned cd[2] = {0, 2};  // block size: automatic; 2 = LZ4 after the shuffle
    c.check_status(H5Pset_filter(dcpl, kFilterBitshuffle, H5Z_FLAG_MANDATORY, 2, cd), "set bitshuffle filter");
  }
  return dcpl;
}

}  // namespace rwd::kernel::detail

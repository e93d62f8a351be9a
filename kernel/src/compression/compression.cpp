#include "compression/compression.hpp"
#include "compression/zfp_codec.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

namespace rwd::kernel::detail {

namespace {

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
    if (const H5Z_class2_t* zfp = zfp_filter_class()) H5Zregister(zfp);
    add_serial_plugin_dir();
  });
}

std::string filter_unavailable(Codec codec) {
  register_filters();
  switch (codec) {
    case Codec::none: return "";
    case Codec::zfp: return zfp_filter_class() ? "" : "libzfp.so.1 cannot be loaded (Debian: apt-get install libzfp1)";
    case Codec::deflate:
      return can_encode(H5Z_FILTER_DEFLATE) && can_encode(H5Z_FILTER_SHUFFLE) ? "" : "this HDF5 library has no deflate";
    case Codec::lz4:
      return can_encode(kFilterLz4)
                 ? ""
                 : "HDF5 cannot load the LZ4 filter (32004): install Debian's hdf5-filter-plugin, or "
                   "put the directory of an LZ4 plugin on HDF5_PLUGIN_PATH";
    case Codec::bitshuffle:
      return can_encode(kFilterBitshuffle)
                 ? ""
                 : "HDF5 cannot load the bitshuffle filter (32008): install Debian's bitshuffle "
                   "package, or put the directory of a bitshuffle plugin on HDF5_PLUGIN_PATH";
  }
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
    const auto cd = zfp_accuracy_cd_values(o.zfp_accuracy);
    c.check_status(H5Pset_filter(dcpl, kFilterZfp, H5Z_FLAG_MANDATORY, cd.size(), cd.data()), "set zfp filter");
    c.check_status(H5Pset_fletcher32(dcpl), "set fletcher32");
  } else if (o.compression == Codec::deflate) {
    c.check_status(H5Pset_shuffle(dcpl), "set shuffle");
    c.check_status(H5Pset_deflate(dcpl, static_cast<unsigned>(o.compression_level)), "set deflate");
  } else if (o.compression == Codec::lz4) {
    c.check_status(H5Pset_filter(dcpl, kFilterLz4, H5Z_FLAG_MANDATORY, 0, nullptr), "set lz4 filter");
  } else if (o.compression == Codec::bitshuffle) {
    const unsigned cd[2] = {0, 2};  // block size: automatic; 2 = LZ4 after the shuffle
    c.check_status(H5Pset_filter(dcpl, kFilterBitshuffle, H5Z_FLAG_MANDATORY, 2, cd), "set bitshuffle filter");
  }
  return dcpl;
}

}  // namespace rwd::kernel::detail

// Private: compressed (chunked, filtered) datasets (docs/file-format.md §4, "Compression").
//
// A step's cell datasets (cell_type and the fields) may be stored chunked, a run of
// `chunk_grids` grids per chunk, through a lossless filter (IoOptions::compression) or,
// for a visualisation step's fields, zfp's error-bounded lossy codec. HDF5 1.10.2+ writes
// filtered datasets in parallel only with collective transfers; the zero-copy write
// (file offsets), early writeback (file offsets) and direct reads (file offsets) do not
// apply to them, so the writer and reader use HDF5's own path for exactly those datasets.
//
// The zfp codec is Rewind's own (zfp_codec.hpp), registered under H5Z-ZFP's filter id
// 32013 with the cd_values and chunk stream H5Z-ZFP (LLNL) 1.1 writes: cd_values[0]
// packs zfp's library version, zfp's codec version and H5Z-ZFP's version; cd_values[1..]
// hold zfp's full stream header (magic, field, mode) as 32-bit words; each chunk is zfp's
// compressed stream without header. So h5py with `hdf5plugin` reads what Rewind writes.
#pragma once
#include <string>
#include <vector>

#include "io/h5util.hpp"
#include "rewind/kernel/options.hpp"
#include "compression/zfp_codec.hpp"

namespace rwd::kernel::detail {

inline constexpr H5Z_filter_t kFilterLz4 = 32004;            ///< HDF5's registered LZ4 filter
inline constexpr H5Z_filter_t kFilterBitshuffle = 32008;     ///< bitshuffle (+ LZ4)
inline constexpr H5Z_filter_t kFilterZfp = kZfpFilterId;     ///< H5Z-ZFP (zfp_codec.hpp)
inline constexpr const char* kZfpAccuracy = "zfp_accuracy";  ///< attribute of a zfp dataset

/// How one dataset is stored.
enum class Storage { contiguous, lossless, zfp };

/// Makes the filters known to this process, once: registers Rewind's zfp codec (id
/// 32013) and, when the LZ4 filter is not on HDF5's plugin path, appends the directory
/// where Debian's hdf5-filter-plugin installs it (beside the parallel library's own).
void register_filters();

/// "" when `codec` can encode here (always for none); else why not, in one sentence that
/// names the package to install.
std::string filter_unavailable(Codec codec);

/// Creation list of a chunked, filtered dataset of `shape` (rows first): chunks of
/// min(chunk_grids, rows) rows, fill never, early allocation (HDF5 1.10 allocates every
/// chunk of a parallel filtered dataset at creation anyway). `zfp`: the zfp codec at
/// `o.zfp_accuracy` plus Fletcher-32 (such rows have no row checksum); otherwise
/// `o.compression`.
h5::Plist make_filtered_dcpl(const h5::Ctx& c, const IoOptions& o, Storage storage, const std::vector<hsize_t>& shape);

}  // namespace rwd::kernel::detail

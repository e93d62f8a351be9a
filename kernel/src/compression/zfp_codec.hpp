// Private: the zfp chunk codec, registered under H5Z-ZFP's filter id 32013 (format and
// cd_values: docs/file-format.md §4, "Compression"). The kernel registers it with
// H5Zregister (compression.cpp); the same code is also built as an HDF5 plugin module
// (kernel/plugin/, build/lib/hdf5-plugins/librewind_h5z_zfp.so) so that tools on a plain
// HDF5 — h5dump, h5py, ParaView — read zfp datasets with HDF5_PLUGIN_PATH pointing there.
// It calls HDF5 only through the C API (resolved from the host process in the plugin),
// and zfp through functions looked up in libzfp.so.1.
#pragma once
#include <hdf5.h>

#include <array>

namespace rwd::kernel::detail {

inline constexpr H5Z_filter_t kZfpFilterId = 32013;

/// The filter class: encoder and decoder, can_apply (float32 / float64 chunks with 1-4
/// dimensions larger than one), set_local (stores zfp's header in cd_values); nullptr
/// when libzfp.so.1 cannot be loaded (it is opened on first use, with RTLD_DEEPBIND).
const H5Z_class2_t* zfp_filter_class();

/// H5Z-ZFP's in-memory cd_values for fixed accuracy (what H5Pset_filter takes): mode 3,
/// 0, the bound's double as two 32-bit words. set_local turns them into the stored form.
std::array<unsigned, 4> zfp_accuracy_cd_values(double accuracy);

}  // namespace rwd::kernel::detail

// An HDF5 filter plugin with Rewind's zfp codec (H5Z-ZFP's filter id 32013, its stored
// format): put the directory of librewind_h5z_zfp.so on HDF5_PLUGIN_PATH and h5dump,
// h5py or ParaView on a plain HDF5 (serial or parallel) read Rewind's zfp datasets. It
// is linked against neither HDF5 (the loading process has one) nor zfp (the codec opens
// libzfp.so.1 itself: zfp_codec.cpp says why).
#include <H5PLextern.h>

#include "compression/zfp_codec.hpp"

extern "C" {
H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
const void* H5PLget_plugin_info(void) { return rwd::kernel::detail::zfp_filter_class(); }
}

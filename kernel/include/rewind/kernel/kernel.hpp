// Umbrella header of the Rewind HDF5 I/O kernel (rewind::kernel). C++17, no hdf5.h.
#pragma once
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/grid_statistics.hpp"
#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/io_ranks.hpp"
#include "rewind/kernel/lineage.hpp"
#include "rewind/kernel/metadata.hpp"
#include "rewind/kernel/options.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/views.hpp"
#include "rewind/kernel/writer.hpp"

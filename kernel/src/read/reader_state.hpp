// Private: the state behind Reader (reader.hpp), shared by the files that implement it:
// reader.cpp (open, list and select steps, the fields' list), read_topology.cpp (the tree's
// rows), read_cells.cpp (cell data: rows, fields, fields straight into padded arrays, cell
// types) and verify.cpp (a step's checksums, the index against the steps).
#pragma once
#include <cstdint>
#include <string>

#include "io/h5util.hpp"
#include "rewind/kernel/metadata.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::kernel::detail {

/// Reader's state: the open file and its transfer settings.
struct ReaderState {
  std::string path;
  h5::Ctx ctx;
  mpi::Comm comm;  ///< a duplicate; empty for a serial reader
  h5::File file;
  h5::Plist dxpl;        ///< bulk reads: collective (MPI) or default (serial)
  h5::Plist dxpl_indep;  ///< bulk reads made of large contiguous runs (see read_cells.cpp)
  CommonInfo common;
  int major = 0, minor = 0;
  std::int64_t missing = 0;  ///< bytes the file lacks at its end (open_readonly_serial)

  ~ReaderState() { file.reset(); }  // before `comm`, which the file's MPI-IO handle uses
};

/// From format 1.7 an index row follows its step's committed flag in a flush of its own.
inline bool witnessed_flags(const ReaderState& r) { return r.major > 1 || r.minor >= 7; }

}  // namespace rwd::kernel::detail

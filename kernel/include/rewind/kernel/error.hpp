// Typed errors of the Rewind I/O kernel.
//
// Every failure the kernel reports is a rwd::kernel::FileError (a caller's mistake too:
// ErrorKind::invalid_argument). what() is always
// ONE line: "<file>: <problem>[ (<detail>)]"; the HDF5 error stack, if any, is
// folded into `detail()` (and into what(), shortened). HDF5's automatic stack
// printing is silenced by the kernel the first time it touches HDF5.
#pragma once
#include <stdexcept>
#include <string>

namespace rwd::kernel {

/// What went wrong with a file. Stable: tools switch on it.
enum class ErrorKind {
  not_found,         ///< the path does not exist or cannot be opened at all
  not_hdf5,          ///< the file is not an HDF5 file
  not_rewind,        ///< an HDF5 file without the Rewind format attributes
  newer_version,     ///< written by a newer major format version than this reader knows
  truncated,         ///< shorter than its own metadata says (copied or killed mid-write)
  corrupt,           ///< HDF5 could not read its own metadata
  missing_object,    ///< a documented group, dataset or attribute is missing
  bad_shape,         ///< a dataset or attribute has the wrong type or shape
  no_such_step,      ///< the requested step does not exist or is not committed
  io,                ///< a read or write failed for another reason (MPI-IO, a lost server)
  no_space,          ///< a write failed: the file system is full or the quota used up
                     ///< (ENOSPC, EDQUOT); the committed steps are intact
  claimed,           ///< another job writes the file (claim.hpp: one writing job per file)
  invalid_argument,  ///< the caller passed inconsistent data (detected before any I/O)
};

/// Short name of an ErrorKind ("truncated", "newer_version", ...).
const char* to_string(ErrorKind kind) noexcept;

/// For a program's main, before MPI_Init and before any other kernel call: starts HDF5
/// so that it is never shut down behind the program's back — no atexit handler, no hook
/// on MPI_Finalize. HDF5 1.10 keeps a file's ID registered when H5Fclose fails (a full
/// disk fails its last flush) although the file is gone, and its shutdown then closes it
/// again and crashes (a segfault in H5F__close_cb at MPI_Finalize). The kernel closes
/// every file it opens itself, so nothing needs that shutdown. Idempotent; a no-op once
/// HDF5 has started.
void keep_hdf5_until_exit() noexcept;

/// The one exception type of the kernel.
class FileError : public std::runtime_error {
 public:
  FileError(ErrorKind kind, std::string file, std::string problem, std::string detail = {});
  [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }
  /// The folded HDF5 error stack (innermost message last), or empty.
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  ErrorKind kind_;
  std::string file_, problem_, detail_;
};

}  // namespace rwd::kernel

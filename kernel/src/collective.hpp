// Private: ranks agree on success before continuing with collectives.
#pragma once
#include <mpi.h>

#include <optional>
#include <string>

#include "rewind/kernel/error.hpp"

namespace rwd::kernel::detail {

/// Collective over `comm`: if any rank has an error, every rank throws the error of the
/// lowest failing rank (kind, problem and detail are broadcast). No-op for MPI_COMM_NULL
/// (serial mode), where a local error is simply thrown.
void agree(MPI_Comm comm, const std::optional<FileError>& local, const std::string& file);

/// Runs `f`, catching its exception, then agree()s.
template <typename F>
void phase(MPI_Comm comm, const std::string& file, F&& f) {
  std::optional<FileError> err;
  try {
    f();
  } catch (const FileError& e) {
    err = e;
  } catch (const std::exception& e) {
    err = FileError(ErrorKind::io, file, e.what());
  }
  agree(comm, err, file);
}

}  // namespace rwd::kernel::detail

// Private: ranks agree on success before continuing with collectives.
#pragma once
#include <mpi.h>

#include <optional>
#include <string>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel::detail {

/// Collective over `comm`: if any rank has an error, every rank throws the error of the
/// lowest failing rank (kind, problem and detail are broadcast). No-op for MPI_COMM_NULL
/// (serial mode), where a local error is simply thrown.
void agree(MPI_Comm comm, const std::optional<FileError>& local, const std::string& file);

/// Collective over `comm`, before a step is written: its description (step, time, dt,
/// kind, fields, cell types, case overrides, monitor state) is bit for bit the same on
/// every rank, or every rank throws FileError(invalid_argument) naming what differs (a
/// step written from two descriptions is damaged). One allreduce of 16 words. No-op for
/// MPI_COMM_NULL.
void agree_step_info(MPI_Comm comm, const StepInfo& info, const std::string& file);

/// The operating system's reason a write failed for lack of space, when an HDF5, MPI-IO
/// or errno text names it (ENOSPC: "No space left on device", EDQUOT: "Disk quota
/// exceeded", as errno text or MPI error class), or "".
std::string no_space_cause(const std::string& text);

/// Runs `f`, catching its exception, then agree()s. Another exception than FileError
/// becomes FileError(io), or FileError(no_space) when its text names a full disk.
template <typename F>
void phase(MPI_Comm comm, const std::string& file, F&& f) {
  std::optional<FileError> err;
  try {
    f();
  } catch (const FileError& e) {
    err = e;
  } catch (const std::exception& e) {
    err = FileError(no_space_cause(e.what()).empty() ? ErrorKind::io : ErrorKind::no_space, file, e.what());
  }
  agree(comm, err, file);
}

}  // namespace rwd::kernel::detail

// Errors every compute rank agrees on: one rank's failure becomes every rank's, in its
// words. Private to rewind::driver.
#pragma once
#include <mpi.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace rwd::driver {

/// Every rank throws the message of the lowest rank of `comm` that caught `error` (as a
/// std::runtime_error), or returns when none did. Collective.
inline void agree_error(MPI_Comm comm, const std::exception_ptr& error) {
  std::string message;
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown error";
    }
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = error ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  long long n = static_cast<long long>(message.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, first, comm);
  message.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(message.data(), static_cast<int>(n), MPI_CHAR, first, comm);
  throw std::runtime_error(message);
}

/// Runs `f` on every rank of `comm`; if it throws on any, every rank throws the message of
/// the lowest failing rank. Collective.
template <class F>
void agreed(MPI_Comm comm, F f) {
  std::exception_ptr error;
  try {
    f();
  } catch (const std::exception&) {
    error = std::current_exception();
  }
  agree_error(comm, error);
}

}  // namespace rwd::driver

// Ranks agree on a failure before a collective: the lowest failing rank's message, thrown
// on every rank. Private to the C API.
#pragma once
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace rwd::api {

/// Collective. If `problem` is non-empty on any rank of `comm`, every rank throws
/// std::invalid_argument with the message of the lowest such rank.
inline void agree_or_throw(MPI_Comm comm, const std::string& problem) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int mine = problem.empty() ? size : rank;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int length = rank == first ? static_cast<int>(problem.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::string text = rank == first ? problem : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
  throw std::invalid_argument(text);
}

}  // namespace rwd::api

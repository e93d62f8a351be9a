// Small helpers for tests that run on several MPI ranks.
#pragma once
#include <mpi.h>

namespace rwd::test {

inline int world_rank() { int r = 0; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
inline int world_size() { int s = 1; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }

/// True on every rank iff `ok` is true on every rank (collective).
inline bool all_ranks(bool ok) {
  int in = ok ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

}  // namespace rwd::test

// One matched receive of a message whose size is known only on arrival, as the
// neighbourhood server, its clients and the dedicated I/O ranks take them (MPI_Mprobe +
// MPI_Mrecv: no other thread's receive can take the message between the probe and the
// receive). A server that may sit idle for long waits with `napping` (backoff.hpp).
// Header-only, C++17.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "rewind/mpi/backoff.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::mpi {

/// Receives the next message from `source` (or MPI_ANY_SOURCE) with `tag` into `into`
/// (resized to fit); returns its status. `who` names the caller in errors. With
/// `napping`, waits for the message with wait_until (a server's idle wait) instead of a
/// blocking probe.
inline MPI_Status receive_message(int source, int tag, MPI_Comm comm, std::vector<std::byte>& into, const char* who,
                                  const Backoff* napping = nullptr) {
  MPI_Status status;
  MPI_Message msg;
  if (napping) {
    wait_until(
        [&] {
          int flag = 0;
          check(MPI_Improbe(source, tag, comm, &flag, &msg, &status), who, "MPI_Improbe");
          return flag != 0;
        },
        *napping);
  } else {
    check(MPI_Mprobe(source, tag, comm, &msg, &status), who, "MPI_Mprobe");
  }
  int count = 0;
  check(MPI_Get_count(&status, MPI_BYTE, &count), who, "MPI_Get_count");
  into.resize(static_cast<std::size_t>(count));
  check(MPI_Mrecv(into.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE), who, "MPI_Mrecv");
  return status;
}

}  // namespace rwd::mpi

// The collector rank of a live run (paper, Fig. 4): TCP clients on one side, the
// neighbourhood server and the compute ranks on the other.
//
// A window of the live state goes client → collector → neighbourhood server (which
// grids, cropped how, on which ranks: rewind::window::select on the whole tree) →
// the compute ranks, at their next step boundary, copy the selected cells → collector
// → client: with zstd once every cell has arrived; with codec none streamed, the
// header first, then each array's bytes as they arrive (WindowStream). Windows of
// past steps are read from the run's files while the compute ranks hold at a
// boundary (so never during a write: committed steps only, no torn reads). Steering commands travel the same way (driver/live.hpp).
//
// Threads: Asio and the request worker run on helper threads (collector::Server);
// every MPI and HDF5 call stays on the calling (main) thread. The two meet through a
// queue of jobs: a service call posts a job and waits for it, the main thread runs
// the jobs between MPI polls. A slow or vanished client costs only its own
// connection; the run never waits for a client (it only sees commands that are
// already complete).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>

#include "rewind/collector/messages.hpp"
#include "rewind/collector/server.hpp"

namespace rwd::collector {

/// Where the other parts of the job are, on the service communicator.
struct LiveLayout {
  MPI_Comm service = MPI_COMM_NULL;
  int nbserver = 0;         ///< the neighbourhood server's rank
  int first_compute = 2;    ///< compute rank r is service rank first_compute + r
  int compute_size = 1;
};

/// What a live collector did, for the run's closing lines.
struct LiveStats {
  ServerStats server;
  std::uint64_t windows = 0;  ///< live windows served
  /// Of them, sent from memory shared with the compute ranks (codec none, a slot free);
  /// the others went through the collector's own arrays (zstd, or both slots still
  /// being written to slow clients).
  std::uint64_t from_shared_memory = 0;
};

/// Runs the collector rank until the run has ended: starts the TCP server with
/// `options` (reporting the bound port through `on_listen`), serves, then stops the
/// server, says bye to the compute ranks and releases the neighbourhood server.
/// `info` describes the run (variables, geometry); its file list comes from the run.
/// Throws std::invalid_argument / std::runtime_error if the server cannot start.
LiveStats run_live_collector(const LiveLayout& layout, ServerInfo info, ServerOptions options,
                               const std::function<void(std::uint16_t)>& on_listen);

}  // namespace rwd::collector

// The live relay: the core of a run's collector (paper, Fig. 4). The TCP collector
// (rewind::collector's Server) faces the clients; the relay is the collector::Service
// behind it, which relays their requests to the compute ranks (link.hpp) and their cells
// back. "Collector" names the TCP server and the process (rank or thread) that runs it;
// "relay" names this core, which only a live run has (`rewind serve` puts a FileService
// behind the same server instead).
//
// A window of the live state goes client → collector → relay → a selection over the
// whole tree (rewind::window::select: which grids, cropped how, on which ranks; from the
// neighbourhood server, or from the tree the compute ranks gathered: tree.hpp) → the
// compute ranks, at their next step boundary, copy the selected cells → relay →
// client: with zstd once every cell has arrived; with codec none streamed as the cells
// arrive (rank mode). Windows of past steps are read from the run's files while the
// compute ranks hold at a boundary (committed steps only, no torn reads). Steering
// commands travel the same way.
//
// Two places, one relay:
// - run_relay(): the collector is a rank of its own (the Damaris model), its main
//   thread runs the relay and does every MPI and HDF5 call; the TCP server
//   (collector::Server) runs on helper threads and meets it through a queue of jobs.
// - RelayThread: the collector is a thread of compute rank 0 (the Catalyst Live
//   model): the same relay on a thread that makes no MPI call, talking to rank 0's main
//   thread through memory (ThreadChannel); rank 0 gathers the cells at the boundary.
// A slow or vanished client costs only its own connection; the run never waits for a
// client (it sees only commands that are complete).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "rewind/collector/messages.hpp"
#include "rewind/collector/server.hpp"
#include "rewind/launch/roles.hpp"
#include "rewind/live/tree.hpp"

namespace rwd::live {

class ThreadChannel;

/// Selects a window over the whole tree (with owners). Called on the relay's thread.
/// Empty: the tree the compute ranks send (tree.hpp).
using Selector = std::function<Selection(const window::Window&)>;

/// `select`, answering a window it answered among the last `keep` from memory. Only for
/// a selector whose answer depends on the window alone: the neighbourhood server's,
/// whose tree is fixed for the job (`rewind run --listen`). A live client asks for the
/// same window step after step, and each answer took 0.8 ms over MPI (the server's
/// wake-up included) before the compute ranks could start on the cells.
Selector remembering(Selector select, std::size_t keep = 8);

/// What a live run's collector (its server and relay) did, for the run's closing lines.
struct RelayStats {
  collector::ServerStats server;
  std::uint64_t windows = 0;  ///< live windows served
  /// Of them, sent from memory shared with the compute ranks (codec none, a slot free);
  /// the others went through the relay's own arrays.
  std::uint64_t from_shared_memory = 0;
};

/// Where the compute ranks are, seen from a collector rank.
struct RankLayout {
  MPI_Comm service = MPI_COMM_NULL;  ///< holds the collector and the compute ranks
  /// Compute rank r is service rank first_compute + r (`rewind run`: launch::Roles::first_compute).
  int first_compute = launch::first_compute_rank(3, true);
  int compute_size = 1;
};

/// The collector as a rank of its own, the relay on its main thread: starts the TCP
/// server with `options` (reporting the bound port through `on_listen`), serves until
/// the run has ended, stops the server and says bye to the compute ranks. `info` describes the run (variables,
/// geometry); its file list comes from the run. Throws std::invalid_argument /
/// std::runtime_error if the server cannot start (the run is stopped first).
RelayStats run_relay(const RankLayout& layout, Selector selector, collector::ServerInfo info,
                     collector::ServerOptions options, const std::function<void(std::uint16_t)>& on_listen);

/// The collector as a thread of compute rank 0 (made there only), running the relay.
/// Construction starts the TCP server (throws std::invalid_argument /
/// std::runtime_error if it cannot) and the thread; Link::to_thread(channel(), compute)
/// on every compute rank is the other side; after Link::finish, join() ends the thread.
class RelayThread {
 public:
  RelayThread(collector::ServerInfo info, collector::ServerOptions options, int compute_size);
  RelayThread(const RelayThread&) = delete;
  RelayThread& operator=(const RelayThread&) = delete;
  ~RelayThread();  ///< joins (the run must have said it finished)
  [[nodiscard]] std::shared_ptr<ThreadChannel> channel() const;
  [[nodiscard]] std::uint16_t port() const;
  RelayStats join();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::live

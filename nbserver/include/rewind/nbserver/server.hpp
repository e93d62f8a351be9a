// The neighbourhood server: one dedicated MPI rank that holds the whole logical tree
// (a spacetree::Topology) and answers the compute ranks' questions.
//
// Split as in the asio examples: `answer()` / `handle_frame()` are the pure request
// handler (no MPI, unit-tested on bytes), `Server` is the MPI transport around it.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "rewind/nbserver/messages.hpp"
#include "rewind/spacetree/topology.hpp"
#include "rewind/window/tree_view.hpp"

namespace rwd::nbserver {

/// MPI tags of nbserver traffic on the service communicator (see docs/protocol.md).
inline constexpr int kRequestTag = 0x4e42;  // "NB"
inline constexpr int kReplyTag = 0x4e43;

/// The reply to one decoded request. Never throws for a bad request: unknown UIDs,
/// bad arguments and replies sent as requests become an ErrorReply. The reply
/// carries the request's id.
/// A window request runs rewind::window::select on `arrays` (the topology's tree as
/// window::arrays_of gives it; built on the fly when null).
Message answer(const spacetree::Topology& topology, const Message& request, const window::TreeArrays* arrays = nullptr);

/// Decodes `frame`, answers it and encodes the reply; a frame that does not decode
/// becomes an encoded ErrorReply (request id 0 if the header itself was bad).
/// `shutdown` is set if the frame was a valid shutdown request.
std::vector<std::byte> handle_frame(const spacetree::Topology& topology, std::span<const std::byte> frame, bool& shutdown,
                                    const window::TreeArrays* arrays = nullptr);

struct ServerStats {
  std::int64_t requests = 0;   ///< frames handled (shutdown included)
  std::int64_t errors = 0;     ///< of which answered with an ErrorReply
  std::int64_t bytes_in = 0;
  std::int64_t bytes_out = 0;
  double busy_seconds = 0.0;   ///< time spent decoding, answering and encoding
};

class Server {
 public:
  /// `service` is the communicator shared with the clients (Roles::service); this
  /// rank answers on it. `clients`: how many shutdown requests end serve() — 1 (the
  /// compute ranks' root), 2 with a collector, which may still select windows after
  /// the compute ranks are done. Not collective. The server does not take ownership.
  Server(spacetree::Topology topology, MPI_Comm service, int clients = 1);

  [[nodiscard]] const spacetree::Topology& topology() const { return topology_; }

  /// Answers requests from any rank of `service`, one at a time in arrival order,
  /// until `clients` shutdown requests arrived (each is acknowledged). Not collective;
  /// blocks. Throws std::runtime_error on an MPI error.
  ServerStats serve();

 private:
  spacetree::Topology topology_;
  MPI_Comm service_;
  int clients_;
  window::TreeArrays arrays_;
};

}  // namespace rwd::nbserver

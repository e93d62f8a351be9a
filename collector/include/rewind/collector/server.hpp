// The collector's TCP server (docs/collector-protocol.md, "Sessions" and "Security").
//
// Design (asio's cpp11/http/server split): the codec (messages.hpp) and the handler
// (handler.hpp) are pure; this server owns one acceptor, a connection manager and one
// state machine per connection, all on one I/O thread, plus TWO worker threads that
// run the Service calls and encode the replies: one for queries (info, steps, window,
// status, parameters), one for steering (control, set, branch), the Service's two
// lanes. So queries are serialised (HDF5 as shipped by Debian is not thread-safe), a
// slow query never stalls the I/O of other clients, their deadlines or their error
// replies, and a steering call that waits for the run's next step boundary stalls
// neither windows nor status. A steering call that has not answered within
// steer_timeout gets ErrorReply(timeout) (the session continues; the late reply is
// dropped; the action may still take effect, `status` tells).
//
// Per connection: a new connection is *pending* until its first whole request (the
// hello) has arrived, which must happen within hello_timeout; pending connections hold
// no session slot, and beyond max_pending the oldest is closed (connections that send
// nothing cannot keep anyone out). Its first request makes it a *session* (one of
// max_clients); when every slot is taken, the session idle longest -- waiting for a
// request, or its reply not taken by its client, for at least evict_after -- is closed
// to make room, and only if none is, the newcomer gets ErrorReply(busy) and is closed.
// A session waits for a request up to idle_timeout; once its first byte arrives the
// whole request (header + body) must arrive within request_timeout (a slow-loris client
// is cut off); a reply that makes no progress for write_timeout is cut (a slow but
// steady reader gets it whole, however long it takes). Request, reply, request,
// ...: one write in flight per connection. The first message must be a Hello when a
// token is configured (a wrong token gets one ErrorReply(unauthorized), then the
// connection is closed). A frame that fails to decode or exceeds max_request gets one
// ErrorReply, then the connection is closed. Errors are error_codes inside; nothing
// throws into the I/O thread.
//
// Reply memory: the replies held for clients that have not read them yet (and the
// buffers sessions keep for their next reply) are counted against reply_memory, all
// connections together. A reply that would go beyond it is admitted anyway if it is
// small (kSmallReply) or the only one held; otherwise sessions whose reply has made no
// progress for evict_after are closed (longest stalled first) to make room, and failing
// that the client gets ErrorReply(busy) and its session goes on. When a connection
// that held a large reply closes (or such a reply is refused), the service drops what it
// keeps for reuse (Service::release_kept) and freed memory is handed back to the system
// (malloc_trim) once more than kKeepFreed of it lies unused.
//
// Public header: no Asio (pimpl).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "rewind/collector/handler.hpp"

namespace rwd::collector {

struct ServerOptions {
  /// Address to bind. Loopback ("127.0.0.1", "::1", "localhost") by default; any other
  /// address requires a non-empty token (else start() throws std::invalid_argument).
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  ///< 0: an ephemeral port, see Server::port()
  std::string token;       ///< "" = no Hello required (loopback only)
  std::size_t max_clients = 16;
  /// Connections that have not yet sent a whole first request, at most; one more closes
  /// the oldest of them.
  std::size_t max_pending = 64;
  /// From accept to the first whole request (the hello).
  std::chrono::milliseconds hello_timeout{std::chrono::seconds(5)};
  /// Bytes of replies held for clients that have not read them, all sessions together
  /// (see "Reply memory" above).
  std::uint64_t reply_memory = std::uint64_t{256} << 20;
  /// How long a session must have been idle, or its reply stalled, before it may be
  /// closed to make room for another client (a slot or reply memory).
  std::chrono::milliseconds evict_after{std::chrono::seconds(1)};
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};
  /// Most time a control/set call may take before the client is answered `timeout`;
  /// below the client library's default deadline (ClientOptions::timeout, 30 s).
  std::chrono::milliseconds steer_timeout{std::chrono::seconds(20)};
  /// The same for a branch, which answers once its futures have been restored from the
  /// branch point and have written their first step: that grows with the state (a fork of
  /// a 731 MiB 3-D state took 14-25 s on 2 cores, docs/benchmarks.md), so a branch gets
  /// its own deadline; below ClientOptions::branch_timeout.
  std::chrono::milliseconds branch_timeout{std::chrono::minutes(10)};
  std::uint64_t max_request = kMaxRequestBytes;
  std::uint64_t max_reply = kMaxReplyBytes;
  std::string name = "rewind-collector";
  HandlerLimits limits;
};

/// Counters, for tests and logs (read with Server::stats(), thread-safe).
struct ServerStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused_busy = 0;
  std::uint64_t refused_token = 0;
  std::uint64_t timeouts = 0;  ///< connections cut by a deadline, and steering calls past steer_timeout
  std::uint64_t protocol_errors = 0;
  std::uint64_t requests = 0;
  std::size_t open = 0;  ///< connections open now
  std::uint64_t evicted = 0;         ///< connections closed to make room (pending, idle or stalled)
  std::uint64_t refused_memory = 0;  ///< requests answered busy for want of reply memory
  std::uint64_t reply_bytes = 0;     ///< bytes of replies (and kept buffers) held now
  std::uint64_t reply_bytes_peak = 0;
};

/// A reply up to this size is always admitted, whatever the reply memory held.
inline constexpr std::uint64_t kSmallReply = std::uint64_t{1} << 20;
/// Memory freed by connections is returned to the system once more than this lies unused.
inline constexpr std::uint64_t kKeepFreed = std::uint64_t{64} << 20;

/// Thread-safety: start/stop/port/stats may be called from any thread (not
/// concurrently with each other's start/stop). Does not own the Service, which must
/// outlive the Server.
class Server {
 public:
  Server(Service& service, ServerOptions options);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();  ///< stop()

  /// Binds, listens and starts the I/O and worker threads. Throws std::invalid_argument
  /// (non-loopback address without token, bad address) or std::runtime_error (bind).
  void start();
  /// The bound port (after start()).
  [[nodiscard]] std::uint16_t port() const;
  /// Cancels the acceptor, every connection and its timers, calls Service::stopping()
  /// (so blocked calls return), and returns after all connections are closed and the
  /// threads joined. Idempotent.
  void stop();
  [[nodiscard]] ServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Asks the kernel to run the calling thread in short slices (sched_setattr's runtime
/// hint: 0.1 ms; Linux 6.12 and later, nothing elsewhere). The collector's threads mostly
/// wait and then have a little to do that a client waits for; on a core a compute rank
/// keeps busy (extracting a window's cells, computing) a waking thread with the default
/// slice waited up to that rank's slice, 1-6 ms per hop of a live window; with a shorter
/// slice it runs at once. Its share of the CPU does not change. The server's I/O and
/// worker threads call it; so does the live relay's thread.
void prefer_short_slices() noexcept;

}  // namespace rwd::collector

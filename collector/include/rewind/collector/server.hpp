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
// Per connection: wait for a request up to idle_timeout; once its first byte arrives
// the whole request (header + body) must arrive within request_timeout (a slow-loris
// client is cut off); a reply must be written within write_timeout. Request, reply,
// request, ...: one write in flight per connection. The first message must be a Hello
// when a token is configured (a wrong token gets one ErrorReply(unauthorized), then the
// connection is closed). A frame that fails to decode or exceeds max_request gets one
// ErrorReply, then the connection is closed. Beyond max_clients, a new connection gets
// ErrorReply(busy) and is closed. Errors are error_codes inside; nothing throws into
// the I/O thread.
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
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};
  /// Most time a control/set/branch call may take before the client is answered
  /// `timeout`; below the client library's default deadline (30 s).
  std::chrono::milliseconds steer_timeout{std::chrono::seconds(20)};
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
};

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

/// True for addresses that only this machine can reach. Pure.
bool is_loopback_host(const std::string& host);

}  // namespace rwd::collector

// A blocking client of the collector (docs/collector-protocol.md).
//
// Every call has a deadline (ClientOptions::timeout): connect, the hello exchange and
// each request/reply. A call that misses it closes the connection and throws
// ClientError(timeout); the Client is then unusable (connected() is false). Errors the
// server answers throw ClientError with the server's code (unauthorized for a refused
// token, bad_version, no_such_step, ...). Public header: no Asio (pimpl).
//
// Thread-safety: one Client per thread; calls on one Client must not overlap.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/collector/messages.hpp"

namespace rwd::collector {

class ClientError : public CodedError {
 public:
  using CodedError::CodedError;
};

struct ClientOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  /// The deadline of a branch call, which waits while the run restores its futures' state
  /// (ServerOptions::branch_timeout, 10 min, answers before it): the larger of this and
  /// `timeout`.
  std::chrono::milliseconds branch_timeout{std::chrono::minutes(11)};
  std::uint64_t max_reply = kMaxReplyBytes;
  std::uint64_t max_raw = kMaxRawBytes;
  std::string name = "rewind-client";
  /// (1.2) The codecs offered in the hello for window arrays, most wanted first ("none",
  /// "zstd"). Empty = automatic: none first when the server's address is a loopback
  /// address (raw bytes are fastest there: solver fields hardly compress, and zstd
  /// costs CPU at both ends), zstd first otherwise. server().codec says what was chosen.
  std::vector<std::string> codecs;
  /// (1.7) Ask for window pieces as a binary table (parsed in microseconds; the JSON list
  /// of a window of 512 pieces is 83 KB). false: the JSON list, as a 1.6 client. Either
  /// way the reply's `pieces` are the same; a 1.6 server always sends the list.
  bool piece_table = true;
};

class Client {
 public:
  /// Connects to host:port and exchanges Hello/HelloReply (with `token`, "" for
  /// none). Throws ClientError: timeout, unauthorized, bad_version, or malformed
  /// (not a collector); std::runtime_error if the connection is refused.
  Client(const std::string& host, std::uint16_t port, const std::string& token, ClientOptions options = {});
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();  ///< sends Bye if still connected (best effort, never throws)

  [[nodiscard]] const HelloReply& server() const;
  ServerInfo info();
  std::vector<StepRecord> steps();
  /// The window reply: values[v] is a contiguous float64 array (numpy-ready).
  /// Time t=T after the last step (docs/collector-protocol.md, "Times not reached yet"):
  /// of a running job (a server offering status), the request is sent again once the
  /// job has written a step at or after T, until ClientOptions::timeout from the call;
  /// then, or at once for a file, a paused or an ended job, ClientError(no_such_step)
  /// naming the last step.
  WindowReply window(const WindowRequest& request);
  /// As above, into `out`, whose value arrays are reused: the values are read from the
  /// socket straight into them (codec none), so a client asking for windows of the same
  /// size again and again allocates and copies nothing. On an exception `out` is left
  /// valid but unspecified.
  void window(const WindowRequest& request, WindowReply& out);

  // Steering a live run (revision 1.1). A server that does not offer a request (see
  // offers(); e.g. an offline `rewind serve`) throws ClientError(unsupported) -- checked
  // here, before sending, so an older server is never sent a type it does not know.
  // control, set and branch return once the run applied them at a step boundary; a
  // server answers ClientError(timeout) after its steer_timeout (the action may still
  // take effect); keep ClientOptions::timeout above that (default 30 s vs 20 s). A
  // branch has deadlines of its own (branch_timeout: 10 min on the server, 11 here).

  /// True if hello_reply.capabilities names `capability` ("window", "status", "set", ...).
  [[nodiscard]] bool offers(const std::string& capability) const;
  RunStatus status();
  /// The state after the action, and the step where it took effect.
  /// `file`: the future it acts on ("" = every future; revision 1.8).
  ControlReply control(ControlAction action, const std::string& file = "");
  /// Every steerable parameter (name, type, unit, range, value, description).
  std::vector<ParameterInfo> parameters();
  /// Changes parameters from the next step on; bad names or values out of range throw
  /// ClientError(bad_argument), a finished run ClientError(conflict).
  SetReply set(const ParamValues& values, const std::string& file = "");
  /// Branches from a committed step (request.from: latest, N, #i or t=T) into a new file.
  BranchReply branch(const BranchRequest& request);
  /// Sends Bye and closes. Idempotent.
  void close();
  [[nodiscard]] bool connected() const;

  /// Sends one request and returns the reply body (ErrorReply -> ClientError).
  Body call(const Body& request);

 private:
  struct Impl;
  template <typename Reply>
  Reply steer(const Body& request);
  /// After `refused` (no_such_step) for `time` of `file`: throws it at once if waiting
  /// cannot help (not t=T, not a running job, T reached already), with how long it
  /// waited at `deadline`; returns once the job's steps reach T (ask again).
  void wait_to_reach(const ClientError& refused, const std::string& time, const std::string& file,
                     std::chrono::steady_clock::time_point deadline);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::collector

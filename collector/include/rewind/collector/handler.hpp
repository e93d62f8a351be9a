// The collector's request handler: decoded request in, reply out. Pure code (no
// sockets), so every validation rule is unit-tested without a network.
//
// The data behind the server is an abstract Service: an offline FileService over Rewind
// files, a fake in tests, later the live collector rank. The handler validates every
// field before the service sees it, and turns the service's exceptions into ErrorReply.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/collector/messages.hpp"

namespace rwd::collector {

/// What the server serves. Implementations need not be thread-safe: the Handler calls
/// them under one mutex (HDF5 as built by Debian is not thread-safe). They may throw
/// ServiceError (its code goes to the client) or any std::exception (sent as
/// `internal` with its what()).
class Service {
 public:
  virtual ~Service() = default;
  virtual ServerInfo info() = 0;
  virtual std::vector<StepRecord> steps() = 0;
  /// Called only with a validated request (see Handler). Must return a reply whose
  /// arrays agree with its pieces (encode() checks it).
  virtual WindowReply window(const WindowRequest& request) = 0;
};

/// An error with a protocol code, thrown by services (e.g. no_such_step).
class ServiceError : public CodedError {
 public:
  using CodedError::CodedError;
};

struct HandlerLimits {
  std::uint64_t max_budget = std::uint64_t{1} << 28;  ///< cells per variable in one reply
  std::size_t max_variables = 64;
  std::size_t max_selector_chars = 64;
};

/// True for "live", "latest", a step number "42", "#i" (i may be negative) and "t=T"
/// with a finite T: the syntax of kernel::Reader::find_step plus "live". Pure.
bool valid_time_selector(const std::string& s);

/// Compares tokens in time independent of where they first differ. Pure.
bool same_token(const std::string& a, const std::string& b);

/// The answer to a Hello given the server's token ("" = none required): a HelloReply,
/// or ErrorReply(bad_version / unauthorized). Pure.
Body answer_hello(const Hello& hello, const std::string& token, const std::string& server_name,
                  const std::vector<std::string>& capabilities);

/// Thread-safe: handle() may be called from any thread; service calls are serialised
/// by an internal mutex. Does not own the service, which must outlive it.
class Handler {
 public:
  explicit Handler(Service& service, HandlerLimits limits = {}) : service_(service), limits_(limits) {}

  /// info_request, steps_request or window_request -> its reply, or ErrorReply for
  /// a bad field or a failing service. Other bodies -> ErrorReply(unknown_type).
  /// Never throws except std::bad_alloc.
  Body handle(const Body& request);

  /// The field checks of handle() alone (no service call): nullopt if fine, else the
  /// error. Exposed for tests and for clients that want to check before sending.
  static std::optional<ErrorReply> validate(const WindowRequest& r, const HandlerLimits& limits);

 private:
  Service& service_;
  HandlerLimits limits_;
  std::mutex mutex_;
};

}  // namespace rwd::collector

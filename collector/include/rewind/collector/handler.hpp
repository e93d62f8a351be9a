// The collector's request handler: decoded request in, reply out. Pure code (no
// sockets), so every validation rule is unit-tested without a network.
//
// The data behind the server is an abstract Service: an offline FileService over Rewind
// files, a fake in tests, the live relay of `rewind run` (live/relay.hpp). The handler validates
// every field before the service sees it, and turns the service's exceptions into
// ErrorReply.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/collector/messages.hpp"

namespace rwd::collector {

/// An error with a protocol code, thrown by services (e.g. no_such_step).
class ServiceError : public CodedError {
 public:
  using CodedError::CodedError;
};

/// Lets a service send a window reply while its arrays are still being filled: the
/// server writes the frame's header and JSON at begin() and each array's bytes as
/// ready() reports them, so the bytes travel while later ones are still arriving (a
/// live run's cells come rank by rank, variable by variable). Only offered where the
/// arrays go out as they are (codec none). Methods may be called from any one thread.
class WindowStream {
 public:
  virtual ~WindowStream() = default;
  /// `reply` is final but for its arrays' contents: sizes, places and every other
  /// field. Returns false if the reply cannot be streamed (e.g. it exceeds the frame
  /// cap): then the service fills the arrays and returns the reply as usual. After
  /// true, the service must keep the arrays where they are (not resize or reallocate
  /// them) and return this same reply from window(), or hand it to abort() and throw.
  virtual bool begin(WindowReply& reply) = 0;
  /// The first `bytes` bytes of the arrays, in frame order (values[0], values[1], ...,
  /// cell_type), hold their final contents. Non-decreasing.
  virtual void ready(std::uint64_t bytes) = 0;
  /// The service cannot complete the reply: it gives the stream the reply (whose
  /// arrays a write may still be reading) and then throws. The server closes the
  /// connection mid-frame: the client sees the connection end inside the reply.
  virtual void abort(WindowReply&& reply) = 0;
};

/// What the server serves: windows (every service) and, optionally, steering of a live
/// run (revision 1.1). Methods may throw ServiceError (its code goes to the client) or any
/// std::exception (sent as `internal` with its what()).
///
/// Threads. The Handler calls the service from two lanes, each under its own mutex:
///   queries  -- info, steps, window, status, parameters: one at a time;
///   steering -- control, set, branch: one at a time, possibly WHILE a query runs.
/// So queries never touch the same state concurrently (HDF5 as built by Debian is not
/// thread-safe), but a service that offers steering must guard whatever its steering
/// methods share with its queries. Steering methods may block until the run reaches a
/// step boundary (e.g. wait on a future); windows and status keep being answered
/// meanwhile. They should give up by themselves well within ServerOptions::steer_timeout
/// (throwing ServiceError(timeout, ...)); past it the server answers the client
/// `timeout` anyway and drops the late reply. A service whose calls block must make
/// them return when stopping() is called.
///
/// Offline services (FileService, `rewind serve`) implement only info, steps and window:
/// the other defaults throw ServiceError(unsupported), and capabilities() does not
/// announce them.
class Service {
 public:
  virtual ~Service() = default;
  virtual ServerInfo info() = 0;
  virtual std::vector<StepRecord> steps() = 0;
  /// Called only with a validated request (see Handler). Must return a reply whose
  /// arrays agree with its pieces (encode() checks it).
  virtual WindowReply window(const WindowRequest& request) = 0;
  /// As window(request), with `stream` (may be null) to send the reply while its
  /// arrays fill (see WindowStream). Default: ignores the stream.
  virtual WindowReply window(const WindowRequest& request, WindowStream* stream) {
    (void)stream;
    return window(request);
  }
  /// A reply of window() that the server has finished writing, handed back so that the
  /// next window may reuse its arrays (fresh memory costs a zero fill and page faults).
  /// Called on the server's I/O thread, possibly while another call runs. Default: drops it.
  virtual void recycle(WindowReply&& reply) noexcept { (void)reply; }
  /// Connections that held large replies have closed (clients gone, or closed to make
  /// room): drop what recycle() kept, so that the memory can go back to the system. On
  /// the server's I/O thread, possibly while another call runs. Default: nothing.
  virtual void release_kept() noexcept {}

  /// What hello_reply.capabilities announces: the request names of capability_of().
  /// Called ONCE, when the Handler is built; a steering request whose name is missing is
  /// answered `unsupported` without calling the service. Default {"info", "steps",
  /// "window"}; a live service adds "status", "control", "parameters", "set", "branch".
  [[nodiscard]] virtual std::vector<std::string> capabilities() const;

  /// The run's state now (query lane; should not block). Default: throws unsupported.
  virtual RunStatus status();
  /// Applies `action` at the next step boundary and returns the state and step there
  /// (steering lane; may block until that boundary). Pausing a paused run or resuming a
  /// running one is a no-op that answers the current state; stop is idempotent; actions
  /// impossible in the current state (e.g. resume after stop) throw
  /// ServiceError(conflict). `file`: the future it acts on ("" = every future; one not
  /// computed: bad_argument). Default: throws unsupported.
  virtual ControlReply control(ControlAction action, const std::string& file);
  /// Every steerable parameter, its range and its current value (query lane). Default:
  /// throws unsupported.
  virtual std::vector<ParameterInfo> parameters();
  /// Applies `values` (1 .. HandlerLimits::max_values entries, names and value shapes
  /// checked by the Handler) from the next step on and returns the first step computed
  /// with them (steering lane; may block). Names the run does not steer and values out
  /// of range throw ServiceError(bad_argument, "physics.nu = -1 is outside (0, 10] m^2/s");
  /// after the run finished, ServiceError(conflict). `file`: the future it changes, as
  /// control(). Default: throws unsupported.
  virtual SetReply set(const ParamValues& values, const std::string& file);
  /// Starts a branch of the run from a committed step (request.from: not "live";
  /// request.file: "" or one of info().files, checked) with `values` changed, into
  /// request.output or a file the service names (steering lane; may block). Throws
  /// ServiceError: no_such_step, bad_argument (values, output), conflict. Default:
  /// throws unsupported.
  virtual BranchReply branch(const BranchRequest& request);

  /// Called by Server::stop() from the stopping thread, possibly while a call runs on
  /// another thread, before the server joins its threads: make blocked calls return
  /// (throw) promptly. Must not throw. Default: nothing.
  virtual void stopping() noexcept {}
};

struct HandlerLimits {
  std::uint64_t max_budget = std::uint64_t{1} << 28;  ///< cells per variable in one reply
  std::size_t max_variables = 64;
  std::size_t max_selector_chars = 64;
  std::size_t max_values = 64;        ///< entries of a set/branch `values` object
  std::size_t max_name_chars = 128;   ///< a parameter name
  std::size_t max_path_chars = 4096;  ///< branch_request.file / output
  std::size_t max_futures = 16;       ///< branch_request.futures (revision 1.8)
};

/// True for "live", "latest", a step number "42", "#i" (i may be negative) and "t=T"
/// with a finite T: the syntax of kernel::Reader::find_step plus "live". Pure.
bool valid_time_selector(const std::string& s);

/// Compares tokens in time independent of where they first differ. Pure.
bool same_token(const std::string& a, const std::string& b);

/// The answer to a Hello given the server's token ("" = none required): a HelloReply
/// naming the session's codec (choose_codec of hello.codecs), or ErrorReply(bad_version /
/// unauthorized / bad_argument: no codec this server speaks). Pure.
Body answer_hello(const Hello& hello, const std::string& token, const std::string& server_name,
                  const std::vector<std::string>& capabilities);

/// Thread-safe: handle() may be called from any thread; service calls are serialised
/// per lane (see Service) by two internal mutexes. Does not own the service, which must
/// outlive it.
class Handler {
 public:
  /// Calls service.capabilities() once.
  explicit Handler(Service& service, HandlerLimits limits = {});

  /// A request (info, steps, window, status, control, parameters, set, branch) -> its
  /// reply, or ErrorReply for a bad field, a request the service does not announce
  /// (unsupported) or a failing service. Other bodies -> ErrorReply(unknown_type).
  /// A steering request may block as long as the service does. Never throws except
  /// std::bad_alloc.
  Body handle(const Body& request);
  /// As above; a window request's service call gets `stream` (see WindowStream). A
  /// reply whose stream has begun is the streamed one (or an ErrorReply: the frame is
  /// cut).
  Body handle(const Body& request, WindowStream* stream);

  /// The service's capabilities, as fetched at construction (for hello_reply).
  [[nodiscard]] const std::vector<std::string>& capabilities() const { return capabilities_; }
  /// True for control, set and branch: requests that run on the steering lane.
  static bool is_steering(MessageType t);
  /// A reply handle() returned, once written: a window reply goes to Service::recycle.
  /// Any thread; never throws.
  void recycle(Body&& reply) noexcept;
  /// Service::release_kept(). Any thread; never throws.
  void release_kept() noexcept { service_.release_kept(); }

  // The field checks of handle() alone (no service call): nullopt if fine, else the
  // error. Exposed for tests and for clients that want to check before sending.
  static std::optional<ErrorReply> validate(const WindowRequest& r, const HandlerLimits& limits);
  /// Action is pause, resume or stop.
  static std::optional<ErrorReply> validate(const ControlRequest& r);
  /// 1 .. max_values entries (0 allowed with `allow_empty`), names 1 .. max_name_chars.
  static std::optional<ErrorReply> validate(const ParamValues& values, const HandlerLimits& limits, bool allow_empty = false);
  /// `from` a time selector other than live; values as above (may be empty); paths not
  /// longer than max_path_chars and without NUL.
  static std::optional<ErrorReply> validate(const BranchRequest& r, const HandlerLimits& limits);

 private:
  Body handle_query(const Body& request, WindowStream* stream);
  Body handle_steering(const Body& request);
  [[nodiscard]] bool offers(MessageType t) const;

  Service& service_;
  HandlerLimits limits_;
  std::vector<std::string> capabilities_;
  std::mutex query_mutex_;
  std::mutex steer_mutex_;
};

}  // namespace rwd::collector

// Private to the collector: one client connection's state machine, the set of open
// connections, and the worker thread that runs service calls. Everything except
// Worker runs on the server's single I/O thread.
#pragma once
#include <array>
#include <atomic>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "rewind/collector/handler.hpp"
#include "rewind/collector/server.hpp"

namespace rwd::collector::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// One thread running jobs in order: one lane of Service calls (see Service).
class Worker {
 public:
  Worker();
  ~Worker();
  void post(std::function<void()> job);
  /// Finishes the running job, drops the queued ones, joins. Idempotent.
  void stop();

 private:
  void run();
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

struct AtomicStats {
  std::atomic<std::uint64_t> accepted{0}, refused_busy{0}, refused_token{0}, timeouts{0}, protocol_errors{0}, requests{0};
  std::atomic<std::size_t> open{0};
};

class Connection;

/// A window reply written while its arrays fill (WindowStream, codec none): begin(),
/// ready() and abort() come from the service's thread, the writes happen on the I/O
/// thread (Connection::pump).
class Stream final : public WindowStream, public std::enable_shared_from_this<Stream> {
 public:
  Stream(std::shared_ptr<Connection> c, std::uint64_t job, std::uint32_t request_id, std::vector<std::byte> head);
  bool begin(WindowReply& reply) override;
  void ready(std::uint64_t bytes) override;
  /// Keeps `reply` (whose arrays a write may be reading) until the connection is
  /// closed on the I/O thread.
  void abort(WindowReply&& reply) override;
  [[nodiscard]] bool begun() const { return begun_; }
  /// The head buffer handed in, if begin() did not use it.
  std::vector<std::byte> take_head() { return std::move(frame_.head); }

 private:
  friend class Connection;
  std::shared_ptr<Connection> conn_;
  std::uint64_t job_;
  std::uint32_t request_id_;
  FrameParts frame_;  ///< after begin(): the head and spans into the reply's arrays
  std::uint64_t total_ = 0;  ///< bytes of the arrays
  std::atomic<std::uint64_t> ready_{0};
  bool begun_ = false;
};

/// A reply on its way out: the message and its frame. With codec none the frame's
/// spans point into the message's arrays, so both live together until the write ends.
struct Reply {
  Message message;
  FrameParts frame;
};

/// What connections share: options, handler, worker, the I/O context, the set of open
/// connections (manipulated on the I/O thread only) and the counters.
struct Context {
  asio::io_context& io;
  const ServerOptions& options;
  Handler& handler;
  Worker& queries;   ///< info, steps, window, status, parameters
  Worker& steering;  ///< control, set, branch
  AtomicStats& stats;
  std::set<std::shared_ptr<Connection>> open;  ///< I/O thread only
  std::size_t active = 0;                      ///< open minus those being refused
  void stop_all();
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Context& ctx);
  /// Registers with the context and starts the session; refuses it (busy) if the
  /// context already holds max_clients active sessions.
  void start();
  /// Closes the socket and cancels the timer; pending handlers see operation_aborted.
  void close();

 private:
  void wait_request();
  void read_header();
  void read_body();
  void on_frame();
  void dispatch(Message m);
  /// `m` framed in this session's codec (into `head`'s capacity); an encoding failure
  /// becomes its ErrorReply. Any thread.
  static std::shared_ptr<Reply> frame(Message m, Codec codec, std::uint64_t max_payload, std::vector<std::byte> head = {});
  void answer(std::uint64_t job, std::shared_ptr<Reply> reply);
  void write(std::shared_ptr<Reply> reply, bool then_close);
  // A streamed window (Stream): started when its head is framed, written as its
  // arrays fill, finished once written AND its reply is back from the worker (the
  // reply owns the arrays: recycled only then).
  friend class Stream;
  void stream_start(std::shared_ptr<Stream> s);
  void pump();
  void stream_done(const std::shared_ptr<Stream>& s, Body body);
  void fail(ErrorCode code, const std::string& message, std::uint32_t request_id = 0);
  void linger_close();
  void set_deadline(std::chrono::milliseconds d);
  void clear_deadline();

  tcp::socket socket_;
  asio::steady_timer timer_;
  asio::steady_timer steer_timer_;  ///< steer_timeout of the request being served
  Context& ctx_;
  std::array<std::byte, kHeaderSize> header_{};
  std::vector<std::byte> frame_;
  std::shared_ptr<Reply> out_;                ///< the reply being written
  std::vector<asio::const_buffer> out_bufs_;  ///< its frame as one buffer sequence
  std::shared_ptr<Stream> stream_;  ///< the streamed reply being written
  std::uint64_t sent_ = 0;           ///< its array bytes handed to writes
  bool head_sent_ = false, writing_ = false;
  std::optional<Body> streamed_;     ///< its reply, once the worker has it
  std::vector<std::byte> spare_;  ///< the last reply's head buffer, reused for the next (up to kKeepReply)
  Codec codec_ = Codec::zstd;     ///< of window arrays, negotiated in the hello
  std::array<std::byte, 4096> drain_{};
  std::size_t drained_ = 0;
  std::uint64_t job_ = 0;   ///< number of the last request handed to a worker
  bool awaiting_ = false;   ///< job_'s reply is still due (not answered, not timed out)
  bool counted_ = false;  ///< one of ctx.active
  bool authed_ = false;
  bool closed_ = false;
  bool lingering_ = false;  ///< refused: half-closed, draining until EOF or kLinger
};

}  // namespace rwd::collector::detail

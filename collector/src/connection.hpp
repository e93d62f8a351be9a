// Private to the collector: one client connection's state machine, the set of open
// connections, and the worker thread that runs service calls. Everything except
// Worker runs on the server's single I/O thread.
#pragma once
#include <array>
#include <atomic>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <chrono>
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
  std::atomic<std::uint64_t> evicted{0}, refused_memory{0};
  std::atomic<std::uint64_t> reply_bytes{0}, reply_bytes_peak{0};  ///< written on the I/O thread only
};

using Clock = std::chrono::steady_clock;

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
/// connections (manipulated on the I/O thread only) and the counters. The admission
/// rules (server.hpp: pending connections, session slots, reply memory) live here.
struct Context {
  Context(asio::io_context& io, const ServerOptions& options, Handler& handler, Worker& queries, Worker& steering,
          AtomicStats& stats);
  asio::io_context& io;
  const ServerOptions& options;
  Handler& handler;
  Worker& queries;   ///< info, steps, window, status, parameters
  Worker& steering;  ///< control, set, branch
  AtomicStats& stats;
  std::set<std::shared_ptr<Connection>> open;  ///< I/O thread only
  std::size_t active = 0;                      ///< sessions holding a slot
  std::size_t pending = 0;                     ///< connections before their first request
  asio::steady_timer trim{io};
  bool trimming = false;
  void stop_all();
  /// Before a new connection becomes pending: closes the oldest pending one if
  /// max_pending are. I/O thread.
  void make_pending_room();
  /// A session slot for `c` (closing the session idle or stalled longest if none is
  /// free); false if every session is busy. I/O thread.
  bool take_slot();
  /// True if a reply of `bytes` may be held now (see server.hpp). Any thread.
  [[nodiscard]] bool fits(std::uint64_t bytes) const;
  /// Some session's reply has not progressed for evict_after. I/O thread.
  [[nodiscard]] bool any_stalled() const;
  /// fits(bytes), after dropping idle sessions' kept buffers and closing sessions whose
  /// reply stalled for evict_after, longest stalled first, as needed. I/O thread.
  bool room_for(std::uint64_t bytes);
  /// A connection's held bytes went from `before` to `after`. I/O thread.
  void held(std::uint64_t before, std::uint64_t after);
  /// After a large reply was dropped (a connection that held one closed, or a reply
  /// refused): soon, the service drops the buffers it keeps (Service::release_kept) and
  /// freed memory goes back to the system if more than kKeepFreed lies unused. I/O thread.
  void trim_freed();
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Context& ctx);
  /// Registers with the context as a pending connection (hello_timeout) and waits for
  /// its first request.
  void start();
  /// Closes the socket and cancels the timer; pending handlers see operation_aborted.
  void close();
  /// Closes it to make room for another client (counted in stats.evicted).
  void evict();

  // What the context's admission rules look at (I/O thread).
  [[nodiscard]] bool pending() const { return pending_; }
  [[nodiscard]] bool session() const { return counted_ && !closed_; }
  /// Waiting for its next request (idle), or its reply not progressing, for evict_after.
  [[nodiscard]] bool evictable(Clock::time_point now) const;
  /// Its reply's write is stalled (no progress) for evict_after.
  [[nodiscard]] bool stalled(Clock::time_point now) const;
  [[nodiscard]] Clock::time_point last_active() const { return last_active_; }
  [[nodiscard]] Clock::time_point since() const { return since_; }
  /// Frees the buffer kept for the next reply, if no write uses it.
  void drop_spare();

 private:
  void wait_request();
  void read_header();
  void read_body();
  void on_frame();
  void dispatch(Message m);
  /// How this session's replies are framed: its codec, the reply cap; incompressible
  /// arrays raw if the client reads none (1.6).
  [[nodiscard]] EncodeOptions encoding() const;
  /// `m` framed with `options` (into `head`'s capacity); an encoding failure becomes its
  /// ErrorReply. Any thread.
  static std::shared_ptr<Reply> frame(Message m, const EncodeOptions& options, std::vector<std::byte> head = {});
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
  /// write_timeout from the reply's last progress (last_active_), re-armed while it moves.
  void set_write_deadline();
  void clear_deadline();
  /// Takes a session slot (first request); false: refused busy (and closing).
  bool promote();
  void leave_pending();
  /// Re-counts the bytes this connection holds (reply being written, kept buffer).
  void account();
  /// Writes everything in out_bufs_, noting progress, then calls `done`.
  template <class Done>
  void write_all(Done done);
  /// Answers busy for want of reply memory; the session goes on.
  void refuse_for_memory(std::uint32_t request_id);
  /// A window request whose reply cannot fit even at its budget's size: refused before
  /// the service builds it (busy). True if refused.
  bool refuse_early(const Message& m);

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
  bool head_sent_ = false;
  std::optional<Body> streamed_;     ///< its reply, once the worker has it
  std::vector<std::byte> spare_;  ///< the last reply's head buffer, reused for the next (up to kKeepReply)
  Codec codec_ = Codec::zstd;     ///< of window arrays, negotiated in the hello
  bool reads_none_ = false;       ///< the hello offered none: incompressible arrays go raw (1.6)
  bool piece_table_ = false;      ///< the hello asked for window pieces as a binary table (1.7)
  std::array<std::byte, 4096> drain_{};
  std::size_t drained_ = 0;
  std::uint64_t job_ = 0;   ///< number of the last request handed to a worker
  bool awaiting_ = false;   ///< job_'s reply is still due (not answered, not timed out)
  bool counted_ = false;  ///< one of ctx.active
  bool authed_ = false;
  bool closed_ = false;
  bool lingering_ = false;  ///< refused: half-closed, draining until EOF or kLinger
  bool pending_ = false;    ///< one of ctx.pending: no whole request yet
  bool waiting_ = false;    ///< waiting for the next request
  bool in_write_ = false;   ///< a reply's write is in flight
  std::uint64_t held_ = 0;  ///< bytes counted in ctx.stats.reply_bytes
  std::size_t op_written_ = 0;  ///< bytes of the write in flight sent so far
  Clock::time_point since_{}, last_active_{};  ///< accepted; last request, reply progress or idle start
};

}  // namespace rwd::collector::detail

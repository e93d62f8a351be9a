// One collector session: wait for a request (idle deadline), read it whole (request
// deadline), hand it to the worker, write the reply (write deadline, counted from the
// reply's last progress), repeat. And the
// admission rules connections share (server.hpp: pending, slots, reply memory).
#include "connection.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>

namespace rwd::collector::detail {

namespace {
constexpr std::size_t kMaxDrain = std::size_t{1} << 20;
constexpr std::chrono::milliseconds kLinger{1000};
// A connection keeps its last reply's buffer up to this size: a fresh one for every
// large window costs a page fault per 4 KiB (host faults on a VM that hands freed
// memory back; bench/live/HISTORY.md, "Live windows (online)").
constexpr std::size_t kKeepReply = std::size_t{256} << 20;

/// Bytes of a reply's value arrays (its own, or the shared ones it points into).
std::uint64_t array_bytes(const Body& b) {
  const auto* w = std::get_if<WindowReply>(&b);
  if (w == nullptr) return 0;
  std::uint64_t n = w->cell_type.capacity();
  for (const auto& v : w->values) n += v.capacity() * sizeof(double);
  if (w->shared) {
    n += w->shared->cell_type.size_bytes();
    for (const auto& v : w->shared->values) n += v.size_bytes();
  }
  return n;
}

/// What a reply holds until written: its frame's buffer and its arrays (codec none
/// writes from them; with zstd they stay until the service gets them back).
std::uint64_t reply_bytes(const Reply& r) {
  return r.frame.head.capacity() + r.frame.packed.capacity() + array_bytes(r.message.body);
}

std::string mib(std::uint64_t bytes) { return std::to_string((bytes + (std::uint64_t{1} << 19)) >> 20) + " MiB"; }
}  // namespace

// --- Worker --------------------------------------------------------------------------

Worker::Worker()
    : thread_([this] {
        prefer_short_slices();
        run();
      }) {}
Worker::~Worker() { stop(); }

void Worker::post(std::function<void()> job) {
  {
    const std::lock_guard lock(mutex_);
    if (stop_) return;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void Worker::stop() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
    jobs_.clear();
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Worker::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

// --- Admission -------------------------------------------------------------------------

Context::Context(asio::io_context& io_, const ServerOptions& options_, Handler& handler_, Worker& queries_,
                 Worker& steering_, AtomicStats& stats_)
    : io(io_), options(options_), handler(handler_), queries(queries_), steering(steering_), stats(stats_) {}

void Context::stop_all() {
  trim.cancel();
  const auto all = open;  // close() erases from `open`
  for (const auto& c : all) c->close();
}

namespace {
/// The open connection that `pick` accepts with the earliest `when`, or null.
template <class Pick, class When>
std::shared_ptr<Connection> oldest(const std::set<std::shared_ptr<Connection>>& open, Pick pick, When when) {
  std::shared_ptr<Connection> out;
  for (const auto& c : open)
    if (pick(*c) && (!out || when(*c) < when(*out))) out = c;
  return out;
}
}  // namespace

void Context::make_pending_room() {
  if (pending < options.max_pending) return;
  const auto c = oldest(open, [](const Connection& x) { return x.pending(); }, [](const Connection& x) { return x.since(); });
  if (c) c->evict();
}

bool Context::take_slot() {
  if (active < options.max_clients) return true;
  const auto now = Clock::now();
  const auto c = oldest(open, [&](const Connection& x) { return x.evictable(now); }, [](const Connection& x) { return x.last_active(); });
  if (!c) return false;
  c->evict();
  return active < options.max_clients;
}

bool Context::fits(std::uint64_t bytes) const {
  const auto held_now = stats.reply_bytes.load(std::memory_order_relaxed);
  return held_now == 0 || bytes <= kSmallReply || held_now + bytes <= options.reply_memory;
}

bool Context::any_stalled() const {
  const auto now = Clock::now();
  return std::any_of(open.begin(), open.end(), [&](const auto& c) { return c->stalled(now); });
}

bool Context::room_for(std::uint64_t bytes) {
  if (fits(bytes)) return true;
  for (const auto& c : open) c->drop_spare();
  const auto now = Clock::now();
  while (!fits(bytes)) {
    const auto c = oldest(open, [&](const Connection& x) { return x.stalled(now); }, [](const Connection& x) { return x.last_active(); });
    if (!c) return false;
    c->evict();
  }
  return true;
}

void Context::held(std::uint64_t before, std::uint64_t after) {
  const auto now = stats.reply_bytes.load(std::memory_order_relaxed) - before + after;
  stats.reply_bytes.store(now, std::memory_order_relaxed);
  if (now > stats.reply_bytes_peak.load(std::memory_order_relaxed)) stats.reply_bytes_peak.store(now, std::memory_order_relaxed);
}

void Context::trim_freed() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  // A moment later: the replies of connections closed together are freed by their
  // handlers first. glibc keeps freed blocks below its (dynamic, up to 32 MiB) mmap
  // threshold for reuse, which a session asking for window after window wants; what
  // closed connections leave beyond kKeepFreed is handed back.
  if (trimming) return;
  trimming = true;
  trim.expires_after(std::chrono::milliseconds(200));
  trim.async_wait([this](const boost::system::error_code& ec) {
    trimming = false;
    if (ec) return;
    handler.release_kept();
    if (mallinfo2().fordblks > kKeepFreed) malloc_trim(0);
  });
#else
  handler.release_kept();
#endif
}

// --- Connection ----------------------------------------------------------------------

Connection::Connection(tcp::socket socket, Context& ctx)
    : socket_(std::move(socket)), timer_(ctx.io), steer_timer_(ctx.io), ctx_(ctx) {}

void Connection::start() {
  // A streamed reply goes out in several writes: the last segment of one must not wait
  // for the peer's (possibly delayed) ACK of the previous (Nagle).
  boost::system::error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);
  ctx_.make_pending_room();
  since_ = last_active_ = Clock::now();
  ctx_.open.insert(shared_from_this());
  ctx_.stats.open = ctx_.open.size();
  pending_ = true;
  ++ctx_.pending;
  set_deadline(ctx_.options.hello_timeout);  // for the whole first request, not re-armed before it
  wait_request();
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  timer_.cancel();
  steer_timer_.cancel();
  if (counted_) --ctx_.active;
  leave_pending();
  stream_.reset();  // a streamed reply still due is recycled by stream_done()
  if (streamed_) ctx_.handler.recycle(std::move(*streamed_));
  streamed_.reset();
  std::vector<std::byte>().swap(spare_);
  // A reply being written is freed when its write handler runs (operation_aborted).
  if (held_ > kSmallReply) ctx_.trim_freed();
  ctx_.held(held_, 0);
  held_ = 0;
  ctx_.open.erase(shared_from_this());
  ctx_.stats.open = ctx_.open.size();
}

void Connection::evict() {
  ++ctx_.stats.evicted;
  close();
}

bool Connection::stalled(Clock::time_point now) const {
  return !closed_ && in_write_ && now - last_active_ >= ctx_.options.evict_after;
}

bool Connection::evictable(Clock::time_point now) const {
  // Not while the service works for it (a job, or a streamed reply waiting for its
  // arrays): then the server, not the client, is the slow one.
  if (closed_ || !counted_ || awaiting_ || (stream_ && !in_write_)) return false;
  return now - last_active_ >= ctx_.options.evict_after;
}

void Connection::drop_spare() {
  if (closed_ || spare_.capacity() == 0) return;
  std::vector<std::byte>().swap(spare_);
  account();
}

void Connection::leave_pending() {
  if (!pending_) return;
  pending_ = false;
  --ctx_.pending;
}

bool Connection::promote() {
  if (!pending_) return true;
  leave_pending();
  if (!ctx_.take_slot()) {
    ++ctx_.stats.refused_busy;
    fail(ErrorCode::busy, "too many clients (" + std::to_string(ctx_.options.max_clients) + " sessions, none idle); try again later");
    return false;
  }
  ++ctx_.active;
  counted_ = true;
  return true;
}

void Connection::account() {
  if (closed_) return;
  std::uint64_t now = spare_.capacity();
  if (out_) now += reply_bytes(*out_);
  if (stream_) now += stream_->frame_.head.capacity() + stream_->total_;
  ctx_.held(held_, now);
  held_ = now;
}

void Connection::set_deadline(std::chrono::milliseconds d) {
  timer_.expires_after(d);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    // A re-armed timer cancels the old wait; a wait that already fired checks the time.
    if (ec == asio::error::operation_aborted || self->closed_) return;
    if (self->timer_.expiry() > asio::steady_timer::clock_type::now()) return;
    if (!self->lingering_) ++self->ctx_.stats.timeouts;
    self->close();
  });
}

void Connection::set_write_deadline() {
  // A progress deadline: a reply that keeps moving is never cut, however large and slow
  // its client; one that has not moved for write_timeout is.
  timer_.expires_at(last_active_ + ctx_.options.write_timeout);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted || self->closed_) return;
    const auto now = asio::steady_timer::clock_type::now();
    if (self->timer_.expiry() > now) return;
    if (self->in_write_ && now - self->last_active_ < self->ctx_.options.write_timeout)
      return self->set_write_deadline();
    if (!self->lingering_) ++self->ctx_.stats.timeouts;
    self->close();
  });
}

void Connection::clear_deadline() { timer_.cancel(); }

void Connection::wait_request() {
  if (closed_) return;
  if (!pending_) set_deadline(ctx_.options.idle_timeout);
  waiting_ = true;
  last_active_ = Clock::now();
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
    self->waiting_ = false;
    if (ec || self->closed_) return self->close();
    self->read_header();
  });
}

void Connection::read_header() {
  // From the first byte on, the whole request must arrive within request_timeout (and a
  // pending connection's within its hello_timeout).
  auto limit = ctx_.options.request_timeout;
  if (pending_)
    limit = std::min(limit, std::chrono::duration_cast<std::chrono::milliseconds>(since_ + ctx_.options.hello_timeout - Clock::now()));
  set_deadline(std::max(limit, std::chrono::milliseconds(0)));
  asio::async_read(socket_, asio::buffer(header_), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
    if (ec || self->closed_) return self->close();
    self->read_body();
  });
}

void Connection::read_body() {
  FrameHeader h;
  try {
    h = collector::read_header(header_, ctx_.options.max_request);
  } catch (const ProtocolError& e) {
    ++ctx_.stats.protocol_errors;
    return fail(e.code(), e.what());
  }
  frame_.assign(header_.begin(), header_.end());
  frame_.resize(kHeaderSize + h.length);
  asio::async_read(socket_, asio::buffer(frame_.data() + kHeaderSize, h.length),
                   [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                     if (ec || self->closed_) return self->close();
                     self->on_frame();
                   });
}

void Connection::on_frame() {
  clear_deadline();
  last_active_ = Clock::now();
  Message m;
  try {
    m = decode(frame_, Limits{ctx_.options.max_request, 0});
  } catch (const ProtocolError& e) {
    ++ctx_.stats.protocol_errors;
    return fail(e.code(), e.what());
  }
  frame_ = {};
  dispatch(std::move(m));
}

void Connection::dispatch(Message m) {
  const auto type = type_of(m.body);
  if (!is_request(type)) {
    ++ctx_.stats.protocol_errors;
    return fail(ErrorCode::unknown_type, "a reply type sent as a request", m.request_id);
  }
  if (type == MessageType::bye) return close();
  if (const auto* hello = std::get_if<Hello>(&m.body)) {
    const Body reply = answer_hello(*hello, ctx_.options.token, ctx_.options.name, ctx_.handler.capabilities());
    if (const auto* e = std::get_if<ErrorReply>(&reply)) {
      if (e->code == ErrorCode::unauthorized) ++ctx_.stats.refused_token;
      return fail(e->code, e->message, m.request_id);
    }
    if (!promote()) return;
    authed_ = true;
    codec_ = std::get<HelloReply>(reply).codec;
    reads_none_ = std::find(hello->codecs.begin(), hello->codecs.end(), to_string(Codec::none)) != hello->codecs.end();
    piece_table_ = std::get<HelloReply>(reply).piece_table;
    return write(frame(Message{m.request_id, reply}, encoding()), false);
  }
  if (!ctx_.options.token.empty() && !authed_) {
    ++ctx_.stats.refused_token;
    return fail(ErrorCode::unauthorized, "this server needs a hello with its token first", m.request_id);
  }
  if (!promote()) return;
  ++ctx_.stats.requests;
  if (refuse_early(m)) return;
  // The service runs on a worker; the reply comes back to the I/O thread. No read is
  // outstanding meanwhile, so there is at most one reply (one write) in flight.
  const bool steering = Handler::is_steering(type);
  const auto job = ++job_;
  awaiting_ = true;
  if (steering) {
    // A steering call may wait for the run's next step boundary: answer `timeout` when
    // it takes too long, and keep the session (the late reply is dropped in answer()).
    const auto limit = std::holds_alternative<BranchRequest>(m.body) ? ctx_.options.branch_timeout : ctx_.options.steer_timeout;
    steer_timer_.expires_after(limit);
    steer_timer_.async_wait([self = shared_from_this(), job, id = m.request_id, limit](const boost::system::error_code& ec) {
      if (ec || self->closed_ || !self->awaiting_ || self->job_ != job) return;
      ++self->ctx_.stats.timeouts;
      const auto ms = std::to_string(limit.count());
      const ErrorReply late{ErrorCode::timeout,
                            "no answer from the run within " + ms + " ms; the request may still take effect (ask for status)"};
      self->answer(job, frame(Message{id, late}, self->encoding()));
    });
  }
  last_active_ = Clock::now();
  auto& io = ctx_.io;
  (steering ? ctx_.steering : ctx_.queries)
      .post([self = shared_from_this(), &io, job, m = std::move(m), options = encoding(),
             head = std::move(spare_)]() mutable {
        // Arrays that go out as they are may go out while they fill (a live window).
        std::shared_ptr<Stream> stream;
        if (options.codec == Codec::none && std::holds_alternative<WindowRequest>(m.body))
          stream = std::make_shared<Stream>(self, job, m.request_id, std::move(head));
        Body body = self->ctx_.handler.handle(m.body, stream.get());
        if (stream && stream->begun()) {
          asio::post(io,
                     [self, stream, body = std::move(body)]() mutable { self->stream_done(stream, std::move(body)); });
          return;
        }
        if (stream) head = stream->take_head();
        auto reply = frame(Message{m.request_id, std::move(body)}, options, std::move(head));
        asio::post(io, [self, job, reply = std::move(reply)]() mutable { self->answer(job, std::move(reply)); });
      });
  account();  // the kept buffer went with the job
}

bool Connection::refuse_early(const Message& m) {
  // With the reply memory full and no stalled reply to close, a window that may be
  // large is refused before the service builds it (it could not be admitted anyway).
  const auto* w = std::get_if<WindowRequest>(&m.body);
  if (w == nullptr || ctx_.stats.reply_bytes.load(std::memory_order_relaxed) < ctx_.options.reply_memory) return false;
  if (w->budget * (8 * w->variables.size() + 1) <= kSmallReply || ctx_.any_stalled()) return false;
  refuse_for_memory(m.request_id);
  return true;
}

void Connection::refuse_for_memory(std::uint32_t request_id) {
  ++ctx_.stats.refused_memory;
  const auto held_now = ctx_.stats.reply_bytes.load(std::memory_order_relaxed);
  const ErrorReply busy{ErrorCode::busy, "the server holds " + mib(held_now) + " of replies its clients have not read (limit " +
                                             mib(ctx_.options.reply_memory) + "); try again later"};
  write(frame(Message{request_id, busy}, encoding()), false);
}

EncodeOptions Connection::encoding() const {
  return EncodeOptions{codec_, ctx_.options.max_reply, kZstdLevel, reads_none_, piece_table_};
}

std::shared_ptr<Reply> Connection::frame(Message m, const EncodeOptions& options, std::vector<std::byte> head) {
  auto r = std::make_shared<Reply>();
  r->message = std::move(m);  // first: the frame may point into it
  r->frame.head = std::move(head);
  try {
    encode(r->message, r->frame, options);
  } catch (const ProtocolError& e) {
    r->message.body = ErrorReply{e.code(), e.what()};
    encode(r->message, r->frame, EncodeOptions{});
  }
  return r;
}

void Connection::answer(std::uint64_t job, std::shared_ptr<Reply> reply) {
  if (!awaiting_ || job != job_) return;  // answered already (timeout): drop
  awaiting_ = false;
  steer_timer_.cancel();
  if (!ctx_.room_for(reply_bytes(*reply))) {
    const auto id = reply->message.request_id;
    ctx_.handler.recycle(std::move(reply->message.body));
    reply.reset();
    ctx_.trim_freed();
    return refuse_for_memory(id);
  }
  write(std::move(reply), false);
}

template <class Done>
void Connection::write_all(Done done) {
  in_write_ = true;
  op_written_ = 0;
  last_active_ = Clock::now();
  // Called before every write_some with the bytes sent so far: a reply that moves is
  // not stalled (stalled(): may be closed when its memory is wanted).
  const std::size_t total = asio::buffer_size(out_bufs_);
  const auto progress = [this, total](const boost::system::error_code& ec, std::size_t n) -> std::size_t {
    if (n > op_written_) {
      op_written_ = n;
      last_active_ = Clock::now();
    }
    // All that is left in one gathering write_some: asio's transfer_all caps each at 64 KiB.
    return ec ? 0 : total - n;
  };
  asio::async_write(socket_, out_bufs_, progress,
                    [self = shared_from_this(), done = std::move(done)](const boost::system::error_code& ec, std::size_t) mutable {
                      self->in_write_ = false;
                      self->last_active_ = Clock::now();
                      done(ec);
                    });
}

void Connection::write(std::shared_ptr<Reply> reply, bool then_close) {
  if (closed_) return;
  out_ = std::move(reply);
  // One gathering write of the head and the arrays where they are (codec none).
  out_bufs_.clear();
  out_bufs_.push_back(asio::buffer(out_->frame.head));
  for (const auto& a : out_->frame.arrays)
    if (!a.empty()) out_bufs_.push_back(asio::buffer(a.data(), a.size()));
  account();
  last_active_ = Clock::now();
  set_write_deadline();
  write_all([self = shared_from_this(), then_close](const boost::system::error_code& ec) {
    // A large reply its client did not take (gone, or cut by a deadline): freed here.
    const bool dropped = ec && !self->closed_ && self->held_ > kSmallReply;
    if (self->out_->frame.head.capacity() <= kKeepReply) self->spare_ = std::move(self->out_->frame.head);
    self->ctx_.handler.recycle(std::move(self->out_->message.body));
    self->out_.reset();
    self->out_bufs_.clear();
    self->account();
    if (dropped) self->ctx_.trim_freed();
    if (ec || self->closed_) return self->close();
    if (then_close) return self->linger_close();
    self->wait_request();
  });
}

// --- Streamed window replies ----------------------------------------------------------

Stream::Stream(std::shared_ptr<Connection> c, std::uint64_t job, std::uint32_t request_id, std::vector<std::byte> head)
    : conn_(std::move(c)), job_(job), request_id_(request_id) {
  frame_.head = std::move(head);
}

bool Stream::begin(WindowReply& reply) {
  // Codec none frames only sizes: the spans point into the arrays, which keep their
  // places when the reply moves (std::vector's move keeps its buffer).
  Message m{request_id_, std::move(reply)};
  bool ok = true;
  try {
    auto options = conn_->encoding();  // the session's, as they are: codec none streams
    options.codec = Codec::none;
    encode(m, frame_, options);
  } catch (const ProtocolError&) {
    ok = false;  // e.g. too large: the ordinary path answers with the error
  }
  reply = std::move(std::get<WindowReply>(m.body));
  // Beyond the reply memory: the ordinary path decides (it may close stalled sessions).
  if (!ok || !conn_->ctx_.fits(frame_.head.capacity() + frame_.size() - frame_.head.size())) return false;
  total_ = frame_.size() - frame_.head.size();
  begun_ = true;
  asio::post(conn_->ctx_.io, [c = conn_, s = shared_from_this()]() mutable { c->stream_start(std::move(s)); });
  return true;
}

void Stream::ready(std::uint64_t bytes) {
  ready_.store(bytes, std::memory_order_release);
  asio::post(conn_->ctx_.io, [c = conn_] { c->pump(); });
}

void Stream::abort(WindowReply&& reply) {
  // Closed on the I/O thread: no write reads the arrays any more once that has run.
  asio::post(conn_->ctx_.io, [c = conn_, keep = std::make_shared<WindowReply>(std::move(reply))] { c->close(); });
}

void Connection::stream_start(std::shared_ptr<Stream> s) {
  if (closed_ || !awaiting_ || s->job_ != job_) return;  // stream_done() recycles the reply
  awaiting_ = false;
  stream_ = std::move(s);
  sent_ = 0;
  head_sent_ = false;
  streamed_.reset();
  account();
  pump();
}

void Connection::pump() {
  if (closed_ || !stream_ || in_write_) return;
  const auto ready = std::min(stream_->ready_.load(std::memory_order_acquire), stream_->total_);
  if (head_sent_ && ready <= sent_) {
    if (sent_ < stream_->total_ || !streamed_) return;  // more to come, or the reply is not back yet
    const auto s = std::move(stream_);
    if (s->frame_.head.capacity() <= kKeepReply) spare_ = std::move(s->frame_.head);
    ctx_.handler.recycle(std::move(*streamed_));
    streamed_.reset();
    out_bufs_.clear();
    account();
    return wait_request();
  }
  // Everything ready and not yet written, in one gathering write.
  out_bufs_.clear();
  if (!head_sent_) out_bufs_.push_back(asio::buffer(stream_->frame_.head));
  std::uint64_t at = 0;
  for (const auto& a : stream_->frame_.arrays) {
    const auto lo = std::max(at, sent_), hi = std::min(at + a.size(), ready);
    if (lo < hi) out_bufs_.push_back(asio::buffer(a.data() + (lo - at), hi - lo));
    at += a.size();
  }
  head_sent_ = true;
  sent_ = std::max(sent_, ready);
  last_active_ = Clock::now();
  set_write_deadline();
  write_all([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_) return self->close();
    self->pump();
  });
}

void Connection::stream_done(const std::shared_ptr<Stream>& s, Body body) {
  if (stream_ != s) return ctx_.handler.recycle(std::move(body));  // closed meanwhile
  // The service failed after the head went out: the frame cannot be completed, and a
  // client reading it sees the connection end mid-frame (docs/collector-protocol.md).
  if (std::holds_alternative<ErrorReply>(body)) return close();
  streamed_ = std::move(body);
  pump();
}

void Connection::fail(ErrorCode code, const std::string& message, std::uint32_t request_id) {
  leave_pending();  // refused: it lingers briefly, holding no slot
  write(frame(Message{request_id, ErrorReply{code, message}}, encoding()), true);
}

void Connection::linger_close() {
  // Closing with unread request bytes makes the kernel send RST, which can destroy the
  // error reply before the client reads it: half-close, then drain briefly.
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  if (!lingering_) set_deadline(kLinger);
  lingering_ = true;
  socket_.async_read_some(asio::buffer(drain_), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    self->drained_ += n;
    if (ec || self->closed_ || self->drained_ > kMaxDrain) return self->close();
    self->linger_close();
  });
}

}  // namespace rwd::collector::detail

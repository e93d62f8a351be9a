// One collector session: wait for a request (idle deadline), read it whole (request
// deadline), hand it to the worker, write the reply (write deadline), repeat.
#include "connection.hpp"

namespace rwd::collector::detail {

namespace {
constexpr std::size_t kMaxDrain = std::size_t{1} << 20;
constexpr std::chrono::milliseconds kLinger{1000};
// A connection keeps its last reply's buffer up to this size: a fresh one for every
// large window costs a page fault per 4 KiB (host faults on a VM that hands freed
// memory back; docs/benchmarks.md, "Live windows (online)").
constexpr std::size_t kKeepReply = std::size_t{256} << 20;
}  // namespace

// --- Worker --------------------------------------------------------------------------

Worker::Worker() : thread_([this] { run(); }) {}
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

void Context::stop_all() {
  const auto all = open;  // close() erases from `open`
  for (const auto& c : all) c->close();
}

// --- Connection ----------------------------------------------------------------------

Connection::Connection(tcp::socket socket, Context& ctx)
    : socket_(std::move(socket)), timer_(ctx.io), steer_timer_(ctx.io), ctx_(ctx) {}

void Connection::start() {
  // A streamed reply goes out in several writes: the last segment of one must not wait
  // for the peer's (possibly delayed) ACK of the previous (Nagle).
  boost::system::error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);
  ctx_.open.insert(shared_from_this());
  ctx_.stats.open = ctx_.open.size();
  if (ctx_.active >= ctx_.options.max_clients) {
    ++ctx_.stats.refused_busy;
    fail(ErrorCode::busy, "too many clients (" + std::to_string(ctx_.options.max_clients) + "); try again later");
    return;
  }
  ++ctx_.active;
  counted_ = true;
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
  stream_.reset();  // a streamed reply still due is recycled by stream_done()
  if (streamed_) ctx_.handler.recycle(std::move(*streamed_));
  streamed_.reset();
  ctx_.open.erase(shared_from_this());
  ctx_.stats.open = ctx_.open.size();
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

void Connection::clear_deadline() { timer_.cancel(); }

void Connection::wait_request() {
  if (closed_) return;
  set_deadline(ctx_.options.idle_timeout);
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_) return self->close();
    self->read_header();
  });
}

void Connection::read_header() {
  // From the first byte on, the whole request must arrive within request_timeout.
  set_deadline(ctx_.options.request_timeout);
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
    authed_ = true;
    codec_ = std::get<HelloReply>(reply).codec;
    return write(frame(Message{m.request_id, reply}, codec_, ctx_.options.max_reply), false);
  }
  if (!ctx_.options.token.empty() && !authed_) {
    ++ctx_.stats.refused_token;
    return fail(ErrorCode::unauthorized, "this server needs a hello with its token first", m.request_id);
  }
  ++ctx_.stats.requests;
  // The service runs on a worker; the reply comes back to the I/O thread. No read is
  // outstanding meanwhile, so there is at most one reply (one write) in flight.
  const bool steering = Handler::is_steering(type);
  const auto job = ++job_;
  awaiting_ = true;
  if (steering) {
    // A steering call may wait for the run's next step boundary: answer `timeout` when
    // it takes too long, and keep the session (the late reply is dropped in answer()).
    steer_timer_.expires_after(ctx_.options.steer_timeout);
    steer_timer_.async_wait([self = shared_from_this(), job, id = m.request_id](const boost::system::error_code& ec) {
      if (ec || self->closed_ || !self->awaiting_ || self->job_ != job) return;
      ++self->ctx_.stats.timeouts;
      const auto ms = std::to_string(self->ctx_.options.steer_timeout.count());
      const ErrorReply late{ErrorCode::timeout,
                            "no answer from the run within " + ms + " ms; the request may still take effect (ask for status)"};
      self->answer(job, frame(Message{id, late}, self->codec_, self->ctx_.options.max_reply));
    });
  }
  auto& io = ctx_.io;
  (steering ? ctx_.steering : ctx_.queries).post([self = shared_from_this(), &io, job, m = std::move(m), codec = codec_,
                                                  head = std::move(spare_)]() mutable {
    // Arrays that go out as they are may go out while they fill (a live window).
    std::shared_ptr<Stream> stream;
    if (codec == Codec::none && std::holds_alternative<WindowRequest>(m.body))
      stream = std::make_shared<Stream>(self, job, m.request_id, std::move(head));
    Body body = self->ctx_.handler.handle(m.body, stream.get());
    if (stream && stream->begun()) {
      asio::post(io, [self, stream, body = std::move(body)]() mutable { self->stream_done(stream, std::move(body)); });
      return;
    }
    if (stream) head = stream->take_head();
    auto reply = frame(Message{m.request_id, std::move(body)}, codec, self->ctx_.options.max_reply, std::move(head));
    asio::post(io, [self, job, reply = std::move(reply)]() mutable { self->answer(job, std::move(reply)); });
  });
}

std::shared_ptr<Reply> Connection::frame(Message m, Codec codec, std::uint64_t max_payload, std::vector<std::byte> head) {
  auto r = std::make_shared<Reply>();
  r->message = std::move(m);  // first: the frame may point into it
  r->frame.head = std::move(head);
  try {
    encode(r->message, r->frame, EncodeOptions{codec, max_payload, kZstdLevel});
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
  write(std::move(reply), false);
}

void Connection::write(std::shared_ptr<Reply> reply, bool then_close) {
  if (closed_) return;
  out_ = std::move(reply);
  // One gathering write of the head and the arrays where they are (codec none).
  out_bufs_.clear();
  out_bufs_.push_back(asio::buffer(out_->frame.head));
  for (const auto& a : out_->frame.arrays)
    if (!a.empty()) out_bufs_.push_back(asio::buffer(a.data(), a.size()));
  set_deadline(ctx_.options.write_timeout);
  const auto done = [self = shared_from_this(), then_close](const boost::system::error_code& ec, std::size_t) {
    if (self->out_->frame.head.capacity() <= kKeepReply) self->spare_ = std::move(self->out_->frame.head);
    self->ctx_.handler.recycle(std::move(self->out_->message.body));
    self->out_.reset();
    self->out_bufs_.clear();
    if (ec || self->closed_) return self->close();
    if (then_close) return self->linger_close();
    self->wait_request();
  };
  asio::async_write(socket_, out_bufs_, done);
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
    encode(m, frame_, EncodeOptions{Codec::none, conn_->ctx_.options.max_reply, kZstdLevel});
  } catch (const ProtocolError&) {
    ok = false;  // e.g. too large: the ordinary path answers with the error
  }
  reply = std::move(std::get<WindowReply>(m.body));
  if (!ok) return false;
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
  head_sent_ = writing_ = false;
  streamed_.reset();
  pump();
}

void Connection::pump() {
  if (closed_ || !stream_ || writing_) return;
  const auto ready = std::min(stream_->ready_.load(std::memory_order_acquire), stream_->total_);
  if (head_sent_ && ready <= sent_) {
    if (sent_ < stream_->total_ || !streamed_) return;  // more to come, or the reply is not back yet
    const auto s = std::move(stream_);
    if (s->frame_.head.capacity() <= kKeepReply) spare_ = std::move(s->frame_.head);
    ctx_.handler.recycle(std::move(*streamed_));
    streamed_.reset();
    out_bufs_.clear();
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
  head_sent_ = writing_ = true;
  sent_ = std::max(sent_, ready);
  set_deadline(ctx_.options.write_timeout);
  asio::async_write(socket_, out_bufs_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
    self->writing_ = false;
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
  write(frame(Message{request_id, ErrorReply{code, message}}, codec_, ctx_.options.max_reply), true);
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

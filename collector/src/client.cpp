// Blocking collector client: asynchronous operations run on a private io_context up
// to a deadline (the pattern of asio's blocking_tcp_client example), so every call is
// bounded in time even if the server stops answering mid-frame.
#include "rewind/collector/client.hpp"
#include "rewind/collector/freed_memory.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <optional>

namespace rwd::collector {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

/// T of a "t=T" selector; nothing for any other selector.
std::optional<double> time_of(const std::string& selector) {
  if (selector.rfind("t=", 0) != 0) return std::nullopt;
  char* end = nullptr;
  const double t = std::strtod(selector.c_str() + 2, &end);
  if (*end != '\0' || end == selector.c_str() + 2 || !std::isfinite(t)) return std::nullopt;
  return t;
}

/// Whether a step of `file` ("" = any listed) is at or after t, with the kernel's
/// tolerance (kernel::index_at_or_before).
bool reached(const std::vector<StepRecord>& steps, const std::string& file, double t) {
  return std::any_of(steps.begin(), steps.end(), [&](const StepRecord& s) {
    return (file.empty() || s.file == file) && t <= s.time * (1 + 1e-12) + 1e-300;
  });
}

/// How often a wait for a time not reached asks the job where it is.
constexpr std::chrono::milliseconds kReachPoll{200};

std::uint64_t array_bytes(const WindowReply& w) {
  std::uint64_t n = w.cell_type.capacity();
  for (const auto& v : w.values) n += 8 * v.capacity();
  return n;
}

}  // namespace

struct Client::Impl {
  ClientOptions options;
  asio::io_context io;
  tcp::socket socket{io};
  HelloReply hello;
  std::uint32_t next_id = 1;
  // Compressed arrays (zstd) are read here, kept between calls up to kKeepScratch: a
  // fresh buffer per large window costs a zero fill and a page fault per 4 KiB.
  static constexpr std::size_t kKeepScratch = std::size_t{256} << 20;
  std::vector<std::byte> scratch;
  bool open = false;

  /// The payload of the reply being read, straight from the socket, by the deadline.
  class Source final : public PayloadSource {
   public:
    Source(Impl& s, Clock::time_point deadline) : s_(s), deadline_(deadline) {}
    void read(std::byte* dst, std::size_t n) override { s_.read(dst, n, deadline_); }
    std::span<const std::byte> next(std::size_t n) override {
      s_.scratch.resize(n);
      read(s_.scratch.data(), n);
      return s_.scratch;
    }

   private:
    Impl& s_;
    Clock::time_point deadline_;
  };

  void read(std::byte* dst, std::size_t n, Clock::time_point deadline) {
    boost::system::error_code ec;
    bool done = false;
    // Asks the kernel for all that is left in each read: asio's transfer_all caps every
    // read at 64 KiB (a 34 MB window took ~530 reads, each a trip through run_one).
    const auto rest = [n](const boost::system::error_code& e, std::size_t got) -> std::size_t { return e ? 0 : n - got; };
    asio::async_read(socket, asio::buffer(dst, n), rest, [&](const boost::system::error_code& e, std::size_t) { ec = e, done = true; });
    run_until(deadline, done, "reading a reply");
    check(ec, "receive (the server closed the connection?)");
  }

  /// Runs the io_context until `done` or the deadline; on timeout closes the socket.
  void run_until(Clock::time_point deadline, const bool& done, const char* what) {
    io.restart();
    while (!done && !io.stopped()) {
      if (Clock::now() >= deadline || io.run_one_until(deadline) == 0) break;
    }
    if (!done) {
      boost::system::error_code ignored;
      socket.close(ignored);
      open = false;
      io.restart();
      io.run();  // let the cancelled operation complete
      throw ClientError(ErrorCode::timeout, std::string("collector client: timed out ") + what);
    }
  }

  void check(const boost::system::error_code& ec, const char* what) {
    if (!ec) return;
    boost::system::error_code ignored;
    socket.close(ignored);
    open = false;
    throw std::runtime_error(std::string("collector client: ") + what + ": " + ec.message());
  }

  /// Sends `request` and reads its reply; a window reply's arrays go into `reuse`'s.
  Body exchange(const Body& request, WindowReply* reuse = nullptr) {
    if (!open) throw std::runtime_error("collector client: not connected");
    const bool branch = std::holds_alternative<BranchRequest>(request);
    const auto deadline = Clock::now() + (branch ? std::max(options.timeout, options.branch_timeout) : options.timeout);
    const std::uint32_t id = next_id++;
    const auto out = encode(Message{id, request}, kMaxRequestBytes);
    boost::system::error_code ec;
    bool done = false;
    asio::async_write(socket, asio::buffer(out), [&](const boost::system::error_code& e, std::size_t) { ec = e, done = true; });
    run_until(deadline, done, "sending a request");
    check(ec, "send");
    std::array<std::byte, kHeaderSize> header{};
    read(header.data(), header.size(), deadline);
    Message m;
    try {
      const auto h = read_header(header, options.max_reply);
      Source source(*this, deadline);
      m = decode_payload(h, source, Limits{options.max_reply, options.max_raw}, reuse);
    } catch (const ProtocolError& e) {
      close_now();
      throw ClientError(e.code(), e.what());
    }
    if (scratch.capacity() > kKeepScratch) scratch = {};
    if (auto* e = std::get_if<ErrorReply>(&m.body)) {
      throw ClientError(e->code, std::string("collector: server error ") + to_string(e->code) + ": " + e->message);
    }
    if (m.request_id != id) {
      close_now();
      throw ClientError(ErrorCode::malformed, "collector client: reply to request " + std::to_string(m.request_id) +
                                                  ", expected " + std::to_string(id));
    }
    return std::move(m.body);
  }

  void close_now() {
    boost::system::error_code ignored;
    socket.close(ignored);
    open = false;
  }
};

Client::Client(const std::string& host, std::uint16_t port, const std::string& token, ClientOptions options)
    : impl_(std::make_unique<Impl>()) {
  auto& s = *impl_;
  s.options = std::move(options);
  const auto deadline = Clock::now() + s.options.timeout;
  tcp::resolver resolver(s.io);
  boost::system::error_code ec;
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) throw std::runtime_error("collector client: cannot resolve " + host + ": " + ec.message());
  bool done = false;
  asio::async_connect(s.socket, endpoints, [&](const boost::system::error_code& e, const tcp::endpoint&) { ec = e, done = true; });
  s.run_until(deadline, done, "connecting");
  if (ec) throw std::runtime_error("collector client: cannot connect to " + host + ":" + std::to_string(port) + ": " + ec.message());
  s.socket.set_option(tcp::no_delay(true));
  s.open = true;
  auto codecs = s.options.codecs;
  if (codecs.empty()) {
    const bool local = s.socket.remote_endpoint(ec).address().is_loopback();
    codecs = local ? std::vector<std::string>{"none", "zstd"} : std::vector<std::string>{"zstd", "none"};
  }
  const auto reply = s.exchange(Hello{kProtocolVersion, token, s.options.name, codecs, s.options.piece_table});
  const auto* h = std::get_if<HelloReply>(&reply);
  if (!h) throw ClientError(ErrorCode::malformed, "collector client: the server did not answer the hello with a hello_reply");
  if (h->protocol != kProtocolVersion)
    throw ClientError(ErrorCode::bad_version, "collector client: server speaks protocol " + std::to_string(h->protocol));
  s.hello = *h;
}

Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Client::~Client() {
  if (impl_) close();
}

const HelloReply& Client::server() const { return impl_->hello; }
bool Client::connected() const { return impl_ && impl_->open; }

Body Client::call(const Body& request) { return impl_->exchange(request); }

template <typename T>
static T expect(Body&& b, const char* what) {
  if (auto* r = std::get_if<T>(&b)) return std::move(*r);
  throw ClientError(ErrorCode::unknown_type, std::string("collector client: unexpected reply type to a ") + what);
}

ServerInfo Client::info() { return expect<InfoReply>(call(InfoRequest{}), "info request").info; }
std::vector<StepRecord> Client::steps() { return expect<StepsReply>(call(StepsRequest{}), "steps request").steps; }
WindowReply Client::window(const WindowRequest& request) {
  WindowReply out;
  window(request, out);
  return out;
}

void Client::window(const WindowRequest& request, WindowReply& out) {
  const auto deadline = Clock::now() + impl_->options.timeout;
  for (;;) {
    try {
      out = expect<WindowReply>(impl_->exchange(request, &out), "window request");
      break;
    } catch (const ClientError& e) {
      if (e.code() != ErrorCode::no_such_step) throw;
      wait_to_reach(e, request.time, request.file, deadline);
    }
  }
  keep_freed_memory(array_bytes(out));
}

void Client::wait_to_reach(const ClientError& refused, const std::string& time, const std::string& file,
                           Clock::time_point deadline) {
  const auto t = time_of(time);
  if (!t || !offers("status") || reached(steps(), file, *t)) throw refused;
  const auto start = Clock::now();
  for (;;) {
    const RunStatus s = status();
    if (s.state != RunState::running) throw refused;
    if (Clock::now() + kReachPoll > deadline) {
      const auto waited = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
      throw ClientError(refused.code(), std::string(refused.what()) + "; waited " + std::to_string(waited) +
                                            " s (the client's timeout) for the running job to reach it");
    }
    std::this_thread::sleep_for(kReachPoll);
    // The job's time first (cheap): its steps are read from its files.
    if (s.time * (1 + 1e-12) + 1e-300 >= *t && reached(steps(), file, *t)) return;
  }
}

bool Client::offers(const std::string& capability) const {
  const auto& c = impl_->hello.capabilities;
  return std::find(c.begin(), c.end(), capability) != c.end();
}

template <typename Reply>
Reply Client::steer(const Body& request) {
  const char* name = capability_of(type_of(request));
  if (!offers(name)) {
    std::string caps;
    for (const auto& c : impl_->hello.capabilities) caps += (caps.empty() ? "" : ", ") + c;
    throw ClientError(ErrorCode::unsupported, std::string("collector client: unsupported: the server does not offer ") + name +
                                                  " (it offers " + caps + "); is it an offline `rewind serve`?");
  }
  return expect<Reply>(call(request), name);
}

RunStatus Client::status() { return steer<StatusReply>(StatusRequest{}).status; }
ControlReply Client::control(ControlAction action, const std::string& file) {
  return steer<ControlReply>(ControlRequest{to_string(action), file});
}
std::vector<ParameterInfo> Client::parameters() { return steer<ParametersReply>(ParametersRequest{}).parameters; }
SetReply Client::set(const ParamValues& values, const std::string& file) {
  return steer<SetReply>(SetRequest{values, file});
}
BranchReply Client::branch(const BranchRequest& request) { return steer<BranchReply>(request); }

void Client::close() {
  auto& s = *impl_;
  if (!s.open) return;
  try {
    const auto out = encode(Message{s.next_id++, Bye{}});
    bool done = false;
    asio::async_write(s.socket, asio::buffer(out), [&](const boost::system::error_code&, std::size_t) { done = true; });
    s.run_until(Clock::now() + std::chrono::milliseconds(500), done, "saying bye");
  } catch (...) {  // best effort: the server times the session out anyway
  }
  s.close_now();
}

}  // namespace rwd::collector

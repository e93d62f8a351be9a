// The collector's acceptor, I/O thread and shutdown (see server.hpp).
#include "rewind/collector/server.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>

#ifdef __linux__
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "connection.hpp"

namespace rwd::collector {

using namespace detail;

struct Server::Impl {
  Impl(Service& s, ServerOptions o) : service(s), options(std::move(o)), handler(service, options.limits) {}

  Service& service;
  ServerOptions options;
  Handler handler;
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  AtomicStats stats;
  std::unique_ptr<Worker> queries, steering;
  std::unique_ptr<Context> ctx;
  std::thread thread;
  std::uint16_t port = 0;
  bool running = false;

  void accept() {
    acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        ++stats.accepted;
        std::make_shared<Connection>(std::move(socket), *ctx)->start();
        return accept();
      }
      // Errors such as "too many open files" must neither end the accept loop nor spin it.
      retry.expires_after(std::chrono::milliseconds(100));
      retry.async_wait([this](const boost::system::error_code& e) {
        if (!e && acceptor.is_open()) accept();
      });
    });
  }
};

Server::Server(Service& service, ServerOptions options) : impl_(std::make_unique<Impl>(service, std::move(options))) {}

Server::~Server() {
  // A destructor must not throw (it would terminate the process): a failure to stop
  // (joining the I/O thread, a Service's stopping()) is reported here instead.
  try {
    stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collector: stopping the server: %s\n", e.what());
  }
}

void Server::start() {
  auto& s = *impl_;
  if (s.running) return;
  const auto& o = s.options;
  tcp::resolver resolver(s.io);
  boost::system::error_code ec;
  const auto results = resolver.resolve(o.host, std::to_string(o.port), ec);
  if (ec || results.empty()) throw std::invalid_argument("collector: cannot resolve listen address \"" + o.host + "\": " + ec.message());
  const tcp::endpoint ep = results.begin()->endpoint();
  if (!ep.address().is_loopback() && o.token.empty())
    throw std::invalid_argument("collector: refusing to listen on " + o.host +
                                " without a token (anyone who can reach it could read the data); give --token or bind 127.0.0.1");
  s.acceptor.open(ep.protocol());
  s.acceptor.set_option(tcp::acceptor::reuse_address(true));
  s.acceptor.bind(ep, ec);
  if (ec) {
    s.acceptor.close();
    throw std::runtime_error("collector: cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  }
  s.acceptor.listen(asio::socket_base::max_listen_connections);
  s.port = s.acceptor.local_endpoint().port();
  s.queries = std::make_unique<Worker>();
  s.steering = std::make_unique<Worker>();
  s.ctx = std::unique_ptr<Context>(new Context(s.io, s.options, s.handler, *s.queries, *s.steering, s.stats));
  s.guard.emplace(s.io.get_executor());
  s.accept();
  s.thread = std::thread([&s] {
    prefer_short_slices();
    s.io.run();
  });
  s.running = true;
}

std::uint16_t Server::port() const { return impl_->port; }

void Server::stop() {
  auto& s = *impl_;
  if (!s.running) return;
  s.running = false;
  asio::post(s.io, [&s] {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    s.retry.cancel();
    s.ctx->stop_all();
  });
  // Jobs still queued are dropped; a running one finishes (a blocked one is told to by
  // stopping()) and posts its write, which fails at once on the closed socket.
  s.service.stopping();
  s.queries->stop();
  s.steering->stop();
  s.guard.reset();
  s.thread.join();
  s.io.restart();
  s.io.poll();  // handlers posted after run() returned (by the last job) see closed sockets
}

ServerStats Server::stats() const {
  const auto& a = impl_->stats;
  return {a.accepted,       a.refused_busy, a.refused_token,  a.timeouts,    a.protocol_errors,
          a.requests,       a.open,         a.evicted,        a.refused_memory, a.reply_bytes,
          a.reply_bytes_peak};
}

void prefer_short_slices() noexcept {
#if defined(__linux__) && defined(SYS_sched_setattr)
  struct Attr {  // the kernel's struct sched_attr (not in glibc 2.36's headers)
    std::uint32_t size, policy;
    std::uint64_t flags;
    std::int32_t nice;
    std::uint32_t priority;
    std::uint64_t runtime, deadline, period;
    std::uint32_t util_min, util_max;
  } a{};
  // Only an ordinary (SCHED_OTHER) thread, its nice value kept.
  if (::syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) != 0 || a.policy != SCHED_OTHER) return;
  a.size = sizeof a;
  a.flags = 0;
  a.runtime = 100'000;  // ns
  (void)::syscall(SYS_sched_setattr, 0, &a, 0);
#endif
}

}  // namespace rwd::collector

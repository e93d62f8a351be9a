// The collector server on 127.0.0.1 (ephemeral port) with a fake Service: many
// concurrent clients, clients that vanish, a slow-loris, too many clients, wrong
// tokens, oversized requests, connections that send nothing, idle sessions, clients
// that never read their replies -- and after each, a good client is still served.
// Over 500 lines: every misbehaving-client scenario shares one fake Service and one
// raw-socket helper; split, each file would repeat them.
#include <catch2/catch.hpp>
#include <utility>  // before Asio (Boost 1.74 + C++20)
#include <boost/asio.hpp>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#endif

#include "frame_util.hpp"
#include "rewind/collector/client.hpp"
#include "rewind/collector/contact.hpp"
#include "rewind/collector/server.hpp"

using namespace rwd::collector;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

ServerOptions fast_options() {
  ServerOptions o;
  o.idle_timeout = 3s;
  o.request_timeout = 500ms;
  o.write_timeout = 3s;
  return o;
}

ClientOptions client_options() {
  ClientOptions o;
  o.timeout = 5s;
  return o;
}

WindowRequest request(std::uint64_t budget) { return {{0, 0, 0}, {1, 1, 1}, budget, "latest", {"p", "u"}, ""}; }

/// Fetches a window and checks every value the fake service computed.
bool window_is_right(Client& c, std::uint64_t budget) {
  const auto w = c.window(request(budget));
  if (w.cells != budget || w.values.size() != 2 || w.cell_type.size() != budget) return false;
  // The pieces the fake service makes: 1 + budget % 4 of them along x, level budget % 5.
  const std::uint64_t n = 1 + budget % 4;
  if (w.pieces.size() != n) return false;
  for (std::uint64_t k = 0; k < n; ++k) {
    const auto& p = w.pieces[k];
    const auto cells = static_cast<std::int32_t>(k + 1 == n ? budget - (n - 1) * (budget / n) : budget / n);
    if (p.row != static_cast<std::int64_t>(k) || p.uid != 1000 + k ||
        p.level != static_cast<std::int32_t>(budget % 5) || p.count != std::array<std::int32_t, 3>{cells, 1, 1} ||
        p.stride != 1 || p.spacing != std::array<double, 3>{0.5, 0.5, 0.5})
      return false;
  }
  for (std::size_t v = 0; v < 2; ++v)
    for (std::uint64_t i = 0; i < budget; ++i)
      if (w.values[v][i] != test::fake_value(v, i, budget)) return false;
  for (std::uint64_t i = 0; i < budget; ++i)
    if (w.cell_type[i] != i % 7) return false;
  return true;
}

bool good_client_served(std::uint16_t port, const std::string& token = "") {
  Client c("127.0.0.1", port, token, client_options());
  return c.info().variables.size() == 3 && window_is_right(c, 1234);
}

/// A raw TCP peer with a receive timeout, to misbehave on purpose; `rcvbuf` > 0 makes
/// its receive buffer that small (a reader that takes nothing stalls the sender sooner).
struct Raw {
  asio::io_context io;
  tcp::socket s{io};
  explicit Raw(std::uint16_t port, int rcvbuf = 0) {
    s.open(tcp::v4());
    if (rcvbuf > 0) s.set_option(asio::socket_base::receive_buffer_size(rcvbuf));
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    timeval tv{3, 0};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  void send(std::span<const std::byte> b) { asio::write(s, asio::buffer(b.data(), b.size())); }
  /// The next frame from the server, or nullopt on EOF/reset/timeout.
  std::optional<Message> read() {
    std::array<std::byte, kHeaderSize> h{};
    boost::system::error_code ec;
    asio::read(s, asio::buffer(h), ec);
    if (ec) return std::nullopt;
    const auto fh = read_header(h, kMaxReplyBytes);
    std::vector<std::byte> f(kHeaderSize + fh.length);
    std::copy(h.begin(), h.end(), f.begin());
    asio::read(s, asio::buffer(f.data() + kHeaderSize, fh.length), ec);
    if (ec) return std::nullopt;
    return decode(f);
  }
  ErrorCode read_error() {
    const auto m = read();
    REQUIRE(m.has_value());
    const auto* e = std::get_if<ErrorReply>(&m->body);
    REQUIRE(e != nullptr);
    return e->code;
  }
  /// True if the server closed the connection (EOF or reset) rather than the read timing out.
  bool closed_by_server() {
    std::array<char, 256> buf{};
    boost::system::error_code ec;
    for (int i = 0; i < 100; ++i) {
      s.read_some(asio::buffer(buf), ec);
      if (ec) return ec == asio::error::eof || ec == asio::error::connection_reset;
    }
    return false;
  }
};

}  // namespace

#ifdef __linux__
TEST_CASE("the collector's threads ask for short slices and keep their policy and nice value", "[collector][server]") {
  // What the scheduler says of the thread (/proc/thread-self/sched: policy, prio = 120 +
  // nice, se.slice in ns since Linux 6.6; custom slices since 6.12).
  const auto sched = [] {
    std::map<std::string, long long> out;
    std::ifstream in("/proc/thread-self/sched");
    for (std::string line; std::getline(in, line);) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, colon);
      key.erase(key.find_last_not_of(' ') + 1);
      try {
        out[key] = std::stoll(line.substr(colon + 1));
      } catch (const std::exception&) {
      }
    }
    return out;
  };
  std::thread([&] {
    REQUIRE(::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 3) == 0);
    const auto before = sched();
    prefer_short_slices();
    const auto after = sched();
    CHECK(after.at("policy") == 0);  // SCHED_OTHER
    CHECK(after.at("prio") == 123);  // nice 3 kept
    utsname u{};
    ::uname(&u);
    int major = 0, minor = 0;
    std::sscanf(u.release, "%d.%d", &major, &minor);
    if (!after.count("se.slice")) return;
    if (major > 6 || (major == 6 && minor >= 12)) CHECK(after.at("se.slice") == 100'000);
    else CHECK(after.at("se.slice") == before.at("se.slice"));  // an older kernel ignores the hint
  }).join();
}
#endif

TEST_CASE("32 concurrent clients each get their own, correct data", "[collector][server]") {
  test::FakeService service;
  auto o = fast_options();
  o.max_clients = 32;
  Server server(service, o);
  server.start();
  REQUIRE(server.port() != 0);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&, t] {
      try {
        Client c("127.0.0.1", server.port(), "", client_options());
        bool all = c.server().server == o.name && c.steps().size() == 3;
        for (int r = 0; r < 3; ++r) all = all && window_is_right(c, 1000 + 37 * static_cast<std::uint64_t>(t) + r);
        if (all) ++ok;
      } catch (const std::exception& e) {
        WARN(e.what());
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(ok == 32);
  CHECK(server.stats().requests >= 32 * 4);
}

TEST_CASE("each client gets the codec it asks for, and the same values in either", "[collector][server]") {
  test::FakeService service;
  Server server(service, fast_options());
  server.start();
  const auto with = [&](std::vector<std::string> codecs) {
    auto o = client_options();
    o.codecs = std::move(codecs);
    return Client("127.0.0.1", server.port(), "", o);
  };
  for (const auto& [offer, codec] : std::vector<std::pair<std::vector<std::string>, Codec>>{
           {{"none"}, Codec::none}, {{"zstd"}, Codec::zstd}, {{"lz4", "zstd", "none"}, Codec::zstd}, {{}, Codec::none}}) {
    Client c = with(offer);
    CAPTURE(to_string(codec));
    CHECK(c.server().codec == codec);  // {} on 127.0.0.1: none first
    CHECK(c.server().piece_table);     // 1.7: the client asks by default
    CHECK(window_is_right(c, 5000));
    CHECK(window_is_right(c, 5003));  // four pieces
    // Into the previous reply's buffers: same size, same memory, new values.
    WindowReply w;
    c.window(request(4000), w);
    const double* kept = w.values[1].data();
    c.window(request(4000), w);
    CHECK(w.values[1].data() == kept);
    CHECK(w.values[1][3999] == test::fake_value(1, 3999, 4000));
    CHECK(w.cell_type[3999] == 3999 % 7);
  }
  try {
    with({"lz4"});
    FAIL("a hello without a known codec was accepted");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::bad_argument);
  }
  // A 1.1 client (no codecs in its hello) is sent zstd, as before.
  Raw raw(server.port());
  raw.send(test::make_frame(1, R"({"protocol":1,"token":"","client":"1.1"})"));
  const auto hello = raw.read();
  REQUIRE(hello.has_value());
  CHECK(std::get<HelloReply>(hello->body).codec == Codec::zstd);
  raw.send(encode(Message{2, request(100)}));
  std::array<std::byte, kHeaderSize> h{};
  asio::read(raw.s, asio::buffer(h));
  std::vector<std::byte> f(kHeaderSize + read_header(h, kMaxReplyBytes).length);
  std::copy(h.begin(), h.end(), f.begin());
  asio::read(raw.s, asio::buffer(f.data() + kHeaderSize, f.size() - kHeaderSize));
  const std::string text(reinterpret_cast<const char*>(f.data()), f.size());
  CHECK(text.find(R"("codec":"zstd")") != std::string::npos);
  CHECK(text.find(R"("codec":"none")") == std::string::npos);
  CHECK(std::get<WindowReply>(decode(f).body).values[0][99] == test::fake_value(0, 99, 100));
}

TEST_CASE("a written window reply is handed back to the service for reuse", "[collector][server]") {
  struct Recycling : test::FakeService {
    std::atomic<int> recycled{0};
    std::atomic<std::uint64_t> cells{0};
    void recycle(WindowReply&& w) noexcept override {
      cells = w.values.empty() ? 0 : w.values[0].size();
      ++recycled;
    }
  } service;
  Server server(service, fast_options());
  server.start();
  Client c("127.0.0.1", server.port(), "", client_options());
  CHECK(c.info().variables.size() == 3);
  CHECK(window_is_right(c, 777));
  const auto end = Clock::now() + 2s;  // the server recycles once its write has completed
  while (service.recycled == 0 && Clock::now() < end) std::this_thread::sleep_for(5ms);
  CHECK(service.recycled == 1);  // the window only, not the info reply
  CHECK(service.cells == 777);
}

namespace {

/// FakeService whose windows go out while they fill, when the server offers a stream
/// (codec none): begin(), then every array in four chunks, each reported ready. Time
/// "#5" fails halfway through (a compute rank failing after the header went out).
struct StreamingService : test::FakeService {
  std::atomic<int> streamed{0}, recycled{0};
  using FakeService::window;
  WindowReply window(const WindowRequest& r, WindowStream* stream) override {
    WindowRequest q = r;
    if (q.time == "#5") q.time = "latest";
    const WindowReply full = FakeService::window(q);
    if (stream == nullptr) return full;
    WindowReply w = full;
    for (auto& v : w.values) std::fill(v.begin(), v.end(), -1.0);
    std::fill(w.cell_type.begin(), w.cell_type.end(), std::uint8_t{99});
    if (!stream->begin(w)) return full;
    ++streamed;
    std::vector<std::pair<std::byte*, const std::byte*>> arrays;
    std::vector<std::uint64_t> sizes;
    for (std::size_t v = 0; v < w.values.size(); ++v) {
      arrays.emplace_back(reinterpret_cast<std::byte*>(w.values[v].data()), reinterpret_cast<const std::byte*>(full.values[v].data()));
      sizes.push_back(8 * w.values[v].size());
    }
    arrays.emplace_back(reinterpret_cast<std::byte*>(w.cell_type.data()), reinterpret_cast<const std::byte*>(full.cell_type.data()));
    sizes.push_back(w.cell_type.size());
    std::uint64_t total = 0, ready = 0;
    for (const auto n : sizes) total += n;
    for (std::size_t a = 0; a < arrays.size(); ++a)
      for (std::uint64_t k = 0; k < 4; ++k) {
        const auto lo = sizes[a] * k / 4, hi = sizes[a] * (k + 1) / 4;
        std::memcpy(arrays[a].first + lo, arrays[a].second + lo, hi - lo);
        ready += hi - lo;
        if (r.time == "#5" && 2 * ready >= total) {
          stream->abort(std::move(w));
          throw std::runtime_error("a compute rank failed");
        }
        stream->ready(ready);
        std::this_thread::sleep_for(1ms);
      }
    return w;
  }
  void recycle(WindowReply&&) noexcept override { ++recycled; }
};

ClientOptions with_codec(const char* codec) {
  auto o = client_options();
  o.codecs = {codec};
  return o;
}

}  // namespace

TEST_CASE("a window streamed while its arrays fill arrives whole; zstd sessions are not streamed", "[collector][server]") {
  StreamingService service;
  Server server(service, fast_options());
  server.start();
  for (const std::uint64_t budget : {1u, 777u, 300'000u}) {
    for (const bool table : {true, false}) {  // pieces as a table (1.7) or as the JSON list
      auto o = with_codec("none");
      o.piece_table = table;
      Client c("127.0.0.1", server.port(), "", o);
      CAPTURE(budget, table);
      CHECK(c.server().piece_table == table);
      CHECK(window_is_right(c, budget));
      CHECK(window_is_right(c, budget));  // the session goes on after a streamed reply
    }
  }
  CHECK(service.streamed == 12);
  Client z("127.0.0.1", server.port(), "", with_codec("zstd"));
  CHECK(window_is_right(z, 5000));
  CHECK(service.streamed == 12);
  const auto end = Clock::now() + 2s;  // every streamed reply is handed back once written
  while (service.recycled < 12 && Clock::now() < end) std::this_thread::sleep_for(5ms);
  CHECK(service.recycled >= 12);
}

TEST_CASE("a streamed window whose service fails mid-reply cuts the connection; others go on", "[collector][server]") {
  StreamingService service;
  Server server(service, fast_options());
  server.start();
  {
    Client c("127.0.0.1", server.port(), "", with_codec("none"));
    auto r = request(200'000);
    r.time = "#5";
    CHECK_THROWS(c.window(r));
  }
  {
    // On the wire: the header came, then the connection ended inside the frame.
    Raw raw(server.port());
    raw.send(encode(Message{1, Hello{kProtocolVersion, "", "test", {"none"}}}));
    REQUIRE(raw.read().has_value());
    auto r = request(200'000);
    r.time = "#5";
    raw.send(encode(Message{2, r}));
    std::array<std::byte, kHeaderSize> h{};
    boost::system::error_code ec;
    asio::read(raw.s, asio::buffer(h), ec);
    REQUIRE(!ec);
    const auto fh = read_header(h, kMaxReplyBytes);
    CHECK(fh.type == MessageType::window_reply);
    std::vector<std::byte> rest(fh.length);
    const auto got = asio::read(raw.s, asio::buffer(rest), ec);
    CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));
    CHECK(got > 0);
    CHECK(got < fh.length);
  }
  Client c("127.0.0.1", server.port(), "", with_codec("none"));
  CHECK(window_is_right(c, 1234));
  for (int i = 0; i < 50 && server.stats().open > 1; ++i) std::this_thread::sleep_for(50ms);
  CHECK(server.stats().open == 1);
}

TEST_CASE("clients that vanish mid-request or mid-reply do not disturb the others", "[collector][server]") {
  test::FakeService service;
  Server server(service, fast_options());
  server.start();
  const auto window = encode(Message{1, request(4'000'000)});  // a reply of ~64 MB raw
  {
    Raw r(server.port());
    r.send(std::span(window).first(30));  // half a request, then gone
  }
  for (int k = 0; k < 3; ++k) {
    Raw r(server.port());
    r.send(window);
    std::array<char, 100> some{};
    asio::read(r.s, asio::buffer(some));  // the first bytes of the reply, then gone
  }
  const auto t0 = Clock::now();
  CHECK(good_client_served(server.port()));
  CHECK(Clock::now() - t0 < 5s);
  // The server noticed: nothing is left open but what is still closing.
  for (int i = 0; i < 50 && server.stats().open > 0; ++i) std::this_thread::sleep_for(50ms);
  CHECK(server.stats().open == 0);
}

TEST_CASE("a slow-loris client is cut off by the request deadline", "[collector][server]") {
  test::FakeService service;
  Server server(service, fast_options());  // request_timeout 500 ms
  server.start();
  Raw loris(server.port());
  const auto frame = encode(Message{1, InfoRequest{}});
  const auto t0 = Clock::now();
  bool cut = false;
  for (std::size_t i = 0; i < frame.size() && Clock::now() - t0 < 4s; ++i) {
    boost::system::error_code ec;
    asio::write(loris.s, asio::buffer(&frame[i], 1), ec);
    if (ec) {
      cut = true;
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  CHECK((cut || loris.closed_by_server()));
  CHECK(Clock::now() - t0 < 5s);
  CHECK(server.stats().timeouts >= 1);
  CHECK(good_client_served(server.port()));
}

TEST_CASE("an idle client is closed after the idle timeout", "[collector][server]") {
  test::FakeService service;
  auto o = fast_options();
  o.idle_timeout = 300ms;
  Server server(service, o);
  server.start();
  Client c("127.0.0.1", server.port(), "", client_options());
  std::this_thread::sleep_for(800ms);
  CHECK_THROWS(c.info());
  CHECK(good_client_served(server.port()));
}

TEST_CASE("beyond max_clients, a client gets busy and is closed", "[collector][server]") {
  test::FakeService service;
  auto o = fast_options();
  o.max_clients = 2;
  o.evict_after = 60s;  // no session is idle long enough to give way
  Server server(service, o);
  server.start();
  {
    Client a("127.0.0.1", server.port(), "", client_options());
    Client b("127.0.0.1", server.port(), "", client_options());
    try {
      Client c("127.0.0.1", server.port(), "", client_options());
      FAIL("a third client was accepted");
    } catch (const ClientError& e) {
      CHECK(e.code() == ErrorCode::busy);
    }
    CHECK(window_is_right(a, 10));
    CHECK(server.stats().refused_busy == 1);
  }
  // Closed clients free their places.
  for (int i = 0; i < 50 && server.stats().open > 0; ++i) std::this_thread::sleep_for(20ms);
  CHECK(good_client_served(server.port()));
}

TEST_CASE("a token is required when configured; a wrong one is refused and closed", "[collector][server]") {
  test::FakeService service;
  auto o = fast_options();
  o.token = "s3cret";
  Server server(service, o);
  server.start();
  for (const std::string bad : {"", "s3cre", "S3CRET"}) {
    try {
      Client c("127.0.0.1", server.port(), bad, client_options());
      FAIL("wrong token accepted");
    } catch (const ClientError& e) {
      CHECK(e.code() == ErrorCode::unauthorized);
    }
  }
  {
    Raw r(server.port());  // skips the hello
    r.send(encode(Message{1, InfoRequest{}}));
    CHECK(r.read_error() == ErrorCode::unauthorized);
    CHECK(r.closed_by_server());
  }
  CHECK(server.stats().refused_token == 4);
  CHECK(good_client_served(server.port(), "s3cret"));
}

TEST_CASE("oversized, malformed and wrong-version requests get one error and a close", "[collector][server]") {
  test::FakeService service;
  Server server(service, fast_options());
  server.start();
  {
    WindowRequest big = request(10);
    big.variables.assign(3000, std::string(40, 'v'));
    const auto frame = encode(Message{1, big});  // > 64 KiB
    Raw r(server.port());
    r.send(frame);
    CHECK(r.read_error() == ErrorCode::too_large);
    CHECK(r.closed_by_server());
  }
  {
    Raw r(server.port());
    r.send(test::make_frame(7, "{not json"));
    CHECK(r.read_error() == ErrorCode::malformed);
    CHECK(r.closed_by_server());
  }
  {
    Raw r(server.port());
    r.send(test::make_frame(3, "{}", {}, 2));
    CHECK(r.read_error() == ErrorCode::bad_version);
  }
  {
    Raw r(server.port());
    r.send(encode(Message{1, ErrorReply{ErrorCode::busy, "replies are not requests"}}));
    CHECK(r.read_error() == ErrorCode::unknown_type);
  }
  {
    Client c("127.0.0.1", server.port(), "", client_options());
    auto bad = request(10);
    bad.lo[0] = 5;
    try {
      c.window(bad);
      FAIL("bad box accepted");
    } catch (const ClientError& e) {
      CHECK(e.code() == ErrorCode::bad_argument);
    }
    CHECK(window_is_right(c, 77));  // a refused request does not end the session
  }
  CHECK(server.stats().protocol_errors >= 4);
  CHECK(good_client_served(server.port()));
}

TEST_CASE("the client's deadlines hold against a server that never answers", "[collector][server]") {
  asio::io_context io;
  tcp::acceptor mute(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto port = mute.local_endpoint().port();
  ClientOptions o;
  o.timeout = 300ms;
  const auto t0 = Clock::now();
  try {
    Client c("127.0.0.1", port, "", o);  // the kernel completes the connect; nobody replies
    FAIL("connected to a mute server");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::timeout);
  }
  CHECK(Clock::now() - t0 < 2s);
}

TEST_CASE("binding a non-loopback address needs a token; stop() ends live sessions", "[collector][server]") {
  CHECK(is_loopback_host("127.0.0.1"));
  CHECK(is_loopback_host("::1"));
  CHECK(is_loopback_host("localhost"));
  CHECK_FALSE(is_loopback_host("0.0.0.0"));
  CHECK_FALSE(is_loopback_host("10.1.2.3"));
  test::FakeService service;
  auto o = fast_options();
  o.host = "0.0.0.0";  // refused before anything is bound
  Server refused(service, o);
  CHECK_THROWS_AS(refused.start(), std::invalid_argument);

  service.delay = 300ms;
  Server server(service, fast_options());
  server.start();
  Client idle("127.0.0.1", server.port(), "", client_options());
  std::thread busy([&] {
    try {
      Client c("127.0.0.1", server.port(), "", client_options());
      c.window(request(100));
    } catch (const std::exception&) {  // cut off by stop(): expected
    }
  });
  std::this_thread::sleep_for(100ms);
  const auto t0 = Clock::now();
  server.stop();
  CHECK(Clock::now() - t0 < 2s);
  CHECK(server.stats().open == 0);
  busy.join();
  CHECK_THROWS(idle.info());
}

TEST_CASE("a steerable service through a real server: status, pause, set, parameters, branch", "[collector][server][steer]") {
  test::SteerableService service;
  Server server(service, fast_options());
  server.start();
  Client c("127.0.0.1", server.port(), "", client_options());
  CHECK(c.offers("window"));
  CHECK(c.offers("branch"));
  CHECK(c.status().state == RunState::running);
  const auto paused = c.control(ControlAction::pause);
  CHECK(paused.state == RunState::paused);
  CHECK(c.status().state == RunState::paused);
  CHECK(c.status().step == paused.step);
  CHECK(window_is_right(c, 500));  // windows go on while paused
  const auto set = c.set({{"physics.nu", 0.02}, {"boundary.xmin.velocity", std::array<double, 3>{2, 0, 0}}});
  CHECK(set.step == paused.step + 1);
  CHECK(std::get<double>(set.values.at("physics.nu")) == 0.02);
  const auto params = c.parameters();
  REQUIRE(params.size() == 2);
  CHECK(std::get<std::array<double, 3>>(params[0].value)[0] == 2);
  CHECK(std::get<double>(params[1].value) == 0.02);
  try {
    c.set({{"physics.nu", -1.0}});
    FAIL("a value out of range was accepted");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::bad_argument);
    CHECK(std::string(e.what()).find("physics.nu is outside") != std::string::npos);
  }
  CHECK(std::get<double>(c.parameters()[1].value) == 0.02);  // nothing applied
  const auto b = c.branch({"#-2", "", {{"physics.nu", 0.05}}, "faster.h5"});
  CHECK((b.file == "faster.h5" && b.parent == "fake.h5" && b.step == 5));
  CHECK(c.control(ControlAction::resume).state == RunState::running);
  CHECK(c.control(ControlAction::stop).state == RunState::stopping);
  try {
    c.set({{"physics.nu", 0.5}});
    FAIL("set after stop was accepted");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::conflict);
  }
  CHECK(c.status().state == RunState::stopping);  // the session survived every error
}

TEST_CASE("a steering call waiting for a step boundary stalls neither windows nor status", "[collector][server][steer]") {
  test::SteerableService service;
  service.boundary = 1500ms;
  Server server(service, fast_options());
  server.start();
  std::atomic<bool> paused{false};
  std::thread steer([&] {
    Client c("127.0.0.1", server.port(), "", client_options());
    paused = c.control(ControlAction::pause).state == RunState::paused;
  });
  std::this_thread::sleep_for(200ms);  // the pause is now waiting for its boundary
  Client other("127.0.0.1", server.port(), "", client_options());
  const auto t0 = Clock::now();
  CHECK(other.status().state == RunState::running);
  CHECK(window_is_right(other, 2000));
  CHECK(Clock::now() - t0 < 1000ms);
  steer.join();
  CHECK(paused);
  CHECK(other.status().state == RunState::paused);
}

TEST_CASE("a steering call past steer_timeout is answered timeout, the session goes on, stop() frees it",
          "[collector][server][steer]") {
  test::SteerableService service;
  service.hang = true;  // never reaches a step boundary
  auto o = fast_options();
  o.steer_timeout = 300ms;
  Server server(service, o);
  server.start();
  Client c("127.0.0.1", server.port(), "", client_options());
  const auto t0 = Clock::now();
  try {
    c.control(ControlAction::pause);
    FAIL("a hanging control call was answered");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::timeout);
  }
  CHECK(Clock::now() - t0 < 2s);
  CHECK(c.connected());
  CHECK(c.status().state == RunState::running);  // same session, next request
  CHECK(window_is_right(c, 300));
  CHECK(server.stats().timeouts >= 1);
  // A second steering call queues behind the hanging one and times out as well.
  CHECK_THROWS_AS(c.set({{"physics.nu", 0.5}}), ClientError);
  CHECK(c.status().step == 100);
  const auto t1 = Clock::now();
  server.stop();  // Service::stopping() releases the hanging call
  CHECK(Clock::now() - t1 < 2s);
}

TEST_CASE("a branch has its own deadline: a fork that restores a large state is answered, not timed out",
          "[collector][server][steer]") {
  test::SteerableService service;
  service.boundary = 700ms;  // the run answers after 0.7 s: past steer_timeout
  auto o = fast_options();
  o.steer_timeout = 300ms;
  o.branch_timeout = 5s;
  Server server(service, o);
  server.start();
  Client c("127.0.0.1", server.port(), "", client_options());
  const auto b = c.branch({"#-2", "", {{"physics.nu", 0.05}}, "slow.h5"});
  CHECK(b.file == "slow.h5");
  CHECK(server.stats().timeouts == 0);
  try {  // a control as slow is past its own deadline
    c.control(ControlAction::pause);
    FAIL("a control past steer_timeout was answered");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::timeout);
  }
  CHECK(c.connected());
}

TEST_CASE("an offline service answers steering with unsupported and keeps the session", "[collector][server][steer]") {
  test::FakeService service;  // the Service defaults, as FileService (`rewind serve`)
  Server server(service, fast_options());
  server.start();
  Client c("127.0.0.1", server.port(), "", client_options());
  CHECK(c.server().capabilities == std::vector<std::string>{"info", "steps", "window"});
  CHECK_FALSE(c.offers("status"));
  try {
    c.status();  // refused by the client library before sending
    FAIL("status on an offline server");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::unsupported);
  }
  for (const Body& b : std::vector<Body>{StatusRequest{}, ControlRequest{"pause"}, ParametersRequest{},
                                         SetRequest{{{"physics.nu", 0.1}}}, BranchRequest{"latest", "", {}, ""}}) {
    CAPTURE(b.index());
    try {
      c.call(b);  // sent anyway: the server says so
      FAIL("steering accepted by an offline server");
    } catch (const ClientError& e) {
      CHECK(e.code() == ErrorCode::unsupported);
    }
  }
  CHECK(c.connected());
  CHECK(window_is_right(c, 99));
  CHECK(server.stats().protocol_errors == 0);
}

// --- Attacks on the server's resources (docs/collector-protocol.md, revision 1.3) ---------

namespace {

/// Resident memory of this process (VmRSS, bytes): what the server holds, measured by
/// the kernel rather than by the server's own counters.
std::uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

/// A client that asks for a window of `budget` cells (codec none) and never reads.
std::unique_ptr<Raw> never_reads(std::uint16_t port, std::uint64_t budget) {
  auto r = std::make_unique<Raw>(port, 4096);
  r->send(encode(Message{1, Hello{kProtocolVersion, "", "never reads", {"none"}}}));
  r->send(encode(Message{2, request(budget)}));
  return r;
}

template <class Done>
void wait_for(Done done, std::chrono::milliseconds most) {
  const auto end = Clock::now() + most;
  while (!done() && Clock::now() < end) std::this_thread::sleep_for(10ms);
}

}  // namespace

TEST_CASE("connections that send nothing hold no session slot and go at their hello deadline", "[collector][server][attack]") {
  test::FakeService service;
  auto o = fast_options();
  o.token = "s3cret";  // before authentication
  o.hello_timeout = 1500ms;
  Server server(service, o);  // 16 sessions, 64 pending (the defaults)
  server.start();
  std::vector<std::unique_ptr<Raw>> idle;
  for (int i = 0; i < 100; ++i) idle.push_back(std::make_unique<Raw>(server.port()));
  wait_for([&] { return server.stats().accepted >= 100; }, 3s);
  const auto t0 = Clock::now();
  CHECK(good_client_served(server.port(), "s3cret"));
  CHECK(Clock::now() - t0 < 1s);
  CHECK(server.stats().refused_busy == 0);
  CHECK(server.stats().evicted >= 36);  // beyond 64 pending, the oldest made room
  // The newest is closed by its hello deadline (1.5 s), before Raw's 3 s receive timeout.
  CHECK(idle.back()->closed_by_server());
  wait_for([&] { return server.stats().open == 0; }, 3s);
  CHECK(server.stats().open == 0);
}

TEST_CASE("sessions idle for evict_after give way to a new client; busy only when none is", "[collector][server][attack]") {
  test::FakeService service;
  auto o = fast_options();
  o.max_clients = 3;
  o.evict_after = 1500ms;
  Server server(service, o);
  server.start();
  std::vector<Client> idle;
  for (int i = 0; i < 3; ++i) idle.emplace_back("127.0.0.1", server.port(), "", client_options());
  try {
    Client c("127.0.0.1", server.port(), "", client_options());
    FAIL("a fourth client was accepted while every session was busy");
  } catch (const ClientError& e) {
    CHECK(e.code() == ErrorCode::busy);
  }
  CHECK(idle[1].info().variables.size() == 3);  // idle[0] is now idle longest
  std::this_thread::sleep_for(1700ms);
  const auto t0 = Clock::now();
  CHECK(good_client_served(server.port()));
  CHECK(Clock::now() - t0 < 1s);
  CHECK(server.stats().evicted == 1);
  CHECK_THROWS(idle[0].info());  // the one idle longest was closed
  CHECK(window_is_right(idle[2], 100));
}

TEST_CASE("clients that never read their windows hold at most reply_memory; a good client is served within a second",
          "[collector][server][attack]") {
  test::FakeService service;
  auto o = fast_options();
  o.write_timeout = 30s;  // the stalled replies stay until something makes room
  o.reply_memory = std::uint64_t{64} << 20;
  o.evict_after = 500ms;
  Server server(service, o);
  server.start();
  constexpr std::uint64_t kBig = 2'000'003;  // 4 pieces: a reply of 2 x 16 MB + 2 MB
  {
    Client warm("127.0.0.1", server.port(), "", client_options());
    CHECK(window_is_right(warm, kBig));
  }
  std::this_thread::sleep_for(300ms);
  const auto base = resident_bytes();
  std::vector<std::unique_ptr<Raw>> slow;
  for (std::uint64_t i = 0; i < 8; ++i) slow.push_back(never_reads(server.port(), kBig + 4 * i));
  wait_for([&] { return server.stats().requests >= 9; }, 5s);
  std::this_thread::sleep_for(1s);  // replies built, admitted or refused, and stalled
  const auto during = resident_bytes();
  const auto t0 = Clock::now();
  CHECK(good_client_served(server.port()));
  CHECK(Clock::now() - t0 < 1s);
  {
    Client big("127.0.0.1", server.port(), "", client_options());
    const auto t1 = Clock::now();
    CHECK(window_is_right(big, kBig));  // as large as theirs: a stalled one makes room
    CHECK(Clock::now() - t1 < 1s);
  }
  const auto st = server.stats();
  CAPTURE(base >> 20, during >> 20, st.reply_bytes_peak >> 20, st.evicted, st.refused_memory);
  CHECK(during < base + o.reply_memory + (std::uint64_t{32} << 20));  // unbounded: 8 x 34 MB
  CHECK(st.reply_bytes_peak <= o.reply_memory + 2 * kSmallReply);
  CHECK(st.refused_memory >= 1);
  CHECK(st.evicted >= 1);
  slow.clear();
  wait_for([&] { return server.stats().open == 0; }, 3s);
  CHECK(server.stats().reply_bytes == 0);
  std::this_thread::sleep_for(400ms);  // the server hands freed memory back
  CHECK(resident_bytes() < base + (std::uint64_t{32} << 20));
}

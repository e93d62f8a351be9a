// The write deadline is a progress deadline: a client that reads a large reply slowly
// but steadily gets all of it, however much longer than write_timeout that takes; a
// client that stops reading is cut write_timeout after its reply last moved.
#include <catch2/catch.hpp>
#include <utility>  // before Asio (Boost 1.74 + C++20)
#include <boost/asio.hpp>
#include <chrono>
#include <thread>

#include "frame_util.hpp"
#include "rewind/collector/server.hpp"

using namespace rwd::collector;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

constexpr std::uint64_t kBudget = 1'000'000;  // codec none: a reply of ~17 MB (2 x 8 MB + 1 MB)

/// A client with a modest receive buffer (256 KiB: the sockets hold a few MB of the reply
/// at most) that asks for a large window (codec none) and reads its reply at a pace.
struct SlowReader {
  asio::io_context io;
  asio::ip::tcp::socket s{io};
  explicit SlowReader(std::uint16_t port) {
    s.open(asio::ip::tcp::v4());
    s.set_option(asio::socket_base::receive_buffer_size(256 * 1024));
    s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    timeval tv{5, 0};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const auto hello = encode(Message{1, Hello{kProtocolVersion, "", "slow reader", {"none"}}});
    const auto window = encode(Message{2, WindowRequest{{0, 0, 0}, {1, 1, 1}, kBudget, "latest", {"p", "u"}, ""}});
    asio::write(s, asio::buffer(hello));
    asio::write(s, asio::buffer(window));
  }
  /// Bytes read until `want` are in (or the server closes), `chunk` at a time with `pause`
  /// between reads.
  std::vector<std::byte> read(std::size_t want, std::size_t chunk, std::chrono::milliseconds pause) {
    std::vector<std::byte> out;
    std::vector<std::byte> buf(chunk);
    while (out.size() < want) {
      boost::system::error_code ec;
      const auto n = s.read_some(asio::buffer(buf.data(), std::min(chunk, want - out.size())), ec);
      if (ec) break;
      out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
    return out;
  }
  /// The next whole frame (the hello's reply, then the window's), or what arrived of it.
  std::vector<std::byte> frame(std::size_t chunk, std::chrono::milliseconds pause) {
    auto f = read(kHeaderSize, kHeaderSize, 0ms);
    if (f.size() < kHeaderSize) return f;
    std::array<std::byte, kHeaderSize> h{};
    std::copy(f.begin(), f.end(), h.begin());
    const auto rest = read(read_header(h, kMaxReplyBytes).length, chunk, pause);
    f.insert(f.end(), rest.begin(), rest.end());
    return f;
  }
};

ServerOptions with_write_timeout(std::chrono::milliseconds t) {
  ServerOptions o;
  o.write_timeout = t;
  o.evict_after = 30s;
  return o;
}

}  // namespace

TEST_CASE("a slow but steady reader gets a reply that takes several write timeouts to send", "[collector][server]") {
  test::FakeService service;
  Server server(service, with_write_timeout(400ms));
  server.start();
  SlowReader r(server.port());
  (void)r.frame(4096, 0ms);  // the hello's reply
  const auto t0 = std::chrono::steady_clock::now();
  const auto f = r.frame(64 * 1024, 10ms);  // at most ~6 MB/s: ~17 MB take seconds
  const auto took = std::chrono::steady_clock::now() - t0;
  CAPTURE(f.size(), std::chrono::duration<double>(took).count());
  CHECK(took > 1s);  // well past the write timeout, so the deadline was met by progress alone
  const Message m = decode(f);
  const auto* w = std::get_if<WindowReply>(&m.body);
  REQUIRE(w != nullptr);
  CHECK(w->cells == kBudget);
  REQUIRE(w->values.size() == 2);
  CHECK(w->values[1][kBudget - 1] == test::fake_value(1, kBudget - 1, kBudget));
  CHECK(server.stats().timeouts == 0);
}

TEST_CASE("a reader that stops is cut write_timeout after its reply last moved", "[collector][server]") {
  test::FakeService service;
  Server server(service, with_write_timeout(400ms));
  server.start();
  SlowReader r(server.port());
  (void)r.frame(4096, 0ms);
  (void)r.read(256 * 1024, 64 * 1024, 0ms);  // the reply moves, then the client stops reading
  std::this_thread::sleep_for(1500ms);
  CHECK(server.stats().timeouts == 1);
  const auto rest = r.read(kBudget * 17, 1 << 20, 0ms);  // what the sockets held, then the end
  CHECK(rest.size() < kBudget * 17 - 256 * 1024);
}

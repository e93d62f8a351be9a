// nbserver message format and request handler: pure code, no MPI calls.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "exchange_test_util.hpp"
#include "rewind/nbserver/messages.hpp"
#include "rewind/nbserver/server.hpp"

using namespace rwd::nbserver;
using namespace rwd::spacetree;
namespace rt = rwd::test;

namespace {

Topology random_topology(int dim, std::uint64_t seed, int ranks, std::array<bool, 3> periodic = {false, false, false}) {
  const Tree tree = rt::random_adaptive(rt::shape_of(dim, 4, dim == 2 ? 5 : 3, periodic), seed);
  return Topology(tree, partition_morton(tree, ranks));
}

std::vector<Body> sample_bodies(const Topology& topo) {
  const auto& nodes = topo.tree().nodes();
  std::vector<Uid> uids;
  for (std::size_t i = 0; i < nodes.size(); i += 3) uids.push_back(nodes[i].uid);
  std::vector<Body> v;
  v.push_back(OwnerRequest{uids});
  v.push_back(OwnerRequest{});
  v.push_back(OwnerReply{{0, 3, -1, 2}});
  v.push_back(NeighboursRequest{uids});
  NeighboursReply nr;
  for (const auto u : uids) nr.lists.push_back(topo.neighbours(u));
  v.push_back(nr);
  v.push_back(FamilyRequest{uids});
  FamilyReply fr;
  for (const auto u : uids) fr.families.push_back(topo.family(u));
  v.push_back(fr);
  v.push_back(BoxRequest{Box{{0.1, 0.2, 0.3}, {0.5, 0.6, 0.7}}, 2});
  v.push_back(BoxReply{{nodes[1].uid, nodes[2].uid}, {1, 0}});
  v.push_back(PlanRequest{2});
  v.push_back(PlanReply{make_local_plan(topo, 1)});
  v.push_back(ShutdownRequest{});
  v.push_back(ShutdownReply{});
  v.push_back(ErrorReply{ErrorCode::unknown_uid, "no grid with UID 42"});
  return v;
}

bool same_body(const Body& a, const Body& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const auto& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, OwnerRequest> || std::is_same_v<T, NeighboursRequest> ||
                      std::is_same_v<T, FamilyRequest>)
          return x.uids == y.uids;
        else if constexpr (std::is_same_v<T, OwnerReply>) return x.owners == y.owners;
        else if constexpr (std::is_same_v<T, NeighboursReply>) return x.lists == y.lists;
        else if constexpr (std::is_same_v<T, FamilyReply>) {
          if (x.families.size() != y.families.size()) return false;
          for (std::size_t i = 0; i < x.families.size(); ++i)
            if (!equal(x.families[i], y.families[i])) return false;
          return true;
        } else if constexpr (std::is_same_v<T, BoxRequest>) return x.box == y.box && x.level == y.level;
        else if constexpr (std::is_same_v<T, BoxReply>) return x.uids == y.uids && x.owners == y.owners;
        else if constexpr (std::is_same_v<T, PlanRequest>) return x.rank == y.rank;
        else if constexpr (std::is_same_v<T, PlanReply>) return equal(x.plan, y.plan);
        else if constexpr (std::is_same_v<T, ErrorReply>) return x.code == y.code && x.message == y.message;
        else return true;  // empty bodies
      },
      a);
}

ErrorCode decode_error(std::span<const std::byte> frame) {
  try {
    (void)decode(frame);
  } catch (const ProtocolError& e) {
    return e.code();
  }
  return ErrorCode{0};
}

}  // namespace

TEST_CASE("every message round-trips through encode and decode", "[nbserver][protocol]") {
  const Topology topo = random_topology(3, 5, 3);
  std::uint32_t id = 77;
  for (const Body& body : sample_bodies(topo)) {
    const Message m{id++, body};
    const auto bytes = encode(m);
    REQUIRE(bytes.size() >= kHeaderSize);
    CHECK(payload_length(bytes) == bytes.size() - kHeaderSize);
    const Message back = decode(bytes);
    CHECK(back.request_id == m.request_id);
    CHECK(type_of(back.body) == type_of(m.body));
    CHECK(same_body(back.body, m.body));
    CHECK(encode(back) == bytes);  // canonical: re-encoding gives the same bytes
  }
}

TEST_CASE("the header is laid out as documented", "[nbserver][protocol]") {
  const auto bytes = encode(Message{0x01020304u, PlanRequest{5}});
  REQUIRE(bytes.size() == kHeaderSize + 4);
  CHECK(std::memcmp(bytes.data(), "RWNB", 4) == 0);
  CHECK(static_cast<int>(bytes[4]) == kProtocolVersion);  // little-endian u16
  CHECK(static_cast<int>(bytes[5]) == 0);
  CHECK(static_cast<int>(bytes[6]) == static_cast<int>(MessageType::plan_request));
  CHECK(static_cast<int>(bytes[8]) == 0x04);  // request id, little-endian
  CHECK(static_cast<int>(bytes[11]) == 0x01);
  CHECK(static_cast<int>(bytes[16]) == 4);  // payload length
  CHECK(static_cast<int>(bytes[24]) == 5);  // the rank
}

TEST_CASE("truncated, padded, garbage and wrong-version frames are rejected", "[nbserver][protocol]") {
  const Topology topo = random_topology(2, 9, 2);
  for (const Body& body : sample_bodies(topo)) {
    const auto bytes = encode(Message{1, body});
    // Every proper prefix fails cleanly.
    const std::size_t step = std::max<std::size_t>(1, bytes.size() / 200);
    for (std::size_t n = 0; n < bytes.size(); n += step) CHECK(decode_error(std::span(bytes).first(n)) == ErrorCode::malformed);
    // So does the same payload with a wrong length in the header, or an extra byte.
    auto padded = bytes;
    padded.push_back(std::byte{0});
    CHECK(decode_error(padded) == ErrorCode::malformed);
    padded[16] = static_cast<std::byte>(static_cast<int>(padded[16]) + 1);
    if (bytes.size() - kHeaderSize < 255) CHECK(decode_error(padded) == ErrorCode::malformed);
  }
  auto bytes = encode(Message{1, OwnerRequest{{Uid::make(1, {1, 0, 0})}}});
  SECTION("wrong version") {
    bytes[4] = std::byte{2};
    CHECK(decode_error(bytes) == ErrorCode::bad_version);
  }
  SECTION("bad magic") {
    bytes[0] = std::byte{'X'};
    CHECK(decode_error(bytes) == ErrorCode::malformed);
  }
  SECTION("unknown type") {
    bytes[6] = std::byte{99};
    CHECK(decode_error(bytes) == ErrorCode::unknown_type);
    bytes[6] = std::byte{0};
    CHECK(decode_error(bytes) == ErrorCode::unknown_type);
  }
  SECTION("a count far beyond the payload does not allocate, it fails") {
    bytes[24] = std::byte{0xff};
    bytes[25] = std::byte{0xff};
    bytes[26] = std::byte{0xff};
    bytes[27] = std::byte{0x7f};
    CHECK(decode_error(bytes) == ErrorCode::malformed);
  }
  SECTION("an absurd announced length") {
    bytes[23] = std::byte{0x10};
    CHECK(decode_error(bytes) == ErrorCode::too_large);
  }
  SECTION("bad enum values inside the payload") {
    NeighboursReply nr{{topo.neighbours(topo.tree().nodes()[3].uid)}};
    auto nb = encode(Message{1, nr});
    auto bad_rel = nb;
    bad_rel[kHeaderSize + 4 + 4 + 3] = std::byte{9};  // first entry's relation
    CHECK(decode_error(bad_rel) == ErrorCode::malformed);
    auto bad_dir = nb;
    bad_dir[kHeaderSize + 4 + 4 + 0] = std::byte{5};  // first entry's dx
    CHECK(decode_error(bad_dir) == ErrorCode::malformed);
  }
  SECTION("random garbage never decodes into nonsense silently") {
    std::mt19937 rng(3);
    int refused = 0;
    for (int t = 0; t < 2000; ++t) {
      std::vector<std::byte> g(static_cast<std::size_t>(rng() % 200));
      for (auto& b : g) b = static_cast<std::byte>(rng());
      if (g.size() >= 8 && t % 2 == 0) {  // half with a valid header start, to get past the magic
        std::memcpy(g.data(), "RWNB", 4);
        g[4] = std::byte{1};
        g[5] = std::byte{0};
      }
      try {
        const Message m = decode(g);
        CHECK(encode(m) == g);  // if it decodes, it was a valid frame
      } catch (const ProtocolError&) {
        ++refused;
      }
    }
    CHECK(refused > 1900);  // random bytes are (almost) never a frame: refused, not misread
  }
}

TEST_CASE("the handler answers exactly what the topology says", "[nbserver][protocol]") {
  for (const int dim : {2, 3}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      const Topology topo = random_topology(dim, seed, 1 + static_cast<int>(seed), {seed == 2, false, false});
      std::vector<Uid> all;
      for (const auto& n : topo.tree().nodes()) all.push_back(n.uid);
      bool stop = false;
      auto ask = [&](const Body& b) { return decode(handle_frame(topo, encode(Message{9, b}), stop)).body; };

      const auto nb = std::get<NeighboursReply>(ask(NeighboursRequest{all}));
      REQUIRE(nb.lists.size() == all.size());
      for (std::size_t i = 0; i < all.size(); ++i) CHECK(nb.lists[i] == topo.neighbours(all[i]));

      auto with_missing = all;
      with_missing.push_back(Uid::make(topo.tree().levels(), {0, 0, 0}));
      const auto ow = std::get<OwnerReply>(ask(OwnerRequest{with_missing}));
      for (std::size_t i = 0; i < all.size(); ++i) CHECK(ow.owners[i] == topo.owner(all[i]));
      CHECK(ow.owners.back() == -1);

      const auto fam = std::get<FamilyReply>(ask(FamilyRequest{all}));
      for (std::size_t i = 0; i < all.size(); ++i) CHECK(equal(fam.families[i], topo.family(all[i])));

      const Box box{{0.2, 0.1, 0.0}, {0.6, 0.45, 0.05}};
      for (int level = 0; level < topo.tree().levels(); ++level) {
        const auto bx = std::get<BoxReply>(ask(BoxRequest{box, level}));
        CHECK(bx.uids == topo.grids_in_box(box, level));
        for (std::size_t i = 0; i < bx.uids.size(); ++i) CHECK(bx.owners[i] == topo.owner(bx.uids[i]));
      }
      for (int r = 0; r < topo.partition().ranks; ++r)
        CHECK(equal(std::get<PlanReply>(ask(PlanRequest{r})).plan, make_local_plan(topo, r)));
      CHECK(!stop);
    }
  }
}

TEST_CASE("the handler turns bad requests into error replies", "[nbserver][protocol]") {
  const Topology topo = random_topology(3, 4, 2);
  bool stop = false;
  auto err = [&](std::span<const std::byte> frame) {
    const Message m = decode(handle_frame(topo, frame, stop));
    REQUIRE(std::holds_alternative<ErrorReply>(m.body));
    return std::get<ErrorReply>(m.body).code;
  };
  const Uid missing = Uid::make(topo.tree().levels(), {0, 0, 0});
  CHECK(err(encode(Message{1, NeighboursRequest{{missing}}})) == ErrorCode::unknown_uid);
  CHECK(err(encode(Message{1, FamilyRequest{{topo.tree().nodes()[0].uid, missing}}})) == ErrorCode::unknown_uid);
  CHECK(err(encode(Message{1, PlanRequest{2}})) == ErrorCode::bad_argument);
  CHECK(err(encode(Message{1, PlanRequest{-1}})) == ErrorCode::bad_argument);
  CHECK(err(encode(Message{1, BoxRequest{Box{}, -3}})) == ErrorCode::bad_argument);
  CHECK(err(encode(Message{1, OwnerReply{{1}}})) == ErrorCode::unknown_type);
  auto wrong_version = encode(Message{1, ShutdownRequest{}});
  wrong_version[4] = std::byte{7};
  CHECK(err(wrong_version) == ErrorCode::bad_version);
  CHECK(!stop);  // a shutdown with the wrong version does not stop the server
  const std::vector<std::byte> tiny(5, std::byte{1});
  CHECK(err(tiny) == ErrorCode::malformed);
  const Message ok = decode(handle_frame(topo, encode(Message{42, ShutdownRequest{}}), stop));
  CHECK(stop);
  CHECK(ok.request_id == 42);
  CHECK(std::holds_alternative<ShutdownReply>(ok.body));
}

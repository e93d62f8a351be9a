// Encoding and decoding of nbserver messages (docs/protocol.md).
#include "rewind/nbserver/messages.hpp"

#include "rewind/wire/overloaded.hpp"
#include "rewind/wire/wire.hpp"

namespace rwd::nbserver {

namespace st = rwd::spacetree;

namespace {

const wire::FrameFormat kFormat{{'R', 'W', 'N', 'B'}, kProtocolVersion, kMaxPayload, "nbserver"};

// Wire sizes used to reject counts that cannot fit in the bytes left, before any
// allocation (garbage must not make us reserve gigabytes).
constexpr std::size_t kNeighbourBytes = 16;  // i8 x3, u8 relation, i32 owner, u64 uid
constexpr std::size_t kMinFamilyBytes = 16;  // u64 parent, i32 owner, u32 count
constexpr std::size_t kMinGridBytes = 8 + 48 + kMinFamilyBytes + 4;

class Out : public wire::ByteWriter {
 public:
  Out() : wire::ByteWriter("nbserver") {}
  void put_uid(st::Uid u) { put(u.raw()); }
  void put_box(const st::Box& b) {
    for (int a = 0; a < 3; ++a) put_f64(b.lo[a]);
    for (int a = 0; a < 3; ++a) put_f64(b.hi[a]);
  }
  void put_uids(const std::vector<st::Uid>& v) {
    put_count(v.size());
    for (const auto u : v) put_uid(u);
  }
  void put_neighbours(const std::vector<st::Neighbour>& v) {
    put_count(v.size());
    for (const auto& n : v) {
      for (int a = 0; a < 3; ++a) put(n.dir[a]);
      put(static_cast<std::uint8_t>(n.relation));
      put(static_cast<std::int32_t>(n.owner));
      put_uid(n.uid);
    }
  }
  void put_family(const st::Family& f) {
    put_uid(f.parent);
    put(static_cast<std::int32_t>(f.parent_owner));
    if (f.children.size() != f.child_owners.size())
      throw ProtocolError(ErrorCode::bad_argument, "nbserver: family with children and owners of different length");
    put_count(f.children.size());
    for (std::size_t i = 0; i < f.children.size(); ++i) {
      put_uid(f.children[i]);
      put(static_cast<std::int32_t>(f.child_owners[i]));
    }
  }
  void put_shape(const st::TreeShape& s) {
    put_box(s.domain);
    for (int a = 0; a < 3; ++a) put(static_cast<std::int32_t>(s.r[a]));
    for (int a = 0; a < 3; ++a) put(static_cast<std::int32_t>(s.s[a]));
    put(static_cast<std::int32_t>(s.max_depth));
    for (int a = 0; a < 3; ++a) put(static_cast<std::uint8_t>(s.periodic[a] ? 1 : 0));
  }
};

class In : public wire::ByteReader {
 public:
  explicit In(std::span<const std::byte> in) : wire::ByteReader(in, "nbserver") {}
  st::Uid get_uid() { return st::Uid::from_raw(get<std::uint64_t>()); }
  st::Box get_box() {
    st::Box b;
    for (int a = 0; a < 3; ++a) b.lo[a] = get_f64();
    for (int a = 0; a < 3; ++a) b.hi[a] = get_f64();
    return b;
  }
  std::vector<st::Uid> get_uids() {
    std::vector<st::Uid> v(get_count(8));
    for (auto& u : v) u = get_uid();
    return v;
  }
  std::vector<st::Neighbour> get_neighbours() {
    std::vector<st::Neighbour> v(get_count(kNeighbourBytes));
    for (auto& n : v) {
      for (int a = 0; a < 3; ++a) {
        n.dir[a] = get<std::int8_t>();
        if (n.dir[a] < -1 || n.dir[a] > 1) throw ProtocolError(ErrorCode::malformed, "nbserver: direction component out of range");
      }
      const auto rel = get<std::uint8_t>();
      if (rel > static_cast<std::uint8_t>(st::Relation::boundary))
        throw ProtocolError(ErrorCode::malformed, "nbserver: unknown neighbour relation " + std::to_string(rel));
      n.relation = static_cast<st::Relation>(rel);
      n.owner = get<std::int32_t>();
      n.uid = get_uid();
    }
    return v;
  }
  st::Family get_family() {
    st::Family f;
    f.parent = get_uid();
    f.parent_owner = get<std::int32_t>();
    const auto n = get_count(12);
    f.children.resize(n);
    f.child_owners.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      f.children[i] = get_uid();
      f.child_owners[i] = get<std::int32_t>();
    }
    return f;
  }
  st::TreeShape get_shape() {
    st::TreeShape s;
    s.domain = get_box();
    for (int a = 0; a < 3; ++a) s.r[a] = get<std::int32_t>();
    for (int a = 0; a < 3; ++a) s.s[a] = get<std::int32_t>();
    s.max_depth = get<std::int32_t>();
    for (int a = 0; a < 3; ++a) {
      const auto p = get<std::uint8_t>();
      if (p > 1) throw ProtocolError(ErrorCode::malformed, "nbserver: periodic flag is not 0 or 1");
      s.periodic[a] = p == 1;
    }
    return s;
  }
};

using wire::Overloaded;

void encode_body(Out& w, const Body& body) {
  std::visit(Overloaded{
                 [&](const OwnerRequest& b) { w.put_uids(b.uids); },
                 [&](const OwnerReply& b) {
                   w.put_count(b.owners.size());
                   for (const auto o : b.owners) w.put(o);
                 },
                 [&](const NeighboursRequest& b) { w.put_uids(b.uids); },
                 [&](const NeighboursReply& b) {
                   w.put_count(b.lists.size());
                   for (const auto& l : b.lists) w.put_neighbours(l);
                 },
                 [&](const FamilyRequest& b) { w.put_uids(b.uids); },
                 [&](const FamilyReply& b) {
                   w.put_count(b.families.size());
                   for (const auto& f : b.families) w.put_family(f);
                 },
                 [&](const BoxRequest& b) {
                   w.put_box(b.box);
                   w.put(b.level);
                 },
                 [&](const BoxReply& b) {
                   if (b.uids.size() != b.owners.size())
                     throw ProtocolError(ErrorCode::bad_argument, "nbserver: box reply with uids and owners of different length");
                   w.put_count(b.uids.size());
                   for (std::size_t i = 0; i < b.uids.size(); ++i) {
                     w.put_uid(b.uids[i]);
                     w.put(b.owners[i]);
                   }
                 },
                 [&](const PlanRequest& b) { w.put(b.rank); },
                 [&](const PlanReply& b) {
                   const auto& p = b.plan;
                   w.put_shape(p.shape);
                   w.put(static_cast<std::int32_t>(p.rank));
                   w.put(static_cast<std::int32_t>(p.ranks));
                   w.put(static_cast<std::int32_t>(p.levels));
                   w.put(static_cast<std::int64_t>(p.global_grids));
                   w.put_count(p.grids.size());
                   for (const auto& g : p.grids) {
                     w.put_uid(g.uid);
                     w.put_box(g.box);
                     w.put_family(g.family);
                     w.put_neighbours(g.neighbours);
                   }
                 },
                 [&](const ShutdownRequest&) {},
                 [&](const ShutdownReply&) {},
                 [&](const WindowRequest& b) {
                   w.put_box(b.box);
                   w.put(b.budget);
                   w.put(b.max_level);
                 },
                 [&](const WindowReply& b) {
                   w.put(b.level);
                   w.put(b.stride);
                   w.put(b.values);
                   w.put_box(b.covered);
                   w.put_count(b.pieces.size());
                   for (const auto& p : b.pieces) {
                     w.put_uid(p.uid);
                     w.put(p.owner);
                     w.put(p.level);
                     for (const auto v : p.first) w.put(v);
                     for (const auto v : p.count) w.put(v);
                     w.put(p.stride);
                     for (const auto v : p.origin) w.put_f64(v);
                     for (const auto v : p.spacing) w.put_f64(v);
                   }
                 },
                 [&](const ErrorReply& b) {
                   w.put(static_cast<std::uint32_t>(b.code));
                   w.put_count(b.message.size());
                   for (const char c : b.message) w.put(static_cast<std::uint8_t>(c));
                 },
             },
             body);
}

PlanReply get_plan_reply(In& r) {
  PlanReply b;
  auto& p = b.plan;
  p.shape = r.get_shape();
  p.rank = r.get<std::int32_t>();
  p.ranks = r.get<std::int32_t>();
  p.levels = r.get<std::int32_t>();
  p.global_grids = r.get<std::int64_t>();
  p.grids.resize(r.get_count(kMinGridBytes));
  for (auto& g : p.grids) {
    g.uid = r.get_uid();
    g.box = r.get_box();
    g.family = r.get_family();
    g.neighbours = r.get_neighbours();
  }
  return b;
}

WindowReply get_window_reply(In& r) {
  WindowReply b;
  b.level = r.get<std::int32_t>();
  b.stride = r.get<std::int32_t>();
  b.values = r.get<std::int64_t>();
  b.covered = r.get_box();
  b.pieces.resize(r.get_count(8 + 4 * 9 + 8 * 6));  // uid, 9 ints, 6 doubles
  for (auto& p : b.pieces) {
    p.uid = r.get_uid();
    p.owner = r.get<std::int32_t>();
    p.level = r.get<std::int32_t>();
    for (auto& v : p.first) v = r.get<std::int32_t>();
    for (auto& v : p.count) v = r.get<std::int32_t>();
    p.stride = r.get<std::int32_t>();
    for (auto& v : p.origin) v = r.get_f64();
    for (auto& v : p.spacing) v = r.get_f64();
  }
  return b;
}

Body decode_body(MessageType t, In& r) {
  switch (t) {
    case MessageType::owner_request: return OwnerRequest{r.get_uids()};
    case MessageType::owner_reply: {
      OwnerReply b;
      b.owners.resize(r.get_count(4));
      for (auto& o : b.owners) o = r.get<std::int32_t>();
      return b;
    }
    case MessageType::neighbours_request: return NeighboursRequest{r.get_uids()};
    case MessageType::neighbours_reply: {
      NeighboursReply b;
      b.lists.resize(r.get_count(4));
      for (auto& l : b.lists) l = r.get_neighbours();
      return b;
    }
    case MessageType::family_request: return FamilyRequest{r.get_uids()};
    case MessageType::family_reply: {
      FamilyReply b;
      b.families.resize(r.get_count(kMinFamilyBytes));
      for (auto& f : b.families) f = r.get_family();
      return b;
    }
    case MessageType::box_request: {
      BoxRequest b;
      b.box = r.get_box();
      b.level = r.get<std::int32_t>();
      return b;
    }
    case MessageType::box_reply: {
      BoxReply b;
      const auto n = r.get_count(12);
      b.uids.resize(n);
      b.owners.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        b.uids[i] = r.get_uid();
        b.owners[i] = r.get<std::int32_t>();
      }
      return b;
    }
    case MessageType::plan_request: return PlanRequest{r.get<std::int32_t>()};
    case MessageType::plan_reply: return get_plan_reply(r);
    case MessageType::window_request: {
      WindowRequest b;
      b.box = r.get_box();
      b.budget = r.get<std::int64_t>();
      b.max_level = r.get<std::int32_t>();
      return b;
    }
    case MessageType::window_reply: return get_window_reply(r);
    case MessageType::shutdown_request: return ShutdownRequest{};
    case MessageType::shutdown_reply: return ShutdownReply{};
    case MessageType::error_reply: {
      ErrorReply b;
      b.code = static_cast<ErrorCode>(r.get<std::uint32_t>());
      b.message.resize(r.get_count(1));
      for (auto& c : b.message) c = static_cast<char>(r.get<std::uint8_t>());
      return b;
    }
  }
  throw ProtocolError(ErrorCode::unknown_type, "nbserver: unknown message type " + std::to_string(static_cast<unsigned>(t)));
}

}  // namespace

MessageType type_of(const Body& body) {
  // The variant's alternatives are declared in MessageType order.
  return static_cast<MessageType>(body.index() + 1);
}

bool is_request(MessageType t) {
  switch (t) {
    case MessageType::owner_request:
    case MessageType::neighbours_request:
    case MessageType::family_request:
    case MessageType::box_request:
    case MessageType::plan_request:
    case MessageType::window_request:
    case MessageType::shutdown_request: return true;
    default: return false;
  }
}

static ErrorCode code_of(wire::Fault f) {
  switch (f) {
    case wire::Fault::bad_version: return ErrorCode::bad_version;
    case wire::Fault::too_large: return ErrorCode::too_large;
    case wire::Fault::malformed: break;
  }
  return ErrorCode::malformed;
}

std::vector<std::byte> encode(const Message& m) {
  try {
    Out w;
    w.out.reserve(64);
    wire::begin_frame(w, kFormat, static_cast<std::uint16_t>(type_of(m.body)), m.request_id);
    encode_body(w, m.body);
    wire::end_frame(w, kFormat);
    return std::move(w.out);
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

std::uint64_t payload_length(std::span<const std::byte> header) {
  try {
    return wire::read_header(kFormat, header).length;
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

Message decode(std::span<const std::byte> frame) {
  try {
    const auto h = wire::check_frame(kFormat, frame);
    Message m;
    m.request_id = h.request_id;
    if (h.type < 1 || h.type > static_cast<std::uint16_t>(MessageType::window_reply))
      throw ProtocolError(ErrorCode::unknown_type, "nbserver: unknown message type " + std::to_string(h.type));
    In r(frame.subspan(kHeaderSize));
    m.body = decode_body(static_cast<MessageType>(h.type), r);
    r.finish();
    return m;
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

// ---------------------------------------------------------------------------------

bool equal(const st::Family& a, const st::Family& b) {
  return a.parent == b.parent && a.parent_owner == b.parent_owner && a.children == b.children &&
         a.child_owners == b.child_owners;
}

bool equal(const st::GridInfo& a, const st::GridInfo& b) {
  return a.uid == b.uid && a.box == b.box && equal(a.family, b.family) && a.neighbours == b.neighbours;
}

bool equal(const st::TreeShape& a, const st::TreeShape& b) {
  return a.domain == b.domain && a.r == b.r && a.s == b.s && a.max_depth == b.max_depth && a.periodic == b.periodic;
}

bool equal(const st::LocalPlan& a, const st::LocalPlan& b) {
  if (!equal(a.shape, b.shape) || a.rank != b.rank || a.ranks != b.ranks || a.levels != b.levels ||
      a.global_grids != b.global_grids || a.grids.size() != b.grids.size())
    return false;
  for (std::size_t i = 0; i < a.grids.size(); ++i)
    if (!equal(a.grids[i], b.grids[i])) return false;
  return true;
}

}  // namespace rwd::nbserver

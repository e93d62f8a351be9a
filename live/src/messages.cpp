// Encoding of the live link's frames (messages.hpp) on the wire codec.
#include "rewind/live/messages.hpp"

#include <limits>
#include <type_traits>

#include "format.hpp"

namespace rwd::live {
using collector::ControlAction;
using collector::RunState;

namespace {

const wire::FrameFormat& kFormat = detail::frame_format();
constexpr const char* kWho = detail::kWho;

class Out : public wire::ByteWriter {
 public:
  Out() : wire::ByteWriter(kWho) {}
  void strings(const std::vector<std::string>& v) {
    put_count(v.size());
    for (const auto& s : v) put_string(s);
  }
  void doubles(const std::vector<double>& v) {
    put_count(v.size());
    for (const double d : v) put_f64(d);
  }
  void values(const collector::ParamValues& v) {
    put_count(v.size());
    for (const auto& [name, value] : v) {
      put_string(name);
      doubles(collector::components(value));
    }
  }
};

class In : public wire::ByteReader {
 public:
  explicit In(std::span<const std::byte> b) : wire::ByteReader(b, kWho) {}
  std::vector<std::string> strings() {
    std::vector<std::string> v(get_count(4));
    for (auto& s : v) s = get_string();
    return v;
  }
  std::vector<double> doubles() {
    std::vector<double> v(get_count(8));
    for (auto& d : v) d = get_f64();
    return v;
  }
  collector::ParamValues values() {
    collector::ParamValues v;
    for (std::size_t n = get_count(8); n > 0; --n) {
      std::string name = get_string();
      const std::vector<double> value = doubles();
      if (value.size() != 1 && value.size() != 3)
        wire::fail(wire::Fault::malformed, kWho, "a value of neither 1 nor 3 numbers");
      if (!v.emplace(std::move(name), collector::param_value(value)).second)
        wire::fail(wire::Fault::malformed, kWho, "a parameter changed twice");
    }
    return v;
  }
  template <class E>
  E enumerated(std::uint8_t last) {
    const auto x = get<std::uint8_t>();
    if (x > last) wire::fail(wire::Fault::malformed, kWho, "an enumerated value out of range");
    return static_cast<E>(x);
  }
  bool boolean() { return enumerated<std::uint8_t>(1) != 0; }
};

std::vector<std::byte> frame(std::uint16_t type, Out& body) {
  Out w;
  wire::begin_frame(w, kFormat, type, 0);
  w.put_bytes(body.out);
  wire::end_frame(w, kFormat);
  return std::move(w.out);
}

std::span<const std::byte> payload(std::span<const std::byte> f, std::uint16_t want_min, std::uint16_t want_max) {
  const auto h = wire::check_frame(kFormat, f);
  if (h.type < want_min || h.type > want_max) wire::fail(wire::Fault::malformed, kWho, "an unexpected message type");
  return f.subspan(wire::kHeaderSize);
}

void put(Out& w, const WindowCommand& c) {
  w.strings(c.vars);
  w.put_count(c.pieces.size());
  for (const auto& p : c.pieces) {
    w.put(p.uid);
    w.put(p.owner);
    for (const auto x : p.first) w.put(x);
    for (const auto x : p.count) w.put(x);
    w.put(p.stride);
  }
  w.put_count(c.slots.size());
  for (const auto t : c.slots) w.put(t);
  w.put(static_cast<std::uint8_t>(c.shm.has_value()));
  if (c.shm) {
    w.put_string(c.shm->node);
    w.put(static_cast<std::int32_t>(c.shm->pid));
    w.put(static_cast<std::int32_t>(c.shm->fd));
    w.put(c.shm->token);
    w.put(c.shm->bytes);
  }
  w.put_string(c.file);
}

WindowCommand get_window(In& r) {
  WindowCommand c;
  c.vars = r.strings();
  c.pieces.resize(r.get_count(8 + 4 * 8));
  for (auto& p : c.pieces) {
    p.uid = r.get<std::uint64_t>();
    p.owner = r.get<std::int32_t>();
    for (auto& x : p.first) x = r.get<std::int32_t>();
    for (auto& x : p.count) x = r.get<std::int32_t>();
    p.stride = r.get<std::int32_t>();
    if (p.owner < 0 || p.stride < 1 || p.count[0] < 0 || p.count[1] < 0 || p.count[2] < 0 || p.first[0] < 0 ||
        p.first[1] < 0 || p.first[2] < 0)
      wire::fail(wire::Fault::malformed, kWho, "a window piece with a negative owner, place or size");
  }
  c.slots.resize(r.get_count(8));
  for (auto& t : c.slots) t = r.get<std::uint64_t>();
  if (r.boolean()) {
    SegmentName s;
    s.node = r.get_string();
    s.pid = r.get<std::int32_t>();
    s.fd = r.get<std::int32_t>();
    s.token = r.get<std::uint64_t>();
    s.bytes = r.get<std::uint64_t>();
    c.shm = s;
  }
  c.file = r.get_string();
  return c;
}

}  // namespace

std::uint64_t PiecePlacement::cells() const {
  std::uint64_t n = 1;
  for (const auto c : count) n *= static_cast<std::uint64_t>(c < 0 ? 0 : c);
  return n;
}

Op op_of(const Command& c) noexcept { return static_cast<Op>(c.index() + 1); }

std::vector<std::byte> encode(const Command& c) {
  Out w;
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, WindowCommand>) put(w, m);
        else if constexpr (std::is_same_v<T, ControlCommand>) {
          w.put(static_cast<std::uint8_t>(m.action));
          w.put_string(m.file);
        } else if constexpr (std::is_same_v<T, SetCommand>) {
          w.values(m.values);
          w.put_string(m.file);
        } else if constexpr (std::is_same_v<T, BranchCommand>) {
          w.put_string(m.from);
          w.put_count(m.futures.size());
          for (const auto& f : m.futures) {
            w.values(f.values);
            w.put_string(f.output);
          }
        }
      },
      c);
  return frame(static_cast<std::uint16_t>(op_of(c)), w);
}

std::uint16_t frame_type(std::span<const std::byte> f) { return wire::check_frame(kFormat, f).type; }

Command decode_command(std::span<const std::byte> f) {
  In r(payload(f, 1, static_cast<std::uint16_t>(Op::bye)));
  Command c;
  switch (static_cast<Op>(wire::check_frame(kFormat, f).type)) {
    case Op::window: c = get_window(r); break;
    case Op::hold: c = Hold{}; break;
    case Op::release: c = Release{}; break;
    case Op::control: {
      ControlCommand m;
      m.action = r.enumerated<ControlAction>(static_cast<std::uint8_t>(ControlAction::stop));
      m.file = r.get_string();
      c = std::move(m);
      break;
    }
    case Op::parameters: c = ParametersQuery{}; break;
    case Op::set: {
      SetCommand m;
      m.values = r.values();
      m.file = r.get_string();
      c = std::move(m);
      break;
    }
    case Op::branch: {
      BranchCommand b;
      b.from = r.get_string();
      b.futures.resize(r.get_count(4 + 4));
      for (auto& future : b.futures) {
        future.values = r.values();
        future.output = r.get_string();
      }
      c = std::move(b);
      break;
    }
    case Op::bye: c = Bye{}; break;
  }
  r.finish();
  return c;
}

std::vector<std::byte> encode(const Reply& m) {
  Out w;
  w.put(static_cast<std::uint8_t>(m.ok));
  w.put_string(m.message);
  w.put(m.step);
  w.put_f64(m.time);
  w.put_string(m.file);
  w.put_string(m.parent);
  w.put(static_cast<std::uint8_t>(m.state));
  w.put_count(m.parameters.size());
  for (const auto& p : m.parameters) {
    w.put_string(p.name);
    w.put(static_cast<std::uint8_t>(std::holds_alternative<std::array<double, 3>>(p.value)));
    w.put_string(p.unit);
    w.put_f64(p.min);
    w.put_f64(p.max);
    w.put(static_cast<std::uint8_t>(p.min_open));
    w.put(static_cast<std::uint8_t>(p.max_open));
    w.put_string(p.description);
    w.doubles(collector::components(p.value));
  }
  w.strings(m.applied);
  w.strings(m.files);
  return frame(kReplyType, w);
}

Reply decode_reply(std::span<const std::byte> f) {
  In r(payload(f, kReplyType, kReplyType));
  Reply m;
  m.ok = r.boolean();
  m.message = r.get_string();
  m.step = r.get<std::int64_t>();
  m.time = r.get_f64();
  m.file = r.get_string();
  m.parent = r.get_string();
  m.state = r.enumerated<RunState>(static_cast<std::uint8_t>(RunState::finished));
  m.parameters.resize(r.get_count(4 + 1 + 4 + 8 + 8 + 1 + 1 + 4 + 4));
  for (auto& p : m.parameters) {
    p.name = r.get_string();
    const bool vector = r.boolean();
    p.unit = r.get_string();
    p.min = r.get_f64();
    p.max = r.get_f64();
    p.min_open = r.boolean();
    p.max_open = r.boolean();
    p.description = r.get_string();
    const std::vector<double> value = r.doubles();
    // Three numbers under the vector flag make a vector; anything else, its first number.
    p.value = vector ? collector::param_value(value) : collector::ParamValue{value.empty() ? 0.0 : value[0]};
  }
  m.applied = r.strings();
  m.files = r.strings();
  r.finish();
  return m;
}

std::vector<std::byte> encode(const Status& s) {
  Out w;
  w.put(static_cast<std::uint8_t>(s.state));
  w.put(s.step);
  w.put_f64(s.time);
  w.put_string(s.file);
  w.put_string(s.parent);
  w.strings(s.files);
  w.put(s.steps);
  w.put_f64(s.wall);
  w.put(s.ranks);
  w.put_count(s.futures.size());
  for (const auto& f : s.futures) {
    w.put_string(f.file);
    w.put_string(f.parent);
    w.put(static_cast<std::uint8_t>(f.state));
    w.put(f.step);
    w.put_f64(f.time);
    w.put(f.steps);
    w.put_f64(f.wall);
    w.strings(f.changes);
  }
  return frame(kStatusType, w);
}

Status decode_status(std::span<const std::byte> f) {
  In r(payload(f, kStatusType, kStatusType));
  Status s;
  s.state = r.enumerated<RunState>(static_cast<std::uint8_t>(RunState::finished));
  s.step = r.get<std::int64_t>();
  s.time = r.get_f64();
  s.file = r.get_string();
  s.parent = r.get_string();
  s.files = r.strings();
  s.steps = r.get<std::int64_t>();
  s.wall = r.get_f64();
  s.ranks = r.get<std::int32_t>();
  s.futures.resize(r.get_count(4 + 4 + 1 + 8 + 8 + 8 + 8 + 4));
  for (auto& m : s.futures) {
    m.file = r.get_string();
    m.parent = r.get_string();
    m.state = r.enumerated<RunState>(static_cast<std::uint8_t>(RunState::finished));
    m.step = r.get<std::int64_t>();
    m.time = r.get_f64();
    m.steps = r.get<std::int64_t>();
    m.wall = r.get_f64();
    m.changes = r.strings();
  }
  r.finish();
  return s;
}

}  // namespace rwd::live

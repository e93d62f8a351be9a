// Encoding of the live link's frames (messages.hpp) on the wire codec.
#include "rewind/live/messages.hpp"

#include <array>
#include <optional>
#include <type_traits>
#include <utility>

#include "format.hpp"

namespace rwd::live {
using collector::ControlAction;
using collector::RunState;

namespace {

const wire::FrameFormat& kFormat = detail::frame_format();
constexpr const char* kWho = detail::kWho;

// Each message's fields are listed once, in wire order, by a `fields(io, m)`; `io`
// is an Out (writes them), an In (reads them into m, checking each) or a MinSize (adds up
// the fewest bytes each takes: the bound a list's count is checked against, so that a
// count the rest of the frame cannot hold is refused before anything is allocated).

template <class M, class T>
concept Is = std::is_same_v<std::remove_const_t<M>, T>;

// --- the fields of each message, in wire order -------------------------------------------

template <class Io, class M>
requires Is<M, PiecePlacement>
void fields(Io& io, M& p) {
  io.field(p.uid);
  io.field(p.owner);
  io.field(p.first);
  io.field(p.count);
  io.field(p.stride);
  if constexpr (Io::kReads)
    if (p.owner < 0 || p.stride < 1 || p.count[0] < 0 || p.count[1] < 0 || p.count[2] < 0 || p.first[0] < 0 ||
        p.first[1] < 0 || p.first[2] < 0)
      wire::fail(wire::Fault::malformed, kWho, "a window piece with a negative owner, place or size");
}

template <class Io, class M>
requires Is<M, SegmentName>
void fields(Io& io, M& s) {
  static_assert(sizeof(s.pid) == 4 && sizeof(s.fd) == 4, "pid and fd travel as 32-bit integers");
  io.field(s.node);
  io.field(s.pid);
  io.field(s.fd);
  io.field(s.token);
  io.field(s.bytes);
}

template <class Io, class M>
requires Is<M, WindowCommand>
void fields(Io& io, M& c) {
  io.field(c.vars);
  io.field(c.pieces);
  io.field(c.slots);
  io.field(c.shm);
  io.field(c.file);
}

template <class Io, class M>
requires Is<M, Hold> || Is<M, Release> || Is<M, ParametersQuery> || Is<M, Bye>
void fields(Io& /*io*/, M& /*m*/) {}  // the frame's type says it all

template <class Io, class M>
requires Is<M, ControlCommand>
void fields(Io& io, M& c) {
  io.field(c.action);
  io.field(c.file);
}

template <class Io, class M>
requires Is<M, SetCommand>
void fields(Io& io, M& c) {
  io.field(c.values);
  io.field(c.file);
}

template <class Io, class M>
requires Is<M, Future>
void fields(Io& io, M& f) {
  io.field(f.values);
  io.field(f.output);
}

template <class Io, class M>
requires Is<M, DetailsCommand>
void fields(Io& io, M& c) {
  io.field(c.var);
  io.field(c.file);
}

template <class Io, class M>
requires Is<M, BranchCommand>
void fields(Io& io, M& b) {
  io.field(b.from);
  io.field(b.futures);
}

// A parameter's value travels split: a vector flag after its name, its numbers last
// (three under the flag make a vector; anything else, its first number).
template <class Io, class M>
requires Is<M, ParameterInfo>
void fields(Io& io, M& p) {
  bool vector = std::holds_alternative<std::array<double, 3>>(p.value);
  std::vector<double> numbers = collector::components(p.value);
  io.field(p.name);
  io.field(vector);
  io.field(p.unit);
  io.field(p.min);
  io.field(p.max);
  io.field(p.min_open);
  io.field(p.max_open);
  io.field(p.description);
  io.field(numbers);
  if constexpr (Io::kReads)
    p.value = vector ? collector::param_value(numbers) : collector::ParamValue{numbers.empty() ? 0.0 : numbers[0]};
}

template <class Io, class M>
requires Is<M, Reply>
void fields(Io& io, M& m) {
  io.field(m.ok);
  io.field(m.message);
  io.field(m.step);
  io.field(m.time);
  io.field(m.file);
  io.field(m.parent);
  io.field(m.state);
  io.field(m.parameters);
  io.field(m.applied);
  io.field(m.files);
  io.field(m.uids);
  io.field(m.details);
  io.field(m.shares);
  io.field(m.ranges);
  if constexpr (Io::kReads) {
    if (m.uids.size() != m.details.size()) wire::fail(wire::Fault::malformed, kWho, "details without their grids");
    if (!m.shares.empty() && (m.uids.empty() || m.shares.size() % m.uids.size() != 0))
      wire::fail(wire::Fault::malformed, kWho, "shares that are not the same count for every grid");
    if (m.ranges.size() % 2 != 0) wire::fail(wire::Fault::malformed, kWho, "a range is two numbers");
  }
}

template <class Io, class M>
requires Is<M, FutureStatus>
void fields(Io& io, M& f) {
  io.field(f.file);
  io.field(f.parent);
  io.field(f.state);
  io.field(f.step);
  io.field(f.time);
  io.field(f.steps);
  io.field(f.wall);
  io.field(f.changes);
  io.field(f.first_rank);
  io.field(f.ranks);
}

template <class Io, class M>
requires Is<M, Status>
void fields(Io& io, M& s) {
  io.field(s.state);
  io.field(s.step);
  io.field(s.time);
  io.field(s.file);
  io.field(s.parent);
  io.field(s.files);
  io.field(s.steps);
  io.field(s.wall);
  io.field(s.ranks);
  io.field(s.futures);
}

class Out : public wire::ByteWriter {
 public:
  static constexpr bool kReads = false;
  Out() : wire::ByteWriter(kWho) {}
  template <class T>
  requires std::is_integral_v<T>
  void field(const T& x) {
    if constexpr (std::is_same_v<T, bool>) put(static_cast<std::uint8_t>(x));
    else put(x);
  }
  template <class E>
  requires std::is_enum_v<E>
  void field(const E& x) { put(static_cast<std::uint8_t>(x)); }
  void field(const double& x) { put_f64(x); }
  void field(const std::string& x) { put_string(x); }
  template <class T, std::size_t N>
  void field(const std::array<T, N>& a) {
    for (const auto& x : a) field(x);
  }
  template <class T>
  void field(const std::vector<T>& v) {
    put_count(v.size());
    for (const auto& x : v) {
      if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string>) fields(*this, x);
      else field(x);
    }
  }
  template <class T>
  void field(const std::optional<T>& o) {
    field(o.has_value());
    if (o) fields(*this, *o);
  }
  void field(const collector::ParamValues& v) {
    put_count(v.size());
    for (const auto& [name, value] : v) {
      field(name);
      field(collector::components(value));
    }
  }
};

class MinSize {
 public:
  static constexpr bool kReads = false;
  std::size_t bytes = 0;
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void field(const T&) { bytes += std::is_same_v<T, bool> || std::is_enum_v<T> ? 1 : sizeof(T); }
  template <class T, std::size_t N>
  void field(const std::array<T, N>&) {
    bytes += N * sizeof(T);
  }
  template <class T>
  requires Is<T, std::string> || Is<T, collector::ParamValues> || requires(T t) { t.begin(); }
  void field(const T&) { bytes += 4; }  // a count or a length
  template <class T>
  void field(const std::optional<T>&) {
    bytes += 1;
  }
};

// The fewest bytes one element of a list of T takes on the wire.
template <class T>
std::size_t min_size() {
  if constexpr (std::is_same_v<T, std::string>) return 4;
  else if constexpr (std::is_class_v<T>) {
    MinSize m;
    const T t{};
    fields(m, t);
    return m.bytes;
  } else return std::is_same_v<T, bool> ? 1 : sizeof(T);
}

class In : public wire::ByteReader {
 public:
  static constexpr bool kReads = true;
  explicit In(std::span<const std::byte> b) : wire::ByteReader(b, kWho) {}
  template <class T>
  requires std::is_integral_v<T>
  void field(T& x) {
    if constexpr (std::is_same_v<T, bool>) x = enumerated<std::uint8_t>(1) != 0;
    else x = get<T>();
  }
  void field(RunState& x) { x = enumerated<RunState>(static_cast<std::uint8_t>(RunState::finished)); }
  void field(ControlAction& x) { x = enumerated<ControlAction>(static_cast<std::uint8_t>(ControlAction::stop)); }
  void field(double& x) { x = get_f64(); }
  void field(std::string& x) { x = get_string(); }
  template <class T, std::size_t N>
  void field(std::array<T, N>& a) {
    for (auto& x : a) field(x);
  }
  template <class T>
  void field(std::vector<T>& v) {
    v.resize(get_count(min_size<T>()));
    for (auto& x : v) {
      if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string>) fields(*this, x);
      else field(x);
    }
  }
  template <class T>
  void field(std::optional<T>& o) {
    bool present = false;
    field(present);
    o.reset();
    if (present) fields(*this, o.emplace());
  }
  void field(collector::ParamValues& v) {
    v.clear();
    for (std::size_t n = get_count(min_size<std::string>() + 4); n > 0; --n) {
      std::string name = get_string();
      std::vector<double> value;
      field(value);
      if (value.size() != 1 && value.size() != 3)
        wire::fail(wire::Fault::malformed, kWho, "a value of neither 1 nor 3 numbers");
      if (!v.emplace(std::move(name), collector::param_value(value)).second)
        wire::fail(wire::Fault::malformed, kWho, "a parameter changed twice");
    }
  }

 private:
  template <class E>
  E enumerated(std::uint8_t last) {
    const auto x = get<std::uint8_t>();
    if (x > last) wire::fail(wire::Fault::malformed, kWho, "an enumerated value out of range");
    return static_cast<E>(x);
  }
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

template <class M>
std::vector<std::byte> encode_as(std::uint16_t type, const M& m) {
  Out w;
  fields(w, m);
  return frame(type, w);
}

template <class M>
M decode_as(std::span<const std::byte> f, std::uint16_t type) {
  In r(payload(f, type, type));
  M m;
  fields(r, m);
  r.finish();
  return m;
}

// The command of variant index I, read into `c` when the frame's index is I.
template <std::size_t... I>
void read_command(In& r, std::size_t index, Command& c, std::index_sequence<I...> /*all*/) {
  ((index == I ? fields(r, c.template emplace<I>()) : void()), ...);
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
  std::visit([&](const auto& m) { fields(w, m); }, c);
  return frame(static_cast<std::uint16_t>(op_of(c)), w);
}

std::uint16_t frame_type(std::span<const std::byte> f) { return wire::check_frame(kFormat, f).type; }

Command decode_command(std::span<const std::byte> f) {
  In r(payload(f, 1, static_cast<std::uint16_t>(Op::details)));
  Command c;
  read_command(r, wire::check_frame(kFormat, f).type - 1U, c, std::make_index_sequence<std::variant_size_v<Command>>{});
  r.finish();
  return c;
}

std::vector<std::byte> encode(const Reply& m) { return encode_as(kReplyType, m); }
Reply decode_reply(std::span<const std::byte> f) { return decode_as<Reply>(f, kReplyType); }
std::vector<std::byte> encode(const Status& s) { return encode_as(kStatusType, s); }
Status decode_status(std::span<const std::byte> f) { return decode_as<Status>(f, kStatusType); }

}  // namespace rwd::live

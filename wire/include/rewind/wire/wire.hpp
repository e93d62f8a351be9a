// Shared framing and little-endian byte codec of Rewind's binary protocols.
//
// Used by the neighbourhood server (docs/protocol.md, magic "RWNB") and by the TCP
// collector (docs/collector-protocol.md, magic "RWCL"). Pure code: no MPI, no sockets,
// no allocation beyond the output vector. Every frame is a 24-byte header followed by
// `length` payload bytes; all integers and doubles are little-endian whatever the host.
//
//   offset size field
//        0    4 magic        FrameFormat::magic
//        4    2 version      FrameFormat::version (a reader rejects any other)
//        6    2 type         message type, meaning owned by the protocol
//        8    4 request_id   chosen by the client, echoed in the reply
//       12    4 reserved     0 (a reader rejects anything else)
//       16    8 length       payload bytes that follow the header (<= max_payload)
//
// Errors: every check throws WireError with a Fault; the protocols translate it into
// their own error codes. A ByteReader never reads past its span and checks counts against
// the bytes left before the caller allocates. Thread-safety: ByteWriter and ByteReader are
// plain values (one per thread); the free functions are reentrant.
#pragma once
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace rwd::wire {

inline constexpr std::size_t kHeaderSize = 24;

/// Why a frame was refused.
enum class Fault : std::uint8_t {
  malformed,    ///< truncated, bad magic, reserved != 0, lying length, trailing bytes, bad count
  bad_version,  ///< header version differs from FrameFormat::version
  too_large,    ///< payload above FrameFormat::max_payload (or a list above 2^32-1 entries)
};

class WireError : public std::runtime_error {
 public:
  WireError(Fault fault, const std::string& what) : std::runtime_error(what), fault_(fault) {}
  [[nodiscard]] Fault fault() const { return fault_; }

 private:
  Fault fault_;
};

/// An error with a code in one protocol's numbering (`Code`: collector::ErrorCode,
/// nbserver::ErrorCode). The two protocols keep an ErrorCode each because each
/// numbering is its protocol's wire contract (docs/collector-protocol.md, "Error codes":
/// too_large = 4; docs/protocol.md, "Messages": too_large = 6): they are never converted
/// into each other. The frame faults they share are Fault above.
template <class Code>
class CodedError : public std::runtime_error {
 public:
  CodedError(Code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] Code code() const { return code_; }

 private:
  Code code_;
};

/// The parameters of one protocol's framing.
struct FrameFormat {
  std::array<char, 4> magic{};
  std::uint16_t version = 1;
  std::uint64_t max_payload = std::uint64_t{1} << 30;
  const char* name = "wire";  ///< prefix of error messages, e.g. "nbserver"
};

struct FrameHeader {
  std::uint16_t type = 0;
  std::uint32_t request_id = 0;
  std::uint64_t length = 0;  ///< payload bytes
};

[[noreturn]] void fail(Fault fault, const char* who, const std::string& what);

/// Appends little-endian values to `out`.
class ByteWriter {
 public:
  explicit ByteWriter(const char* who = "wire") : who_(who) {}
  std::vector<std::byte> out;

  template <typename T>
  void put(T v) {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(v);
    for (std::size_t b = 0; b < sizeof(U); ++b) out.push_back(static_cast<std::byte>((u >> (8 * b)) & 0xffu));
  }
  void put_f64(double d) { put(std::bit_cast<std::uint64_t>(d)); }
  /// A u32 count; throws WireError(too_large) above 2^32-1.
  void put_count(std::size_t n);
  void put_bytes(std::span<const std::byte> b) { out.insert(out.end(), b.begin(), b.end()); }
  /// u32 length + the bytes of `s`.
  void put_string(const std::string& s);

 protected:
  const char* who_;
};

/// Reads little-endian values from a span it does not own; never reads out of bounds.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in, const char* who = "wire") : in_(in), who_(who) {}
  [[nodiscard]] std::size_t left() const { return in_.size() - pos_; }
  [[nodiscard]] std::size_t position() const { return pos_; }

  template <typename T>
  T get() {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    need(sizeof(U));
    U u = 0;
    for (std::size_t b = 0; b < sizeof(U); ++b) u |= static_cast<U>(static_cast<U>(in_[pos_ + b]) << (8 * b));
    pos_ += sizeof(U);
    return static_cast<T>(u);
  }
  double get_f64() { return std::bit_cast<double>(get<std::uint64_t>()); }
  /// A u32 count of entries of at least `min_bytes` each that must fit in what is left
  /// (WireError(malformed) otherwise), so callers may allocate `count` entries.
  std::size_t get_count(std::size_t min_bytes);
  /// The next n bytes (a view into the input).
  std::span<const std::byte> get_bytes(std::size_t n);
  /// u32 length + bytes, as written by ByteWriter::put_string.
  std::string get_string();
  /// Throws WireError(malformed) unless every byte was consumed.
  void finish() const;

 protected:
  void need(std::size_t n) const {
    if (left() < n) fail(Fault::malformed, who_, "message truncated");
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  const char* who_;
};

/// Starts a frame in `w.out` (must be empty): header with length 0, patched by end_frame.
void begin_frame(ByteWriter& w, const FrameFormat& f, std::uint16_t type, std::uint32_t request_id);
/// Patches the length field; throws WireError(too_large) above f.max_payload.
void end_frame(ByteWriter& w, const FrameFormat& f);

/// Parses the first kHeaderSize bytes: magic, version, reserved == 0, length <= max.
/// Throws WireError. Use it on a received header to learn how many bytes follow.
FrameHeader read_header(const FrameFormat& f, std::span<const std::byte> header);
/// read_header + the frame holds exactly header + length bytes.
FrameHeader check_frame(const FrameFormat& f, std::span<const std::byte> frame);

}  // namespace rwd::wire

// The collector's TCP message format (docs/collector-protocol.md, version 1).
//
// Pure code: no sockets, no HDF5. A frame is the shared 24-byte header of
// rewind/nbserver/wire.hpp with magic "RWCL", followed by
//
//   u32 json_bytes, json_bytes of UTF-8 JSON (the message's fields), then the binary
//   arrays the JSON lists in "arrays", each zstd-compressed, back to back.
//
// Every array entry in the JSON states {name, dtype, raw, zbytes}: its decompressed
// and compressed size. decode() checks everything: header, type, that the JSON parses
// and has every field with the right type, that the compressed sizes add up to exactly
// the bytes left, that each array decompresses to exactly its declared raw size (no
// zstd bombs: the output buffer is never larger than declared, and the declared total
// is capped), and that the arrays agree with the pieces. It throws ProtocolError with a
// code and never reads out of bounds. Requests are capped at kMaxRequestBytes, replies
// at kMaxReplyBytes (both configurable per call).
//
// Thread-safety: all functions are reentrant; the structs are plain values.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace rwd::collector {

inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderSize = 24;
/// Default cap of a request frame (requests carry no arrays).
inline constexpr std::uint64_t kMaxRequestBytes = std::uint64_t{64} << 10;
/// Default cap of a reply frame (compressed bytes on the wire).
inline constexpr std::uint64_t kMaxReplyBytes = std::uint64_t{1} << 30;
/// Default cap of the decompressed arrays of one reply.
inline constexpr std::uint64_t kMaxRawBytes = std::uint64_t{4} << 30;

enum class MessageType : std::uint16_t {
  hello = 1,
  hello_reply = 2,
  info_request = 3,
  info_reply = 4,
  steps_request = 5,
  steps_reply = 6,
  window_request = 7,
  window_reply = 8,
  error_reply = 9,
  bye = 10,
};

/// Error codes, carried by ErrorReply, ProtocolError and the client's exceptions.
enum class ErrorCode : std::uint32_t {
  malformed = 1,         ///< truncated, bad magic, lying length, bad JSON, bad field, lying sizes
  bad_version = 2,       ///< header or hello protocol version != kProtocolVersion
  unknown_type = 3,      ///< type not in MessageType, or a reply sent as a request
  too_large = 4,         ///< frame above the cap, or arrays above the raw cap
  bad_argument = 5,      ///< e.g. box with lo > hi, budget 0 or above the limit, bad time selector
  unauthorized = 6,      ///< missing or wrong token
  busy = 7,              ///< too many clients
  timeout = 8,           ///< a deadline expired (client side, or told before closing)
  no_such_step = 9,      ///< the time selector names no committed step
  unknown_variable = 10, ///< a requested variable is not in info().variables
  internal = 11,         ///< the service failed for another reason
};
/// "malformed", "bad_version", ... (the names used in the docs and in error replies).
const char* to_string(ErrorCode c) noexcept;

/// Base of the collector's exceptions: a message plus the protocol's error code.
class CodedError : public std::runtime_error {
 public:
  CodedError(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

/// Thrown by encode()/decode(); code() says why.
class ProtocolError : public CodedError {
 public:
  using CodedError::CodedError;
};

// --- Bodies ----------------------------------------------------------------------------

/// First message of a session; required when the server has a token.
struct Hello {
  std::uint32_t protocol = kProtocolVersion;
  std::string token;
  std::string client;  ///< free text, e.g. "rewind-window 0.1"
};
struct HelloReply {
  std::string server;
  std::uint32_t protocol = kProtocolVersion;
  std::vector<std::string> capabilities;  ///< e.g. "window", "steps", "offline"
};

struct InfoRequest {};
struct VariableInfo {
  std::string name;
  std::string unit;
};
/// What the server serves: files (offline) or a live run, variables, geometry.
struct ServerInfo {
  std::vector<std::string> files;
  std::vector<VariableInfo> variables;
  std::array<double, 3> domain_lo{}, domain_hi{};
  int dim = 3;
  std::array<int, 3> block{};  ///< cells per grid along x, y, z
  int refinement = 2;
  bool live = false;
};
struct InfoReply {
  ServerInfo info;
};

struct StepsRequest {};
/// One committed step of the run or of one of its branches.
struct StepRecord {
  std::int64_t step = 0;
  double time = 0.0;
  std::string kind;  ///< "visualisation" or "checkpoint"
  std::string file;
};
struct StepsReply {
  std::vector<StepRecord> steps;
};

/// A sliding-window query.
struct WindowRequest {
  std::array<double, 3> lo{}, hi{};  ///< the box, physical coordinates, lo <= hi
  std::uint64_t budget = 0;          ///< most cell values returned per variable
  std::string time = "live";         ///< "live", "latest", "N", "#i", "t=T" (kernel::Reader::find_step)
  std::vector<std::string> variables;
  std::string file;  ///< which of info().files ("" = the first); optional on the wire
};

/// One selected grid, cropped to the box. Cells of the piece: count[0]*count[1]*count[2],
/// x fastest; cell (i,j,k) of the piece is grid cell first + stride*(i,j,k).
struct Piece {
  std::int64_t row = -1;  ///< row of the grid in the step (file) or -1 (live)
  std::uint64_t uid = 0;
  std::int32_t level = 0;
  std::array<std::int32_t, 3> first{};
  std::array<std::int32_t, 3> count{};
  std::int32_t stride = 1;
  std::array<double, 3> origin{};   ///< lower corner of the piece's first cell
  std::array<double, 3> spacing{};  ///< cell size of the piece (grid cell size * stride)
  [[nodiscard]] std::uint64_t cells() const;
};

struct WindowReply {
  std::int64_t step = -1;
  double time = 0.0;
  std::string file;
  std::int32_t level = 0;   ///< level of detail chosen
  std::int32_t stride = 1;
  std::array<double, 3> lo{}, hi{};  ///< box actually covered
  std::uint64_t cells = 0;  ///< values returned per variable = sum of pieces' cells
  std::vector<Piece> pieces;
  std::vector<std::string> variables;
  /// values[v] = all pieces' cells of variables[v], in piece order (numpy-ready).
  std::vector<std::vector<double>> values;
  std::vector<std::uint8_t> cell_type;  ///< same layout, one byte per cell
};

struct ErrorReply {
  ErrorCode code = ErrorCode::malformed;
  std::string message;
};
/// Polite end of session; the server closes the connection without a reply.
struct Bye {};

/// Alternatives in MessageType order.
using Body = std::variant<Hello, HelloReply, InfoRequest, InfoReply, StepsRequest, StepsReply, WindowRequest, WindowReply,
                          ErrorReply, Bye>;

struct Message {
  std::uint32_t request_id = 0;
  Body body;
};

MessageType type_of(const Body& body);
/// hello, info_request, steps_request, window_request and bye.
bool is_request(MessageType t);

/// Caps applied by decode (and by the server / client before reading a frame).
struct Limits {
  std::uint64_t max_payload = kMaxReplyBytes;
  std::uint64_t max_raw = kMaxRawBytes;
};
inline constexpr Limits kRequestLimits{kMaxRequestBytes, 0};
inline constexpr Limits kReplyLimits{kMaxReplyBytes, kMaxRawBytes};

/// Serialises one frame; arrays compressed with zstd at `zstd_level`. Throws
/// ProtocolError(too_large) above max_payload, (bad_argument) if a WindowReply's arrays
/// disagree with its pieces.
std::vector<std::byte> encode(const Message& m, std::uint64_t max_payload = kMaxReplyBytes, int zstd_level = 1);
/// Parses one complete frame (header + exactly `length` bytes). Throws ProtocolError.
Message decode(std::span<const std::byte> frame, const Limits& limits = kReplyLimits);

struct FrameHeader {
  MessageType type{};
  std::uint32_t request_id = 0;
  std::uint64_t length = 0;
};
/// Checks the first kHeaderSize bytes (magic, version, reserved, length <= max_payload)
/// and returns them; the type is not checked here. Throws ProtocolError.
FrameHeader read_header(std::span<const std::byte> header, std::uint64_t max_payload);

}  // namespace rwd::collector

// The collector's TCP message format (docs/collector-protocol.md, version 1,
// revision 1.9: steering messages 11-20, announced in HelloReply::capabilities (1.1);
// the arrays' codec, negotiated in the hello (1.2); the server's limits on what a
// client may hold, behaviour only (1.3, server.hpp); a window reply's pieces as a
// binary table for a client that asks in its hello (1.7); several futures of a live
// job (1.8); a file named by its unique basename, behaviour only (1.9);
// kProtocolRevision lists all).
//
// Pure code: no sockets, no HDF5. A frame is the shared 24-byte header of
// rewind/wire/wire.hpp with magic "RWCL", followed by
//
//   u32 json_bytes, json_bytes of UTF-8 JSON (the message's fields), then the binary
//   arrays the JSON lists in "arrays", each zstd-compressed or as they are (codec
//   "none"), back to back.
//
// Every array entry in the JSON states {name, dtype, raw, zbytes, codec}: its
// decompressed and encoded size. decode() checks everything: header, type, that the JSON parses
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
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "rewind/wire/wire.hpp"

namespace rwd::collector {

inline constexpr std::uint16_t kProtocolVersion = 1;
/// Revision of version 1 this code speaks (docs only: the header still says 1). 1.1
/// added the steering messages (types 11-20) and error codes 12-13; 1.2 the codec of
/// the arrays, negotiated in the hello; 1.3 an empty window_request.variables meaning
/// every variable of the step, and the server's limits (hello deadline, sessions that
/// give way, reply memory answered `busy`); 1.4 open range ends of parameters; 1.5 a
/// branch's timeline through its parents (steps, windows and branches without a file);
/// 1.6 incompressible arrays as they are in a zstd session of a client that reads none;
/// 1.7 a window reply's pieces as a binary table, for a client that asks in its hello;
/// 1.8 several futures of a live job: status_reply.futures, control_request.file,
/// set_request.file, branch_request.futures, branch_reply.files (all optional); 1.9 a
/// served file named by its basename; 1.10 window_request.lod and window_reply.lod
/// (optional: an adaptive level of detail from a file's per-grid statistics); 1.11
/// window_reply.ranges (optional: each variable's range over the shown grids' statistics)
/// and the live state's adaptive windows (details from the compute ranks).
inline constexpr const char* kProtocolRevision = "1.14";
inline constexpr std::size_t kHeaderSize = wire::kHeaderSize;
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
  // Revision 1.1: steering a live run. Offered only when hello_reply.capabilities
  // names them; an older server answers unknown_type and closes.
  status_request = 11,
  status_reply = 12,
  control_request = 13,
  control_reply = 14,
  parameters_request = 15,
  parameters_reply = 16,
  set_request = 17,
  set_reply = 18,
  branch_request = 19,
  branch_reply = 20,
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
  unsupported = 12,      ///< (1.1) this server does not offer the request (e.g. steering an offline server)
  conflict = 13,         ///< (1.1) valid, but impossible in the run's current state (e.g. set after it finished)
};
/// "malformed", "bad_version", ... (the names used in the docs and in error replies).
const char* to_string(ErrorCode c) noexcept;

/// Base of the collector's exceptions: a message plus this protocol's error code (why
/// the neighbourhood server's protocol has its own: wire::CodedError).
using CodedError = wire::CodedError<ErrorCode>;

/// Thrown by encode()/decode(); code() says why.
class ProtocolError : public CodedError {
 public:
  using CodedError::CodedError;
};

/// How a reply's arrays travel (1.2). zstd: one zstd frame per array (saves bytes on a
/// network, costs CPU at each end: bench/live/HISTORY.md, "Live windows (online)"); none:
/// the raw bytes, which on loopback or a fast link is what is fastest (float64 fields
/// hardly compress). On the wire: "zstd", "none".
enum class Codec : std::uint8_t { zstd, none };
const char* to_string(Codec c) noexcept;
/// The codec named `s`, or nullopt.
std::optional<Codec> parse_codec(const std::string& s);
/// The codec a server picks from a client's `Hello::codecs` (preference order): the
/// first name it knows; zstd for an empty list (a 1.0/1.1 client); nullopt if the list
/// names none it knows. Pure.
std::optional<Codec> choose_codec(const std::vector<std::string>& offered);

// --- Bodies ----------------------------------------------------------------------------

/// First message of a session; required when the server has a token.
struct Hello {
  std::uint32_t protocol = kProtocolVersion;
  std::string token;
  std::string client;  ///< free text, e.g. "rewind-window 0.1"
  /// (1.2) The codecs the client reads, most wanted first ("none", "zstd"); empty =
  /// not on the wire = zstd only. Names this code does not know are kept (and skipped
  /// by choose_codec), so a later client may offer codecs this server lacks.
  std::vector<std::string> codecs;
  /// (1.7) The client reads a window reply's pieces as a binary table (array "pieces",
  /// dtype "piece", kPieceRecordBytes per piece) instead of the JSON list. Absent on
  /// the wire = false.
  bool piece_table = false;
};
struct HelloReply {
  std::string server;
  std::uint32_t protocol = kProtocolVersion;
  std::vector<std::string> capabilities;  ///< e.g. "window", "steps", "offline"
  /// (1.2) The codec of this session's window arrays (every array also says its own).
  /// A 1.1 server does not send it: zstd.
  Codec codec = Codec::zstd;
  /// (1.7) This session's window replies carry their pieces as a binary table (the
  /// hello asked for it). Absent (a 1.6 server) = false: the JSON list.
  bool piece_table = false;
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
  /// Names from info().variables; empty (revision 1.3) = every variable of the step: the
  /// ones a file's step stores (a visualisation step holds a chosen few), or all of the
  /// live state. The reply's `variables` says which came.
  std::vector<std::string> variables;
  std::string file;  ///< which of info().files ("" = the first); optional on the wire
  /// (1.10) How the budget is spent: "uniform" (one level over the box, the paper's rule,
  /// the default) or "adaptive" (refined where the first variable's detail is largest:
  /// window/select.hpp); optional on the wire, sent only when adaptive.
  std::string lod = "uniform";
};

/// A window::Piece (one selected grid, cropped to the box) as a window reply carries it:
/// its placement (window::copy_placement copies it between the two), plus the grid's
/// UID. Cells of the piece: count[0]*count[1]*count[2], x fastest; cell (i,j,k) of the
/// piece is grid cell first + stride*(i,j,k).
struct PieceMessage {
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

/// (1.7) Bytes of one piece in a window reply's piece table (array "pieces", dtype
/// "piece"), all little-endian: row i64 @0, uid u64 @8, level i32 @16, stride i32 @20,
/// first 3 x i32 @24, count 3 x i32 @36, origin 3 x f64 @48, spacing 3 x f64 @72
/// (docs/collector-protocol.md, "Piece table"). A JSON list of the same pieces takes
/// ~185 bytes per piece and, for a window of many pieces, milliseconds to parse.
inline constexpr std::size_t kPieceRecordBytes = 96;

/// The allocator of a window's arrays: growing one leaves the new elements uninitialised
/// (default-initialised) instead of zero-filling them. Every array of a reply is
/// overwritten from the socket, the file or the compute ranks right after it grows, so a
/// zero fill first only costs time: ~2 ms of the ~18 ms a 34.6 MB window takes on
/// loopback (bench/live/HISTORY.md, §9). Otherwise a std::vector like any other
/// (data(), size(), iterators, std::span); copy into a std::vector<double> with
/// `std::vector<double>(a.begin(), a.end())` where one is needed.
template <typename T>
class UninitAllocator : public std::allocator<T> {
 public:
  using std::allocator<T>::allocator;
  template <typename U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::construct_at(p, std::forward<Args>(args)...);
  }
};
/// A window's float64 values of one variable.
using ValueArray = std::vector<double, UninitAllocator<double>>;
/// A window's cell types, one byte per cell.
using TypeArray = std::vector<std::uint8_t, UninitAllocator<std::uint8_t>>;

struct WindowReply {
  std::int64_t step = -1;
  double time = 0.0;
  std::string file;
  std::int32_t level = 0;   ///< level of detail chosen
  std::int32_t stride = 1;
  /// (1.10) The rule that answered: "adaptive" only when asked for and the step has the
  /// variable's statistics (a live state and files before format 1.9 answer "uniform");
  /// sent only when adaptive.
  std::string lod = "uniform";
  std::array<double, 3> lo{}, hi{};  ///< box actually covered
  std::uint64_t cells = 0;  ///< values returned per variable = sum of pieces' cells
  std::vector<PieceMessage> pieces;
  std::vector<std::string> variables;
  /// values[v] = all pieces' cells of variables[v], in piece order (numpy-ready).
  std::vector<ValueArray> values;
  TypeArray cell_type;  ///< same layout, one byte per cell
  /// (1.11) ranges[v] = {min, max} of variables[v] over the shown grids' statistics rows
  /// (docs/file-format.md §3 "Statistics": each grid's non-solid cells, the whole grid
  /// even where the window crops or strides it, so never narrower than the values
  /// sent); NaN, NaN where no shown grid has a non-solid cell or the step has no
  /// statistics of that variable. Empty: not known (a live state, a step without
  /// statistics, a 1.10 server); sent only when not empty.
  std::vector<std::array<double, 2>> ranges;

  /// Arrays that live outside the reply (server side only: the live collector's memory
  /// shared with the compute ranks, live/src/window_gather.cpp). When set, `values` and
  /// `cell_type` are empty and these are the reply's arrays, valid while it lives.
  struct SharedArrays {
    std::vector<std::span<const double>> values;
    std::span<const std::uint8_t> cell_type;
    std::shared_ptr<const void> keep;  ///< holds their memory
  };
  std::shared_ptr<const SharedArrays> shared;
};

struct ErrorReply {
  ErrorCode code = ErrorCode::malformed;
  std::string message;
};
/// Polite end of session; the server closes the connection without a reply.
struct Bye {};

// --- Steering (revision 1.1) -------------------------------------------------------------

/// State of a live run. On the wire: "running", "paused", "stopping", "finished"; on the
/// live link's frames (live/messages.hpp), the byte below.
enum class RunState : std::uint8_t { running = 0, paused = 1, stopping = 2, finished = 3 };
const char* to_string(RunState s) noexcept;
/// The state named `s`, or nullopt.
std::optional<RunState> parse_run_state(const std::string& s);

/// What a control request asks. On the wire: "pause", "resume", "stop"; on the live
/// link's frames (live/messages.hpp), the byte below.
enum class ControlAction : std::uint8_t { pause = 0, resume = 1, stop = 2 };
const char* to_string(ControlAction a) noexcept;
/// The action named `s`, or nullopt.
std::optional<ControlAction> parse_control_action(const std::string& s);

/// A steerable value: a number, or a vector of 3 numbers (JSON: a number or [x,y,z]).
using ParamValue = std::variant<double, std::array<double, 3>>;
/// The numbers of `v`: one, or three for a vector.
std::vector<double> components(const ParamValue& v);
/// The value of `numbers`: three make a vector; any other count a number, the first (0
/// if none).
ParamValue param_value(std::span<const double> numbers);
/// Case keys ("physics.nu", "boundary.xmin.velocity", the keys of `rewind run --set`)
/// to values; ordered by name, as JSON objects are encoded.
using ParamValues = std::map<std::string, ParamValue>;

struct StatusRequest {};
/// One future of a live job (revision 1.8): a timeline the job computes, in its own file.
struct FutureStatus {
  std::string file;               ///< the file it writes
  std::string parent;             ///< the file it branched from, "" if none
  RunState state = RunState::running;  ///< its own: one future may be paused or stopped
  std::int64_t step = 0;
  double time = 0.0;
  double steps_per_second = 0.0;  ///< its own rate (finite, >= 0)
  std::vector<std::string> changes;  ///< "key=value": its changes against the parent, then steering
  /// (1.12) the compute ranks it computes on: [first_rank, first_rank + ranks) of the job's;
  /// ranks = 0: not said (a 1.11 server).
  std::uint32_t first_rank = 0, ranks = 0;
};
/// What a live run is doing.
struct RunStatus {
  RunState state = RunState::running;
  std::int64_t step = 0;
  double time = 0.0;
  double steps_per_second = 0.0;  ///< finite, >= 0 (encode refuses others)
  std::string file;               ///< the file being written
  std::string parent;             ///< the file it branched from, "" if none
  std::uint32_t ranks = 0;        ///< compute ranks
  std::uint32_t clients = 0;      ///< connected collector clients
  /// Every future the job computes (revision 1.8): after a fork several, each in its own
  /// file; one otherwise (the fields above are the first's). Optional on the wire.
  std::vector<FutureStatus> futures;
};
struct StatusReply {
  RunStatus status;
};

/// Pause, resume or stop the run at the next step boundary. `action` stays a string so
/// that a wrong one is a bad_argument (session continues), not a malformed frame.
struct ControlRequest {
  std::string action;  ///< "pause", "resume" or "stop" (see parse_control_action)
  std::string file;    ///< the future it acts on ("" = every future; revision 1.8); optional on the wire
};
/// The state after the action took effect, and the step boundary where it did.
struct ControlReply {
  RunState state = RunState::running;
  std::int64_t step = 0;
  double time = 0.0;
};

struct ParametersRequest {};
/// One steerable parameter, declared by the code once, as data, and as the ParaView
/// plugin builds a widget from it. Its wire `type` is "number" or "vector", read off
/// `value`; min and max bound every component. The live link's replies carry the same
/// type (live/messages.hpp).
struct ParameterInfo {
  std::string name;  ///< case key, as `rewind run --set`
  ParamValue value;  ///< the current value
  std::string unit;
  double min = 0.0, max = 0.0;  ///< finite, min <= max
  std::string description;
  bool min_open = false, max_open = false;  ///< that end excluded: (0, 10] (revision 1.4; absent: closed)
  bool operator==(const ParameterInfo&) const = default;
};
struct ParametersReply {
  std::vector<ParameterInfo> parameters;
};

/// Change parameters from the next step on (1 .. 64 entries).
struct SetRequest {
  ParamValues values;
  std::string file;    ///< the future it changes ("" = every future; revision 1.8); optional on the wire
};
struct SetReply {
  std::int64_t step = 0;  ///< the first step computed with the new values
  double time = 0.0;
  ParamValues values;     ///< as applied
};

/// One future of a fork (revision 1.8): its changed values and its file.
struct FutureRequest {
  ParamValues values;  ///< may be empty: the parent continued unchanged
  std::string output;  ///< "" = chosen by the server
};
/// Branch the run from a committed step into a new file, with changed values.
struct BranchRequest {
  std::string from;    ///< time selector as WindowRequest::time, but not "live"
  std::string file;    ///< which file (one of info().files); "" = the timeline of the file being written,
                       ///< through its parents (revision 1.5); optional on the wire
  ParamValues values;  ///< may be empty
  std::string output;  ///< the branch file; "" = chosen by the server; optional on the wire
  /// Several futures at once (revision 1.8; optional on the wire): each its own values and
  /// output, all from the same step; then `values` and `output` above must be empty. A
  /// job computing several futures forks the one whose file is `file`.
  std::vector<FutureRequest> futures;
};
struct BranchReply {
  std::string file;    ///< the new branch file
  std::string parent;  ///< the file branched from
  std::int64_t step = 0;  ///< the step branched from
  double time = 0.0;
  std::vector<std::string> files;  ///< every future's file, in request order (revision 1.8; `file` is the first)
};

/// Alternatives in MessageType order.
using Body = std::variant<Hello, HelloReply, InfoRequest, InfoReply, StepsRequest, StepsReply, WindowRequest, WindowReply,
                          ErrorReply, Bye, StatusRequest, StatusReply, ControlRequest, ControlReply, ParametersRequest,
                          ParametersReply, SetRequest, SetReply, BranchRequest, BranchReply>;

struct Message {
  std::uint32_t request_id = 0;
  Body body;
};

MessageType type_of(const Body& body);
/// hello, bye and the *_request types.
bool is_request(MessageType t);
/// The capability that announces request type `t` in HelloReply::capabilities: "info",
/// "steps", "window", "status", "control", "parameters", "set", "branch"; "" for hello,
/// bye and replies.
const char* capability_of(MessageType t) noexcept;

/// Caps applied by decode (and by the server / client before reading a frame).
struct Limits {
  std::uint64_t max_payload = kMaxReplyBytes;
  std::uint64_t max_raw = kMaxRawBytes;
};
inline constexpr Limits kRequestLimits{kMaxRequestBytes, 0};
inline constexpr Limits kReplyLimits{kMaxReplyBytes, kMaxRawBytes};

/// zstd level of encode(): -5, a fast level. On the solver's float64 fields level 1 saves
/// 6-9 % of the bytes at a fraction of the speed; -1 and -5 both save 3 % (runs of equal
/// values: cell types, a field at rest), -5 at about twice -1's speed (bench/live/HISTORY.md,
/// §2 "Live windows by default"). A client reads every level.
inline constexpr int kZstdLevel = -5;

/// An array zstd would not shrink below this fraction of its bytes goes as it is, in a
/// zstd session whose client also reads codec none (EncodeOptions::raw_when_incompressible):
/// compressing it costs more time at both ends than it saves on a link of 1 Gbit/s or
/// faster (a 34.6 MB window of float64 fields: 31 ms to encode, 8 to decode, 3 % saved;
/// bench/live/HISTORY.md, §2 "Live windows by default").
inline constexpr double kWorthCompressing = 7.0 / 8.0;

/// How encode() writes a frame: the arrays' codec, zstd's level, the payload cap.
struct EncodeOptions {
  Codec codec = Codec::zstd;
  std::uint64_t max_payload = kMaxReplyBytes;
  int zstd_level = kZstdLevel;
  /// (1.6) With codec zstd: an array that zstd would not shrink below kWorthCompressing
  /// of its size (judged from samples first, then from the result) goes as it is, with
  /// codec none. Only for a client that offered none in its hello.
  bool raw_when_incompressible = false;
  /// (1.7) A window reply's pieces go as a binary table, the reply's first array, and
  /// not as the JSON list. Only for a client that asked in its hello (Hello::piece_table).
  bool piece_table = false;
};

/// Serialises one frame; arrays compressed with zstd at `zstd_level`. Throws
/// ProtocolError(too_large) above max_payload, (bad_argument) if a WindowReply's arrays
/// disagree with its pieces or a steering message holds a value the decoder refuses
/// (a non-finite number, min > max, a negative steps_per_second).
std::vector<std::byte> encode(const Message& m, std::uint64_t max_payload = kMaxReplyBytes, int zstd_level = kZstdLevel);
/// As above with the arrays in `options.codec`.
std::vector<std::byte> encode(const Message& m, const EncodeOptions& options);

/// A frame as a buffer sequence for one gathering write: the wire bytes are `head`
/// followed by every span of `arrays`. With codec none, `head` holds the header and
/// the JSON, and `arrays` point at the message's own value arrays (no copy): the
/// Message must stay alive and unchanged until the write has completed. With zstd,
/// `head` holds the whole frame, unless an array goes as it is (1.6): then `head` holds
/// the compressed arrays before it, and `arrays` the rest, as spans into the message or
/// into `packed` (the later compressed ones).
struct FrameParts {
  std::vector<std::byte> head;
  std::vector<std::span<const std::byte>> arrays;
  std::vector<std::byte, UninitAllocator<std::byte>> packed;  ///< the compressed arrays, back to back
  [[nodiscard]] std::uint64_t size() const;
};
/// As encode(), into `out`: its contents are replaced, the capacity of `out.head` reused
/// (a server answering large windows again and again keeps one buffer).
void encode(const Message& m, FrameParts& out, const EncodeOptions& options);
/// The JSON part of `body` as encode() writes it (a window reply's arrays are left
/// out), e.g. for `rewind steer --json`. Throws as encode().
std::string json_text(const Body& body);
/// Parses one complete frame (header + exactly `length` bytes), arrays in either
/// codec. Throws ProtocolError.
Message decode(std::span<const std::byte> frame, const Limits& limits = kReplyLimits);

struct FrameHeader {
  MessageType type{};
  std::uint32_t request_id = 0;
  std::uint64_t length = 0;
};
/// Checks the first kHeaderSize bytes (magic, version, reserved, length <= max_payload)
/// and returns them; the type is not checked here. Throws ProtocolError.
FrameHeader read_header(std::span<const std::byte> header, std::uint64_t max_payload);

/// Where the `length` bytes after a frame's header come from, for decode_payload: a
/// socket, or memory.
class PayloadSource {
 public:
  virtual ~PayloadSource() = default;
  /// Fills exactly `n` bytes at `dst` with the next bytes of the payload, or throws.
  virtual void read(std::byte* dst, std::size_t n) = 0;
  /// The next `n` bytes, valid until the next call. Default: read() into a buffer.
  virtual std::span<const std::byte> next(std::size_t n);

 private:
  std::vector<std::byte> buf_;
};

/// decode() for a reader that holds the header `h` (from read_header) and takes the
/// payload from `source` as it goes: the JSON first, then each array straight into
/// the vector it ends up in (codec none: no copy beyond the read; zstd: decompressed
/// from `source.next()`). Every size is checked against `h.length` before anything is
/// read or allocated, as decode() does. The value vectors of `reuse` (a previous
/// window reply, may be null) become the new reply's, keeping their capacity: a client
/// asking for the same window again allocates nothing. Throws ProtocolError; the
/// stream is then at an unknown position (close it).
Message decode_payload(const FrameHeader& h, PayloadSource& source, const Limits& limits = kReplyLimits,
                       WindowReply* reuse = nullptr);

}  // namespace rwd::collector

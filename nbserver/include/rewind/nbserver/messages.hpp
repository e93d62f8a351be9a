// The neighbourhood-server message format (docs/protocol.md, version 1).
//
// Pure code: no MPI, no I/O. A message is a 24-byte header (the shared framing of
// wire.hpp, magic "RWNB") followed by a payload;
// all integers and doubles are little-endian, whatever the host. encode() and
// decode() are exact inverses; decode() checks everything (magic, version, type,
// length, every count against the bytes left, enum values, trailing bytes) and
// throws ProtocolError with a code instead of reading out of bounds.
//
//   offset size field
//        0    4 magic        "RWNB"
//        4    2 version      kProtocolVersion (a reader rejects any other)
//        6    2 type         MessageType
//        8    4 request_id   chosen by the client, echoed in the reply
//       12    4 reserved     0 (a reader rejects anything else)
//       16    8 length       payload bytes that follow the header
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "rewind/wire/wire.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"

namespace rwd::nbserver {

inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderSize = wire::kHeaderSize;
/// Frames larger than this are refused (by decode and by the server's receive).
inline constexpr std::uint64_t kMaxPayload = std::uint64_t{1} << 30;

enum class MessageType : std::uint16_t {
  owner_request = 1,
  owner_reply = 2,
  neighbours_request = 3,
  neighbours_reply = 4,
  family_request = 5,
  family_reply = 6,
  box_request = 7,
  box_reply = 8,
  plan_request = 9,
  plan_reply = 10,
  shutdown_request = 11,
  shutdown_reply = 12,
  error_reply = 13,
  window_request = 14,
  window_reply = 15,
};

/// Error codes, carried by ErrorReply and by ProtocolError.
enum class ErrorCode : std::uint32_t {
  malformed = 1,        ///< truncated, bad magic, bad length, bad enum value, trailing bytes
  bad_version = 2,      ///< header version != kProtocolVersion
  unknown_type = 3,     ///< type not in MessageType, or a reply sent as a request
  unknown_uid = 4,      ///< a neighbours/family request named a grid that does not exist
  bad_argument = 5,     ///< e.g. plan of a rank outside 0 .. ranks-1, negative level
  too_large = 6,        ///< payload above kMaxPayload
};

/// Thrown by decode(); code() says why, in this protocol's numbering (ErrorCode above;
/// why the TCP collector's protocol has its own: wire::CodedError).
class ProtocolError : public wire::CodedError<ErrorCode> {
 public:
  using CodedError::CodedError;
};

// --- Bodies -------------------------------------------------------------------------
struct OwnerRequest { std::vector<spacetree::Uid> uids; };
/// owners[i] is the compute rank of uids[i], -1 if the grid does not exist.
struct OwnerReply { std::vector<std::int32_t> owners; };
struct NeighboursRequest { std::vector<spacetree::Uid> uids; };
/// lists[i] = Topology::neighbours(uids[i]) (faces, edges, corners; same, coarser,
/// finer or boundary, with owners), in the documented order.
struct NeighboursReply { std::vector<std::vector<spacetree::Neighbour>> lists; };
struct FamilyRequest { std::vector<spacetree::Uid> uids; };
struct FamilyReply { std::vector<spacetree::Family> families; };
/// Grids on `level` whose bounding box overlaps `box`.
struct BoxRequest { spacetree::Box box; std::int32_t level = 0; };
struct BoxReply { std::vector<spacetree::Uid> uids; std::vector<std::int32_t> owners; };
/// The LocalPlan of compute rank `rank`.
struct PlanRequest { std::int32_t rank = 0; };
struct PlanReply { spacetree::LocalPlan plan; };
struct ShutdownRequest {};
struct ShutdownReply {};
struct ErrorReply { ErrorCode code = ErrorCode::malformed; std::string message; };
/// A sliding-window selection (rewind::window::select on the server's tree): the
/// collector's question "which cells of which grids, on which ranks".
struct WindowRequest {
  spacetree::Box box;                 ///< lo <= hi per axis; lo == hi: a slice
  std::int64_t budget = 0;     ///< most values per variable (0 = unlimited)
  std::int32_t max_level = -1; ///< deepest level (-1 = no cap)
};
/// One selected grid (window::Piece) with its owner.
struct WindowPiece {
  spacetree::Uid uid;
  std::int32_t owner = -1;  ///< compute rank
  std::int32_t level = 0;
  std::array<std::int32_t, 3> first{}, count{};
  std::int32_t stride = 1;
  std::array<double, 3> origin{}, spacing{};
};
struct WindowReply {
  std::int32_t level = 0, stride = 1;
  std::int64_t values = 0;
  spacetree::Box covered;
  std::vector<WindowPiece> pieces;  ///< in row order (level-major, Morton)
};

using Body = std::variant<OwnerRequest, OwnerReply, NeighboursRequest, NeighboursReply, FamilyRequest, FamilyReply,
                          BoxRequest, BoxReply, PlanRequest, PlanReply, ShutdownRequest, ShutdownReply, ErrorReply,
                          WindowRequest, WindowReply>;

struct Message {
  std::uint32_t request_id = 0;
  Body body;
};

/// The wire type of a body.
MessageType type_of(const Body& body);
/// True for the *_request types.
bool is_request(MessageType t);

/// Serialises header + payload. Throws ProtocolError(too_large) above kMaxPayload.
std::vector<std::byte> encode(const Message& m);
/// Parses one complete frame (exactly header + length bytes). Throws ProtocolError.
Message decode(std::span<const std::byte> frame);
/// Reads only the header: the payload length a frame announces. Throws ProtocolError
/// if fewer than kHeaderSize bytes, bad magic, bad version or too large.
std::uint64_t payload_length(std::span<const std::byte> header);

// --- Comparisons (for tests and for checking a cached plan) ---------------------------
bool equal(const spacetree::Family& a, const spacetree::Family& b);
bool equal(const spacetree::GridInfo& a, const spacetree::GridInfo& b);
bool equal(const spacetree::TreeShape& a, const spacetree::TreeShape& b);
bool equal(const spacetree::LocalPlan& a, const spacetree::LocalPlan& b);

}  // namespace rwd::nbserver

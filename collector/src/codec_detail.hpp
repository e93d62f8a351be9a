// Private to the collector: the split between the JSON part of a message
// (messages.cpp) and the frame + compressed arrays around it (codec.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "rewind/collector/messages.hpp"

namespace rwd::collector::detail {

using nlohmann::json;

/// The dtype of a window reply's piece table (1.7): kPieceRecordBytes per piece.
inline constexpr const char* kPieceDtype = "piece";

/// A binary array to be sent after the JSON (borrowed bytes, host order = little-endian).
struct ArrayOut {
  std::string name;
  std::string dtype;  ///< "f64", "u8" or kPieceDtype
  std::span<const std::byte> bytes;
};

/// A received array, decompressed and checked against its declared size.
struct ArrayIn {
  std::string name;
  std::string dtype;
  ValueArray f64;
  TypeArray u8;  ///< dtype "u8", or a piece table's bytes
};

/// The JSON fields of a body; arrays it needs are appended to `arrays` (pointing into
/// `body`, which must outlive them). Throws ProtocolError(bad_argument) on inconsistent
/// window replies.
json to_json(const Body& body, std::vector<ArrayOut>& arrays);
/// Completes `text`, the dump of to_json(body), with the fields written without a DOM
/// (a window reply's pieces, as a JSON list).
void add_pieces(const Body& body, std::string& text);
/// Appends `pieces` as a piece table (1.7) to `w`: kPieceRecordBytes each.
void put_piece_table(const std::vector<PieceMessage>& pieces, wire::ByteWriter& w);
/// The pieces of a received piece table; throws ProtocolError(malformed) if it is not
/// whole records, or a piece's count, stride, level or geometry is out of range.
std::vector<PieceMessage> pieces_from_table(std::span<const std::uint8_t> table);
/// Most cells per axis of one piece: keeps count products far from overflow.
inline constexpr std::int32_t kMaxAxisCells = 1 << 20;
/// Throws ProtocolError(malformed) for a piece count above 2^20 per axis or below 0, a
/// stride below 1, a negative level (either form of the pieces).
void check_piece(const PieceMessage& p);
/// The body of type `t` from its JSON and arrays. Throws ProtocolError(malformed)
/// on a missing or mistyped field, or arrays that do not match the type.
Body from_json(MessageType t, const json& j, std::vector<ArrayIn>&& arrays);

[[noreturn]] void malformed(const std::string& what);

}  // namespace rwd::collector::detail

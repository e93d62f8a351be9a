// The piece table of a window reply (revision 1.7; docs/collector-protocol.md, "Piece
// table"): kPieceRecordBytes per piece, little-endian, checked as the JSON list is.
#include <cmath>

#include "codec_detail.hpp"

namespace rwd::collector::detail {

void check_piece(const PieceMessage& p) {
  for (const auto c : p.count)
    if (c < 0 || c > kMaxAxisCells) malformed("piece count out of range");
  if (p.stride < 1 || p.level < 0) malformed("piece stride < 1 or level < 0");
}

void put_piece_table(const std::vector<PieceMessage>& pieces, wire::ByteWriter& w) {
  w.out.reserve(w.out.size() + pieces.size() * kPieceRecordBytes);
  for (const auto& p : pieces) {  // the layout of kPieceRecordBytes
    w.put(p.row);
    w.put(p.uid);
    w.put(p.level);
    w.put(p.stride);
    for (const auto f : p.first) w.put(f);
    for (const auto c : p.count) w.put(c);
    for (const auto o : p.origin) w.put_f64(o);
    for (const auto d : p.spacing) w.put_f64(d);
  }
}

std::vector<PieceMessage> pieces_from_table(std::span<const std::uint8_t> table) {
  if (table.size() % kPieceRecordBytes != 0) malformed("piece table is not a whole number of pieces");
  std::vector<PieceMessage> pieces(table.size() / kPieceRecordBytes);
  wire::ByteReader r(std::as_bytes(table), "collector");  // whole records: never past the end
  for (auto& p : pieces) {
    p.row = r.get<std::int64_t>();
    p.uid = r.get<std::uint64_t>();
    p.level = r.get<std::int32_t>();
    p.stride = r.get<std::int32_t>();
    for (auto& f : p.first) f = r.get<std::int32_t>();
    for (auto& c : p.count) c = r.get<std::int32_t>();
    for (auto& o : p.origin) o = r.get_f64();
    for (auto& d : p.spacing) d = r.get_f64();
    for (std::size_t a = 0; a < 3; ++a)  // JSON has no NaN: a table must not carry what the list could not
      if (!std::isfinite(p.origin[a]) || !std::isfinite(p.spacing[a])) malformed("piece origin or spacing not finite");
    check_piece(p);
  }
  return pieces;
}

}  // namespace rwd::collector::detail

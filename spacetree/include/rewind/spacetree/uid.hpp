// The grid UID: a 64-bit key that names a grid independently of the partition.
//
// Bit layout (documented in docs/file-format.md and docs/protocol.md):
//
//   63      58 57 56                                              0
//   +--------+--+-------------------------------------------------+
//   | level  |0 | Morton code of the grid's coordinates at level  |
//   +--------+--+-------------------------------------------------+
//
// - level: 0 (root) .. 63, 6 bits.
// - Morton code: bit b of the x coordinate goes to bit 3b, y to 3b+1, z to 3b+2,
//   so each axis has 19 bits: depth 19 with r = 2 (depth 9 with r = 4).
// - The owning rank is *not* part of the UID: a grid keeps its UID across
//   repartitioning and across restarts on another number of ranks.
//
// Ordering UIDs numerically orders grids by level, then along the Z curve within the
// level. Because the partition gives each rank a contiguous range of the Lebesgue
// curve, that order is also (level, rank, Morton): the row order of the file.
#pragma once
#include <compare>
#include <cstdint>
#include <functional>

#include "rewind/spacetree/geometry.hpp"

namespace rwd::spacetree {

class Uid {
 public:
  static constexpr int kLevelBits = 6;
  static constexpr int kAxisBits = 19;  ///< bits per axis in the Morton code
  static constexpr int kMaxLevelValue = (1 << kLevelBits) - 1;

  constexpr Uid() = default;
  /// Wraps a raw 64-bit value read from a file or a message (no validation).
  static constexpr Uid from_raw(std::uint64_t raw) { Uid u; u.raw_ = raw; return u; }
  /// The UID of the grid at `level` with integer coordinates `coord` (each < 2^19).
  /// Throws std::out_of_range if a coordinate does not fit.
  static Uid make(int level, const Int3& coord);

  [[nodiscard]] constexpr std::uint64_t raw() const { return raw_; }
  [[nodiscard]] constexpr int level() const { return static_cast<int>(raw_ >> 58); }
  [[nodiscard]] std::uint64_t morton() const { return raw_ & ((std::uint64_t{1} << 57) - 1); }
  /// The grid's integer coordinates at its level.
  [[nodiscard]] Int3 coord() const;

  constexpr auto operator<=>(const Uid&) const = default;

 private:
  std::uint64_t raw_ = 0;
};

/// Interleave three 19-bit coordinates into a 57-bit Morton code (x lowest).
std::uint64_t morton_encode(const Int3& c);
/// Inverse of morton_encode.
Int3 morton_decode(std::uint64_t m);

}  // namespace rwd::spacetree

template <>
struct std::hash<rwd::spacetree::Uid> {
  std::size_t operator()(const rwd::spacetree::Uid& u) const noexcept {
    return std::hash<std::uint64_t>{}(u.raw());
  }
};

#include "rewind/spacetree/uid.hpp"

#include <stdexcept>
#include <string>

namespace rwd::spacetree {

namespace {
// Spread the low 19 bits of v so that bit b lands at bit 3b.
std::uint64_t spread3(std::uint64_t v) {
  v &= (std::uint64_t{1} << 21) - 1;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}
std::uint64_t compact3(std::uint64_t v) {
  v &= 0x1249249249249249ULL;
  v = (v ^ (v >> 2)) & 0x10c30c30c30c30c3ULL;
  v = (v ^ (v >> 4)) & 0x100f00f00f00f00fULL;
  v = (v ^ (v >> 8)) & 0x1f0000ff0000ffULL;
  v = (v ^ (v >> 16)) & 0x1f00000000ffffULL;
  v = (v ^ (v >> 32)) & 0x1fffffULL;
  return v;
}
}  // namespace

std::uint64_t morton_encode(const Int3& c) {
  return spread3(static_cast<std::uint64_t>(c[0])) | spread3(static_cast<std::uint64_t>(c[1])) << 1 |
         spread3(static_cast<std::uint64_t>(c[2])) << 2;
}

Int3 morton_decode(std::uint64_t m) {
  return {static_cast<std::int64_t>(compact3(m)), static_cast<std::int64_t>(compact3(m >> 1)),
          static_cast<std::int64_t>(compact3(m >> 2))};
}

Uid Uid::make(int level, const Int3& coord) {
  if (level < 0 || level >= kMaxLevelValue)
    throw std::out_of_range("UID level " + std::to_string(level) + " outside 0.." +
                            std::to_string(kMaxLevelValue - 1));
  for (int a = 0; a < 3; ++a)
    if (coord[a] < 0 || coord[a] >= (std::int64_t{1} << kAxisBits))
      throw std::out_of_range("UID coordinate " + std::to_string(coord[a]) + " on axis " +
                              std::to_string(a) + " does not fit in 19 bits");
  return from_raw(static_cast<std::uint64_t>(level) << 58 | morton_encode(coord));
}

Int3 Uid::coord() const { return morton_decode(morton()); }

}  // namespace rwd::spacetree

// Geometry primitives shared by the tree, the topology queries and the solver.
//
// NOTE: the C++ namespace of the whole project is `rwd`, not `rewind`: that name is
// taken by C's ::rewind(FILE*) from <stdio.h>, and a namespace cannot share it.
#pragma once
#include <array>
#include <cstdint>

namespace rwd::spacetree {

/// Integer triple: grid coordinates at a level, directions, cell counts.
using Int3 = std::array<std::int64_t, 3>;

/// Axis-aligned box [lo, hi] in physical coordinates.
struct Box {
  std::array<double, 3> lo{0.0, 0.0, 0.0};
  std::array<double, 3> hi{1.0, 1.0, 1.0};

  /// True if the boxes share a region of positive volume on every axis where both
  /// have positive extent (a flat axis, as z in 2-D, counts as overlapping when the
  /// intervals touch).
  [[nodiscard]] bool overlaps(const Box& o) const {
    for (int a = 0; a < 3; ++a) {
      const bool flat = lo[a] == hi[a] || o.lo[a] == o.hi[a];
      if (flat ? (o.hi[a] < lo[a] || o.lo[a] > hi[a]) : (o.hi[a] <= lo[a] || o.lo[a] >= hi[a]))
        return false;
    }
    return true;
  }
  [[nodiscard]] bool contains(const std::array<double, 3>& p) const {
    for (int a = 0; a < 3; ++a)
      if (p[a] < lo[a] || p[a] > hi[a]) return false;
    return true;
  }
  [[nodiscard]] double extent(int a) const { return hi[a] - lo[a]; }
  bool operator==(const Box&) const = default;
};

/// The box as (xmin, xmax, ymin, ymax, zmin, zmax): the order of the kernel's
/// `bounding_box` rows and of window::TreeView. The one conversion between the two
/// layouts.
[[nodiscard]] inline std::array<double, 6> interleaved(const Box& b) {
  return {b.lo[0], b.hi[0], b.lo[1], b.hi[1], b.lo[2], b.hi[2]};
}

}  // namespace rwd::spacetree

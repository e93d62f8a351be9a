// The plain description of a rank's grids that any space-tree code hands to the kernel.
//
// The kernel owns no field data and knows nothing about the solver: a caller fills one
// GridRecord per grid it owns (pointers into its own arrays, no copies) and passes the
// LocalGrids to Writer::write_step. Everything here is plain data; nothing is collective.
//
// Conventions (the data contract, also in docs/file-format.md):
// - A grid ("d-grid") is a block of sx*sy*sz cells, the same BlockShape for all grids.
// - uid: a 64-bit key naming the grid independently of the partition. The kernel only
//   needs it to be unique and stable; Rewind's spacetree uses level<<58 | Morton code
//   (spacetree/include/rewind/spacetree/uid.hpp).
// - level: 0 for the root. sort_key: any key that orders grids within a level along the
//   code's space-filling curve (Rewind: the Morton code). The file's row order is
//   (level, writer rank, sort_key); the root grid (the only level-0 grid) is row 0.
// - Cell arrays are x-fastest, C-order (z, y, x), with `halo` ghost layers on every side:
//   the pointer addresses element (0,0,0) of the padded array of
//   (sz+2h)(sy+2h)(sx+2h) values. Only interior cells are written.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace rwd::kernel {

/// The "no grid" UID (parent of the root, an absent child).
inline constexpr std::uint64_t kNoUid = std::numeric_limits<std::uint64_t>::max();

/// Cells per grid along x, y, z (Rewind's s; 2-D codes use sz = 1).
struct BlockShape {
  int sx = 0, sy = 0, sz = 0;
  [[nodiscard]] std::int64_t cells() const {
    return std::int64_t{sx} * sy * sz;
  }
  bool operator==(const BlockShape& o) const { return sx == o.sx && sy == o.sy && sz == o.sz; }
  bool operator!=(const BlockShape& o) const { return !(*this == o); }
};

/// An axis-aligned box as a row of the file's `bounding_box` dataset: {xmin, xmax, ymin,
/// ymax, zmin, zmax} (paper / FLASH order). Not a second box type: the tree's box is
/// spacetree::Box ({lo, hi}); spacetree::interleaved converts a Box to one.
using BoxRow = std::array<double, 6>;

/// One grid owned by the calling rank. Pointers are borrowed: they must stay valid for
/// the duration of the write_step call only.
struct GridRecord {
  std::uint64_t uid = kNoUid;
  int level = 0;
  std::uint64_t sort_key = 0;
  BoxRow bbox{};
  std::uint64_t parent_uid = kNoUid;       ///< kNoUid for the root
  std::vector<std::uint64_t> child_uids;   ///< empty for a leaf; at most max_children
  /// Cell arrays, indexed by "slot": StepInfo::fields[i].slot picks which one goes into
  /// which dataset. Each points at a padded (halo'd) double array, see above.
  std::vector<const double*> fields;
  /// Cell types (boundary-condition codes), same padded layout, uint8. May be null if
  /// the step does not write cell types.
  const std::uint8_t* cell_type = nullptr;
  /// What the step's `rank` dataset records for this grid: the rank that computed it.
  /// -1 (the default): the calling rank (its rank in the Writer's communicator). The
  /// writers of aggregated and dedicated output set it to the compute rank that handed
  /// the grid over, so a file does not depend on who wrote it.
  int rank = -1;
};

/// All grids of one rank for one output step.
struct LocalGrids {
  BlockShape block;   ///< must equal CommonInfo::block of the file
  int halo = 0;       ///< ghost layers around every array in `fields` and `cell_type`
  std::vector<GridRecord> grids;
};

}  // namespace rwd::kernel

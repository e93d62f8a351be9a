// Topology queries on the whole logical tree: the pure core of the neighbourhood
// server. No MPI, no I/O; unit-tested against brute-force geometry.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/tree.hpp"

namespace rwd::spacetree {

/// "No grid" (level 63, all bits set). The root's UID is 0, so 0 cannot mean none.
inline constexpr Uid kNoUid = Uid::from_raw(~std::uint64_t{0});

/// How a neighbour relates to the grid that asked.
enum class Relation : std::uint8_t {
  same = 0,      ///< a grid on the same level at that position
  coarser = 1,   ///< no same-level grid there; the deepest grid covering it
  finer = 2,     ///< a child of a refined same-level neighbour, touching the asker
  boundary = 3,  ///< the direction leaves the (non-periodic) domain
};

/// One neighbour of a grid in one of the 26 directions (8 in 2-D).
struct Neighbour {
  std::array<std::int8_t, 3> dir{0, 0, 0};  ///< each component -1, 0 or +1
  Relation relation = Relation::boundary;
  Uid uid = kNoUid;  ///< kNoUid for boundary
  int owner = -1;    ///< compute rank; -1 for boundary
  bool operator==(const Neighbour&) const = default;
};

/// Parent and children of a grid with their owners.
struct Family {
  Uid parent = kNoUid;
  int parent_owner = -1;
  std::vector<Uid> children;    ///< Morton order; empty for a leaf
  std::vector<int> child_owners;
};

/// Whole-tree topology with owners. Immutable; cheap queries.
///
/// Neighbour rules, per direction d (26 in 3-D; in 2-D only those with d.z = 0):
///  - the position crosses a non-periodic domain face  -> one `boundary` entry;
///  - a grid exists on the same level at that position -> one `same` entry, and, if
///    the asking grid is a leaf and that neighbour is refined, one `finer` entry per
///    child of the neighbour that touches the asker across that face/edge/corner;
///  - otherwise -> one `coarser` entry: the deepest grid covering the position.
/// Entries come ordered by direction (z, y, x from -1 to +1), then same/coarser
/// before finer, finer in Morton order. Periodic axes wrap.
class Topology {
 public:
  Topology(Tree tree, Partition partition);

  [[nodiscard]] const Tree& tree() const { return tree_; }
  [[nodiscard]] const Partition& partition() const { return partition_; }

  /// Owning compute rank of `uid`, or -1 if the grid does not exist.
  [[nodiscard]] int owner(Uid uid) const;
  /// Neighbours of `uid`. Throws std::out_of_range if the grid does not exist.
  [[nodiscard]] std::vector<Neighbour> neighbours(Uid uid) const;
  /// Parent and children of `uid`. Throws std::out_of_range if absent.
  [[nodiscard]] Family family(Uid uid) const;
  /// Grids on `level` whose bounding box overlaps `box`, in UID order.
  [[nodiscard]] std::vector<Uid> grids_in_box(const Box& box, int level) const;

 private:
  Tree tree_;
  Partition partition_;
};

/// The 26 (3-D) or 8 (2-D) directions in the documented order.
std::vector<std::array<std::int8_t, 3>> directions(int dim);

}  // namespace rwd::spacetree

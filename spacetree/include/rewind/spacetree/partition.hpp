// Assignment of grids to compute ranks along the Lebesgue (Z / Morton) curve.
#pragma once
#include <cstdint>
#include <vector>

#include "rewind/spacetree/tree.hpp"

namespace rwd::spacetree {

struct Partition {
  int ranks = 1;
  /// Owning compute rank (0 .. ranks-1) of every node, indexed like Tree::nodes().
  std::vector<int> owner;
  /// Interior cells per rank.
  std::vector<std::int64_t> cells_per_rank;

  /// max(cells_per_rank) / mean(cells_per_rank) - 1; 0 is perfect balance.
  [[nodiscard]] double imbalance() const;
  /// Node indices owned by `rank`, in UID order (the rank's file rows).
  [[nodiscard]] std::vector<std::int32_t> grids_of(const Tree& tree, int rank) const;
};

/// Cuts the pre-order Lebesgue curve of *all* grids (every level carries a d-grid)
/// into `ranks` contiguous pieces of near-equal cell count. Deterministic; does not
/// depend on the current partition. Throws std::invalid_argument if ranks < 1.
Partition partition_morton(const Tree& tree, int ranks);

/// The rank, of `ranks`, that takes over what rank `owner` of a partition on `from` ranks
/// owns when consecutive pieces are joined: rank j takes the pieces
/// [floor(j*from/ranks), floor((j+1)*from/ranks)). Needs 1 <= ranks <= from, 0 <= owner < from.
int joined_rank(int owner, int from, int ranks);

/// `p` on fewer ranks (1 <= ranks <= p.ranks), its consecutive pieces joined (joined_rank):
/// still contiguous along the curve, as balanced as `p` within one piece. A future of a
/// forked run computes on part of the job's compute ranks with it (driver/README.md).
/// Throws std::invalid_argument for a bad `ranks`.
Partition join_ranks(const Partition& p, int ranks);

}  // namespace rwd::spacetree

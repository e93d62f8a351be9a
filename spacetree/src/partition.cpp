#include "rewind/spacetree/partition.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace rwd::spacetree {

double Partition::imbalance() const {
  if (cells_per_rank.empty()) return 0.0;
  const double total = static_cast<double>(std::accumulate(cells_per_rank.begin(), cells_per_rank.end(), std::int64_t{0}));
  if (total == 0.0) return 0.0;
  const double mean = total / static_cast<double>(cells_per_rank.size());
  return static_cast<double>(*std::max_element(cells_per_rank.begin(), cells_per_rank.end())) / mean - 1.0;
}

std::vector<std::int32_t> Partition::grids_of(const Tree& tree, int rank) const {
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < tree.size(); ++i)
    if (owner[i] == rank) out.push_back(static_cast<std::int32_t>(i));
  return out;  // nodes are in UID order already
}

Partition partition_morton(const Tree& tree, int ranks) {
  if (ranks < 1) throw std::invalid_argument("partition: need at least one compute rank, got " + std::to_string(ranks));
  Partition p;
  p.ranks = ranks;
  p.owner.assign(tree.size(), 0);
  p.cells_per_rank.assign(static_cast<std::size_t>(ranks), 0);
  // Every d-grid has the same number of cells, so balancing cells means cutting the
  // curve into pieces of equal grid count: piece q holds positions
  // [ceil(q*n/P), ceil((q+1)*n/P)). Rounding up keeps the start of the curve (the root)
  // on rank 0 even with fewer grids than ranks; the empty ranks are the last ones.
  const auto order = tree.sfc_order();
  const auto n = static_cast<std::int64_t>(order.size());
  const std::int64_t cells = tree.shape().cells_per_grid();
  for (std::int64_t pos = 0; pos < n; ++pos) {
    // Inverse of the cut: the largest q with ceil(q*n/P) <= pos.
    const int rank = static_cast<int>(pos * ranks / n);
    p.owner[static_cast<std::size_t>(order[static_cast<std::size_t>(pos)])] = rank;
    p.cells_per_rank[static_cast<std::size_t>(rank)] += cells;
  }
  return p;
}

int joined_rank(int owner, int from, int ranks) {
  // The largest j with floor(j*from/ranks) <= owner, i.e. j*from < (owner+1)*ranks.
  return static_cast<int>((static_cast<std::int64_t>(owner + 1) * ranks - 1) / from);
}

Partition join_ranks(const Partition& p, int ranks) {
  if (ranks < 1 || ranks > p.ranks)
    throw std::invalid_argument("join_ranks: " + std::to_string(p.ranks) + " ranks cannot be joined into " +
                                std::to_string(ranks));
  Partition out;
  out.ranks = ranks;
  out.owner.reserve(p.owner.size());
  for (const int o : p.owner) out.owner.push_back(joined_rank(o, p.ranks, ranks));
  out.cells_per_rank.assign(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < p.ranks; ++r)
    out.cells_per_rank[static_cast<std::size_t>(joined_rank(r, p.ranks, ranks))] +=
        p.cells_per_rank[static_cast<std::size_t>(r)];
  return out;
}

}  // namespace rwd::spacetree

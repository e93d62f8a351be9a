// The logical grid (l-grid): a space tree of cells, each linked to one d-grid.
//
// The tree owns no field data (AMReX AmrCore style): it is topology only, small
// enough that the neighbourhood server holds all of it. Field data lives in
// rwd::forest::Forest (forest/) on the compute ranks.
//
// Order of operations on a tree (one documented order, as in p4est/t8code):
//   adapt (refine / coarsen by callback) -> balance (level jump <= 1 across faces,
//   edges and corners) -> partition (rewind/spacetree/partition.hpp).
// None of these functions is collective; they are pure and deterministic, so every
// process that runs them on the same input gets the same tree.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "rewind/spacetree/geometry.hpp"
#include "rewind/spacetree/uid.hpp"

namespace rwd::spacetree {

/// The geometry of a tree: domain, refinement factors, d-grid size, depth limit.
struct TreeShape {
  Box domain{};
  /// Children per axis when a cell is refined. Each factor is 1 or a power of two;
  /// all factors above 1 must be equal (so subtrees stay contiguous on the Z curve).
  /// 2-D runs are 3-D with r[2] = 1 and s[2] = 1.
  std::array<int, 3> r{2, 2, 2};
  /// Interior cells of every d-grid per axis (the one-cell halo comes on top).
  std::array<int, 3> s{16, 16, 16};
  /// Deepest level allowed (root = 0).
  int max_depth = 4;
  /// Periodic axes (the neighbour of the last grid is the first).
  std::array<bool, 3> periodic{false, false, false};

  /// Throws std::invalid_argument naming the offending field if inconsistent.
  void validate() const;
  /// 2 if r[2] == 1 and s[2] == 1, else 3.
  [[nodiscard]] int dim() const { return (r[2] == 1 && s[2] == 1) ? 2 : 3; }
  /// Number of children of a refined grid, r[0]*r[1]*r[2].
  [[nodiscard]] int children_per_grid() const { return r[0] * r[1] * r[2]; }
  /// Number of grids along each axis at `level` (r^level).
  [[nodiscard]] Int3 grids_per_axis(int level) const;
  /// Physical extent of one grid at `level`.
  [[nodiscard]] std::array<double, 3> grid_extent(int level) const;
  /// Physical size of one cell at `level`.
  [[nodiscard]] std::array<double, 3> cell_size(int level) const;
  /// Interior cells per d-grid.
  [[nodiscard]] std::int64_t cells_per_grid() const {
    return std::int64_t{s[0]} * s[1] * s[2];
  }
  /// Bounding box of the grid `uid`.
  [[nodiscard]] Box bounding_box(Uid uid) const;
  /// Largest depth the UID encoding allows for these refinement factors.
  [[nodiscard]] int max_encodable_depth() const;
};

/// One node of the logical tree.
struct GridNode {
  Uid uid;
  std::int32_t parent = -1;       ///< index into Tree::nodes(); -1 for the root
  std::int32_t first_child = -1;  ///< children are nodes()[first_child, first_child + n); -1 = leaf

  [[nodiscard]] bool is_leaf() const { return first_child < 0; }
};

/// Decision returned by an adapt callback for one grid.
enum class Mark : int { coarsen = -1, keep = 0, refine = 1 };

class Tree {
 public:
  /// A tree of one root grid. Throws std::invalid_argument if `shape` is invalid.
  explicit Tree(TreeShape shape);
  /// A fully refined tree: every grid down to `depth` exists.
  static Tree full(const TreeShape& shape, int depth);
  /// The tree made of exactly these grids (e.g. UIDs read from a file for a restart).
  /// Throws std::invalid_argument naming the first problem if they do not form a tree
  /// of `shape`: no root, a UID outside the domain or deeper than max_depth, a grid
  /// whose parent is missing, a refined grid without all of its children, duplicates.
  static Tree from_uids(const TreeShape& shape, std::vector<Uid> uids);

  [[nodiscard]] const TreeShape& shape() const { return shape_; }
  /// All grids, sorted by UID (level, then Morton). nodes()[0] is the root.
  /// Children of a node are contiguous and in Morton order.
  [[nodiscard]] std::span<const GridNode> nodes() const { return nodes_; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  /// Index of `uid` in nodes(), or nullopt if the grid does not exist.
  [[nodiscard]] std::optional<std::int32_t> find(Uid uid) const;
  [[nodiscard]] bool contains(Uid uid) const { return find(uid).has_value(); }
  [[nodiscard]] Box bounding_box(std::int32_t node) const {
    return shape_.bounding_box(nodes_[static_cast<std::size_t>(node)].uid);
  }
  /// Number of levels present (deepest level + 1).
  [[nodiscard]] int levels() const;
  /// Index range [first, last) of the nodes at `level` (nodes are sorted by level).
  [[nodiscard]] std::pair<std::int32_t, std::int32_t> level_range(int level) const;
  [[nodiscard]] std::int64_t leaf_count() const;
  /// Interior cells of all d-grids at every level.
  [[nodiscard]] std::int64_t total_cells() const {
    return static_cast<std::int64_t>(nodes_.size()) * shape_.cells_per_grid();
  }

  /// Refine / coarsen once. `mark` is called for every leaf (refine, keep) and every
  /// parent of leaves only (coarsen, keep); refinement beyond max_depth and
  /// coarsening of the root are ignored. Returns true if the tree changed.
  bool adapt(const std::function<Mark(Uid, const Box&)>& mark);
  /// Repeats adapt until nothing changes or `max_rounds` is reached.
  void adapt_until_stable(const std::function<Mark(Uid, const Box&)>& mark, int max_rounds = 64);
  /// Refines leaves until the levels of leaves that touch across a face, an edge or
  /// a corner differ by at most one (periodic wrap included). Idempotent.
  void balance();
  /// True if balance() would change nothing.
  [[nodiscard]] bool is_balanced() const;
  /// Node indices in Lebesgue (Morton) pre-order: a parent comes before its
  /// children, every subtree is one contiguous range.
  [[nodiscard]] std::vector<std::int32_t> sfc_order() const;
  /// Pre-order key of a grid: Morton code of its anchor scaled to the finest
  /// encodable level, then the level. Sorting by it gives sfc_order().
  [[nodiscard]] std::uint64_t sfc_key(Uid uid) const;

  /// The leaf that contains the level-`level` position `coord` (the grid itself if
  /// it exists, else its deepest existing ancestor). nullopt outside the domain.
  [[nodiscard]] std::optional<std::int32_t> deepest_existing(int level, Int3 coord) const;

 private:
  void rebuild(std::vector<Uid> uids);  // sorts, links parents and children

  TreeShape shape_;
  std::vector<GridNode> nodes_;
  std::unordered_map<Uid, std::int32_t> index_;
  std::vector<std::int32_t> level_start_;  // size levels()+1
};

/// Summary for `rewind tree` and logs.
struct TreeStats {
  std::vector<std::int64_t> grids_per_level;
  std::vector<std::int64_t> leaves_per_level;
  std::int64_t grids = 0, leaves = 0, cells = 0, leaf_cells = 0;
};
TreeStats statistics(const Tree& tree);

}  // namespace rwd::spacetree

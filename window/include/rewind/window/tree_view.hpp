// TreeView of an in-memory spacetree::Tree (the simulation's own tree, e.g. on the
// neighbourhood server or in tests). The tree stores UIDs, not rows, so the adapter
// builds the arrays once and owns them.
#pragma once
#include <vector>

#include "rewind/spacetree/tree.hpp"
#include "rewind/window/select.hpp"

namespace rwd::window {

/// Row arrays of a spacetree::Tree in its node order (level-major, Morton within a
/// level: the file's row order), so row i here = tree.nodes()[i] = row i of a step the
/// kernel wrote from this tree.
struct TreeArrays {
  std::array<int, 3> cells{};
  int max_children = 0;
  std::vector<std::int32_t> level;
  std::vector<std::array<double, 6>> bbox;
  std::vector<std::int64_t> child_rows;
  /// A view borrowing these arrays: valid while *this lives and is not modified.
  [[nodiscard]] TreeView view() const { return {cells, max_children, level, bbox, child_rows, {}}; }
};

/// Builds the arrays of `tree`. Pure, thread-safe; O(grids).
TreeArrays arrays_of(const spacetree::Tree& tree);

}  // namespace rwd::window

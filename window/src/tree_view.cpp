#include "rewind/window/tree_view.hpp"

namespace rwd::window {

TreeArrays arrays_of(const spacetree::Tree& tree) {
  const auto& shape = tree.shape();
  TreeArrays t;
  t.cells = {shape.s[0], shape.s[1], shape.s[2]};
  t.max_children = shape.children_per_grid();
  const auto nodes = tree.nodes();
  t.level.reserve(nodes.size());
  t.bbox.reserve(nodes.size());
  t.child_rows.assign(nodes.size() * static_cast<std::size_t>(t.max_children), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    t.level.push_back(nodes[i].uid.level());
    const auto b = tree.bounding_box(static_cast<std::int32_t>(i));
    t.bbox.push_back({b.lo[0], b.hi[0], b.lo[1], b.hi[1], b.lo[2], b.hi[2]});
    // Children are contiguous in node order (tree.hpp), so their rows follow first_child.
    if (!nodes[i].is_leaf())
      for (int c = 0; c < t.max_children; ++c)
        t.child_rows[i * static_cast<std::size_t>(t.max_children) + static_cast<std::size_t>(c)] =
            nodes[i].first_child + c;
  }
  return t;
}

}  // namespace rwd::window

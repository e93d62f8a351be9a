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
    t.bbox.push_back(spacetree::interleaved(tree.bounding_box(static_cast<std::int32_t>(i))));
    // Children are contiguous in node order (tree.hpp), so their rows follow first_child.
    if (!nodes[i].is_leaf())
      for (int c = 0; c < t.max_children; ++c)
        t.child_rows[i * static_cast<std::size_t>(t.max_children) + static_cast<std::size_t>(c)] =
            nodes[i].first_child + c;
  }
  return t;
}

}  // namespace rwd::window

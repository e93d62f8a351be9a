#include "rewind/spacetree/topology.hpp"

#include <stdexcept>
#include <string>

namespace rwd::spacetree {

std::vector<std::array<std::int8_t, 3>> directions(int dim) {
  std::vector<std::array<std::int8_t, 3>> out;
  const int zlo = dim == 2 ? 0 : -1, zhi = dim == 2 ? 0 : 1;
  for (int dz = zlo; dz <= zhi; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dx != 0 || dy != 0 || dz != 0)
          out.push_back({static_cast<std::int8_t>(dx), static_cast<std::int8_t>(dy), static_cast<std::int8_t>(dz)});
  return out;
}

Topology::Topology(Tree tree, Partition partition) : tree_(std::move(tree)), partition_(std::move(partition)) {
  if (partition_.owner.size() != tree_.size())
    throw std::invalid_argument("topology: partition does not match the tree");
}

int Topology::owner(Uid uid) const {
  const auto idx = tree_.find(uid);
  return idx ? partition_.owner[static_cast<std::size_t>(*idx)] : -1;
}

namespace {
std::int32_t require(const Tree& t, Uid uid) {
  const auto idx = t.find(uid);
  if (!idx) throw std::out_of_range("topology: no grid with UID " + std::to_string(uid.raw()));
  return *idx;
}
}  // namespace

std::vector<Neighbour> Topology::neighbours(Uid uid) const {
  const std::int32_t self = require(tree_, uid);
  const auto& shape = tree_.shape();
  const bool self_leaf = tree_.nodes()[static_cast<std::size_t>(self)].is_leaf();
  const int level = uid.level();
  const Int3 c = uid.coord();
  const Int3 g = shape.grids_per_axis(level);
  std::vector<Neighbour> out;
  for (const auto& d : directions(shape.dim())) {
    Int3 p{c[0] + d[0], c[1] + d[1], c[2] + d[2]};
    bool outside = false;
    for (int a = 0; a < 3; ++a) {
      if (p[a] >= 0 && p[a] < g[a]) continue;
      if (shape.periodic[a]) p[a] = (p[a] + g[a]) % g[a];
      else outside = true;
    }
    if (outside) {
      out.push_back({d, Relation::boundary, kNoUid, -1});
      continue;
    }
    const auto cover = tree_.deepest_existing(level, p);
    const auto& node = tree_.nodes()[static_cast<std::size_t>(*cover)];
    const auto cover_owner = partition_.owner[static_cast<std::size_t>(*cover)];
    if (node.uid.level() < level) {
      out.push_back({d, Relation::coarser, node.uid, cover_owner});
      continue;
    }
    out.push_back({d, Relation::same, node.uid, cover_owner});
    if (!self_leaf || node.is_leaf()) continue;
    // Children of the refined neighbour that touch the asker: on each axis where the
    // neighbour lies on the + side, the children with the lowest index, and so on.
    const auto nc = shape.children_per_grid();
    for (int ci = 0; ci < nc; ++ci) {
      const auto child_idx = static_cast<std::size_t>(node.first_child + ci);
      const auto& child = tree_.nodes()[child_idx];
      const Int3 cc = child.uid.coord();
      bool touches = true;
      for (int a = 0; a < 3; ++a) {
        const std::int64_t e = cc[a] - p[a] * shape.r[a];
        if (d[a] > 0 && e != 0) touches = false;
        if (d[a] < 0 && e != shape.r[a] - 1) touches = false;
      }
      if (touches) out.push_back({d, Relation::finer, child.uid, partition_.owner[child_idx]});
    }
  }
  return out;
}

Family Topology::family(Uid uid) const {
  const std::int32_t self = require(tree_, uid);
  const auto& node = tree_.nodes()[static_cast<std::size_t>(self)];
  Family f;
  if (node.parent >= 0) {
    f.parent = tree_.nodes()[static_cast<std::size_t>(node.parent)].uid;
    f.parent_owner = partition_.owner[static_cast<std::size_t>(node.parent)];
  }
  if (!node.is_leaf()) {
    for (int ci = 0; ci < tree_.shape().children_per_grid(); ++ci) {
      const auto idx = static_cast<std::size_t>(node.first_child + ci);
      f.children.push_back(tree_.nodes()[idx].uid);
      f.child_owners.push_back(partition_.owner[idx]);
    }
  }
  return f;
}

std::vector<Uid> Topology::grids_in_box(const Box& box, int level) const {
  std::vector<Uid> out;
  const auto [first, last] = tree_.level_range(level);
  for (auto i = first; i < last; ++i)
    if (tree_.bounding_box(i).overlaps(box)) out.push_back(tree_.nodes()[static_cast<std::size_t>(i)].uid);
  return out;
}

}  // namespace rwd::spacetree

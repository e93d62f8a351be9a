#include "rewind/spacetree/tree.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace rwd::spacetree {

namespace {
int log2_factor(int r) { return std::countr_zero(static_cast<unsigned>(r)); }

std::string axis_name(int a) { return std::string(1, "xyz"[a]); }
}  // namespace

void TreeShape::validate() const {
  for (int a = 0; a < 3; ++a) {
    if (!(domain.hi[a] > domain.lo[a]))
      throw std::invalid_argument("domain: hi must exceed lo on axis " + axis_name(a));
    if (r[a] < 1 || r[a] > 16 || !std::has_single_bit(static_cast<unsigned>(r[a])))
      throw std::invalid_argument("tree.r: refinement factor on axis " + axis_name(a) +
                                  " must be 1, 2, 4, 8 or 16, got " + std::to_string(r[a]));
    if (s[a] < 1 || s[a] > 1024)
      throw std::invalid_argument("tree.s: d-grid size on axis " + axis_name(a) +
                                  " must be 1..1024, got " + std::to_string(s[a]));
  }
  int common = 0;
  for (int a = 0; a < 3; ++a) {
    if (r[a] == 1) continue;
    if (common != 0 && r[a] != common)
      throw std::invalid_argument(
          "tree.r: refinement factors above 1 must be equal (they keep subtrees contiguous on the "
          "Lebesgue curve)");
    common = r[a];
  }
  if (common == 0) throw std::invalid_argument("tree.r: at least one refinement factor must exceed 1");
  if (r[2] == 1 && s[2] == 1 && periodic[2])
    throw std::invalid_argument("domain.periodic: a 2-D case (r_z = s_z = 1) cannot be periodic in z");
  if (max_depth < 0 || max_depth > max_encodable_depth())
    throw std::invalid_argument("tree.max_depth: must be 0.." + std::to_string(max_encodable_depth()) +
                                " for these refinement factors, got " + std::to_string(max_depth));
}

int TreeShape::max_encodable_depth() const {
  int b = 0;
  for (int a = 0; a < 3; ++a) b = std::max(b, log2_factor(r[a]));
  return b == 0 ? 0 : Uid::kAxisBits / b;
}

Int3 TreeShape::grids_per_axis(int level) const {
  Int3 n{};
  for (int a = 0; a < 3; ++a) n[a] = std::int64_t{1} << (log2_factor(r[a]) * level);
  return n;
}

std::array<double, 3> TreeShape::grid_extent(int level) const {
  const Int3 n = grids_per_axis(level);
  std::array<double, 3> e{};
  for (int a = 0; a < 3; ++a) e[a] = domain.extent(a) / static_cast<double>(n[a]);
  return e;
}

std::array<double, 3> TreeShape::cell_size(int level) const {
  auto e = grid_extent(level);
  for (int a = 0; a < 3; ++a) e[a] /= s[a];
  return e;
}

Box TreeShape::bounding_box(Uid uid) const {
  const Int3 c = uid.coord();
  const Int3 n = grids_per_axis(uid.level());
  Box b;
  for (int a = 0; a < 3; ++a) {
    // Computed from the integer position so that touching boxes share exact faces.
    b.lo[a] = domain.lo[a] + domain.extent(a) * static_cast<double>(c[a]) / static_cast<double>(n[a]);
    b.hi[a] = domain.lo[a] + domain.extent(a) * static_cast<double>(c[a] + 1) / static_cast<double>(n[a]);
  }
  return b;
}

// ---------------------------------------------------------------------------------

Tree::Tree(TreeShape shape) : shape_(std::move(shape)) {
  shape_.validate();
  rebuild({Uid::make(0, {0, 0, 0})});
}

Tree Tree::full(const TreeShape& shape, int depth) {
  Tree t(shape);
  if (depth < 0 || depth > shape.max_depth)
    throw std::invalid_argument("tree.depth: must be 0..max_depth (" + std::to_string(shape.max_depth) +
                                "), got " + std::to_string(depth));
  std::vector<Uid> uids;
  for (int l = 0; l <= depth; ++l) {
    const Int3 n = shape.grids_per_axis(l);
    for (std::int64_t k = 0; k < n[2]; ++k)
      for (std::int64_t j = 0; j < n[1]; ++j)
        for (std::int64_t i = 0; i < n[0]; ++i) uids.push_back(Uid::make(l, {i, j, k}));
  }
  t.rebuild(std::move(uids));
  return t;
}

Tree Tree::from_uids(const TreeShape& shape, std::vector<Uid> uids) {
  Tree t(shape);
  const auto bad = [](const std::string& what, Uid u) {
    return std::invalid_argument("space tree from UIDs: " + what + " (UID " + std::to_string(u.raw()) + ", level " +
                                 std::to_string(u.level()) + ")");
  };
  std::sort(uids.begin(), uids.end());
  if (uids.empty() || uids.front() != Uid::make(0, {0, 0, 0}))
    throw std::invalid_argument("space tree from UIDs: the root grid is missing");
  if (auto d = std::adjacent_find(uids.begin(), uids.end()); d != uids.end()) throw bad("duplicate grid", *d);
  std::unordered_set<Uid> present(uids.begin(), uids.end());
  std::unordered_map<Uid, int> children;
  for (const auto& u : uids) {
    if (u.level() > shape.max_depth) throw bad("deeper than max_depth " + std::to_string(shape.max_depth), u);
    const Int3 c = u.coord(), n = shape.grids_per_axis(u.level());
    for (int a = 0; a < 3; ++a)
      if (c[a] >= n[a]) throw bad("outside the domain", u);
    if (u.level() == 0) continue;
    Int3 pc = c;
    for (int a = 0; a < 3; ++a) pc[a] /= shape.r[a];
    const Uid parent = Uid::make(u.level() - 1, pc);
    if (!present.count(parent)) throw bad("parent grid missing", u);
    ++children[parent];
  }
  for (const auto& [parent, count] : children)
    if (count != shape.children_per_grid()) throw bad("refined grid without all of its children", parent);
  t.rebuild(std::move(uids));
  return t;
}

void Tree::rebuild(std::vector<Uid> uids) {
  std::sort(uids.begin(), uids.end());
  uids.erase(std::unique(uids.begin(), uids.end()), uids.end());
  nodes_.assign(uids.size(), GridNode{});
  index_.clear();
  index_.reserve(uids.size() * 2);
  for (std::size_t i = 0; i < uids.size(); ++i) {
    nodes_[i].uid = uids[i];
    index_.emplace(uids[i], static_cast<std::int32_t>(i));
  }
  int max_level = uids.empty() ? 0 : uids.back().level();
  level_start_.assign(static_cast<std::size_t>(max_level) + 2, 0);
  for (const auto& u : uids) ++level_start_[static_cast<std::size_t>(u.level()) + 1];
  std::partial_sum(level_start_.begin(), level_start_.end(), level_start_.begin());
  for (std::size_t i = 1; i < nodes_.size(); ++i) {
    Int3 c = nodes_[i].uid.coord();
    for (int a = 0; a < 3; ++a) c[a] /= shape_.r[a];
    const auto p = index_.find(Uid::make(nodes_[i].uid.level() - 1, c));
    if (p == index_.end()) throw std::logic_error("space tree: grid without parent");
    nodes_[i].parent = p->second;
    auto& parent = nodes_[static_cast<std::size_t>(p->second)];
    if (parent.first_child < 0) parent.first_child = static_cast<std::int32_t>(i);
  }
}

std::optional<std::int32_t> Tree::find(Uid uid) const {
  const auto it = index_.find(uid);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

int Tree::levels() const { return static_cast<int>(level_start_.size()) - 1; }

std::pair<std::int32_t, std::int32_t> Tree::level_range(int level) const {
  if (level < 0 || level >= levels()) return {0, 0};
  return {level_start_[static_cast<std::size_t>(level)], level_start_[static_cast<std::size_t>(level) + 1]};
}

std::int64_t Tree::leaf_count() const {
  return std::count_if(nodes_.begin(), nodes_.end(), [](const GridNode& n) { return n.is_leaf(); });
}

std::optional<std::int32_t> Tree::deepest_existing(int level, Int3 coord) const {
  const Int3 n = shape_.grids_per_axis(level);
  for (int a = 0; a < 3; ++a)
    if (coord[a] < 0 || coord[a] >= n[a]) return std::nullopt;
  for (int l = std::min(level, levels() - 1); l >= 0; --l) {
    Int3 c = coord;
    for (int a = 0; a < 3; ++a) c[a] >>= log2_factor(shape_.r[a]) * (level - l);
    if (auto idx = find(Uid::make(l, c))) return idx;
  }
  return std::nullopt;
}

namespace {
std::vector<Uid> children_of(const TreeShape& shape, Uid uid) {
  const Int3 c = uid.coord();
  std::vector<Uid> out;
  out.reserve(static_cast<std::size_t>(shape.children_per_grid()));
  for (int k = 0; k < shape.r[2]; ++k)
    for (int j = 0; j < shape.r[1]; ++j)
      for (int i = 0; i < shape.r[0]; ++i)
        out.push_back(Uid::make(uid.level() + 1,
                                {c[0] * shape.r[0] + i, c[1] * shape.r[1] + j, c[2] * shape.r[2] + k}));
  return out;
}
}  // namespace

bool Tree::adapt(const std::function<Mark(Uid, const Box&)>& mark) {
  std::unordered_set<Uid> refine, coarsen;
  for (const auto& n : nodes_) {
    const Box box = shape_.bounding_box(n.uid);
    if (n.is_leaf()) {
      if (n.uid.level() < shape_.max_depth && mark(n.uid, box) == Mark::refine) refine.insert(n.uid);
      continue;
    }
    const auto nc = static_cast<std::size_t>(shape_.children_per_grid());
    bool leaves_only = true;
    for (std::size_t c = 0; c < nc; ++c)
      leaves_only = leaves_only && nodes_[static_cast<std::size_t>(n.first_child) + c].is_leaf();
    if (leaves_only && mark(n.uid, box) == Mark::coarsen) coarsen.insert(n.uid);
  }
  // A family with a child marked for refinement is not coarsened in the same pass.
  for (const auto& uid : refine) {
    if (uid.level() == 0) continue;
    Int3 c = uid.coord();
    for (int a = 0; a < 3; ++a) c[a] /= shape_.r[a];
    coarsen.erase(Uid::make(uid.level() - 1, c));
  }
  if (refine.empty() && coarsen.empty()) return false;
  std::vector<Uid> uids;
  uids.reserve(nodes_.size() + refine.size() * static_cast<std::size_t>(shape_.children_per_grid()));
  for (const auto& n : nodes_) {
    if (n.parent >= 0 && coarsen.count(nodes_[static_cast<std::size_t>(n.parent)].uid)) continue;
    uids.push_back(n.uid);
    if (refine.count(n.uid))
      for (const auto& c : children_of(shape_, n.uid)) uids.push_back(c);
  }
  rebuild(std::move(uids));
  return true;
}

void Tree::adapt_until_stable(const std::function<Mark(Uid, const Box&)>& mark, int max_rounds) {
  for (int i = 0; i < max_rounds && adapt(mark); ++i) {
  }
}

namespace {
// Leaves that a leaf at `node` forces to refine: touching leaves more than one
// level coarser (faces, edges and corners, periodic wrap included).
template <typename F>
void for_each_coarse_violation(const Tree& t, const GridNode& n, F&& f) {
  const auto& shape = t.shape();
  const int level = n.uid.level();
  if (level < 2) return;
  const Int3 c = n.uid.coord();
  const Int3 g = shape.grids_per_axis(level);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        Int3 p{c[0] + dx, c[1] + dy, c[2] + dz};
        bool outside = false;
        for (int a = 0; a < 3; ++a) {
          if (p[a] >= 0 && p[a] < g[a]) continue;
          if (shape.periodic[a]) p[a] = (p[a] + g[a]) % g[a];
          else outside = true;
        }
        if (outside) continue;
        const auto cover = t.deepest_existing(level, p);
        if (cover && t.nodes()[static_cast<std::size_t>(*cover)].uid.level() < level - 1) f(*cover);
      }
}
}  // namespace

void Tree::balance() {
  for (;;) {
    std::unordered_set<Uid> refine;
    for (const auto& n : nodes_) {
      if (!n.is_leaf()) continue;
      for_each_coarse_violation(*this, n, [&](std::int32_t idx) {
        refine.insert(nodes_[static_cast<std::size_t>(idx)].uid);
      });
    }
    if (refine.empty()) return;
    std::vector<Uid> uids;
    for (const auto& n : nodes_) {
      uids.push_back(n.uid);
      if (refine.count(n.uid))
        for (const auto& c : children_of(shape_, n.uid)) uids.push_back(c);
    }
    rebuild(std::move(uids));
  }
}

bool Tree::is_balanced() const {
  bool ok = true;
  for (const auto& n : nodes_)
    if (n.is_leaf()) for_each_coarse_violation(*this, n, [&](std::int32_t) { ok = false; });
  return ok;
}

std::uint64_t Tree::sfc_key(Uid uid) const {
  const int depth = shape_.max_encodable_depth();
  Int3 c = uid.coord();
  for (int a = 0; a < 3; ++a) c[a] <<= log2_factor(shape_.r[a]) * (depth - uid.level());
  return morton_encode(c) << Uid::kLevelBits | static_cast<std::uint64_t>(uid.level());
}

std::vector<std::int32_t> Tree::sfc_order() const {
  std::vector<std::pair<std::uint64_t, std::int32_t>> keyed(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) keyed[i] = {sfc_key(nodes_[i].uid), static_cast<std::int32_t>(i)};
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int32_t> order(nodes_.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].second;
  return order;
}

TreeStats statistics(const Tree& tree) {
  TreeStats s;
  s.grids_per_level.assign(static_cast<std::size_t>(tree.levels()), 0);
  s.leaves_per_level.assign(static_cast<std::size_t>(tree.levels()), 0);
  for (const auto& n : tree.nodes()) {
    const auto l = static_cast<std::size_t>(n.uid.level());
    ++s.grids_per_level[l];
    if (n.is_leaf()) ++s.leaves_per_level[l];
  }
  s.grids = static_cast<std::int64_t>(tree.size());
  s.leaves = tree.leaf_count();
  s.cells = tree.total_cells();
  s.leaf_cells = s.leaves * tree.shape().cells_per_grid();
  return s;
}

}  // namespace rwd::spacetree

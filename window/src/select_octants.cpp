// The adaptive walk over octants (select.hpp, "Octants"): the budget bought half a grid
// per axis at a time, ranked by each octant's share of its parent's detail.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "walk.hpp"

namespace rwd::window::detail {
namespace {

/// A grid of the cut: its octants shown (bit o: the grid's cells in octant o replace its
/// parent's; the root shows all), its cells in the box, its children by octant.
struct Shown {
  unsigned mask = 0;
  Range range;
  bool opened = false;                                              ///< children looked at
  std::array<std::int64_t, 8> kid{-1, -1, -1, -1, -1, -1, -1, -1};  ///< child row in each octant, -1 = none
};

/// A unit the walk may add: octant `o` of grid `row`, whose parent `parent` shows that
/// region now (from its octant `po`, the one `row` lies in).
struct Unit {
  double gain;
  std::int64_t row;
  int o;
  std::int64_t parent;
  int po;
  std::int64_t more;  ///< values added: the grid's cells there minus the parent's
  /// Heap order: the largest gain on top, ties to the smaller row, then octant.
  bool operator<(const Unit& u) const { return gain != u.gain ? gain < u.gain : row != u.row ? row > u.row : o > u.o; }
};

template <class Tree>
class Octants {
 public:
  Octants(const Tree& tree, const Query& q, const Window& w, int cap, Selection& sel)
      : t_(tree), q_(q), w_(w), cap_(cap), sel_(sel) {
    const int nc = t_.max_children();
    axes_ = nc == 2 ? 1 : nc == 4 ? 2 : 3;
    for (int a = 0; a < 3; ++a) half_[a] = a < axes_ ? t_.cells()[a] / 2 : t_.cells()[a];
  }

  /// From the root alone.
  OctantWalk from_root(const Range& root) {
    Shown& r = cut_[0];
    r.mask = all();
    r.range = root;
    values_ = root.cells();
    offer_children(0);
    return run();
  }

  /// From the uniform answer: every grid down to level `at` that meets the box shows
  /// its octants that meet it; `values` cells.
  OctantWalk from_uniform(const Range& root, int at, std::int64_t values) {
    Shown& r = cut_[0];
    r.mask = all();
    r.range = root;
    values_ = values;
    std::vector<std::int64_t> frontier{0}, next;
    for (int level = 0; level < at; ++level) {
      next.clear();
      if constexpr (Tree::lazy) t_.load(children_rows(frontier));
      for (const std::int64_t g : frontier) {
        open(g);
        for (int o = 0; o < 8; ++o) {
          const std::int64_t k = cut_[g].kid[static_cast<std::size_t>(o)];
          if (k < 0) continue;
          const Range kr = cells_in_box(t_.bbox(k), q_);
          if (kr.empty()) continue;
          Shown& s = cut_[k];
          s.range = kr;
          for (int ko = 0; ko < (1 << axes_); ++ko)
            if (!part(kr, ko, 0, 2).empty()) {
              s.mask |= 1U << ko;
              gain_ += gain_of(k, ko);
            }
          next.push_back(k);
        }
      }
      std::sort(next.begin(), next.end());
      frontier.swap(next);
    }
    for (const std::int64_t g : frontier) offer_children(g);
    return run();
  }

 private:
  [[nodiscard]] unsigned all() const { return (1U << (1 << axes_)) - 1; }

  std::vector<std::int64_t> children_rows(const std::vector<std::int64_t>& grids) const {
    std::vector<std::int64_t> out;
    for (const std::int64_t g : grids)
      for (int c = 0; c < t_.max_children(); ++c)
        if (const std::int64_t k = t_.child(g, c); k >= 0 && k < t_.rows()) out.push_back(k);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  /// Looks at g's children once: which octant each lies in (the writer's rule: where its
  /// box's lower corner lies in g's).
  void open(std::int64_t g) {
    Shown& s = cut_[g];
    if (s.opened) return;
    s.opened = true;
    s.kid.fill(-1);
    if constexpr (Tree::lazy) t_.load(children_rows({g}));
    const auto& gb = t_.bbox(g);
    for (int c = 0; c < t_.max_children(); ++c) {
      const std::int64_t k = checked_child(t_, g, c, sel_);
      if (k < 0) continue;
      const auto& kb = t_.bbox(k);
      int o = 0;
      for (int a = 0; a < axes_; ++a)
        if (kb[2 * a] - gb[2 * a] > 0.25 * (gb[2 * a + 1] - gb[2 * a])) o |= 1 << a;
      s.kid[static_cast<std::size_t>(o)] = k;
    }
  }

  /// The cells of a grid in its octant o, sub-octant `sub` at depth 2 (`parts` = 4), or
  /// its octant at depth 1 (`parts` = 2, sub = 0), within `range`.
  [[nodiscard]] Range part(const Range& range, int o, int sub, int parts) const {
    Range r = range;
    for (int a = 0; a < axes_; ++a) {
      const int n = 2 * half_[a] / parts;  // cells per part
      const int i = parts == 2 ? (o >> a & 1) : 2 * (o >> a & 1) + (sub >> a & 1);
      r.first[a] = std::max(r.first[a], i * n);
      r.end[a] = std::min(r.end[a], (i + 1) * n);
    }
    return r;
  }

  double gain_of(std::int64_t row, int o) const {
    const double d = t_.share(row, o);
    if (!(d >= 0) || !std::isfinite(d))
      fail("the share of row " + std::to_string(row) + " in octant " + std::to_string(o) +
           " is negative or not finite (" + std::to_string(d) + ")");
    const auto& g = t_.bbox(row);
    const auto s = t_.cells();
    return d * d * (((g[1] - g[0]) / s[0]) * ((g[3] - g[2]) / s[1]) * ((g[5] - g[4]) / s[2]));
  }

  /// The units of g's children (in octant order), g in the cut: candidates (none below the cap).
  void offer_children(std::int64_t g) {
    if (t_.level(g) >= cap_) return;
    open(g);
    for (int o = 0; o < 8; ++o)
      if ((cut_[g].mask >> o & 1U) != 0) offer(cut_[g].kid[static_cast<std::size_t>(o)], g, o);
  }

  /// The units of grid k (in octant po of its parent p) that meet the box.
  void offer(std::int64_t k, std::int64_t p, int po) {
    if (k < 0 || t_.level(k) > cap_) return;
    const Range kr = cells_in_box(t_.bbox(k), q_);
    if (kr.empty()) return;
    for (int o = 0; o < (1 << axes_); ++o) {
      const Range mine = part(kr, o, 0, 2);
      if (mine.empty()) continue;
      const std::int64_t more = mine.cells() - part(cut_[p].range, po, o, 4).cells();
      heap_.push({gain_of(k, o), k, o, p, po, more});
    }
  }

  OctantWalk run() {
    while (!heap_.empty()) {
      const Unit u = heap_.top();
      heap_.pop();
      if (w_.budget > 0 && values_ + u.more > w_.budget) continue;  // values only grow: never again
      values_ += u.more;
      gain_ += u.gain;
      Shown& s = cut_[u.row];
      if (s.mask == 0) s.range = cells_in_box(t_.bbox(u.row), q_);
      s.mask |= 1U << u.o;
      if (t_.level(u.row) >= cap_) continue;
      open(u.row);
      offer(cut_[u.row].kid[static_cast<std::size_t>(u.o)], u.row, u.o);
    }
    OctantWalk out;
    out.gain = gain_;
    for (const auto& [row, s] : cut_) pieces_of(row, s, out.pieces);
    return out;
  }

  /// Block (x, y, z) of a grid's 4 x 4 x 4 lattice on its refined axes (one block on the
  /// others): 0 no cell in the box, 1 shown, 2 not shown (its parent's, or a child's).
  /// `kid_mask`: the octants each child shows.
  [[nodiscard]] int state(std::int64_t row, const Shown& s, const std::array<unsigned, 8>& kid_mask,
                          const std::array<int, 3>& b) const {
    int o = 0, sub = 0;
    for (int a = 0; a < axes_; ++a) {
      o |= (b[a] >> 1) << a;
      sub |= (b[a] & 1) << a;
    }
    if (part(s.range, o, sub, 4).empty()) return 0;
    if (row != 0 && (s.mask >> o & 1U) == 0) return 2;
    return (kid_mask[static_cast<std::size_t>(o)] >> sub & 1U) != 0 ? 2 : 1;
  }

  /// A grid's shown blocks as boxes, each grown from its first block in z, y, x order
  /// along x, then y, then z over shown blocks and blocks outside the box; cropped to the box.
  void pieces_of(std::int64_t row, const Shown& s, std::vector<Piece>& out) const {
    if (s.range.empty() || (row != 0 && s.mask == 0)) return;
    // Most grids show all their cells in the box (nothing of theirs left to the parent,
    // nothing taken by a child): one piece, what the blocks below would give too.
    std::array<unsigned, 8> kid_mask{};
    bool whole = true;
    for (int o = 0; o < (1 << axes_); ++o) {
      if (const std::int64_t k = s.kid[static_cast<std::size_t>(o)]; k >= 0)
        if (const auto it = cut_.find(k); it != cut_.end()) kid_mask[static_cast<std::size_t>(o)] = it->second.mask;
      if (kid_mask[static_cast<std::size_t>(o)] != 0) whole = false;
      if (row != 0 && (s.mask >> o & 1U) == 0 && !part(s.range, o, 0, 2).empty()) whole = false;
    }
    if (whole) {
      std::array<int, 3> count{};
      for (int a = 0; a < 3; ++a) count[a] = s.range.end[a] - s.range.first[a];
      out.push_back(make_piece(t_, row, s.range.first, count, 1));
      return;
    }
    std::array<int, 3> n{1, 1, 1};
    for (int a = 0; a < axes_; ++a) n[a] = 4;
    std::array<std::array<std::array<int, 4>, 4>, 4> st{};  // [z][y][x]
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) st[z][y][x] = state(row, s, kid_mask, {x, y, z});
    const auto free_in = [&](const std::array<int, 3>& lo, const std::array<int, 3>& hi) {
      for (int z = lo[2]; z < hi[2]; ++z)
        for (int y = lo[1]; y < hi[1]; ++y)
          for (int x = lo[0]; x < hi[0]; ++x)
            if (st[z][y][x] > 1) return false;
      return true;
    };
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) {
          if (st[z][y][x] != 1) continue;
          std::array<int, 3> lo{x, y, z}, hi{x + 1, y + 1, z + 1};
          for (int a = 0; a < 3; ++a)
            while (hi[a] < n[a]) {
              std::array<int, 3> l = lo, h = hi;
              l[a] = hi[a];
              h[a] = hi[a] + 1;
              if (!free_in(l, h)) break;
              ++hi[a];
            }
          for (int zz = lo[2]; zz < hi[2]; ++zz)
            for (int yy = lo[1]; yy < hi[1]; ++yy)
              for (int xx = lo[0]; xx < hi[0]; ++xx) st[zz][yy][xx] = 3;  // taken
          Range r = s.range;
          for (int a = 0; a < 3; ++a) {
            const int size = a < axes_ ? half_[a] / 2 : half_[a];
            r.first[a] = std::max(r.first[a], lo[a] * size);
            r.end[a] = std::min(r.end[a], hi[a] * size);
          }
          if (r.empty()) continue;
          std::array<int, 3> count{};
          for (int a = 0; a < 3; ++a) count[a] = r.end[a] - r.first[a];
          out.push_back(make_piece(t_, row, r.first, count, 1));
        }
  }

  const Tree& t_;
  const Query& q_;
  const Window& w_;
  int cap_;
  Selection& sel_;
  int axes_ = 0;
  std::array<int, 3> half_{};  ///< cells per octant per axis (refined axes: half the grid)
  std::unordered_map<std::int64_t, Shown> cut_;
  std::priority_queue<Unit> heap_;
  std::int64_t values_ = 0;
  double gain_ = 0;
};

}  // namespace

template <class Tree>
OctantWalk octant_walk(const Tree& tree, const Query& q, const Window& w, int cap, const Range& root, int at,
                       std::int64_t values, Selection& sel) {
  Octants<Tree> walk(tree, q, w, cap, sel);
  return at < 0 ? walk.from_root(root) : walk.from_uniform(root, at, values);
}

template OctantWalk octant_walk(const SpanTree&, const Query&, const Window&, int, const Range&, int, std::int64_t,
                                Selection&);
template OctantWalk octant_walk(const LazyTree&, const Query&, const Window&, int, const Range&, int, std::int64_t,
                                Selection&);

}  // namespace rwd::window::detail

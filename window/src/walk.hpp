// Private to rewind::window: what the selection's walks share (select.cpp, the uniform
// rule and the whole-grid adaptive walk; select_octants.cpp, the octant walk): the query,
// a grid's cells in the box, the two ways of reading a tree, pieces.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/window/select.hpp"

namespace rwd::window::detail {

inline constexpr double kRelTol = 1e-9;
inline const char* const kAxis[3] = {"x", "y", "z"};

[[noreturn]] inline void fail(const std::string& what) { throw std::invalid_argument("rwd::window: " + what); }

/// The query in the form the per-grid test wants: tolerances, slices, domain hi.
struct Query {
  std::array<double, 3> lo{}, hi{}, tol{}, dom_hi{}, slice_at{};
  std::array<bool, 3> slice{};
  std::array<int, 3> cells{};
};

/// Cells [first, end) of one grid meeting the box, per axis.
struct Range {
  std::array<int, 3> first{}, end{};
  [[nodiscard]] bool empty() const { return end[0] <= first[0] || end[1] <= first[1] || end[2] <= first[2]; }
  [[nodiscard]] std::int64_t cells() const {
    return empty() ? 0 : std::int64_t{end[0] - first[0]} * (end[1] - first[1]) * (end[2] - first[2]);
  }
};

struct Hit {
  std::int64_t row;
  Range range;
};

/// The walk's access to a tree: a TreeView's arrays as they are.
struct SpanTree {
  static constexpr bool lazy = false;
  const TreeView& t;
  [[nodiscard]] std::array<int, 3> cells() const { return t.cells; }
  [[nodiscard]] int max_children() const { return t.max_children; }
  [[nodiscard]] std::int64_t rows() const { return t.rows(); }
  void load(const std::vector<std::int64_t>&) const {}
  [[nodiscard]] int level(std::int64_t r) const { return t.level[static_cast<std::size_t>(r)]; }
  [[nodiscard]] const std::array<double, 6>& bbox(std::int64_t r) const { return t.bbox[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::int64_t child(std::int64_t r, int c) const {
    return t.child_rows[static_cast<std::size_t>(r * t.max_children + c)];
  }
  [[nodiscard]] bool has_detail() const { return !t.detail.empty(); }
  [[nodiscard]] double detail(std::int64_t r) const { return t.detail[static_cast<std::size_t>(r)]; }
  [[nodiscard]] bool has_shares() const { return !t.shares.empty(); }
  [[nodiscard]] double share(std::int64_t r, int o) const {
    return t.shares[static_cast<std::size_t>(r * t.max_children + o)];
  }
};

/// The same over a RowSource, whose rows the walk loads before it looks at them.
struct LazyTree {
  static constexpr bool lazy = true;
  RowSource& s;
  [[nodiscard]] std::array<int, 3> cells() const { return s.cells(); }
  [[nodiscard]] int max_children() const { return s.max_children(); }
  [[nodiscard]] std::int64_t rows() const { return s.rows(); }
  void load(const std::vector<std::int64_t>& rows) const { s.load(rows); }
  [[nodiscard]] int level(std::int64_t r) const { return s.level(r); }
  [[nodiscard]] const std::array<double, 6>& bbox(std::int64_t r) const { return s.bbox(r); }
  [[nodiscard]] std::int64_t child(std::int64_t r, int c) const { return s.child(r, c); }
  [[nodiscard]] bool has_detail() const { return s.has_detail(); }
  [[nodiscard]] double detail(std::int64_t r) const { return s.detail(r); }
  [[nodiscard]] bool has_shares() const { return s.has_shares(); }
  [[nodiscard]] double share(std::int64_t r, int o) const { return s.share(r, o); }
};

inline void validate_arrays(const TreeView& t) {
  const auto n = t.level.size();
  if (n == 0) fail("the tree view has no rows");
  if (t.bbox.size() != n)
    fail("the tree view has " + std::to_string(t.bbox.size()) + " bboxes for " + std::to_string(n) + " rows");
  if (t.max_children < 0 || t.child_rows.size() != n * static_cast<std::size_t>(t.max_children))
    fail("the tree view's child_rows must hold rows * max_children entries");
  if (!t.detail.empty() && t.detail.size() != n)
    fail("the tree view has " + std::to_string(t.detail.size()) + " details for " + std::to_string(n) + " rows");
  if (!t.shares.empty() && t.shares.size() != n * static_cast<std::size_t>(t.max_children))
    fail("the tree view has " + std::to_string(t.shares.size()) + " shares for " + std::to_string(n) + " rows of " +
         std::to_string(t.max_children) + " octants");
}

/// Checks what the walk relies on; loads the root and the last row (the deepest level).
template <class Tree>
void validate(const Tree& t) {
  if constexpr (Tree::lazy) {
    if (t.rows() < 1) fail("the tree has no rows");
    if (t.max_children() < 0) fail("the tree's max_children must be >= 0");
    t.load(t.rows() == 1 ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, t.rows() - 1});
  } else {
    validate_arrays(t.t);
  }
  for (int a = 0; a < 3; ++a) {
    if (t.cells()[a] < 1) fail(std::string("cells per grid on ") + kAxis[a] + " must be >= 1");
    const auto& root = t.bbox(0);
    if (!(root[2 * a + 1] > root[2 * a]) || !std::isfinite(root[2 * a]) || !std::isfinite(root[2 * a + 1]))
      fail(std::string("the root grid has no positive finite extent on ") + kAxis[a]);
  }
  if (t.level(0) != 0) fail("row 0 must be the root (level 0)");
}

template <class Tree>
Query make_query(const Tree& t, const Window& w) {
  validate(t);
  Query q;
  for (int a = 0; a < 3; ++a) {
    const double lo = w.box.lo[a], hi = w.box.hi[a];
    if (!std::isfinite(lo) || !std::isfinite(hi))
      fail(std::string("the box has a NaN or infinite bound on ") + kAxis[a]);
    if (lo > hi)
      fail(std::string("the box has lo > hi on ") + kAxis[a] + " (" + std::to_string(lo) + " > " + std::to_string(hi) +
           ")");
    const auto& root = t.bbox(0);
    q.lo[a] = lo;
    q.hi[a] = hi;
    q.tol[a] = kRelTol * (root[2 * a + 1] - root[2 * a]);
    q.dom_hi[a] = root[2 * a + 1];
    q.slice[a] = hi - lo <= 2 * q.tol[a];
    q.slice_at[a] = 0.5 * (lo + hi);
  }
  if (w.budget < 0) fail("the budget must be >= 0 (0 = unlimited), got " + std::to_string(w.budget));
  if (w.max_level < -1) fail("max_level must be >= -1 (-1 = no cap), got " + std::to_string(w.max_level));
  q.cells = t.cells();
  return q;
}

/// Index arithmetic equivalent to the header's per-cell "meets" predicate.
inline Range cells_in_box(const std::array<double, 6>& g, const Query& q) {
  Range r;
  for (int a = 0; a < 3; ++a) {
    const int s = q.cells[a];
    const double g0 = g[2 * a], g1 = g[2 * a + 1], h = (g1 - g0) / s, tol = q.tol[a];
    double first = 0, end = 0;
    if (q.slice[a]) {
      const double p = q.slice_at[a];
      first = std::floor((p + tol - g0) / h);
      const bool closing = std::abs(g1 - q.dom_hi[a]) <= tol && std::abs(p - q.dom_hi[a]) <= tol;
      if (closing && first >= s - 1) first = s - 1;
      end = first + 1;
    } else {
      first = std::floor((q.lo[a] + tol - g0) / h);
      end = std::ceil((q.hi[a] - tol - g0) / h);
    }
    r.first[a] = static_cast<int>(std::clamp(first, 0.0, static_cast<double>(s)));
    r.end[a] = static_cast<int>(std::clamp(end, 0.0, static_cast<double>(s)));
    if (r.end[a] <= r.first[a]) return Range{};
  }
  return r;
}

template <class Tree>
bool is_leaf(const Tree& t, std::int64_t row) {
  for (int c = 0; c < t.max_children(); ++c)
    if (t.child(row, c) >= 0) return false;
  return true;
}

template <class Tree>
Piece make_piece(const Tree& t, std::int64_t row, const std::array<int, 3>& first, const std::array<int, 3>& count,
                 int stride) {
  Piece p;
  p.row = row;
  p.level = t.level(row);
  p.first = first;
  p.count = count;
  p.stride = stride;
  const auto& g = t.bbox(row);
  for (int a = 0; a < 3; ++a) {
    p.cell[a] = (g[2 * a + 1] - g[2 * a]) / t.cells()[a];
    p.origin[a] = g[2 * a] + first[a] * p.cell[a];
    p.spacing[a] = p.cell[a] * stride;
  }
  return p;
}

/// Level 0 overflowed: the smallest stride k >= 2 on the root's cell-0 lattice that fits.
template <class Tree>
Piece strided_root(const Tree& t, const Range& r, std::int64_t budget) {
  for (int k = 2;; ++k) {
    std::array<int, 3> first{}, count{};
    std::int64_t values = 1;
    for (int a = 0; a < 3; ++a) {
      const int f = (r.first[a] + k - 1) / k * k;  // first lattice cell >= range start
      const int n = f < r.end[a] ? (r.end[a] - 1 - f) / k + 1 : 0;
      first[a] = n > 0 ? f : r.first[a];
      count[a] = std::max(n, 1);
      values *= count[a];
    }
    if (values <= budget) return make_piece(t, 0, first, count, k);
  }
}

/// The children of `frontier`'s grids (in range), ascending: what a lazy tree loads
/// before the walk looks at a level.
template <class Tree>
std::vector<std::int64_t> children_of(const Tree& tree, const std::vector<Hit>& frontier) {
  std::vector<std::int64_t> out;
  for (const auto& h : frontier)
    for (int c = 0; c < tree.max_children(); ++c)
      if (const std::int64_t child = tree.child(h.row, c); child >= 0 && child < tree.rows()) out.push_back(child);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The child of `row` in `slot` (-1: none), checked to be in range and on the next level,
/// and counted as looked at.
template <class Tree>
std::int64_t checked_child(const Tree& tree, std::int64_t row, int slot, Selection& sel) {
  const std::int64_t child = tree.child(row, slot);
  if (child < 0) return -1;
  if (child >= tree.rows() || tree.level(child) != tree.level(row) + 1)
    fail("row " + std::to_string(row) + " names child row " + std::to_string(child) +
         ", which is out of range or not on the next level");
  ++sel.visited;
  return child;
}

/// The children of `row` that meet the box, checked to be on the next level.
template <class Tree>
std::vector<Hit> children_in_box(const Tree& tree, const Query& q, std::int64_t row, Selection& sel) {
  std::vector<Hit> out;
  for (int c = 0; c < tree.max_children(); ++c) {
    const std::int64_t child = checked_child(tree, row, c, sel);
    if (child < 0) continue;
    if (const Range r = cells_in_box(tree.bbox(child), q); !r.empty()) out.push_back({child, r});
  }
  return out;
}

/// The adaptive walk over octants (select.hpp, "Octants"): its pieces (unsorted) and
/// total gain, from the uniform answer (`at` = L*, whose grids hold `values` cells) or,
/// `at` < 0, from the root alone. Defined in select_octants.cpp for both trees.
struct OctantWalk {
  std::vector<Piece> pieces;
  double gain = 0;
};
template <class Tree>
OctantWalk octant_walk(const Tree& tree, const Query& q, const Window& w, int cap, const Range& root, int at,
                       std::int64_t values, Selection& sel);
/// Whether the octant walk applies to a tree: it has shares, max_children 2, 4 or 8, and
/// every refined axis's cell count divides by 4.
template <class Tree>
bool octants_apply(const Tree& tree) {
  const int nc = tree.max_children();
  const int axes = nc == 2 ? 1 : nc == 4 ? 2 : nc == 8 ? 3 : 0;
  if (axes == 0 || !tree.has_shares()) return false;
  for (int a = 0; a < axes; ++a)
    if (tree.cells()[a] % 4 != 0) return false;
  return true;
}

}  // namespace rwd::window::detail

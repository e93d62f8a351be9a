// Sliding-window selection: one breadth-first walk from the root, level by level, that
// stops at the first level whose candidate cells overflow the budget. Definitions are
// in the header; this file keeps to them literally so the brute-force test can check it.
#include "rewind/window/select.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <string>
#include <tuple>

#include "walk.hpp"

namespace rwd::window::detail {
namespace {
void finish(Selection& sel) {
  // By row, a grid's pieces by their first cell (z, y, x): the octant walk gives a grid
  // several.
  std::sort(sel.pieces.begin(), sel.pieces.end(), [](const Piece& a, const Piece& b) {
    return a.row != b.row ? a.row < b.row
                          : std::tie(a.first[2], a.first[1], a.first[0]) < std::tie(b.first[2], b.first[1], b.first[0]);
  });
  for (const auto& p : sel.pieces) {
    sel.values += p.values();
    if (!sel.runs.empty() && sel.runs.back().first_row + sel.runs.back().count - 1 == p.row) {
      // another piece of the run's last grid
    } else if (!sel.runs.empty() && sel.runs.back().first_row + sel.runs.back().count == p.row) {
      ++sel.runs.back().count;
    } else {
      sel.runs.push_back({p.row, 1});
    }
    for (int a = 0; a < 3; ++a) {
      const double lo = p.origin[a], hi = p.origin[a] + (p.count[a] - 1) * p.spacing[a] + p.cell[a];
      const bool first = &p == &sel.pieces.front();
      sel.covered.lo[a] = first ? lo : std::min(sel.covered.lo[a], lo);
      sel.covered.hi[a] = first ? hi : std::max(sel.covered.hi[a], hi);
    }
  }
}

/// A grid the adaptive walk may refine: its gain (header, "Gain") and where it lies.
struct Candidate {
  double gain;
  Hit hit;
  /// Heap order: the largest gain on top, ties to the smaller row.
  bool operator<(const Candidate& o) const { return gain != o.gain ? gain < o.gain : hit.row > o.hit.row; }
};

template <class Tree>
double gain_of(const Tree& tree, std::int64_t row) {
  const double d = tree.detail(row);
  if (!(d >= 0) || !std::isfinite(d))
    fail("the detail of row " + std::to_string(row) + " is negative or not finite (" + std::to_string(d) + ")");
  const auto& g = tree.bbox(row);
  const auto s = tree.cells();
  int children = 0;
  for (int c = 0; c < tree.max_children(); ++c) children += tree.child(row, c) >= 0;
  const double cell = ((g[1] - g[0]) / s[0]) * ((g[3] - g[2]) / s[1]) * ((g[5] - g[4]) / s[2]);
  return d * d * (cell / children);
}

/// What one greedy walk returns: its grids and the total gain of the grids refined.
struct Walk {
  std::vector<Hit> hits;
  double gain = 0;
};

/// One greedy walk of the adaptive rule (header, "Walks") from `hits`, whose refined
/// ancestors gained `gain`.
template <class Tree>
Walk refine(const Tree& tree, const Query& q, const Window& w, int cap, const std::vector<Hit>& hits, double gain,
            Selection& sel) {
  std::int64_t values = 0;
  Walk out{{}, gain};
  std::priority_queue<Candidate> heap;
  const auto offer = [&](const Hit& h) {
    values += h.range.cells();
    if (tree.level(h.row) < cap && !is_leaf(tree, h.row))
      heap.push({gain_of(tree, h.row), h});
    else
      out.hits.push_back(h);
  };
  for (const auto& h : hits) offer(h);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    const Hit& h = top.hit;
    heap.pop();
    if constexpr (Tree::lazy) tree.load(children_of(tree, std::vector<Hit>{h}));
    const auto kids = children_in_box(tree, q, h.row, sel);
    std::int64_t more = -h.range.cells();
    for (const auto& k : kids) more += k.range.cells();
    if (w.budget > 0 && values + more > w.budget) {
      out.hits.push_back(h);
      continue;
    }
    out.gain += top.gain;
    values -= h.range.cells();
    for (const auto& k : kids) offer(k);
  }
  return out;
}

/// The answer from the uniform one (`leaves`: its grids, L* = sel.level): refined by the
/// octant walk or the whole-grid walk if adaptive, as pieces.
template <class Tree>
void answer(const Tree& tree, const Query& q, const Window& w, int cap, const Range& root, bool adaptive,
            double uniform_gain, std::vector<Hit> leaves, Selection& sel) {
  if (adaptive && octants_apply(tree)) {
    std::int64_t values = 0;
    for (const auto& h : leaves) values += h.range.cells();
    OctantWalk from_uniform = octant_walk(tree, q, w, cap, root, sel.level, values, sel);
    OctantWalk from_root = octant_walk(tree, q, w, cap, root, -1, 0, sel);
    sel.pieces = std::move(from_root.gain > from_uniform.gain ? from_root.pieces : from_uniform.pieces);
    for (const auto& p : sel.pieces) sel.level = std::max(sel.level, p.level);
    finish(sel);
    return;
  }
  if (adaptive) {
    Walk from_uniform = refine(tree, q, w, cap, leaves, uniform_gain, sel);
    Walk from_root = refine(tree, q, w, cap, {{0, root}}, 0.0, sel);
    leaves = std::move(from_root.gain > from_uniform.gain ? from_root.hits : from_uniform.hits);
  }
  for (const auto& h : leaves) {
    std::array<int, 3> count{};
    for (int a = 0; a < 3; ++a) count[a] = h.range.end[a] - h.range.first[a];
    sel.pieces.push_back(make_piece(tree, h.row, h.range.first, count, 1));
    sel.level = std::max(sel.level, sel.pieces.back().level);
  }
  finish(sel);
}

template <class Tree>
Selection select_in(const Tree& tree, const Window& w) {
  const Query q = make_query(tree, w);
  const std::int64_t n = tree.rows();
  const int deepest = tree.level(n - 1);
  const int cap = w.max_level < 0 ? deepest : std::min(w.max_level, deepest);
  const bool limited = w.budget > 0;

  const bool adaptive = w.lod == Lod::adaptive && (tree.has_detail() || octants_apply(tree));
  Selection sel;
  sel.level = cap;
  sel.lod = adaptive ? Lod::adaptive : Lod::uniform;
  sel.visited = 1;
  const Range root = cells_in_box(tree.bbox(0), q);
  if (root.empty()) return sel;
  if (limited && root.cells() > w.budget) {
    sel.level = 0;
    sel.pieces.push_back(strided_root(tree, root, w.budget));
    sel.stride = sel.pieces.back().stride;
    finish(sel);
    return sel;
  }

  // Invariant at level L: `leaves` = leaves at levels < L meeting the box, `frontier` =
  // grids at level L meeting the box, and count(L) <= budget.
  std::vector<Hit> leaves, frontier{{0, root}}, next;
  std::int64_t leaf_values = 0;
  double uniform_gain = 0;  // of the grids the uniform answer refines (adaptive only)
  int level = 0;
  for (; level < cap; ++level) {
    if constexpr (Tree::lazy) tree.load(children_of(tree, frontier));
    next.clear();
    std::int64_t next_leaf_values = leaf_values, next_values = 0;
    bool overflow = false;
    for (std::size_t i = 0; i < frontier.size() && !overflow; ++i) {
      const Hit& h = frontier[i];
      if (is_leaf(tree, h.row)) {
        next_leaf_values += h.range.cells();
        overflow = limited && next_leaf_values + next_values > w.budget;
        continue;
      }
      for (int c = 0; c < tree.max_children() && !overflow; ++c) {
        const std::int64_t child = checked_child(tree, h.row, c, sel);  // frontier rows are on `level`
        if (child < 0) continue;
        const Range r = cells_in_box(tree.bbox(child), q);
        if (r.empty()) continue;
        next.push_back({child, r});
        next_values += r.cells();
        overflow = limited && next_leaf_values + next_values > w.budget;
      }
    }
    if (overflow) break;  // count(level + 1) > budget: L* = level
    for (const auto& h : frontier)
      if (is_leaf(tree, h.row))
        leaves.push_back(h);
      else if (adaptive && !octants_apply(tree)) uniform_gain += gain_of(tree, h.row);
    leaf_values = next_leaf_values;
    frontier.swap(next);
  }
  sel.level = level;
  leaves.insert(leaves.end(), frontier.begin(), frontier.end());
  answer(tree, q, w, cap, root, adaptive, uniform_gain, std::move(leaves), sel);
  return sel;
}
}  // namespace
}  // namespace rwd::window::detail

namespace rwd::window {

std::vector<std::int64_t> Selection::rows() const {
  std::vector<std::int64_t> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces)
    if (out.empty() || out.back() != p.row) out.push_back(p.row);
  return out;
}

std::vector<std::size_t> Selection::slots() const {
  std::vector<std::size_t> out;
  out.reserve(pieces.size());
  std::size_t slot = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0 && pieces[i].row != pieces[i - 1].row) ++slot;
    out.push_back(slot);
  }
  return out;
}

Selection select(const TreeView& tree, const Window& w) { return detail::select_in(detail::SpanTree{tree}, w); }

Selection select(RowSource& tree, const Window& w) { return detail::select_in(detail::LazyTree{tree}, w); }

std::vector<std::int64_t> level_cut(const TreeView& tree, int max_level) {
  detail::validate(detail::SpanTree{tree});
  Window w;
  const auto& root = tree.bbox[0];
  w.box.lo = {root[0], root[2], root[4]};
  w.box.hi = {root[1], root[3], root[5]};
  w.max_level = max_level;
  return select(tree, w).rows();
}

}  // namespace rwd::window

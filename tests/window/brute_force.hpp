// Brute-force window selection for tests: enumerates every grid and every cell of a
// TreeView and applies the definitions of rewind/window/select.hpp literally (cell
// faces computed one by one, counts for every level), sharing no code with select().
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "rewind/window/select.hpp"

namespace rwd::test {

/// The header's "meets" predicate on one axis for the cell [c0, c1].
inline bool bf_meets_axis(double c0, double c1, double b0, double b1, double dom_extent, double dom_hi) {
  const double tol = 1e-9 * dom_extent;
  if (b1 - b0 <= 2 * tol) {
    const double p = 0.5 * (b0 + b1);
    const bool closing = std::abs(c1 - dom_hi) <= tol && std::abs(p - dom_hi) <= tol;
    return (c0 - tol <= p && p < c1 - tol) || closing;
  }
  return c0 < b1 - tol && c1 > b0 + tol;
}

/// Cell k of a grid spanning [g0, g1] with s cells: {lo, hi}.
inline std::array<double, 2> bf_cell(double g0, double g1, int s, int k) {
  const double h = (g1 - g0) / s;
  return {g0 + k * h, g0 + (k + 1) * h};
}

struct BfGrid {
  std::int64_t row = 0;
  int level = 0;
  bool leaf = true;
  std::array<std::vector<int>, 3> hit;  ///< meeting cell indices per axis
  std::int64_t cells = 0;               ///< product of hit sizes
};

struct BfPiece {
  std::int64_t row = 0;
  std::array<int, 3> first{}, count{};
  int stride = 1;
  bool operator==(const BfPiece&) const = default;
};

struct BfAnswer {
  int level = 0, stride = 1, cap = 0;
  std::vector<std::int64_t> count;  ///< count(L) for L = 0 .. deepest
  std::vector<BfPiece> pieces;      ///< sorted by row
  std::int64_t meeting_upto_level = 0;  ///< grids meeting the box at levels <= level
};

inline std::vector<BfGrid> bf_grids(const window::TreeView& t, const window::Box& box) {
  const auto& root = t.bbox[0];
  std::vector<BfGrid> out;
  for (std::int64_t r = 0; r < t.rows(); ++r) {
    BfGrid g;
    g.row = r;
    g.level = t.level[static_cast<std::size_t>(r)];
    for (int c = 0; c < t.max_children; ++c)
      g.leaf = g.leaf && t.child_rows[static_cast<std::size_t>(r * t.max_children + c)] < 0;
    const auto& b = t.bbox[static_cast<std::size_t>(r)];
    g.cells = 1;
    for (int a = 0; a < 3; ++a) {
      for (int k = 0; k < t.cells[a]; ++k) {
        const auto c = bf_cell(b[2 * a], b[2 * a + 1], t.cells[a], k);
        if (bf_meets_axis(c[0], c[1], box.lo[a], box.hi[a], root[2 * a + 1] - root[2 * a], root[2 * a + 1]))
          g.hit[a].push_back(k);
      }
      g.cells *= static_cast<std::int64_t>(g.hit[a].size());
    }
    out.push_back(g);
  }
  return out;
}

inline BfAnswer bf_select(const window::TreeView& t, const window::Window& w) {
  const auto grids = bf_grids(t, w.box);
  BfAnswer ans;
  int deepest = 0;
  for (const auto& g : grids) deepest = std::max(deepest, g.level);
  ans.cap = w.max_level < 0 ? deepest : std::min(w.max_level, deepest);
  const auto in_s = [](const BfGrid& g, int l) { return g.cells > 0 && (g.level == l || (g.leaf && g.level < l)); };
  for (int l = 0; l <= deepest; ++l) {
    std::int64_t c = 0;
    for (const auto& g : grids)
      if (in_s(g, l)) c += g.cells;
    ans.count.push_back(c);
  }
  const auto fits = [&](std::int64_t v) { return w.budget == 0 || v <= w.budget; };
  if (!fits(ans.count[0])) {
    // Stride: try k = 2, 3, ... cell by cell on the root's lattice.
    const auto& root = grids[0];
    for (int k = 2;; ++k) {
      BfPiece p;
      p.stride = k;
      std::int64_t v = 1;
      for (int a = 0; a < 3; ++a) {
        std::vector<int> on;
        for (const int i : root.hit[a])
          if (i % k == 0) on.push_back(i);
        p.first[a] = on.empty() ? root.hit[a].front() : on.front();
        p.count[a] = on.empty() ? 1 : static_cast<int>(on.size());
        v *= p.count[a];
      }
      if (v <= w.budget) {
        ans.stride = k;
        ans.pieces.push_back(p);
        break;
      }
    }
  } else {
    ans.level = 0;
    for (int l = 0; l <= ans.cap; ++l)
      if (fits(ans.count[static_cast<std::size_t>(l)])) ans.level = l;
    for (const auto& g : grids)
      if (in_s(g, ans.level)) {
        BfPiece p;
        p.row = g.row;
        for (int a = 0; a < 3; ++a) {
          p.first[a] = g.hit[a].front();
          p.count[a] = static_cast<int>(g.hit[a].size());
        }
        ans.pieces.push_back(p);
      }
  }
  for (const auto& g : grids) ans.meeting_upto_level += g.cells > 0 && g.level <= ans.level;
  return ans;
}

/// The child rows of `r`.
inline std::vector<std::int64_t> bf_children(const window::TreeView& t, std::int64_t r) {
  std::vector<std::int64_t> out;
  for (int c = 0; c < t.max_children; ++c)
    if (const auto k = t.child_rows[static_cast<std::size_t>(r * t.max_children + c)]; k >= 0) out.push_back(k);
  return out;
}

/// The parent row of `r` (-1 for the root), by search.
inline std::int64_t bf_parent(const window::TreeView& t, std::int64_t r) {
  for (std::size_t i = 0; i < t.child_rows.size(); ++i)
    if (t.child_rows[i] == r) return static_cast<std::int64_t>(i) / t.max_children;
  return -1;
}

/// select.hpp's gain of row r, from its first child's cells.
inline double bf_gain(const window::TreeView& t, std::int64_t r) {
  const auto& c = t.bbox[static_cast<std::size_t>(bf_children(t, r).front())];
  const double d = t.detail[static_cast<std::size_t>(r)];
  return d * d * ((c[1] - c[0]) / t.cells[0]) * ((c[3] - c[2]) / t.cells[1]) * ((c[5] - c[4]) / t.cells[2]);
}

/// One greedy walk of select.hpp's adaptive rule applied literally, from the grids
/// `start`: at every step the gains of all current grids are recomputed (d^2 times the
/// volume of one of the first child's cells) and the largest (then the smallest row) is
/// refined if its children meeting the box still fit, else set aside for good. Returns
/// the grids, sorted.
inline std::vector<std::int64_t> bf_walk(const window::TreeView& t, const window::Window& w,
                                         const std::vector<BfGrid>& grids, int cap, std::vector<std::int64_t> current) {
  std::vector<std::int64_t> set_aside;
  std::int64_t values = 0;
  for (const auto r : current) values += grids[static_cast<std::size_t>(r)].cells;
  for (;;) {
    std::int64_t best = -1;
    double best_gain = -1;
    for (const auto r : current) {
      const auto& g = grids[static_cast<std::size_t>(r)];
      if (g.leaf || g.level >= cap || std::count(set_aside.begin(), set_aside.end(), r)) continue;
      if (const double gain = bf_gain(t, r); gain > best_gain || (gain == best_gain && r < best)) best = r, best_gain = gain;
    }
    if (best < 0) break;
    std::int64_t after = values - grids[static_cast<std::size_t>(best)].cells;
    for (const auto k : bf_children(t, best)) after += grids[static_cast<std::size_t>(k)].cells;
    if (w.budget > 0 && after > w.budget) {
      set_aside.push_back(best);
      continue;
    }
    values = after;
    std::erase(current, best);
    for (const auto k : bf_children(t, best))
      if (grids[static_cast<std::size_t>(k)].cells > 0) current.push_back(k);
  }
  std::sort(current.begin(), current.end());
  return current;
}

/// The adaptive rule of select.hpp: both walks (from the root, from the brute-force
/// uniform answer), the one whose refined grids (every strict ancestor of its grids)
/// have the larger total gain, the uniform one on a tie.
inline BfAnswer bf_adaptive(const window::TreeView& t, const window::Window& w) {
  BfAnswer ans = bf_select(t, w);
  if (ans.stride > 1 || ans.pieces.empty() || t.detail.empty()) return ans;
  const auto grids = bf_grids(t, w.box);
  std::vector<std::int64_t> uniform;
  for (const auto& p : ans.pieces) uniform.push_back(p.row);
  const auto from_uniform = bf_walk(t, w, grids, ans.cap, uniform);
  const auto from_root = bf_walk(t, w, grids, ans.cap, {0});
  const auto total_gain = [&](const std::vector<std::int64_t>& rows) {
    std::vector<bool> refined(grids.size(), false);
    for (const auto r : rows)
      for (auto up = bf_parent(t, r); up >= 0; up = bf_parent(t, up)) refined[static_cast<std::size_t>(up)] = true;
    double sum = 0;
    for (std::size_t r = 0; r < refined.size(); ++r)
      if (refined[r]) sum += bf_gain(t, static_cast<std::int64_t>(r));
    return sum;
  };
  const auto& chosen = total_gain(from_root) > total_gain(from_uniform) ? from_root : from_uniform;
  ans.pieces.clear();
  for (const auto r : chosen) {
    const auto& g = grids[static_cast<std::size_t>(r)];
    BfPiece p;
    p.row = r;
    for (int a = 0; a < 3; ++a) {
      p.first[a] = g.hit[a].front();
      p.count[a] = static_cast<int>(g.hit[a].size());
    }
    ans.pieces.push_back(p);
    ans.level = std::max(ans.level, g.level);
  }
  return ans;
}

/// The ParaView reader's old lod_rows, verbatim in logic (paraview-plugin, before the
/// window module): depth-first from row 0, stop at leaves or at max_level, sort.
inline std::vector<std::int64_t> old_lod_rows(const window::TreeView& t, int max_level) {
  std::vector<std::int64_t> rows, stack{0};
  const int mc = t.max_children;
  while (!stack.empty()) {
    const std::int64_t r = stack.back();
    stack.pop_back();
    bool leaf = true;
    for (int c = 0; c < mc; ++c) leaf = leaf && t.child_rows[static_cast<std::size_t>(r * mc + c)] < 0;
    if (leaf || (max_level >= 0 && t.level[static_cast<std::size_t>(r)] >= max_level)) {
      rows.push_back(r);
      continue;
    }
    for (int c = mc - 1; c >= 0; --c) stack.push_back(t.child_rows[static_cast<std::size_t>(r * mc + c)]);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace rwd::test

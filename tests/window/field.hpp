// A synthetic field on a tree and the error of a window against its leaves, for the
// adaptive window's test (tests/window/test_adaptive.cpp) and benchmark
// (bench/window/bench_lod.cpp). Pure; brute force, sharing no code with select().
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "brute_force.hpp"
#include "rewind/window/select.hpp"

namespace rwd::test {

/// The parent row of every row (-1 for the root).
inline std::vector<std::int64_t> parents_of(const window::TreeView& t) {
  std::vector<std::int64_t> parent(static_cast<std::size_t>(t.rows()), -1);
  for (std::int64_t r = 0; r < t.rows(); ++r)
    for (int c = 0; c < t.max_children; ++c)
      if (const auto k = t.child_rows[static_cast<std::size_t>(r * t.max_children + c)]; k >= 0)
        parent[static_cast<std::size_t>(k)] = r;
  return parent;
}

/// Cell values of every grid: leaves sample f at cell centres, parents average their
/// children (as the forest restricts); and each grid's detail by its definition.
struct Field {
  std::vector<std::vector<double>> cells;
  std::vector<double> detail;
  /// Each row's octants' shares of its parent's detail (select.hpp, "Octants"): rows *
  /// max_children, the root's 0.
  std::vector<double> shares;
};

/// The octant of grid cell `index` (cells `s`): its upper halves on the refined axes
/// (max_children 4: x, y; 8: x, y, z).
inline int octant_of(const std::array<int, 3>& s, int max_children, std::int64_t index) {
  const int axes = max_children == 8 ? 3 : max_children == 4 ? 2 : 1;
  int o = 0;
  for (int a = 0; a < 3; ++a) {
    const auto i = index % s[a];
    index /= s[a];
    if (a < axes && 2 * i >= s[a]) o |= 1 << a;
  }
  return o;
}

/// Index of the cell of grid `g` (cells `s`) holding point x.
inline std::int64_t cell_at(const std::array<double, 6>& g, const std::array<int, 3>& s, const std::array<double, 3>& x) {
  std::int64_t index = 0;
  for (int a = 2; a >= 0; --a) {
    const int i = std::clamp(static_cast<int>(std::floor((x[a] - g[2 * a]) / (g[2 * a + 1] - g[2 * a]) * s[a])), 0, s[a] - 1);
    index = index * s[a] + i;
  }
  return index;
}

inline std::array<double, 3> centre(const std::array<double, 6>& g, const std::array<int, 3>& s, std::int64_t index) {
  std::array<double, 3> x{};
  for (int a = 0; a < 3; ++a) {
    const auto i = index % s[a];
    index /= s[a];
    x[a] = g[2 * a] + (static_cast<double>(i) + 0.5) * (g[2 * a + 1] - g[2 * a]) / s[a];
  }
  return x;
}

template <class F>
Field make_field(const window::TreeView& t, F f) {
  const std::int64_t per = std::int64_t{t.cells[0]} * t.cells[1] * t.cells[2];
  Field out{std::vector<std::vector<double>>(static_cast<std::size_t>(t.rows()),
                                             std::vector<double>(static_cast<std::size_t>(per))),
            std::vector<double>(static_cast<std::size_t>(t.rows()), 0.0),
            std::vector<double>(static_cast<std::size_t>(t.rows() * t.max_children), 0.0)};
  for (std::int64_t r = t.rows() - 1; r >= 0; --r) {  // children after parents: leaves first
    auto& v = out.cells[static_cast<std::size_t>(r)];
    const auto& g = t.bbox[static_cast<std::size_t>(r)];
    std::vector<int> n(v.size(), 0);
    for (int c = 0; c < t.max_children; ++c) {
      const auto k = t.child_rows[static_cast<std::size_t>(r * t.max_children + c)];
      if (k < 0) continue;
      for (std::int64_t i = 0; i < per; ++i) {
        const auto at = cell_at(g, t.cells, centre(t.bbox[static_cast<std::size_t>(k)], t.cells, i));
        v[static_cast<std::size_t>(at)] += out.cells[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
        ++n[static_cast<std::size_t>(at)];
      }
    }
    for (std::int64_t i = 0; i < per; ++i)
      v[static_cast<std::size_t>(i)] = n[static_cast<std::size_t>(i)] ? v[static_cast<std::size_t>(i)] / n[static_cast<std::size_t>(i)]
                                                                      : f(centre(g, t.cells, i));
    double d2 = 0;
    for (int c = 0; c < t.max_children; ++c) {
      const auto k = t.child_rows[static_cast<std::size_t>(r * t.max_children + c)];
      for (std::int64_t i = 0; k >= 0 && i < per; ++i) {
        const double diff = out.cells[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] -
                            v[static_cast<std::size_t>(cell_at(g, t.cells, centre(t.bbox[static_cast<std::size_t>(k)], t.cells, i)))];
        d2 += diff * diff;
        out.shares[static_cast<std::size_t>(k * t.max_children + octant_of(t.cells, t.max_children, i))] += diff * diff;
      }
    }
    out.detail[static_cast<std::size_t>(r)] = std::sqrt(d2);
  }
  for (auto& s : out.shares) s = std::sqrt(s);
  return out;
}

/// The piece holding point x (its cells' boxes, half-open; a strided piece, the root's
/// subsample, its grid's box: its value is then the root's cell there), or nullptr;
/// throws if two do.
inline const window::Piece* piece_at(const window::TreeView& t, const window::Selection& sel,
                                     const std::array<double, 3>& x) {
  const window::Piece* found = nullptr;
  for (const auto& p : sel.pieces) {
    bool in = true;
    const auto& g = t.bbox[static_cast<std::size_t>(p.row)];
    for (int a = 0; a < 3 && in; ++a)
      in = p.stride > 1 ? x[a] >= g[2 * a] && x[a] <= g[2 * a + 1]
                        : x[a] >= p.origin[a] && x[a] < p.origin[a] + p.count[a] * p.cell[a];
    if (!in) continue;
    if (found) throw std::logic_error("two pieces hold one point");
    found = &p;
  }
  return found;
}

/// Relative L2 error (volume-weighted) of the window against the leaf cells meeting the
/// box: each leaf cell compared with the returned cell covering its centre (the one
/// piece holding it: the pieces of a grid shown in part are found by where they lie).
inline double window_error(const window::TreeView& t, const Field& f, const window::Window& w,
                           const window::Selection& sel) {
  const auto grids = bf_grids(t, w.box);
  double err = 0, norm = 0;
  for (const auto& g : grids) {
    if (!g.leaf || g.cells == 0) continue;
    const auto& b = t.bbox[static_cast<std::size_t>(g.row)];
    const double vol = (b[1] - b[0]) * (b[3] - b[2]) * (b[5] - b[4]) / (t.cells[0] * t.cells[1] * t.cells[2]);
    for (const int k : g.hit[2])
      for (const int j : g.hit[1])
        for (const int i : g.hit[0]) {
          const auto index = i + t.cells[0] * (j + std::int64_t{t.cells[1]} * k);
          const auto x = centre(b, t.cells, index);
          const window::Piece* p = piece_at(t, sel, x);
          if (!p) throw std::logic_error("a leaf cell meeting the box is under no piece");
          const auto& pb = t.bbox[static_cast<std::size_t>(p->row)];
          const double leaf = f.cells[static_cast<std::size_t>(g.row)][static_cast<std::size_t>(index)];
          const double shown =
              f.cells[static_cast<std::size_t>(p->row)][static_cast<std::size_t>(cell_at(pb, t.cells, x))];
          err += vol * (leaf - shown) * (leaf - shown);
          norm += vol * leaf * leaf;
        }
  }
  return std::sqrt(err / norm);
}

}  // namespace rwd::test

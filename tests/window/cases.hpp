// What the window tests share: random query boxes, the tiling check every answer passes,
// and a RowSource that hands out only the rows loaded before.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "brute_force.hpp"
#include "rewind/spacetree/tree.hpp"
#include "rewind/window/select.hpp"

namespace rwd::test {

/// Random query boxes of every kind the GUI and the collector send.
struct BoxMaker {
  std::mt19937 rng;
  std::array<double, 3> lo0, dom;  // domain lo and extent
  int finest;                       // cells per axis at the deepest level, for face snapping

  double uni(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
  double face(int a) { return lo0[a] + dom[a] * pick(finest + 1) / finest; }
  double at(int a, double f) { return lo0[a] + f * dom[a]; }

  /// Boxes for a random tree of `shape` (faces snapped to its finest cells).
  static BoxMaker of(const spacetree::TreeShape& shape, unsigned seed) {
    return {std::mt19937(seed),
            shape.domain.lo,
            {shape.domain.extent(0), shape.domain.extent(1), shape.domain.extent(2)},
            shape.s[0] << shape.max_depth};
  }

  /// An adaptive window: a box from make(), one of `budgets`, a level cap one time in four.
  template <std::size_t N>
  window::Window adaptive_window(const std::int64_t (&budgets)[N]) {
    window::Window w;
    w.lod = window::Lod::adaptive;
    w.box = make();
    w.budget = budgets[static_cast<std::size_t>(pick(static_cast<int>(N)))];
    w.max_level = pick(4) == 0 ? pick(5) - 1 : -1;
    return w;
  }

  window::Box make() {
    window::Box b;
    const int kind = pick(8);
    for (int a = 0; a < 3; ++a) {
      double lo = 0, hi = 0;
      switch (kind) {
        case 0: lo = at(a, uni(-0.2, 1.2)), hi = at(a, uni(-0.2, 1.2)); break;  // anywhere
        case 1: lo = face(a), hi = face(a); break;                              // on faces
        case 2: lo = at(a, 0), hi = at(a, 1); break;                            // whole domain
        case 3: lo = at(a, uni(0, 1)), hi = lo + 1e-6 * dom[a]; break;          // tiny
        case 4: lo = at(a, uni(1.01, 2)), hi = lo + dom[a]; break;              // outside
        default: lo = at(a, uni(0, 1)), hi = at(a, uni(0, 1)); break;           // inside
      }
      if (lo > hi) std::swap(lo, hi);
      if (pick(5) == 0) hi = lo = (pick(2) == 0 ? face(a) : at(a, uni(0, 1)));  // a slice
      if (pick(20) == 0) lo = hi = at(a, 1);                                    // closing face
      b.lo[a] = lo;
      b.hi[a] = hi;
    }
    return b;
  }
};

inline double volume(const rwd::window::Piece& p) {
  double v = 1;
  for (int a = 0; a < 3; ++a) v *= (p.count[a] - 1) * p.spacing[a] + p.cell[a];
  return v;
}

/// True if x lies in cell [c0, c1) on an axis with the selection's face snapping.
inline bool holds(double c0, double c1, double x, double extent, double dom_hi) {
  return rwd::test::bf_meets_axis(c0, c1, x, x, extent, dom_hi);
}

/// A window in words, for a failing check's message.
inline std::string describe(const window::Window& w) {
  std::ostringstream out;
  out << "box lo " << w.box.lo[0] << ' ' << w.box.lo[1] << ' ' << w.box.lo[2] << " hi " << w.box.hi[0] << ' '
      << w.box.hi[1] << ' ' << w.box.hi[2] << " budget " << w.budget << " max_level " << w.max_level;
  return out.str();
}

/// The selection has the brute force's level, stride and pieces, each on its row's level.
inline void require_pieces(const window::TreeView& t, const window::Selection& sel, const BfAnswer& bf) {
  REQUIRE(sel.level == bf.level);
  REQUIRE(sel.stride == bf.stride);
  REQUIRE(sel.pieces.size() == bf.pieces.size());
  for (std::size_t i = 0; i < sel.pieces.size(); ++i) {
    const auto& p = sel.pieces[i];
    REQUIRE(BfPiece{p.row, p.first, p.count, p.stride} == bf.pieces[i]);
    REQUIRE(p.level == t.level[static_cast<std::size_t>(p.row)]);
  }
}

/// The points of box ∩ domain lie in exactly one returned cell, and no two pieces overlap
/// (a selection without stride).
inline void check_tiles(const window::TreeView& t, const window::Window& w, const window::Selection& sel,
                        std::mt19937& rng) {
  const auto& root = t.bbox[0];
  const auto ext = [&](int a) { return root[2 * a + 1] - root[2 * a]; };
  if (sel.stride > 1 || sel.pieces.empty()) return;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 40; ++n) {
    std::array<double, 3> x{};
    bool inside = true;
    for (int a = 0; a < 3; ++a) {
      const double lo = std::max(w.box.lo[a], root[2 * a]), hi = std::min(w.box.hi[a], root[2 * a + 1]);
      inside = inside && lo <= hi;
      x[a] = w.box.hi[a] - w.box.lo[a] <= 2e-9 * ext(a) ? 0.5 * (w.box.lo[a] + w.box.hi[a]) : lo + u(rng) * (hi - lo);
    }
    if (!inside) break;
    int holders = 0;
    for (const auto& p : sel.pieces) {
      bool in = true;
      for (int a = 0; a < 3 && in; ++a) {
        const double rel = (x[a] - p.origin[a]) / p.cell[a];
        const int i = std::clamp(static_cast<int>(std::floor(rel)), 0, p.count[a] - 1);
        in = holds(p.origin[a] + i * p.cell[a], p.origin[a] + (i + 1) * p.cell[a], x[a], ext(a), root[2 * a + 1]);
      }
      holders += in;
    }
    INFO("point " << x[0] << ' ' << x[1] << ' ' << x[2]);
    REQUIRE(holders == 1);
  }
  // ...and no two pieces overlap (their volumes add up to the union's).
  if (sel.pieces.size() > 400) return;
  for (std::size_t i = 0; i < sel.pieces.size(); ++i)
    for (std::size_t j = i + 1; j < sel.pieces.size(); ++j) {
      double common = 1;
      for (int a = 0; a < 3; ++a) {
        const auto& p = sel.pieces[i];
        const auto& q = sel.pieces[j];
        const double lo = std::max(p.origin[a], q.origin[a]);
        const double hi = std::min(p.origin[a] + p.count[a] * p.cell[a], q.origin[a] + q.count[a] * q.cell[a]);
        common *= std::max(0.0, hi - lo - 1e-12);
      }
      REQUIRE(common == 0.0);
    }
  double total = 0;
  for (const auto& p : sel.pieces) total += volume(p);
  double bbox_volume = 1;
  for (int a = 0; a < 3; ++a) bbox_volume *= sel.covered.hi[a] - sel.covered.lo[a];
  REQUIRE(total <= bbox_volume * (1 + 1e-9));
}

/// A RowSource over a TreeView that hands out only rows loaded before: an entry asked
/// for before load() throws, so a walk that needs rows it did not load fails.
class Paged final : public window::RowSource {
 public:
  explicit Paged(const rwd::window::TreeView& t) : t_(t), loaded_(static_cast<std::size_t>(t.rows()), false) {}
  std::array<int, 3> cells() const override { return t_.cells; }
  int max_children() const override { return t_.max_children; }
  std::int64_t rows() const override { return t_.rows(); }
  void load(const std::vector<std::int64_t>& rows) override {
    REQUIRE(std::is_sorted(rows.begin(), rows.end()));
    for (const auto r : rows) {
      if (!loaded_.at(static_cast<std::size_t>(r))) rows_loaded.push_back(r);
      loaded_.at(static_cast<std::size_t>(r)) = true;
    }
  }
  int level(std::int64_t r) const override { return t_.level[at(r)]; }
  const std::array<double, 6>& bbox(std::int64_t r) const override { return t_.bbox[at(r)]; }
  bool has_detail() const override { return !t_.detail.empty(); }
  double detail(std::int64_t r) const override { return t_.detail[at(r)]; }
  bool has_shares() const override { return !t_.shares.empty(); }
  double share(std::int64_t r, int o) const override {
    return t_.shares[at(r) * static_cast<std::size_t>(t_.max_children) + static_cast<std::size_t>(o)];
  }
  std::int64_t child(std::int64_t r, int c) const override {
    return t_.child_rows[at(r) * static_cast<std::size_t>(t_.max_children) + static_cast<std::size_t>(c)];
  }
  std::vector<std::int64_t> rows_loaded;  ///< every row loaded, in order

 private:
  std::size_t at(std::int64_t r) const {
    if (!loaded_.at(static_cast<std::size_t>(r))) throw std::logic_error("row " + std::to_string(r) + " read, not loaded");
    return static_cast<std::size_t>(r);
  }
  rwd::window::TreeView t_;
  std::vector<bool> loaded_;
};

}  // namespace rwd::test

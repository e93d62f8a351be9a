// Writes random trees with details, adaptive windows on them and rwd::window::select's
// answers as text, for tests/python/check_adaptive.py to compare rewind.selection with,
// piece by piece. Not a test by itself.
//   tree SX SY SZ MAX_CHILDREN ROWS SHARES, then a line per row: level, bbox (6), children,
//   detail, and (SHARES = 1: the octant walk) its MAX_CHILDREN octants' shares
//   window LO (3) HI (3) BUDGET MAX_LEVEL, then: answer LEVEL STRIDE PIECES, then a line per
//   piece: row level first (3) count (3) stride origin (3) spacing (3)
#include <cstdio>
#include <random>

#include "../spacetree/random_tree.hpp"
#include "rewind/window/select.hpp"
#include "rewind/window/tree_view.hpp"

int main() {
  for (unsigned seed = 1; seed <= 24; ++seed) {
    const bool octants = seed > 12;  // the same kinds of trees again, with shares
    const int dim = seed % 2 ? 2 : 3;
    auto shape = rwd::test::unit_shape(dim, dim == 2 ? 5 : 3, 4);
    if (seed % 3 == 0) {  // faces that are not binary fractions
      shape.domain.lo = {0.1, -0.3, 0.7};
      shape.domain.hi = {0.8, 0.6, dim == 2 ? 1.0 : 1.8};
    }
    const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(shape, seed, 6, 0.5));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> detail(arrays.level.size());
    for (auto& d : detail) d = seed % 4 == 1 ? static_cast<double>(rng() % 3) : u(rng) * 10;
    auto view = arrays.view();
    view.detail = detail;
    std::vector<double> shares(octants ? detail.size() * static_cast<std::size_t>(view.max_children) : 0);
    for (auto& s : shares) s = seed % 4 == 1 ? static_cast<double>(rng() % 3) : u(rng) * 10;
    view.shares = shares;
    std::printf("tree %d %d %d %d %zu %d\n", view.cells[0], view.cells[1], view.cells[2], view.max_children,
                arrays.level.size(), octants ? 1 : 0);
    for (std::size_t r = 0; r < arrays.level.size(); ++r) {
      std::printf("%d", arrays.level[r]);
      for (const double b : arrays.bbox[r]) std::printf(" %.17g", b);
      for (int c = 0; c < view.max_children; ++c)
        std::printf(" %lld", static_cast<long long>(arrays.child_rows[r * static_cast<std::size_t>(view.max_children) + static_cast<std::size_t>(c)]));
      std::printf(" %.17g", detail[r]);
      for (int o = 0; octants && o < view.max_children; ++o)
        std::printf(" %.17g", shares[r * static_cast<std::size_t>(view.max_children) + static_cast<std::size_t>(o)]);
      std::printf("\n");
    }
    const std::int64_t budgets[] = {0, 10, 64, 150, 300, 700, 1500, 3000, 7000};
    for (int q = 0; q < 30; ++q) {
      rwd::window::Window w;
      w.lod = rwd::window::Lod::adaptive;
      for (int a = 0; a < 3; ++a) {
        double lo = shape.domain.lo[a] + (u(rng) * 1.2 - 0.1) * shape.domain.extent(a);
        double hi = q % 7 == 0 ? lo : shape.domain.lo[a] + (u(rng) * 1.2 - 0.1) * shape.domain.extent(a);
        if (q % 5 == 0) lo = shape.domain.lo[a], hi = shape.domain.hi[a];
        w.box.lo[a] = std::min(lo, hi);
        w.box.hi[a] = std::max(lo, hi);
      }
      w.budget = budgets[rng() % std::size(budgets)];
      w.max_level = q % 4 == 0 ? static_cast<int>(rng() % 4) : -1;
      const auto sel = rwd::window::select(view, w);
      std::printf("window %.17g %.17g %.17g %.17g %.17g %.17g %lld %d\n", w.box.lo[0], w.box.lo[1], w.box.lo[2],
                  w.box.hi[0], w.box.hi[1], w.box.hi[2], static_cast<long long>(w.budget), w.max_level);
      std::printf("answer %d %d %zu\n", sel.level, sel.stride, sel.pieces.size());
      for (const auto& p : sel.pieces)
        std::printf("%lld %d %d %d %d %d %d %d %d %.17g %.17g %.17g %.17g %.17g %.17g\n", static_cast<long long>(p.row),
                    p.level, p.first[0], p.first[1], p.first[2], p.count[0], p.count[1], p.count[2], p.stride,
                    p.origin[0], p.origin[1], p.origin[2], p.spacing[0], p.spacing[1], p.spacing[2]);
    }
  }
  return 0;
}

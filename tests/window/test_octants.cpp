// The adaptive walk over octants (select.hpp, "Octants"): on random trees with random
// shares, every window fits its budget, tiles the box once, loads only rows the walk
// may look at and answers the same from the whole tree as from rows loaded on demand;
// with a field's shares it spends a budget between two levels where the uniform rule
// and whole grids cannot.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "../spacetree/random_tree.hpp"
#include "cases.hpp"
#include "field.hpp"
#include "rewind/window/select.hpp"
#include "rewind/window/tree_view.hpp"

using rwd::window::Lod;
using rwd::window::Window;

SCENARIO("adaptive windows by octants fit the budget, tile the box and read only what they visit", "[window]") {
  const std::int64_t budgets[] = {0, 17, 64, 100, 300, 1000, 2500, 4096, 20000};
  for (const int dim : {2, 3}) {
    for (unsigned seed = 1; seed <= 10; ++seed) {
      GIVEN("a " << dim << "-D random tree, seed " << seed << ", with random shares (many equal)") {
        const auto shape = rwd::test::unit_shape(dim, dim == 2 ? 5 : 3, 4);
        const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(shape, seed, 4, 0.35, seed % 4 != 0));
        std::mt19937 rng(seed);
        auto view = arrays.view();
        std::vector<double> detail(arrays.level.size(), 1.0);
        std::vector<double> shares(arrays.level.size() * static_cast<std::size_t>(view.max_children));
        for (auto& s : shares) s = seed % 2 ? static_cast<double>(rng() % 4) : std::ldexp(rng() % 1000, -7);
        view.detail = detail;
        view.shares = shares;
        auto boxes = rwd::test::BoxMaker::of(shape, seed * 7919u);
        THEN("each window is adaptive, within budget, tiles the box, and equals the lazy walk's") {
          for (int q = 0; q < 30; ++q) {
            const Window w = boxes.adaptive_window(budgets);
            INFO(rwd::test::describe(w));
            rwd::test::Paged paged(view);
            const auto sel = rwd::window::select(paged, w);
            REQUIRE(sel.lod == Lod::adaptive);
            if (w.budget > 0) REQUIRE(sel.values <= w.budget);
            std::int64_t values = 0;
            for (const auto& p : sel.pieces) values += p.values();
            REQUIRE(values == sel.values);
            rwd::test::check_tiles(view, w, sel, rng);
            const auto whole = rwd::window::select(view, w);
            REQUIRE(whole.rows() == sel.rows());
            REQUIRE(whole.values == sel.values);
            // No budget: every leaf (within the cap) shows, as the uniform rule's answer.
            Window unlimited = w;
            unlimited.budget = 0;
            const auto all = rwd::window::select(view, unlimited);
            unlimited.lod = Lod::uniform;
            REQUIRE(all.values == rwd::window::select(view, unlimited).values);
            // Loaded rows: the root, the last row, children of grids meeting the box above the cap.
            const auto parent = rwd::test::parents_of(view);
            const auto grids = rwd::test::bf_grids(view, w.box);
            const int cap = w.max_level < 0 ? view.level.back() : std::min(w.max_level, view.level.back());
            for (const auto r : paged.rows_loaded) {
              if (r == 0 || r == view.rows() - 1) continue;
              const auto up = parent[static_cast<std::size_t>(r)];
              INFO("row " << r << " loaded, its parent " << up);
              REQUIRE(grids[static_cast<std::size_t>(up)].cells > 0);
              REQUIRE(grids[static_cast<std::size_t>(up)].level < cap);
            }
          }
        }
      }
    }
  }
}

SCENARIO("shares that do not fit the tree, or are not finite, are refused with one clear message", "[window]") {
  const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 2), 2));
  auto view = arrays.view();
  Window w;
  w.box = {{0, 0, 0}, {1, 1, 0.125}};
  w.budget = 100;
  w.lod = Lod::adaptive;
  std::vector<double> shares(arrays.level.size() * 4, 1.0);
  view.shares = std::span<const double>(shares).first(7);
  REQUIRE_THROWS_WITH(rwd::window::select(view, w), Catch::Contains("7 shares for 21 rows of 4 octants"));
  view.shares = shares;
  shares[4 * 1 + 2] = std::nan("");  // row 1 (level 1), octant 2: offered from the root
  REQUIRE_THROWS_WITH(rwd::window::select(view, w),
                      Catch::Contains("share of row 1 in octant 2 is negative or not finite"));
  shares[4 * 1 + 2] = 1;
  REQUIRE_NOTHROW(rwd::window::select(view, w));
}

SCENARIO("a budget between two levels buys octants where the field changes", "[window]") {
  GIVEN("a full 2-D tree of depth 4 and a field with one sharp edge") {
    const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 4), 4));
    auto view = arrays.view();
    const auto field =
        rwd::test::make_field(view, [](const std::array<double, 3>& x) { return x[0] < 0.3 ? 1.0 : 0.0; });
    view.detail = field.detail;
    view.shares = field.shares;
    Window w;
    w.box = {{0, 0, 0}, {1, 1, 0.125}};
    w.budget = 16 * 16 + 3 * 4 * 4 * 4;  // level 2 (256 cells) and three octants' worth
    const auto uniform = rwd::window::select(view, w);
    w.lod = Lod::adaptive;
    const auto adaptive = rwd::window::select(view, w);
    THEN("the uniform rule stops at level 2; octants along the edge are shown finer, some grids in several pieces") {
      REQUIRE(uniform.level == 2);
      REQUIRE(adaptive.values > uniform.values);
      REQUIRE(adaptive.values <= w.budget);
      // Some grid is shown in part (the box holds every grid whole).
      REQUIRE(
          std::any_of(adaptive.pieces.begin(), adaptive.pieces.end(), [](const auto& p) { return p.values() < 16; }));
      const auto slots = adaptive.slots();
      REQUIRE(slots.size() == adaptive.pieces.size());
      for (std::size_t i = 0; i < slots.size(); ++i) REQUIRE(adaptive.rows()[slots[i]] == adaptive.pieces[i].row);
      for (const auto& p : adaptive.pieces)
        if (p.level == 3) REQUIRE(p.origin[0] < 0.3 + 0.25);  // the finer pieces lie at the edge
      REQUIRE(rwd::test::window_error(view, field, w, adaptive) < rwd::test::window_error(view, field, w, uniform));
    }
  }
}

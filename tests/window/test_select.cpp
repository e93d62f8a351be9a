// rwd::window::select against a brute-force selection on random adaptive trees.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <algorithm>

#include "../spacetree/random_tree.hpp"
#include "brute_force.hpp"
#include "cases.hpp"
#include "rewind/window/select.hpp"
#include "rewind/window/tree_view.hpp"

using rwd::test::BoxMaker;
using rwd::test::Paged;
using rwd::window::Box;
using rwd::window::Selection;
using rwd::window::TreeView;
using rwd::window::Window;

namespace {

/// Everything the brute force and the definitions require of one answer.
void check_answer(const TreeView& t, const Window& w, const Selection& sel, std::mt19937& rng) {
  const auto bf = rwd::test::bf_select(t, w);
  INFO(rwd::test::describe(w));
  rwd::test::require_pieces(t, sel, bf);  // same L*, stride and pieces as the brute force
  std::int64_t sum = 0;
  for (const auto& p : sel.pieces) sum += p.values();
  REQUIRE(sel.values == sum);
  // Never over budget; the finest level that fits was chosen.
  if (w.budget > 0) REQUIRE(sel.values <= w.budget);
  if (sel.stride == 1 && sel.level < bf.cap && w.budget > 0)
    REQUIRE(bf.count[static_cast<std::size_t>(sel.level) + 1] > w.budget);
  if (sel.stride > 1) REQUIRE(bf.count[0] > w.budget);
  // Cost follows the selection: only the root and children of meeting grids up to L*.
  REQUIRE(sel.visited <= 1 + t.max_children * bf.meeting_upto_level);
  // Runs cover exactly the piece rows.
  std::vector<std::int64_t> from_runs;
  for (const auto& r : sel.runs)
    for (std::int64_t i = 0; i < r.count; ++i) from_runs.push_back(r.first_row + i);
  REQUIRE(from_runs == sel.rows());
  for (std::size_t i = 1; i < sel.runs.size(); ++i)
    REQUIRE(sel.runs[i].first_row > sel.runs[i - 1].first_row + sel.runs[i - 1].count);

  const auto& root = t.bbox[0];
  const auto ext = [&](int a) { return root[2 * a + 1] - root[2 * a]; };
  for (const auto& p : sel.pieces) {
    // Coarse leaves only where nothing finer exists; nothing finer than L*.
    bool leaf = true;
    for (int c = 0; c < t.max_children; ++c)
      leaf = leaf && t.child_rows[static_cast<std::size_t>(p.row * t.max_children + c)] < 0;
    REQUIRE(p.level <= sel.level);
    if (p.level < sel.level) REQUIRE(leaf);
    // Every returned cell meets the box; geometry matches the grid's cells.
    const auto& g = t.bbox[static_cast<std::size_t>(p.row)];
    for (int a = 0; a < 3; ++a) {
      REQUIRE(p.spacing[a] == Approx(p.cell[a] * p.stride));
      for (int i = 0; i < p.count[a]; ++i) {
        const auto c = rwd::test::bf_cell(g[2 * a], g[2 * a + 1], t.cells[a], p.first[a] + i * p.stride);
        REQUIRE(rwd::test::bf_meets_axis(c[0], c[1], w.box.lo[a], w.box.hi[a], ext(a), root[2 * a + 1]));
      }
      REQUIRE(p.origin[a] == Approx(rwd::test::bf_cell(g[2 * a], g[2 * a + 1], t.cells[a], p.first[a])[0]));
      REQUIRE(sel.covered.lo[a] <= p.origin[a]);
      REQUIRE(sel.covered.hi[a] >= p.origin[a] + (p.count[a] - 1) * p.spacing[a] + p.cell[a] - 1e-12);
    }
  }
  rwd::test::check_tiles(t, w, sel, rng);
}

}  // namespace

SCENARIO("select agrees with brute force on random adaptive trees", "[window]") {
  const std::int64_t budgets[] = {0, 1, 2, 3, 7, 16, 17, 50, 64, 300, 1000, 4096, 20000, 1000000};
  for (const int dim : {2, 3}) {
    for (unsigned seed = 1; seed <= 24; ++seed) {
      GIVEN("a " << dim << "-D random tree, seed " << seed) {
        auto shape = rwd::test::unit_shape(dim, dim == 2 ? 5 : 3, seed % 3 == 0 ? 2 : 4);
        if (seed % 2 == 0) {  // a domain whose cell faces are not exact binary fractions
          shape.domain.lo = {0.1, -0.3, 0.7};
          shape.domain.hi = {0.1 + 0.7, -0.3 + 0.9, 0.7 + (dim == 2 ? 0.3 : 1.1)};
        }
        const auto tree = rwd::test::random_tree(shape, seed, 4, 0.35, seed % 4 != 0);
        const auto arrays = rwd::window::arrays_of(tree);
        const auto view = arrays.view();
        const int deepest = tree.levels() - 1;
        BoxMaker boxes{std::mt19937(seed * 7919u),
                       shape.domain.lo,
                       {shape.domain.extent(0), shape.domain.extent(1), shape.domain.extent(2)},
                       shape.s[0] << shape.max_depth};
        std::mt19937 rng(seed);
        THEN("every random window matches the brute force and the definitions") {
          for (int q = 0; q < 60; ++q) {
            Window w;
            w.box = boxes.make();
            w.budget = budgets[static_cast<std::size_t>(boxes.pick(std::size(budgets)))];
            w.max_level = boxes.pick(4) == 0 ? boxes.pick(deepest + 3) - 1 : -1;
            check_answer(view, w, rwd::window::select(view, w), rng);
          }
        }
      }
    }
  }
}

SCENARIO("the level-of-detail cut equals the ParaView reader's old lod_rows", "[window]") {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const auto tree = rwd::test::random_tree(rwd::test::unit_shape(seed % 2 ? 2 : 3, 4), seed);
    const auto arrays = rwd::window::arrays_of(tree);
    for (int cap = -1; cap <= tree.levels(); ++cap) {
      INFO("seed " << seed << " max_level " << cap);
      const auto cut = rwd::window::level_cut(arrays.view(), cap);
      REQUIRE(cut == rwd::test::old_lod_rows(arrays.view(), cap));
      REQUIRE(!cut.empty());
    }
  }
}

SCENARIO("zooming in at the same budget returns a finer level", "[window]") {
  GIVEN("a full 2-D tree of depth 4 with 4x4 cells per grid") {
    const auto tree = rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 4), 4);
    const auto arrays = rwd::window::arrays_of(tree);
    Window w;
    w.budget = 300;
    w.box = {{0, 0, 0}, {1, 1, 0.125}};
    WHEN("the whole domain, then a box 1/4 as wide per axis, is asked for") {
      const auto wide = rwd::window::select(arrays.view(), w);
      w.box = {{0.375, 0.5, 0}, {0.625, 0.75, 0.125}};
      const auto zoom = rwd::window::select(arrays.view(), w);
      THEN("the whole domain comes at level 2 and the zoom at level 4, both uniform and in budget") {
        REQUIRE(wide.level == 2);
        REQUIRE(wide.values == 256);
        REQUIRE(zoom.level == 4);
        REQUIRE(zoom.values == 256);
        for (const auto& p : zoom.pieces) REQUIRE(p.level == 4);
        REQUIRE(zoom.covered.lo[0] == Approx(0.375));
        REQUIRE(zoom.covered.hi[1] == Approx(0.75));
      }
    }
  }
  GIVEN("random 3-D trees") {
    for (unsigned seed = 1; seed <= 12; ++seed) {
      const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(rwd::test::unit_shape(3, 4), seed, 5, 0.4));
      Window w;
      w.budget = 5000;
      w.box = {{0, 0, 0}, {1, 1, 1}};
      const auto wide = rwd::window::select(arrays.view(), w);
      w.box = {{0.4, 0.3, 0.5}, {0.65, 0.55, 0.75}};
      const auto zoom = rwd::window::select(arrays.view(), w);
      REQUIRE(zoom.level >= wide.level);  // a sub-box never gets a coarser answer
      REQUIRE(zoom.values <= w.budget);
    }
  }
}

SCENARIO("a small window costs what it returns, not the tree size", "[window]") {
  GIVEN("a full 3-D tree of depth 4 (4681 grids)") {
    const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(3, 4), 4));
    Window w;
    w.box = {{0.30, 0.30, 0.30}, {0.33, 0.33, 0.33}};
    w.budget = 1000;
    const auto sel = rwd::window::select(arrays.view(), w);
    THEN("it reaches the finest level looking only at the root and the children of 4 grids") {
      REQUIRE(sel.level == 4);
      REQUIRE(static_cast<std::int64_t>(arrays.level.size()) == 4681);
      REQUIRE(sel.visited == 1 + 8 * 4);  // one meeting grid on levels 0-3, 8 leaves on 4
      REQUIRE(sel.pieces.size() == 8);
    }
    WHEN("a tiny budget stops the walk early") {
      w.box = {{0, 0, 0}, {1, 1, 1}};
      w.budget = 64 * 8;
      const auto coarse = rwd::window::select(arrays.view(), w);
      THEN("level 1 is returned and level 2 is abandoned after the 9th grid overflows") {
        REQUIRE(coarse.level == 1);
        REQUIRE(coarse.values == 512);
        REQUIRE(coarse.visited == 1 + 8 + 9);
      }
    }
  }
}


SCENARIO("select on rows loaded on demand equals select on the whole tree and the brute force", "[window]") {
  const std::int64_t budgets[] = {0, 3, 17, 64, 300, 1000, 4096, 20000};
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const int dim = seed % 2 ? 3 : 2;
    const auto shape = rwd::test::unit_shape(dim, dim == 2 ? 5 : 3, 4);
    const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(shape, seed, 4, 0.35, true));
    const auto view = arrays.view();
    BoxMaker boxes{std::mt19937(seed * 31u), shape.domain.lo,
                   {shape.domain.extent(0), shape.domain.extent(1), shape.domain.extent(2)}, shape.s[0] << shape.max_depth};
    std::mt19937 rng(seed);
    for (int q = 0; q < 40; ++q) {
      Window w;
      w.box = boxes.make();
      w.budget = budgets[static_cast<std::size_t>(boxes.pick(std::size(budgets)))];
      w.max_level = boxes.pick(4) == 0 ? boxes.pick(5) - 1 : -1;
      INFO("seed " << seed << " window " << q << " budget " << w.budget);
      Paged paged(view);
      const auto lazy = rwd::window::select(paged, w);
      const auto whole = rwd::window::select(view, w);
      check_answer(view, w, lazy, rng);  // the brute force and the definitions
      REQUIRE(lazy.rows() == whole.rows());
      REQUIRE(lazy.level == whole.level);
      REQUIRE(lazy.stride == whole.stride);
      REQUIRE(lazy.visited == whole.visited);
      for (std::size_t i = 0; i < lazy.pieces.size(); ++i) {
        REQUIRE(lazy.pieces[i].first == whole.pieces[i].first);
        REQUIRE(lazy.pieces[i].count == whole.pieces[i].count);
        REQUIRE(lazy.pieces[i].origin == whole.pieces[i].origin);
      }
    }
  }
  GIVEN("a full 3-D tree of depth 4 (4681 grids) and a small window") {
    const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(3, 4), 4));
    Window w;
    w.box = {{0.30, 0.30, 0.30}, {0.33, 0.33, 0.33}};
    w.budget = 1000;
    Paged paged(arrays.view());
    const auto sel = rwd::window::select(paged, w);
    THEN("the walk loads the root, the last row and the children of the 4 grids it keeps") {
      REQUIRE(sel.level == 4);
      REQUIRE(sel.pieces.size() == 8);
      REQUIRE(paged.rows_loaded.size() == 2 + 8 * 4);
    }
  }
}

SCENARIO("a budget smaller than the root's cells subsamples level 0 uniformly", "[window]") {
  const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 3, 16), 2));
  Window w;
  w.box = {{0, 0, 0}, {1, 1, 0.125}};
  w.budget = 70;  // 256 root cells: k = 2 gives 64
  auto sel = rwd::window::select(arrays.view(), w);
  REQUIRE(sel.level == 0);
  REQUIRE(sel.stride == 2);
  REQUIRE(sel.pieces.size() == 1);
  REQUIRE(sel.pieces[0].count == std::array<int, 3>{8, 8, 1});
  REQUIRE(sel.pieces[0].spacing[0] == Approx(2.0 / 16));
  WHEN("the window pans by one cell the lattice stays anchored at the root's cell 0") {
    w.box.lo[0] = 1.0 / 16;
    sel = rwd::window::select(arrays.view(), w);
    REQUIRE(sel.pieces[0].first[0] % sel.stride == 0);
    REQUIRE(sel.values <= 70);
  }
  WHEN("the budget is a single value") {
    w.budget = 1;
    sel = rwd::window::select(arrays.view(), w);
    REQUIRE(sel.values == 1);
    REQUIRE(sel.stride >= 16);
  }
}

SCENARIO("bad windows are refused with one clear message", "[window]") {
  const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 2), 1));
  const auto view = arrays.view();
  Window w;
  w.box = {{0, 0, 0}, {1, 1, 0.125}};
  w.budget = 10;
  auto bad = w;
  bad.box.lo[1] = 0.7, bad.box.hi[1] = 0.2;
  REQUIRE_THROWS_WITH(rwd::window::select(view, bad), Catch::Contains("lo > hi on y"));
  bad = w;
  bad.box.hi[0] = std::nan("");
  REQUIRE_THROWS_AS(rwd::window::select(view, bad), std::invalid_argument);
  REQUIRE_THROWS_WITH(rwd::window::select(view, bad), Catch::Contains("NaN"));
  bad = w;
  bad.budget = -1;
  REQUIRE_THROWS_WITH(rwd::window::select(view, bad), Catch::Contains("budget"));
  bad = w;
  bad.max_level = -2;
  REQUIRE_THROWS_WITH(rwd::window::select(view, bad), Catch::Contains("max_level"));
  auto broken = view;
  broken.bbox = broken.bbox.first(1);
  REQUIRE_THROWS_AS(rwd::window::select(broken, w), std::invalid_argument);
  REQUIRE_NOTHROW(rwd::window::select(view, w));
}

SCENARIO("a window that is a grid's own bbox returns that grid's cells and no extra layer", "[window]") {
  GIVEN("a 3-D random tree on a domain whose faces are not binary fractions") {
    auto shape = rwd::test::unit_shape(3, 3);
    shape.domain.lo = {0.1, -0.3, 0.7};
    shape.domain.hi = {0.1 + 0.7, -0.3 + 0.9, 0.7 + 1.1};
    const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(shape, 3));
    const auto view = arrays.view();
    THEN("for every grid, its bbox at its level gives exactly its 4x4x4 cells") {
      for (std::int64_t r = 0; r < view.rows(); ++r) {
        const auto& b = arrays.bbox[static_cast<std::size_t>(r)];
        Window w;
        w.box = {{b[0], b[2], b[4]}, {b[1], b[3], b[5]}};
        w.max_level = arrays.level[static_cast<std::size_t>(r)];
        const auto sel = rwd::window::select(view, w);
        INFO("row " << r);
        REQUIRE(sel.values == 64);
        REQUIRE(sel.rows() == std::vector<std::int64_t>{r});
        for (int a = 0; a < 3; ++a) {
          REQUIRE(sel.covered.lo[a] == Approx(b[2 * a]));
          REQUIRE(sel.covered.hi[a] == Approx(b[2 * a + 1]));
        }
      }
    }
  }
}

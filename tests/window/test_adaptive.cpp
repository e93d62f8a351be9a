// The adaptive level of detail of rwd::window::select: against a literal brute force on
// random trees, and its error against the leaves (computed here, cell by cell) against
// the uniform rule's on a field with a sharp front.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>

#include "../spacetree/random_tree.hpp"
#include "brute_force.hpp"
#include "cases.hpp"
#include "field.hpp"
#include "rewind/window/select.hpp"
#include "rewind/window/tree_view.hpp"

using rwd::test::Field;
using rwd::test::make_field;
using rwd::test::parents_of;
using rwd::test::window_error;
using rwd::window::Lod;
using rwd::window::Selection;
using rwd::window::TreeView;
using rwd::window::Window;

namespace {

/// Same pieces as the brute force, within budget, tiling the box; loads only children of
/// grids that meet the box and are returned or above a returned grid.
void check_adaptive(const TreeView& t, const Window& w, std::mt19937& rng) {
  INFO(rwd::test::describe(w));
  rwd::test::Paged paged(t);
  const Selection sel = rwd::window::select(paged, w);
  REQUIRE(sel.lod == Lod::adaptive);
  rwd::test::require_pieces(t, sel, rwd::test::bf_adaptive(t, w));
  if (w.budget > 0) REQUIRE(sel.values <= w.budget);
  rwd::test::check_tiles(t, w, sel, rng);
  // The whole tree's arrays give the same answer as rows loaded on demand.
  REQUIRE(rwd::window::select(t, w).rows() == sel.rows());
  // Cost: a loaded row (beyond the root and the last row) is a child of a grid above the
  // cap that meets the box (what either walk may try).
  const auto parent = parents_of(t);
  const auto grids = rwd::test::bf_grids(t, w.box);
  const int cap = w.max_level < 0 ? t.level.back() : std::min(w.max_level, t.level.back());
  for (const auto r : paged.rows_loaded) {
    if (r == 0 || r == t.rows() - 1) continue;
    const auto up = parent[static_cast<std::size_t>(r)];
    INFO("row " << r << " loaded, its parent " << up);
    REQUIRE(grids[static_cast<std::size_t>(up)].cells > 0);
    REQUIRE(grids[static_cast<std::size_t>(up)].level < cap);
  }
}

}  // namespace

SCENARIO("adaptive windows agree with a literal brute force on random trees", "[window]") {
  const std::int64_t budgets[] = {0, 3, 17, 64, 100, 300, 1000, 2500, 4096, 20000};
  for (const int dim : {2, 3}) {
    for (unsigned seed = 1; seed <= 16; ++seed) {
      GIVEN("a " << dim << "-D random tree, seed " << seed << ", with random details (many equal)") {
        const auto shape = rwd::test::unit_shape(dim, dim == 2 ? 5 : 3, 4);
        const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(shape, seed, 4, 0.35, seed % 4 != 0));
        std::mt19937 rng(seed);
        std::vector<double> detail(arrays.level.size());
        for (auto& d : detail) d = seed % 2 ? static_cast<double>(rng() % 4) : std::ldexp(rng() % 1000, -7);
        auto view = arrays.view();
        view.detail = detail;
        auto boxes = rwd::test::BoxMaker::of(shape, seed * 104729u);
        THEN("every window has the brute force's pieces, fits the budget and tiles the box") {
          for (int q = 0; q < 40; ++q) check_adaptive(view, boxes.adaptive_window(budgets), rng);
        }
      }
    }
  }
}

SCENARIO("a small adaptive window costs what it returns, not the tree size", "[window]") {
  GIVEN("a full 3-D tree of depth 4 (4681 grids) with details, and a small window") {
    const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(3, 4), 4));
    auto view = arrays.view();
    std::vector<double> detail(arrays.level.size(), 1.0);
    view.detail = detail;
    Window w;
    w.box = {{0.30, 0.30, 0.30}, {0.33, 0.33, 0.33}};
    w.budget = 1000;
    w.lod = Lod::adaptive;
    rwd::test::Paged paged(view);
    const auto sel = rwd::window::select(paged, w);
    THEN("it loads what the uniform window loads: the root, the last row, the children of 4 grids") {
      REQUIRE(sel.lod == Lod::adaptive);
      REQUIRE(sel.pieces.size() == 8);
      REQUIRE(paged.rows_loaded.size() == 2 + 8 * 4);
    }
  }
}

SCENARIO("an adaptive window without details, or without a budget, is the uniform one", "[window]") {
  const auto arrays = rwd::window::arrays_of(rwd::test::random_tree(rwd::test::unit_shape(2, 5), 7, 4, 0.4));
  auto view = arrays.view();
  Window w;
  w.box = {{0.1, 0.2, 0}, {0.9, 0.7, 0.125}};
  w.budget = 700;
  const auto uniform = rwd::window::select(view, w);
  w.lod = Lod::adaptive;
  const auto fallback = rwd::window::select(view, w);
  REQUIRE(fallback.lod == Lod::uniform);
  REQUIRE(fallback.rows() == uniform.rows());
  REQUIRE(fallback.level == uniform.level);
  std::vector<double> detail(arrays.level.size(), 1.0);
  view.detail = detail;
  const auto adaptive = rwd::window::select(view, w);
  REQUIRE(adaptive.lod == Lod::adaptive);
  REQUIRE(adaptive.values > uniform.values);  // the budget left over between two levels is spent
  REQUIRE(adaptive.values <= 700);
  w.budget = 0;
  auto unlimited = w;
  unlimited.lod = Lod::uniform;
  REQUIRE(rwd::window::select(view, w).rows() == rwd::window::select(view, unlimited).rows());
}

SCENARIO("a bad detail is refused with one clear message", "[window]") {
  const auto arrays = rwd::window::arrays_of(rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 2), 2));
  auto view = arrays.view();
  Window w;
  w.box = {{0, 0, 0}, {1, 1, 0.125}};
  w.budget = 100;
  w.lod = Lod::adaptive;
  std::vector<double> detail(arrays.level.size(), 1.0);
  view.detail = std::span<const double>(detail).first(3);
  REQUIRE_THROWS_WITH(rwd::window::select(view, w), Catch::Contains("3 details for 21 rows"));
  view.detail = detail;
  detail[1] = std::nan("");  // row 1: a level-1 grid, which the window (level 1, 64 cells) may refine
  REQUIRE_THROWS_WITH(rwd::window::select(view, w), Catch::Contains("detail of row 1 is negative or not finite"));
  detail[1] = 1;
  detail[2] = -1;
  REQUIRE_THROWS_AS(rwd::window::select(view, w), std::invalid_argument);
  detail[2] = 0;
  REQUIRE_NOTHROW(rwd::window::select(view, w));
}

namespace {

/// A sharp circular (spherical) front on a smooth background.
double front(const std::array<double, 3>& x) {
  const double r = std::hypot(x[0] - 0.37, x[1] - 0.56, x[2] - 0.5);
  return 1.5 + std::tanh((r - 0.23) / 0.004) + 0.2 * std::sin(6.0 * x[0]);
}

/// A tree refined to max_depth where grids cross the front (as a solver's adaptation would).
rwd::spacetree::Tree refined_at_front(const rwd::spacetree::TreeShape& shape) {
  auto tree = rwd::spacetree::Tree::full(shape, 2);
  for (int round = 2; round < shape.max_depth; ++round) {
    tree.adapt([](rwd::spacetree::Uid, const rwd::spacetree::Box& b) {
      const double cx = std::clamp(0.37, b.lo[0], b.hi[0]), cy = std::clamp(0.56, b.lo[1], b.hi[1]);
      const double near = std::hypot(cx - 0.37, cy - 0.56), far = std::hypot(std::max(0.37 - b.lo[0], b.hi[0] - 0.37),
                                                                            std::max(0.56 - b.lo[1], b.hi[1] - 0.56));
      return near <= 0.23 && far >= 0.23 ? rwd::spacetree::Mark::refine : rwd::spacetree::Mark::keep;
    });
    tree.balance();
  }
  return tree;
}

}  // namespace

SCENARIO("adaptive windows are never less accurate than uniform ones, and mostly much more", "[window]") {
  struct Case {
    const char* name;
    rwd::spacetree::Tree tree;
    rwd::window::Box box;
  };
  const Case cases[] = {
      {"2-D uniform tree, whole domain", rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 5), 5), {{0, 0, 0}, {1, 1, 0.125}}},
      {"2-D uniform tree, a box on root cell faces", rwd::spacetree::Tree::full(rwd::test::unit_shape(2, 5), 5),
       {{0.25, 0.5, 0}, {0.75, 1, 0.125}}},
      {"2-D tree refined at the front, whole domain", refined_at_front(rwd::test::unit_shape(2, 6)), {{0, 0, 0}, {1, 1, 0.125}}},
      {"3-D uniform tree, whole domain", rwd::spacetree::Tree::full(rwd::test::unit_shape(3, 3), 3), {{0, 0, 0}, {1, 1, 1}}},
  };
  for (const auto& c : cases) {
    GIVEN(c.name) {
      const auto arrays = rwd::window::arrays_of(c.tree);
      auto view = arrays.view();
      const Field field = make_field(view, front);
      view.detail = field.detail;
      // Whole grids (details only, a file before format 1.10), then octants (shares).
      double mean[2] = {0, 0}, best[2] = {1, 1};
      int n[2] = {0, 0};
      const double root_cells = static_cast<double>(view.cells[0] * view.cells[1] * view.cells[2]);
      for (const int octants : {0, 1}) {
        view.shares = octants ? std::span<const double>(field.shares) : std::span<const double>();
        for (double budget = root_cells; budget < 3e5; budget *= 1.5) {
          Window w;
          w.box = c.box;
          w.budget = static_cast<std::int64_t>(budget);
          const auto uniform = rwd::window::select(view, w);
          w.lod = Lod::adaptive;
          const auto adaptive = rwd::window::select(view, w);
          const double eu = window_error(view, field, w, uniform), ea = window_error(view, field, w, adaptive);
          INFO((octants ? "octants" : "whole grids")
               << ", budget " << w.budget << ": uniform " << uniform.values << " cells, error " << eu << "; adaptive "
               << adaptive.values << " cells, error " << ea);
          REQUIRE(adaptive.values <= w.budget);
          REQUIRE(ea <= eu * (1 + 1e-12));
          if (eu > 0) mean[octants] += std::log(std::max(ea, 1e-300) / eu), ++n[octants];
          best[octants] = std::min(best[octants], eu > 0 ? ea / eu : 1.0);
        }
        mean[octants] = std::exp(mean[octants] / n[octants]);
      }
      THEN(
          "over the budgets below the leaves the error ratio's geometric mean is <= 0.85 (octants: <= 0.6 and "
          "below whole grids'), its best <= 0.5") {
        INFO(n[0] << " budgets; whole grids: geometric mean ratio " << mean[0] << ", best " << best[0]
                  << "; octants: " << mean[1] << ", best " << best[1]);
        REQUIRE(mean[0] <= 0.85);
        REQUIRE(best[0] <= 0.5);
        REQUIRE(mean[1] <= 0.72);
        REQUIRE(mean[1] <= 0.92 * mean[0]);
      }
    }
  }
}

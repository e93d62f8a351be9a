#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "random_tree.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/tree.hpp"

using namespace rwd::spacetree;
using rwd::test::random_tree;
using rwd::test::unit_shape;

namespace {
// Brute force: two leaves touch (face, edge or corner) if their closed boxes
// intersect, periodic images included.
bool touch(const TreeShape& sh, const Box& a, const Box& b) {
  for (int shift = -1; shift <= 1; ++shift) {
    if (shift != 0 && !sh.periodic[0]) continue;
    bool ok = true;
    for (int ax = 0; ax < 3; ++ax) {
      const double off = ax == 0 ? shift * sh.domain.extent(0) : 0.0;
      const double eps = 1e-12;
      if (b.lo[ax] + off > a.hi[ax] + eps || b.hi[ax] + off < a.lo[ax] - eps) ok = false;
    }
    if (ok) return true;
  }
  return false;
}
}  // namespace

SCENARIO("A fully refined tree has every grid down to its depth", "[spacetree][tree]") {
  GIVEN("a 3-D shape with r = 2 refined to depth 3") {
    const Tree t = Tree::full(unit_shape(3, 5), 3);
    THEN("it has 1 + 8 + 64 + 512 grids, root first, sorted by UID") {
      CHECK(t.size() == 585);
      CHECK(t.nodes()[0].uid == Uid::make(0, {0, 0, 0}));
      CHECK(std::is_sorted(t.nodes().begin(), t.nodes().end(),
                           [](const GridNode& a, const GridNode& b) { return a.uid < b.uid; }));
      CHECK(t.leaf_count() == 512);
      CHECK(t.levels() == 4);
    }
    THEN("children of every grid are contiguous and point back to their parent") {
      for (std::size_t i = 0; i < t.size(); ++i) {
        const auto& n = t.nodes()[i];
        if (n.is_leaf()) continue;
        for (int c = 0; c < 8; ++c) {
          const auto& child = t.nodes()[static_cast<std::size_t>(n.first_child + c)];
          REQUIRE(child.parent == static_cast<std::int32_t>(i));
          REQUIRE(child.uid.level() == n.uid.level() + 1);
        }
      }
    }
    THEN("level boxes tile the domain") {
      for (int l = 0; l < t.levels(); ++l) {
        double vol = 0.0;
        auto [a, b] = t.level_range(l);
        for (auto i = a; i < b; ++i) {
          const Box bx = t.bounding_box(i);
          vol += bx.extent(0) * bx.extent(1) * bx.extent(2);
        }
        CHECK(vol == Approx(1.0));
      }
    }
  }
  GIVEN("a depth beyond max_depth") {
    THEN("it is refused") { CHECK_THROWS_AS(Tree::full(unit_shape(3, 2), 3), std::invalid_argument); }
  }
  GIVEN("depth 10 in 3-D") {
    TreeShape sh = unit_shape(3, 12, 2);
    Tree t = Tree::full(sh, 1);
    WHEN("one corner is refined to level 10") {
      t.adapt_until_stable([](Uid uid, const Box& b) {
        return (b.lo[0] == 0.0 && b.lo[1] == 0.0 && b.lo[2] == 0.0 && uid.level() < 10) ? Mark::refine : Mark::keep;
      });
      THEN("the level-10 grid exists and its UID round-trips") {
        CHECK(t.levels() == 11);
        CHECK(t.contains(Uid::make(10, {0, 0, 0})));
        CHECK(t.contains(Uid::make(10, {1, 1, 1})));
      }
    }
  }
}

SCENARIO("Adapt refines and coarsens whole families", "[spacetree][tree]") {
  GIVEN("a 2-D tree at depth 2") {
    Tree t = Tree::full(unit_shape(2, 4), 2);
    REQUIRE(t.size() == 1 + 4 + 16);
    WHEN("the leaf at (0,0) is refined") {
      const bool changed = t.adapt([](Uid u, const Box&) {
        return u == Uid::make(2, {0, 0, 0}) ? Mark::refine : Mark::keep;
      });
      THEN("four children appear") {
        CHECK(changed);
        CHECK(t.size() == 25);
        CHECK(t.contains(Uid::make(3, {1, 1, 0})));
      }
      AND_WHEN("that family is coarsened again") {
        t.adapt([](Uid u, const Box&) { return u == Uid::make(2, {0, 0, 0}) ? Mark::coarsen : Mark::keep; });
        THEN("the tree is back to 21 grids") { CHECK(t.size() == 21); }
      }
    }
    WHEN("the root is asked to coarsen") {
      Tree one(unit_shape(2, 4));
      const bool changed = one.adapt([](Uid, const Box&) { return Mark::coarsen; });
      THEN("nothing happens") {
        CHECK_FALSE(changed);
        CHECK(one.size() == 1);
      }
    }
  }
}

SCENARIO("Balance leaves no touching leaves more than one level apart", "[spacetree][tree][balance]") {
  for (int dim : {2, 3}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      const TreeShape sh = unit_shape(dim, dim == 2 ? 6 : 4, 2, seed % 2 == 0);
      Tree t = random_tree(sh, seed, 4, 0.35, false);
      t.balance();
      INFO("dim " << dim << " seed " << seed << " grids " << t.size());
      REQUIRE(t.is_balanced());
      // Brute force over all leaf pairs.
      std::vector<std::int32_t> leaves;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.nodes()[i].is_leaf()) leaves.push_back(static_cast<std::int32_t>(i));
      for (auto a : leaves)
        for (auto b : leaves) {
          const int la = t.nodes()[static_cast<std::size_t>(a)].uid.level();
          const int lb = t.nodes()[static_cast<std::size_t>(b)].uid.level();
          if (std::abs(la - lb) > 1) REQUIRE_FALSE(touch(sh, t.bounding_box(a), t.bounding_box(b)));
        }
    }
  }
}

SCENARIO("The Lebesgue order visits parents first and keeps subtrees contiguous", "[spacetree][sfc]") {
  const Tree t = random_tree(unit_shape(3, 4, 2), 11);
  const auto order = t.sfc_order();
  std::vector<std::size_t> pos(t.size());
  for (std::size_t p = 0; p < order.size(); ++p) pos[static_cast<std::size_t>(order[p])] = p;
  // Subtree sizes by a bottom-up count.
  std::vector<std::size_t> subtree(t.size(), 1);
  for (std::size_t i = t.size(); i-- > 1;) subtree[static_cast<std::size_t>(t.nodes()[i].parent)] += subtree[i];
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto& n = t.nodes()[i];
    if (n.parent >= 0) REQUIRE(pos[static_cast<std::size_t>(n.parent)] < pos[i]);
    // All descendants sit in [pos[i], pos[i] + subtree[i]).
    std::size_t inside = 0;
    for (std::size_t j = 0; j < t.size(); ++j) {
      std::int32_t a = static_cast<std::int32_t>(j);
      while (a >= 0 && a != static_cast<std::int32_t>(i)) a = t.nodes()[static_cast<std::size_t>(a)].parent;
      if (a == static_cast<std::int32_t>(i)) {
        REQUIRE(pos[j] >= pos[i]);
        REQUIRE(pos[j] < pos[i] + subtree[i]);
        ++inside;
      }
    }
    REQUIRE(inside == subtree[i]);
  }
}

SCENARIO("The partition cuts the curve into balanced contiguous pieces", "[spacetree][partition]") {
  const Tree t = random_tree(unit_shape(3, 4, 4), 5);
  for (int ranks : {1, 2, 3, 4, 7}) {
    const Partition p = partition_morton(t, ranks);
    INFO("ranks " << ranks);
    THEN("cell counts differ by at most one grid") {
      const auto [lo, hi] = std::minmax_element(p.cells_per_rank.begin(), p.cells_per_rank.end());
      CHECK(*hi - *lo <= t.shape().cells_per_grid());
      CHECK(p.imbalance() < 1.0 / static_cast<double>(t.size() / static_cast<std::size_t>(ranks)) + 1e-12);
    }
    THEN("owners never decrease along the curve") {
      int last = 0;
      for (auto idx : t.sfc_order()) {
        REQUIRE(p.owner[static_cast<std::size_t>(idx)] >= last);
        last = p.owner[static_cast<std::size_t>(idx)];
      }
    }
    THEN("within each level, UID order is rank order (the file's row order)") {
      for (int l = 0; l < t.levels(); ++l) {
        auto [a, b] = t.level_range(l);
        for (auto i = a + 1; i < b; ++i)
          REQUIRE(p.owner[static_cast<std::size_t>(i - 1)] <= p.owner[static_cast<std::size_t>(i)]);
      }
    }
  }
  CHECK_THROWS_AS(partition_morton(t, 0), std::invalid_argument);
}

SCENARIO("The root stays on rank 0 even with fewer grids than ranks", "[spacetree][partition]") {
  const Tree root_only(unit_shape(3, 2));
  for (int ranks : {1, 2, 5}) {
    const Partition p = partition_morton(root_only, ranks);
    CHECK(p.owner[0] == 0);
    CHECK(p.cells_per_rank[0] == root_only.shape().cells_per_grid());
  }
  const Tree small = Tree::full(unit_shape(2, 2), 1);  // 5 grids on 8 ranks
  const Partition p = partition_morton(small, 8);
  CHECK(p.owner[0] == 0);
  for (int r = 0; r < 8; ++r) CHECK(p.cells_per_rank[static_cast<std::size_t>(r)] <= small.shape().cells_per_grid());
}

TEST_CASE("Tree statistics count grids per level", "[spacetree][stats]") {
  const Tree t = Tree::full(unit_shape(2, 3, 8), 2);
  const auto s = statistics(t);
  CHECK(s.grids_per_level == std::vector<std::int64_t>{1, 4, 16});
  CHECK(s.leaves == 16);
  CHECK(s.cells == 21 * 64);
  CHECK(s.leaf_cells == 16 * 64);
}

TEST_CASE("Inconsistent shapes are refused with the field's name", "[spacetree][shape]") {
  TreeShape sh = unit_shape(3, 3);
  sh.r = {2, 4, 2};
  CHECK_THROWS_WITH(Tree(sh), Catch::Contains("tree.r"));
  sh = unit_shape(3, 3);
  sh.s = {0, 4, 4};
  CHECK_THROWS_WITH(Tree(sh), Catch::Contains("tree.s"));
  sh = unit_shape(3, 3);
  sh.domain.hi[1] = -1;
  CHECK_THROWS_WITH(Tree(sh), Catch::Contains("domain"));
  sh = unit_shape(3, 30);
  CHECK_THROWS_WITH(Tree(sh), Catch::Contains("tree.max_depth"));
}

SCENARIO("A tree rebuilt from its UIDs is the same tree; broken lists are refused", "[spacetree][tree]") {
  const TreeShape sh = unit_shape(3, 4, 2);
  const Tree t = random_tree(sh, 17);
  std::vector<Uid> uids;
  for (const auto& n : t.nodes()) uids.push_back(n.uid);
  std::reverse(uids.begin(), uids.end());  // order must not matter
  const Tree back = Tree::from_uids(sh, uids);
  REQUIRE(back.size() == t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    REQUIRE(back.nodes()[i].uid == t.nodes()[i].uid);
    REQUIRE(back.nodes()[i].parent == t.nodes()[i].parent);
    REQUIRE(back.nodes()[i].first_child == t.nodes()[i].first_child);
  }
  // A leaf family with one child missing.
  std::vector<Uid> broken(uids.begin(), uids.end());
  const auto leaf = std::find_if(t.nodes().begin(), t.nodes().end(),
                                 [](const GridNode& n) { return n.is_leaf() && n.uid.level() >= 2; });
  REQUIRE(leaf != t.nodes().end());
  broken.erase(std::find(broken.begin(), broken.end(), leaf->uid));
  CHECK_THROWS_WITH(Tree::from_uids(sh, broken), Catch::Contains("without all of its children"));
  CHECK_THROWS_WITH(Tree::from_uids(sh, {Uid::make(1, {0, 0, 0})}), Catch::Contains("root"));
  CHECK_THROWS_WITH(Tree::from_uids(sh, {Uid::make(0, {0, 0, 0}), Uid::make(2, {0, 0, 0})}),
                    Catch::Contains("parent grid missing"));
  CHECK_THROWS_WITH(Tree::from_uids(sh, {Uid::make(0, {0, 0, 0}), Uid::make(1, {5, 0, 0})}),
                    Catch::Contains("outside the domain"));
  CHECK_THROWS_WITH(Tree::from_uids(sh, {Uid::make(0, {0, 0, 0}), Uid::make(0, {0, 0, 0})}),
                    Catch::Contains("duplicate"));
}

SCENARIO("Joining a partition's consecutive pieces gives a partition on fewer ranks", "[spacetree][partition]") {
  const Tree t = random_tree(unit_shape(3, 4, 4), 11);
  for (int from : {1, 2, 3, 4, 5, 7}) {
    const Partition p = partition_morton(t, from);
    for (int ranks = 1; ranks <= from; ++ranks) {
      INFO("from " << from << " to " << ranks);
      const Partition j = join_ranks(p, ranks);
      REQUIRE(j.ranks == ranks);
      // Brute force: rank r of the joined partition takes the pieces [floor(r*from/ranks),
      // floor((r+1)*from/ranks)); every piece goes to exactly one rank.
      std::vector<int> taker(static_cast<std::size_t>(from), -1);
      for (int r = 0; r < ranks; ++r)
        for (int q = r * from / ranks; q < (r + 1) * from / ranks; ++q) {
          REQUIRE(taker[static_cast<std::size_t>(q)] < 0);
          taker[static_cast<std::size_t>(q)] = r;
        }
      for (int q = 0; q < from; ++q) REQUIRE(joined_rank(q, from, ranks) == taker[static_cast<std::size_t>(q)]);
      std::vector<std::int64_t> cells(static_cast<std::size_t>(ranks), 0);
      for (std::size_t i = 0; i < t.size(); ++i) {
        REQUIRE(j.owner[i] == taker[static_cast<std::size_t>(p.owner[i])]);
        cells[static_cast<std::size_t>(j.owner[i])] += t.shape().cells_per_grid();
      }
      CHECK(j.cells_per_rank == cells);
      int last = 0;  // still contiguous along the curve
      for (auto idx : t.sfc_order()) {
        REQUIRE(j.owner[static_cast<std::size_t>(idx)] >= last);
        last = j.owner[static_cast<std::size_t>(idx)];
      }
      if (ranks == from) CHECK(j.owner == p.owner);
    }
    CHECK_THROWS_AS(join_ranks(p, 0), std::invalid_argument);
    CHECK_THROWS_AS(join_ranks(p, from + 1), std::invalid_argument);
  }
}

// Topology answers checked against brute-force geometry on random adaptive trees.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "random_tree.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"

using namespace rwd::spacetree;
using rwd::test::random_tree;
using rwd::test::unit_shape;

namespace {
constexpr double kEps = 1e-12;

bool same_box(const Box& a, const Box& b) {
  for (int i = 0; i < 3; ++i)
    if (std::abs(a.lo[i] - b.lo[i]) > kEps || std::abs(a.hi[i] - b.hi[i]) > kEps) return false;
  return true;
}
bool closed_touch(const Box& a, const Box& b) {
  for (int i = 0; i < 3; ++i)
    if (a.lo[i] > b.hi[i] + kEps || a.hi[i] < b.lo[i] - kEps) return false;
  return true;
}

// Expected neighbours in direction d, by scanning every grid.
std::vector<Neighbour> brute(const Tree& t, const Partition& p, std::int32_t self, std::array<std::int8_t, 3> d) {
  const auto& sh = t.shape();
  const auto& me = t.nodes()[static_cast<std::size_t>(self)];
  const Box b = t.bounding_box(self);
  Box s = b;  // the shifted box, wrapped
  std::array<double, 3> wrap{0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    const double e = b.extent(a);
    s.lo[a] += d[a] * e;
    s.hi[a] += d[a] * e;
    if (s.lo[a] < sh.domain.lo[a] - kEps || s.hi[a] > sh.domain.hi[a] + kEps) {
      if (!sh.periodic[a]) return {{d, Relation::boundary, kNoUid, -1}};
      wrap[a] = s.lo[a] < sh.domain.lo[a] ? sh.domain.extent(a) : -sh.domain.extent(a);
      s.lo[a] += wrap[a];
      s.hi[a] += wrap[a];
    }
  }
  std::vector<Neighbour> out;
  std::int32_t same = -1;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.nodes()[i].uid.level() == me.uid.level() && same_box(t.bounding_box(static_cast<std::int32_t>(i)), s))
      same = static_cast<std::int32_t>(i);
  if (same < 0) {
    std::array<double, 3> c{};
    for (int a = 0; a < 3; ++a) c[a] = 0.5 * (s.lo[a] + s.hi[a]);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const Box x = t.bounding_box(static_cast<std::int32_t>(i));
      if (t.nodes()[i].is_leaf() && x.contains(c)) out.push_back({d, Relation::coarser, t.nodes()[i].uid, p.owner[i]});
    }
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].uid.level() < me.uid.level());
    return out;
  }
  out.push_back({d, Relation::same, t.nodes()[static_cast<std::size_t>(same)].uid, p.owner[static_cast<std::size_t>(same)]});
  if (me.is_leaf() && !t.nodes()[static_cast<std::size_t>(same)].is_leaf()) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.nodes()[i].uid.level() != me.uid.level() + 1) continue;
      Box x = t.bounding_box(static_cast<std::int32_t>(i));
      bool inside = true;
      for (int a = 0; a < 3; ++a) inside = inside && x.lo[a] >= s.lo[a] - kEps && x.hi[a] <= s.hi[a] + kEps;
      if (!inside) continue;
      for (int a = 0; a < 3; ++a) { x.lo[a] -= wrap[a]; x.hi[a] -= wrap[a]; }
      if (closed_touch(x, b)) out.push_back({d, Relation::finer, t.nodes()[i].uid, p.owner[i]});
    }
  }
  return out;
}
}  // namespace

SCENARIO("Neighbour queries agree with brute-force geometry", "[spacetree][topology]") {
  for (int dim : {2, 3}) {
    for (unsigned seed = 1; seed <= 4; ++seed) {
      const bool periodic = seed % 2 == 0;
      const TreeShape sh = unit_shape(dim, dim == 2 ? 5 : 4, 2, periodic);
      Tree t = random_tree(sh, 100 + seed, dim == 2 ? 4 : 3, 0.3, seed != 3);  // seed 3: unbalanced
      const Partition p = partition_morton(t, 3);
      const Topology topo(t, p);
      INFO("dim " << dim << " seed " << seed << " grids " << t.size());
      for (std::size_t i = 0; i < t.size(); ++i) {
        const Uid uid = t.nodes()[i].uid;
        const auto got = topo.neighbours(uid);
        std::vector<Neighbour> want;
        for (const auto& d : directions(dim)) {
          auto part = brute(t, p, static_cast<std::int32_t>(i), d);
          want.insert(want.end(), part.begin(), part.end());
        }
        REQUIRE(got == want);
      }
    }
  }
}

SCENARIO("Family, owner and box queries agree with the tree", "[spacetree][topology]") {
  const Tree t = random_tree(unit_shape(3, 4, 2), 42);
  const Partition p = partition_morton(t, 4);
  const Topology topo(t, p);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto& n = t.nodes()[i];
    REQUIRE(topo.owner(n.uid) == p.owner[i]);
    const Family f = topo.family(n.uid);
    if (n.parent >= 0) REQUIRE(f.parent == t.nodes()[static_cast<std::size_t>(n.parent)].uid);
    else REQUIRE(f.parent == kNoUid);
    REQUIRE(f.children.size() == (n.is_leaf() ? 0u : 8u));
  }
  CHECK(topo.owner(Uid::make(9, {0, 0, 0})) == -1);
  CHECK_THROWS_AS(topo.neighbours(Uid::make(9, {0, 0, 0})), std::out_of_range);

  const Box window{{0.2, 0.3, 0.1}, {0.55, 0.6, 0.4}};
  for (int level = 0; level < t.levels(); ++level) {
    std::vector<Uid> want;
    auto [a, b] = t.level_range(level);
    for (auto i = a; i < b; ++i) {
      const Box x = t.bounding_box(i);
      bool hit = true;
      for (int ax = 0; ax < 3; ++ax) hit = hit && x.lo[ax] < window.hi[ax] && x.hi[ax] > window.lo[ax];
      if (hit) want.push_back(t.nodes()[static_cast<std::size_t>(i)].uid);
    }
    REQUIRE(topo.grids_in_box(window, level) == want);
  }
}

SCENARIO("A rank's plan lists exactly its grids with their neighbours", "[spacetree][plan]") {
  const Tree t = random_tree(unit_shape(2, 5, 4), 9);
  const Partition p = partition_morton(t, 3);
  const Topology topo(t, p);
  std::size_t total = 0;
  for (int r = 0; r < 3; ++r) {
    const LocalPlan plan = make_local_plan(topo, r);
    CHECK(plan.ranks == 3);
    CHECK(plan.global_grids == static_cast<std::int64_t>(t.size()));
    CHECK(std::is_sorted(plan.grids.begin(), plan.grids.end(),
                         [](const GridInfo& a, const GridInfo& b) { return a.uid < b.uid; }));
    for (const auto& g : plan.grids) {
      REQUIRE(topo.owner(g.uid) == r);
      REQUIRE(g.neighbours == topo.neighbours(g.uid));
    }
    total += plan.grids.size();
  }
  CHECK(total == t.size());
}

// The case estimate behind the resource guard: an upper bound of what build_tree()
// makes, per level, tight enough to print, and computed without building anything.
#include <catch2/catch.hpp>

#include <random>

#include "../spacetree/random_tree.hpp"
#include "rewind/config/estimate.hpp"

using namespace rwd::config;
using namespace rwd::spacetree;

namespace {

TreeCase random_case(int dim, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  TreeCase c;
  c.shape = rwd::test::unit_shape(dim, 6, 4);
  c.shape.domain.hi[0] = 1.0 + u(rng);  // not a power of two: faces off binary fractions
  c.base_depth = static_cast<int>(rng() % 3);
  c.balance = rng() % 4 != 0;
  const int regions = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < regions; ++i) {
    RefineRegion r;
    r.level = c.base_depth + 1 + static_cast<int>(rng() % (6 - c.base_depth));
    if (rng() % 2) {
      r.radius = 0.02 + 0.3 * u(rng);
      for (int a = 0; a < 3; ++a) r.center[a] = c.shape.domain.lo[a] + u(rng) * c.shape.domain.extent(a);
    } else {
      for (int a = 0; a < 3; ++a) {
        const double x = u(rng) * c.shape.domain.extent(a), w = 0.3 * u(rng) * c.shape.domain.extent(a);
        r.box.lo[a] = c.shape.domain.lo[a] + x;
        r.box.hi[a] = std::min(c.shape.domain.hi[a], r.box.lo[a] + w + 1e-3);
      }
      if (dim == 2) r.box.lo[2] = c.shape.domain.lo[2], r.box.hi[2] = c.shape.domain.hi[2];
    }
    c.regions.push_back(r);
  }
  return c;
}

}  // namespace

SCENARIO("The estimate bounds the tree a case builds, level by level", "[spacetree][estimate]") {
  for (int dim : {2, 3})
    for (unsigned seed = 1; seed <= 40; ++seed) {
      const TreeCase c = random_case(dim, seed);
      const auto stats = statistics(build_tree(c));
      const auto e = estimate_tree(c);
      INFO("dim " << dim << " seed " << seed << " grids " << stats.grids << " estimate " << e.grids);
      REQUIRE(e.grids_per_level.size() >= stats.grids_per_level.size());
      for (std::size_t l = 0; l < stats.grids_per_level.size(); ++l) {
        INFO("level " << l);
        CHECK(e.grids_per_level[l] >= stats.grids_per_level[l]);
      }
      CHECK(e.grids >= stats.grids);
      CHECK(e.cells == e.grids * c.shape.cells_per_grid());
      CHECK_FALSE(e.stopped);
      // Overlapping regions are counted twice: the bound stays within the region count
      // (+1 for the uniform base) of the truth.
      CHECK(e.grids <= static_cast<std::int64_t>(c.regions.size() + 1) * stats.grids);
    }
}

SCENARIO("A uniform case is counted exactly, and an absurd one without building it", "[spacetree][estimate]") {
  TreeCase c;
  c.shape = rwd::test::unit_shape(3, 12, 8);
  c.base_depth = 3;
  CHECK(estimate_tree(c).grids == 1 + 8 + 64 + 512);
  c.base_depth = 12;  // 8^12 grids: counted, not built
  const auto e = estimate_tree(c);
  CHECK(e.grids_per_level.back() == std::int64_t{1} << 36);
  const auto stopped = estimate_tree(c, 1'000'000);
  CHECK(stopped.stopped);
  CHECK(stopped.grids > 1'000'000);
}

SCENARIO("Memory is estimated per process role", "[spacetree][estimate]") {
  TreeCase c;
  c.shape = rwd::test::unit_shape(3, 6, 8);
  c.base_depth = 4;
  const auto e = estimate_tree(c);
  const auto m = memory_model(c.shape, 17);
  // 17 halo'd arrays of 10^3 doubles per grid, at least.
  CHECK(m.field_bytes_per_grid >= 17 * 1000 * 8);
  const auto one = bytes_needed(e, m, true, 1), server = bytes_needed(e, m, true, 0), four = bytes_needed(e, m, false, 4);
  CHECK(one > server);
  CHECK(one > four);
  CHECK(four * 4 > one - server);  // the fields are shared, the tree is not
}

TEST_CASE("Sizes parse with binary units and refuse garbage", "[spacetree][estimate]") {
  CHECK(parse_bytes("2000") == 2000);
  CHECK(parse_bytes("8G") == std::int64_t{8} << 30);
  CHECK(parse_bytes("512MiB") == std::int64_t{512} << 20);
  CHECK(parse_bytes("1.5GB") == std::int64_t{3} << 29);
  CHECK(parse_bytes("4k") == 4096);
  for (const char* bad : {"", "lots", "-1G", "8X", "G", "nan", "1e30"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_bytes(bad), std::invalid_argument);
  }
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1536.0 * 1024 * 1024) == "1.50 GiB");
}

#include <catch2/catch.hpp>

#include <random>

#include "rewind/spacetree/uid.hpp"

using namespace rwd::spacetree;

TEST_CASE("UID packs level and Morton code as documented", "[spacetree][uid]") {
  GIVEN("the root") {
    THEN("its UID is zero") { CHECK(Uid::make(0, {0, 0, 0}).raw() == 0); }
  }
  GIVEN("a grid at level 3, coordinates (1, 2, 3)") {
    const Uid u = Uid::make(3, {1, 2, 3});
    THEN("the level sits in the top six bits") { CHECK((u.raw() >> 58) == 3); }
    THEN("x bit b goes to bit 3b, y to 3b+1, z to 3b+2") {
      // x=1 -> bit 0; y=2 (bit 1) -> bit 4; z=3 (bits 0,1) -> bits 2 and 5
      CHECK(u.morton() == ((1u << 0) | (1u << 4) | (1u << 2) | (1u << 5)));
    }
    THEN("level and coordinates round-trip") {
      CHECK(u.level() == 3);
      CHECK(u.coord() == Int3{1, 2, 3});
    }
  }
}

TEST_CASE("UID round-trips at depth 19 in 3-D and rejects what does not fit", "[spacetree][uid]") {
  std::mt19937_64 rng(7);
  for (int level = 0; level <= 19; ++level) {
    const std::int64_t n = std::int64_t{1} << level;
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (int t = 0; t < 50; ++t) {
      const Int3 c{pick(rng), pick(rng), pick(rng)};
      const Uid u = Uid::make(level, c);
      REQUIRE(u.level() == level);
      REQUIRE(u.coord() == c);
    }
  }
  CHECK_THROWS_AS(Uid::make(2, {1 << 19, 0, 0}), std::out_of_range);
  CHECK_THROWS_AS(Uid::make(-1, {0, 0, 0}), std::out_of_range);
}

TEST_CASE("UID order is level first, then Z order within a level", "[spacetree][uid]") {
  CHECK(Uid::make(1, {1, 1, 1}) < Uid::make(2, {0, 0, 0}));
  CHECK(Uid::make(2, {1, 0, 0}) < Uid::make(2, {0, 1, 0}));
  CHECK(Uid::make(2, {1, 1, 0}) < Uid::make(2, {0, 0, 1}));
  CHECK(Uid::make(2, {1, 1, 1}) < Uid::make(2, {2, 0, 0}));
}

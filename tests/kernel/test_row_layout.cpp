// The row layout of a step (kernel/src/format/row_layout.hpp): pure, no MPI, no HDF5.
// The rows a rank writes follow from the per-level counts of all ranks; these tests
// give those counts by hand, as the Allreduce and Exscan of write_step would.
#include <catch2/catch.hpp>

#include "format/row_layout.hpp"

using rwd::kernel::GridRecord;
using namespace rwd::kernel::detail;

namespace {
GridRecord grid(std::uint64_t uid, int level, std::uint64_t key) {
  GridRecord g;
  g.uid = uid;
  g.level = level;
  g.sort_key = key;
  return g;
}
}  // namespace

TEST_CASE("local order is level, then sort key, then uid") {
  const std::vector<GridRecord> grids = {grid(7, 1, 30), grid(3, 0, 0), grid(9, 1, 10), grid(8, 1, 10), grid(5, 2, 1)};
  // uid 8 and 9 share a sort key: the uid decides.
  CHECK(local_order(grids) == std::vector<std::size_t>{1, 3, 2, 0, 4});
}

TEST_CASE("rows follow the levels, then the ranks before this one") {
  // Three levels: 1 root, 8 grids on level 1, 4 on level 2. This rank holds 3 grids of
  // level 1 and 2 of level 2; ranks before it hold 1 root, 2 of level 1 and 1 of level 2.
  const std::vector<std::int64_t> total = {1, 8, 4, 0};
  const std::vector<std::int64_t> before = {1, 2, 1, 0};
  const RowLayout r = assign_rows({1, 1, 1, 2, 2}, total, before);
  CHECK(r.level_start == std::vector<std::int64_t>{0, 1, 9, 13, 13});
  CHECK(r.n_grids == 13);
  CHECK(r.n_levels == 3);
  CHECK(r.row_of == std::vector<std::int64_t>{3, 4, 5, 10, 11});
  CHECK(r.runs == std::vector<RowRun>{{3, 3}, {10, 2}});
}

TEST_CASE("a rank without grids has no rows and no runs") {
  const RowLayout r = assign_rows({}, {1, 4}, {1, 4});
  CHECK(r.n_grids == 5);
  CHECK(r.n_levels == 2);
  CHECK(r.row_of.empty());
  CHECK(r.runs.empty());
}

TEST_CASE("the ranks' rows tile the step without gaps or overlaps") {
  // Four ranks along a curve: level counts per rank; each rank's `before` is the sum of
  // the ranks before it (the Exscan). Every row 0..11 must be written exactly once.
  const std::vector<std::vector<int>> ranks = {{0, 1, 1}, {1, 1, 2, 2, 2}, {}, {1, 2, 3, 3}};
  std::vector<std::int64_t> total(4, 0);
  for (const auto& levels : ranks)
    for (int l : levels) ++total[static_cast<std::size_t>(l)];
  std::vector<std::int64_t> before(4, 0);
  std::vector<int> written(12, 0);
  for (const auto& levels : ranks) {
    const RowLayout r = assign_rows(levels, total, before);
    REQUIRE(r.n_grids == 12);
    for (std::int64_t row : r.row_of) ++written.at(static_cast<std::size_t>(row));
    for (std::size_t k = 0; k < levels.size(); ++k) {  // each row inside its level's range
      const auto l = static_cast<std::size_t>(levels[k]);
      CHECK(r.row_of[k] >= r.level_start[l]);
      CHECK(r.row_of[k] < r.level_start[l + 1]);
    }
    for (int l : levels) ++before[static_cast<std::size_t>(l)];
  }
  CHECK(written == std::vector<int>(12, 1));
}

TEST_CASE("runs of rows") {
  CHECK(runs_of({4, 5, 6, 9, 2, 3}) == std::vector<RowRun>{{4, 3}, {9, 1}, {2, 2}});
  CHECK(merge_runs({{9, 1}, {4, 3}, {2, 2}, {7, 0}, {10, 5}}) == std::vector<RowRun>{{2, 5}, {9, 6}});
}

TEST_CASE("rows by uid: found, missing and listed twice") {
  const RowLookup lookup({{0x30, 2}, {0x10, 0}, {0x20, 1}});
  CHECK(lookup.find(0x20) == std::int64_t{1});
  CHECK_FALSE(lookup.find(0x40).has_value());
  CHECK_FALSE(lookup.duplicate().has_value());
  const RowLookup twice({{0x30, 2}, {0x10, 0}, {0x30, 5}});
  CHECK(twice.duplicate() == std::uint64_t{0x30});
}

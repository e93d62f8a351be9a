// Phase 4's plan of a step's datasets (kernel/src/write/data_plan.hpp): pure, no MPI, no file.
// The counts stand for what phases 1 and 2 would agree on; every expectation is worked out
// here from the rules of docs/file-format.md §4 and IoOptions, not from the plan itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "write/data_plan.hpp"

using namespace rwd::kernel;
using namespace rwd::kernel::detail;

namespace {
constexpr BlockShape kBlock{16, 16, 16};  // 4096 cells: a double field's row is 32 KiB
constexpr int kChildren = 8;
constexpr std::size_t kTopology = 9;      // uid ... bounding_box

StepCounts counts(std::int64_t n_grids = 33, bool halo_free = true) {
  StepCounts n;
  n.n_grids = n_grids;
  n.n_local = n_grids / 2;
  n.n_levels = 2;
  n.levels_used = 2;
  n.ranks = 2;
  n.rank0 = true;
  n.halo_free = halo_free;
  return n;
}
StepInfo step(StepKind kind = StepKind::checkpoint, bool float32 = false) {
  StepInfo s;
  s.step = 1;
  s.kind = kind;
  s.fields = {{"cell_data", "u", 0, float32}, {"cell_data", "p", 1, float32}};
  return s;
}
std::size_t index_of(const DataPlan& p, const std::string& path) {
  for (std::size_t d = 0; d < p.datasets.size(); ++d)
    if (p.datasets[d].path == path) return d;
  FAIL("no dataset " << path);
  return 0;
}
/// The datasets of `p` for which `pick` holds, by path.
template <class Pick>
std::vector<std::string> where(const DataPlan& p, Pick pick) {
  std::vector<std::string> out;
  for (std::size_t d = 0; d < p.datasets.size(); ++d)
    if (pick(d)) out.push_back(p.datasets[d].path);
  return out;
}
const std::vector<std::string> kCellSets = {"cell_type", "cell_data/u", "cell_data/p"};
}  // namespace

namespace {
IoOptions with_statistics() {
  IoOptions o;
  o.statistics = true;  // the default, said where a test depends on it
  return o;
}
}  // namespace

TEST_CASE("the plan lists the topology, cell_type, the fields, their statistics and shares, with their bytes",
          "[kernel]") {
  const DataPlan p = plan_data(counts(), step(), with_statistics(), kBlock, kChildren, true);
  REQUIRE(p.datasets.size() == kTopology + 7);
  CHECK(p.datasets[0].path == "uid");
  CHECK(p.first_field == kTopology + 1);
  CHECK(p.datasets[p.first_field].path == "cell_data/u");
  CHECK(p.datasets[index_of(p, "child_rows")].shape == std::vector<hsize_t>{33, kChildren});
  CHECK(p.datasets[index_of(p, "cell_data/p")].shape == std::vector<hsize_t>{33, 16, 16, 16});
  // Format 1.9: the fields' statistics after them, (grids, 3) doubles each.
  CHECK(p.first_statistics == kTopology + 3);
  CHECK(p.datasets[p.first_statistics].path == "statistics/u");
  CHECK(p.datasets[index_of(p, "statistics/p")].shape == std::vector<hsize_t>{33, 3});
  CHECK(p.statistics_of == std::vector<std::size_t>{0, 1});
  // Format 1.10: their shares after the statistics, in the same order, (grids, nc) doubles.
  CHECK(p.first_shares == kTopology + 5);
  CHECK(p.datasets[p.first_shares].path == "shares/u");
  CHECK(p.datasets[index_of(p, "shares/p")].shape == std::vector<hsize_t>{33, kChildren});
  CHECK(p.datasets[index_of(p, "shares/p")].file_type == H5T_IEEE_F64LE);
  // Bytes per row: uid, sort_key, parent_uid, parent_row (8 each), level, rank (4 each),
  // child uids and rows (8 x 8 each), the box (6 doubles), cell_type (1 per cell), two
  // double fields, their statistics (3 doubles each), their shares (8 doubles each) and
  // 16 hashes; plus level_offsets (3 x 8) once.
  const std::int64_t row =
      4 * 8 + 2 * 4 + 2 * 8 * kChildren + 6 * 8 + 4096 + 2 * 8 * 4096 + 2 * 3 * 8 + 2 * 8 * kChildren + 16 * 8;
  CHECK(p.n_hashed == 16);
  CHECK(p.bytes == 33 * row + 3 * 8);
  CHECK(p.bytes_local == 16 * row + 3 * 8);  // rank 0 writes level_offsets
  StepCounts other = counts();
  other.rank0 = false;
  CHECK(plan_data(other, step(), with_statistics(), kBlock, kChildren, true).bytes_local == 16 * row);
  IoOptions unhashed = with_statistics();
  unhashed.checksums = false;
  const DataPlan q = plan_data(counts(), step(), unhashed, kBlock, kChildren, true);
  CHECK(q.n_hashed == 0);
  CHECK(q.bytes == p.bytes - 33 * 16 * 8);
}

TEST_CASE("statistics and shares: of cell_data fields only, none when switched off or meaningless", "[kernel]") {
  StepInfo ck = step();
  ck.fields.push_back({"previous_cell_data", "u", 2});
  const DataPlan p = plan_data(counts(), ck, with_statistics(), kBlock, kChildren, true);
  CHECK(where(p, [&](std::size_t d) { return d >= p.first_statistics; }) ==
        std::vector<std::string>{"statistics/u", "statistics/p", "shares/u", "shares/p"});
  IoOptions off;
  CHECK(off.statistics);  // the default
  off.statistics = false;
  const DataPlan q = plan_data(counts(), ck, off, kBlock, kChildren, true);
  CHECK(q.first_statistics == q.datasets.size());
  CHECK(q.first_shares == q.datasets.size());
  // An odd cell count on a refined axis: a parent's cell covers no whole child cells.
  const DataPlan odd = plan_data(counts(), ck, with_statistics(), BlockShape{15, 16, 16}, kChildren, true);
  CHECK(odd.first_statistics == odd.datasets.size());
  CHECK(odd.first_shares == odd.datasets.size());
  // Even but not divisible by 4 on a refined axis: statistics, no shares (a child's half
  // would split a parent's cell).
  const DataPlan even = plan_data(counts(), ck, with_statistics(), BlockShape{16, 6, 16}, kChildren, true);
  CHECK(even.first_statistics + 2 == even.datasets.size());
  CHECK(even.first_shares == even.datasets.size());
  // A quadtree refines x and y: an odd sz is fine, for the shares too.
  const DataPlan quad = plan_data(counts(), ck, with_statistics(), BlockShape{16, 16, 1}, 4, true);
  CHECK(quad.first_statistics + 4 == quad.datasets.size());
  CHECK(quad.first_shares + 2 == quad.datasets.size());
  CHECK(quad.datasets[quad.first_shares].shape == std::vector<hsize_t>{33, 4});
  // A binary tree refines x alone: sy = 6 does not matter.
  const DataPlan bin = plan_data(counts(), ck, with_statistics(), BlockShape{8, 6, 3}, 2, true);
  CHECK(bin.first_shares + 2 == bin.datasets.size());
}

TEST_CASE("a compressed step stores its cell datasets chunked, never zero copy nor independent", "[kernel]") {
  IoOptions o = with_statistics();
  o.compression = Codec::deflate;
  const DataPlan p = plan_data(counts(), step(), o, kBlock, kChildren, true);
  CHECK(where(p, [&](std::size_t d) { return p.storage[d] == Storage::lossless; }) == kCellSets);
  // the topology, the statistics and the shares stay contiguous
  CHECK(where(p, [&](std::size_t d) { return p.storage[d] == Storage::contiguous; }).size() == kTopology + 4);
  CHECK(where(p, [&](std::size_t d) { return p.direct[d] != 0; }).empty());
  CHECK(where(p, [&](std::size_t d) { return p.independent[d] != 0 && p.storage[d] != Storage::contiguous; }).empty());
  CHECK(p.n_hashed == 16);  // lossless rows read back as written: hashed
  // An all-empty step has no chunk to make: contiguous, whatever the option.
  const DataPlan empty = plan_data(counts(0), step(), o, kBlock, kChildren, true);
  CHECK(std::all_of(empty.storage.begin(), empty.storage.end(), [](Storage s) { return s == Storage::contiguous; }));
}

TEST_CASE("zfp takes a visualisation step's fields only, which then have no row checksum", "[kernel]") {
  IoOptions o = with_statistics();
  o.visualisation_compression = Codec::zfp;
  o.zfp_accuracy = 1e-3;
  const DataPlan vis = plan_data(counts(), step(StepKind::visualisation), o, kBlock, kChildren, true);
  CHECK(where(vis, [&](std::size_t d) { return vis.storage[d] == Storage::zfp; }) ==
        std::vector<std::string>{"cell_data/u", "cell_data/p"});
  CHECK(vis.storage[index_of(vis, "cell_type")] == Storage::contiguous);
  CHECK(where(vis, [&](std::size_t d) { return vis.hashed[d] == 0; }) == std::vector<std::string>{"cell_data/u", "cell_data/p"});
  CHECK(vis.n_hashed == 14);  // the statistics and shares are hashed (taken before the filter)
  CHECK(where(vis, [&](std::size_t d) { return vis.direct[d] != 0; }) == std::vector<std::string>{"cell_type"});
  // A checkpoint is never lossy.
  const DataPlan cp = plan_data(counts(), step(StepKind::checkpoint), o, kBlock, kChildren, true);
  CHECK(std::all_of(cp.storage.begin(), cp.storage.end(), [](Storage s) { return s == Storage::contiguous; }));
  CHECK(cp.n_hashed == 16);
}

TEST_CASE("zero copy: cell datasets whose arrays are their rows, halo'd ones only when asked and collective",
          "[kernel]") {
  const auto direct = [](const StepCounts& n, const IoOptions& o, const StepInfo& s = step(), bool as_is = true) {
    const DataPlan p = plan_data(n, s, o, kBlock, kChildren, as_is);
    return where(p, [&](std::size_t d) { return p.direct[d] != 0; });
  };
  CHECK(direct(counts(), IoOptions{}) == kCellSets);
  CHECK(direct(counts(33, false), IoOptions{}).empty());  // a halo somewhere: packed
  IoOptions halo;
  halo.zero_copy_halo = true;
  CHECK(direct(counts(33, false), halo) == kCellSets);
  halo.collective_transfer = false;  // ROMIO's independent subarray writes: one pwrite per row
  CHECK(direct(counts(33, false), halo).empty());
  IoOptions off;
  off.zero_copy = false;
  CHECK(direct(counts(), off).empty());
  IoOptions late;
  late.alloc_early = false;  // no file offset at creation
  CHECK(direct(counts(), late).empty());
  CHECK(direct(counts(), IoOptions{}, step(StepKind::visualisation, true)) == std::vector<std::string>{"cell_type"});
  CHECK(direct(counts(), IoOptions{}, step(), false) == std::vector<std::string>{"cell_type"});  // doubles differ
  CHECK(direct(counts(0), IoOptions{}).empty());
}

TEST_CASE("strategy auto writes long row runs with independent transfers, the rest collectively", "[kernel]") {
  // 33 grids in 2 ranks x 2 levels = 4 runs: a field's run is 33 x 32 KiB / 4 >= 64 KiB,
  // cell_type's 33 x 4 KiB / 4 and every topology dataset's are shorter.
  const auto independent = [](const StepCounts& n, const IoOptions& o) {
    const DataPlan p = plan_data(n, step(), o, kBlock, kChildren, true);
    return where(p, [&](std::size_t d) { return p.independent[d] != 0; });
  };
  const std::vector<std::string> fields = {"cell_data/u", "cell_data/p"};
  CHECK(independent(counts(), IoOptions{}) == fields);
  StepCounts many = counts();
  many.ranks = 16;  // 32 runs of ~33 KiB: two-phase buffering pays
  CHECK(independent(many, IoOptions{}).empty());
  IoOptions collective;
  collective.strategy = Strategy::collective;
  CHECK(independent(counts(), collective).empty());
  IoOptions halo;
  halo.zero_copy_halo = true;  // a halo'd zero-copy array needs its subarray type: collective
  CHECK(independent(counts(33, false), halo).empty());
  IoOptions packed = halo;
  packed.zero_copy = false;  // packed from the linear buffer: independent again
  CHECK(independent(counts(33, false), packed) == fields);
}

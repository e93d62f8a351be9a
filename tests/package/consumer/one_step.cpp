// Writes one step of a small tree (a root and its 8 children, 4^3 cells each, spread
// over the ranks) with Rewind's I/O kernel, closes the file, opens it again and reads
// every rank's restart rows back. Value of cell c of the grid with UID u:
// 1000 * (u & 0xff) + c + 0.25 (check_one_step.py recomputes it with h5py).
//   mpiexec -n P one_step FILE        exit 0 when every value read back is the one written
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "rewind/kernel/kernel.hpp"

namespace k = rwd::kernel;

namespace {

constexpr int kBlock = 4;

double value(std::uint64_t uid, std::int64_t cell) {
  return 1000.0 * static_cast<double>(uid & 0xff) + static_cast<double>(cell) + 0.25;
}

struct Grid {
  std::uint64_t uid;
  int level;
  k::Box box;
  std::vector<double> t;
};

std::vector<Grid> my_grids(int rank, int size) {
  std::vector<Grid> all;
  all.push_back({0, 0, {0, 2, 0, 2, 0, 2}, {}});
  for (int c = 0; c < 8; ++c) {
    const double x = c & 1, y = (c >> 1) & 1, z = (c >> 2) & 1;
    all.push_back({(1ull << 56) | static_cast<std::uint64_t>(c + 1), 1, {x, x + 1, y, y + 1, z, z + 1}, {}});
  }
  std::vector<Grid> mine;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(size)) != rank) continue;
    Grid g = all[i];
    for (std::int64_t c = 0; c < kBlock * kBlock * kBlock; ++c) g.t.push_back(value(g.uid, c));
    mine.push_back(g);
  }
  return mine;
}

k::LocalGrids describe(const k::CommonInfo& common, const std::vector<Grid>& mine) {
  k::LocalGrids lg;
  lg.block = common.block;
  for (const Grid& g : mine) {
    k::GridRecord r;
    r.uid = g.uid;
    r.level = g.level;
    r.sort_key = g.uid;
    r.bbox = g.box;
    r.parent_uid = g.level == 0 ? k::kNoUid : 0;
    if (g.level == 0)
      for (int c = 0; c < 8; ++c) r.child_uids.push_back((1ull << 56) | static_cast<std::uint64_t>(c + 1));
    r.fields = {g.t.data()};
    lg.grids.push_back(r);
  }
  return lg;
}

// The rows this rank reads back that differ from what was written.
long long mismatches(const std::string& path, const k::CommonInfo& common, int rank, int size) {
  k::Reader reader = k::Reader::open(path, MPI_COMM_WORLD);
  const k::StepEntry entry = reader.find_step("latest");
  const k::StepTopology topo = reader.read_topology(entry.step);
  const std::vector<std::int64_t> rows = k::partition_rows(topo, rank, size);
  const std::int64_t cells = common.block.cells();
  std::vector<double> buf(rows.size() * static_cast<std::size_t>(cells));
  reader.read_rows(entry.step, "cell_data", "temperature", rows, buf.data());
  long long bad = entry.step == 1 ? 0 : 1;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t c = 0; c < cells; ++c)
      if (buf[i * static_cast<std::size_t>(cells) + static_cast<std::size_t>(c)] !=
          value(topo.uid[static_cast<std::size_t>(rows[i])], c))
        ++bad;
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string path = argc > 1 ? argv[1] : "one_step.h5";
  int rc = 0;
  try {
    k::CommonInfo common;
    common.block = {kBlock, kBlock, kBlock};
    common.domain = {0, 2, 0, 2, 0, 2};
    common.variables = {{"temperature", "K"}};
    common.creator = "rewind_consumer";
    const std::vector<Grid> mine = my_grids(rank, size);
    {
      k::Writer writer = k::Writer::create(MPI_COMM_WORLD, path, common);
      k::StepInfo info{1, 0.5, 0.5, k::StepKind::checkpoint, {{"cell_data", "temperature", 0}}, false, {}, {}};
      writer.write_step(info, describe(common, mine));
      writer.close();
    }
    long long bad = mismatches(path, common, rank, size);
    long long bad_all = 0;
    MPI_Allreduce(&bad, &bad_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("one_step: %d ranks wrote step 1 of 9 grids and read it back: %s\n", size,
                  bad_all == 0 ? "every value as written" : "MISMATCH");
    rc = bad_all == 0 ? 0 : 1;
  } catch (const k::FileError& e) {
    std::fprintf(stderr, "one_step: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}

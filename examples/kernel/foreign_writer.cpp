// A "foreign" space-tree code using the Rewind kernel without Rewind's spacetree or solver:
// a hand-made quadtree-like 3-D tree (root + 8 children), one variable, written for a few
// steps, then restarted from the middle step and checked.
//
//   mpiexec -n 2 rewind_foreign_writer [out.h5]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "rewind/kernel/kernel.hpp"

namespace k = rwd::kernel;

int main(int argc, char** argv) {
  // FUNNELED lets the kernel pack the next dataset on a helper thread while one is
  // written (IoOptions::pipeline); with plain MPI_Init it writes serially.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string path = argc > 1 ? argv[1] : "foreign.h5";
  int rc = 0;
  try {
    const int s = 8;  // 8^3 cells per grid, no halo in this code
    k::CommonInfo common;
    common.block = {s, s, s};
    common.domain = {0, 2, 0, 2, 0, 2};
    common.variables = {{"temperature", "K"}};
    common.time_stepping = {{"dt", 0.5}};
    common.creator = "foreign_writer";

    // The tree: my own ids (level in the top byte, child number below), root + 8 children.
    struct MyGrid { std::uint64_t id; int level; k::BoxRow box; std::vector<double> t; };
    std::vector<MyGrid> all;
    all.push_back({0, 0, {0, 2, 0, 2, 0, 2}, {}});
    for (int c = 0; c < 8; ++c) {
      double x = c & 1, y = (c >> 1) & 1, z = (c >> 2) & 1;
      all.push_back({(1ull << 56) | static_cast<std::uint64_t>(c), 1, {x, x + 1, y, y + 1, z, z + 1}, {}});
    }
    std::vector<MyGrid> mine;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (static_cast<int>(i % static_cast<std::size_t>(size)) == rank) mine.push_back(all[i]);
    for (auto& g : mine) g.t.assign(s * s * s, 300.0 + static_cast<double>(g.id % 97));

    auto describe = [&] {
      k::LocalGrids lg;
      lg.block = common.block;
      for (const auto& g : mine) {
        k::GridRecord r;
        r.uid = g.id;
        r.level = g.level;
        r.sort_key = g.id;
        r.bbox = g.box;
        r.parent_uid = g.level == 0 ? k::kNoUid : 0;
        if (g.level == 0)
          for (int c = 0; c < 8; ++c) r.child_uids.push_back((1ull << 56) | static_cast<std::uint64_t>(c));
        r.fields = {g.t.data()};
        lg.grids.push_back(r);
      }
      return lg;
    };

    {
      k::Writer w = k::Writer::create(MPI_COMM_WORLD, path, common);
      for (int step = 1; step <= 3; ++step) {
        for (auto& g : mine)
          for (auto& v : g.t) v += 1.0;  // "physics"
        k::StepInfo info{step, 0.5 * step, 0.5, k::StepKind::checkpoint, {{"cell_data", "temperature", 0}}, false, {}, {}};
        k::WriteStats st = w.write_step(info, describe());
        if (rank == 0)
          std::printf("step %d: %lld bytes, %.1f MB/s, buffer %lld bytes%s\n", step, static_cast<long long>(st.bytes),
                      st.bandwidth / 1e6, static_cast<long long>(st.in_place.buffer_bytes),
                      st.view_error.empty() ? "" : (" (view: " + st.view_error + ")").c_str());
      }
      w.close();
    }

    // Restart from step 2 on however many ranks we have now.
    k::Reader r = k::Reader::open(path, MPI_COMM_WORLD);
    k::StepEntry e = r.find_step("2");
    k::StepTopology topo = r.read_topology(e.step);
    auto rows = k::partition_rows(topo, rank, size);
    std::vector<double> buf(rows.size() * static_cast<std::size_t>(common.block.cells()));
    r.read_rows(e.step, "cell_data", "temperature", rows, buf.data());
    int bad = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double want = 300.0 + static_cast<double>(topo.uid[static_cast<std::size_t>(rows[i])] % 97) + 2.0;
      for (std::int64_t c = 0; c < common.block.cells(); ++c)
        if (buf[i * static_cast<std::size_t>(common.block.cells()) + static_cast<std::size_t>(c)] != want) ++bad;
    }
    int bad_all = 0;
    MPI_Allreduce(&bad, &bad_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("restart from step %lld (t=%g): %s\n", static_cast<long long>(e.step), e.time,
                               bad_all == 0 ? "all values as written" : "MISMATCH");
    rc = bad_all == 0 ? 0 : 1;
  } catch (const k::FileError& ex) {
    std::fprintf(stderr, "foreign_writer: %s\n", ex.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}

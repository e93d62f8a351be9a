// What a checkpoint costs the compute ranks: the collective write against a hand-off to a
// dedicated I/O rank (IoOptions::strategy = "dedicated"), side by side in alternating
// rounds (docs/benchmarks.md, "Dedicated I/O ranks").
//
//   mpiexec -n P rewind_bench_dedicated DIR [--rounds R] [--vars V] [--halo H]
//
// P-1 compute ranks hold the kernel bench's step (bench_step.hpp: 585 grids of 32^3 cells,
// V float64 variables, default 8 = 1.14 GiB; halo H, default 1 = the solver's layout) and
// the last rank is their I/O rank. Every round writes two checkpoints (steps 1, 2) into a
// fresh file with each strategy, durable (the commit's fsyncs included):
//   C  collective: the compute ranks write it; the cost is write_step's time.
//   D  dedicated:  the cost is write_step's time on the compute ranks (copy into shared
//                  memory + hand-off). Before step 2 the compute ranks "compute" (sleep) as
//                  long as a collective write took, so step 2 shows the steady state: the
//                  I/O rank has finished step 1 unless it is slower than the collective write.
//                  Step 1's cost also holds the shared window's allocation (once per file).
// Reported: per-round costs of step 2 (max over compute ranks), the ratio D/C (target
// <= 10 %), and the I/O rank's durable throughput (its write_step time per step) against
// the collective write's (target >= 1.0). Medians over rounds of per-round ratios.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_step.hpp"
#include "rewind/kernel/kernel.hpp"

namespace k = rwd::kernel;

using rwd::bench::max_over;
using rwd::bench::median;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string dir = ".";
  int rounds = 4, nvars = 8, halo = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--vars" && i + 1 < argc) nvars = std::atoi(argv[++i]);
    else if (a == "--halo" && i + 1 < argc) halo = std::atoi(argv[++i]);
    else dir = a;
  }
  if (size < 2) {
    std::fprintf(stderr, "rewind_bench_dedicated: needs at least 2 processes (compute ranks + 1 I/O rank)\n");
    MPI_Finalize();
    return 2;
  }
  const bool io = rank == size - 1;
  MPI_Comm compute = MPI_COMM_NULL, io_comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, io ? MPI_UNDEFINED : 0, rank, &compute);
  MPI_Comm_split(MPI_COMM_WORLD, io ? 0 : MPI_UNDEFINED, rank, &io_comm);
  const int ncompute = size - 1;
  rwd::bench::BenchStep bs(io ? 0 : rank, ncompute, io ? 0 : nvars, halo);  // the I/O rank holds no grids
  const std::string cfile = dir + "/bench_collective.h5", dfile = dir + "/bench_dedicated.h5";
  std::vector<double> c_cost, d_cost, d_first, ratio, io_rate_ratio, c_rate, io_rate;
  long long bytes = 0;

  auto write_two = [&](const std::string& path, k::IoOptions opt, double compute_seconds, double* first) {
    opt.write_views = false;
    k::Writer w = k::Writer::create(compute, path, bs.common, opt);
    k::StepInfo s = bs.info;
    MPI_Barrier(compute);
    double t0 = MPI_Wtime();
    k::WriteStats st = w.write_step(s, bs.grids);
    if (first) *first = max_over(compute, MPI_Wtime() - t0);
    std::this_thread::sleep_for(std::chrono::duration<double>(compute_seconds));
    s.step = 2;
    MPI_Barrier(compute);
    t0 = MPI_Wtime();
    st = w.write_step(s, bs.grids);
    const double cost = max_over(compute, MPI_Wtime() - t0);
    w.close();
    bytes = st.bytes;
    return cost;
  };

  double last_c = 1.0;
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < 2; ++j) {
      const bool dedicated = (j == 0) == (r % 2 == 0);  // D C, C D, D C, ...
      const std::string path = dedicated ? dfile : cfile;
      if (rank == 0) rwd::bench::remove_and_settle(path);
      MPI_Barrier(MPI_COMM_WORLD);
      if (!dedicated) {
        if (!io) {
          const double cost = write_two(path, {}, 0.0, nullptr);
          c_cost.push_back(cost);
          c_rate.push_back(static_cast<double>(bytes) / cost);
          last_c = cost;
        }
      } else if (io) {
        const k::IoRankStats st = k::serve_io_ranks(MPI_COMM_WORLD, io_comm);
        const double rate = static_cast<double>(st.bytes) / st.write_seconds;
        MPI_Send(&rate, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      } else {
        k::IoOptions opt;
        opt.strategy = "dedicated";
        opt.io_group = MPI_COMM_WORLD;
        double first = 0;
        d_cost.push_back(write_two(path, opt, last_c, &first));
        d_first.push_back(first);
        k::release_io_ranks(MPI_COMM_WORLD);
        double rate = 0;
        if (rank == 0) MPI_Recv(&rate, 1, MPI_DOUBLE, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        io_rate.push_back(rate);
      }
      MPI_Bcast(&last_c, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
      const std::size_t i = c_cost.size() - 1;
      ratio.push_back(d_cost[i] / c_cost[i]);
      io_rate_ratio.push_back(io_rate[i] / c_rate[i]);
      std::printf("round %d  collective %.3f s (%.0f MiB/s)  dedicated hand-off %.3f s (first step %.3f s)  "
                  "I/O rank %.0f MiB/s\n",
                  r, c_cost[i], c_rate[i] / 1048576.0, d_cost[i], d_first[i], io_rate[i] / 1048576.0);
      std::fflush(stdout);
    }
  }
  if (rank == 0) {
    rwd::bench::remove_and_settle(cfile);
    rwd::bench::remove_and_settle(dfile);
    std::printf("# %d compute ranks + 1 I/O rank, %d rounds, step %lld bytes, halo %d; durable (fsync included)\n",
                ncompute, rounds, bytes, halo);
    std::printf("sum collective write (cost)          median %.3f s\n", median(c_cost));
    std::printf("sum dedicated hand-off (cost)        median %.3f s  (first step of a file: %.3f s)\n", median(d_cost),
                median(d_first));
    std::printf("ratio hand-off / collective write    median %5.1f %%  min %5.1f %%  max %5.1f %%\n", 100 * median(ratio),
                100 * *std::min_element(ratio.begin(), ratio.end()), 100 * *std::max_element(ratio.begin(), ratio.end()));
    std::printf("ratio I/O rank / collective MiB/s    median %5.1f %%  min %5.1f %%  max %5.1f %%\n",
                100 * median(io_rate_ratio), 100 * *std::min_element(io_rate_ratio.begin(), io_rate_ratio.end()),
                100 * *std::max_element(io_rate_ratio.begin(), io_rate_ratio.end()));
  }
  for (MPI_Comm* c : {&compute, &io_comm})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  MPI_Finalize();
  return 0;
}

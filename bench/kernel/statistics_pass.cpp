// What the per-grid statistics cost a rank's CPU, against the one read of the same arrays
// the writer already pays for every step (the row checksums, XXH3): the pass that
// rewind_bench_kernel's KT contender adds to a durable write, alone, without a disk.
//
//   mpiexec -n P rewind_bench_statistics_pass [--rounds R] [--vars V] [--halo H]
//
// The step is rewind_bench_kernel's (bench_step.hpp: a full octree to level 3, 585 grids
// of 32^3 cells, V float64 variables, default 8: 1.14 GiB over the ranks), its arrays
// filled with a smooth field plus noise before any timer. Two contenders, their order
// alternating between rounds:
//   statistics  kernel::grid_statistics of every variable: the writer's own pass
//               (min, max, the children's shares of their parents' details; the remote
//               children's moments exchanged), as write_statistics takes it
//   checksums   XXH3 of every grid's array of every variable (the interior, row by row
//               with a halo): a read of the same bytes at hash speed
// Prints per contender the median over rounds of the slowest rank's seconds, ns per cell
// value, and the median of the per-round ratios statistics / checksums.
#define XXH_INLINE_ALL
#include <mpi.h>
#include <xxhash.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_step.hpp"
#include "rewind/kernel/grid_statistics.hpp"

namespace {

using rwd::bench::BenchStep;

/// XXH3 of every interior row of every array: what the writer's checksums read.
std::uint64_t hash_all(const BenchStep& s, int halo) {
  std::uint64_t acc = 0;
  const std::size_t n = BenchStep::S, side = n + 2 * static_cast<std::size_t>(halo);
  for (const auto& g : s.grids.grids)
    for (const double* a : g.fields) {
      if (halo == 0) {
        acc ^= XXH3_64bits(a, n * n * n * sizeof(double));
        continue;
      }
      for (std::size_t z = 0; z < n; ++z)
        for (std::size_t y = 0; y < n; ++y)
          acc ^= XXH3_64bits(a + ((z + halo) * side + y + halo) * side + halo, n * sizeof(double));
    }
  return acc;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = 10, vars = 8, halo = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int& out) {
      if (i + 1 >= argc || (out = std::atoi(argv[++i])) < 0) {
        if (rank == 0) std::fprintf(stderr, "rewind_bench_statistics_pass: %s needs a number >= 0\n", a.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    };
    if (a == "--rounds") value(rounds);
    else if (a == "--vars") value(vars);
    else if (a == "--halo") value(halo);
    else {
      if (rank == 0)
        std::fprintf(stderr, "usage: mpiexec -n P rewind_bench_statistics_pass [--rounds R] [--vars V] [--halo H]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  BenchStep step(rank, size, vars, halo);
  // A smooth field plus noise, different per grid and variable (the step's constant
  // fill would let nothing depend on the values; here nothing does either, but the
  // numbers are a solver's kind).
  std::uint64_t seed = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(rank + 1);
  for (auto& g : step.data)
    for (auto& v : g)
      for (std::size_t j = 0; j < v.size(); ++j) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[j] += std::sin(0.01 * static_cast<double>(j)) + 1e-3 * static_cast<double>(seed >> 40) / (1 << 24);
      }
  const double values =
      static_cast<double>(step.grids.grids.size()) * BenchStep::S * BenchStep::S * BenchStep::S * vars;
  std::vector<double> t_stats, t_hash, ratio;
  double sink = 0;
  for (int r = 0; r < rounds; ++r) {
    double ts = 0, th = 0;
    for (int c = 0; c < 2; ++c) {
      const bool stats = (c == 0) == (r % 2 == 0);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (stats) {
        for (int v = 0; v < vars; ++v)
          sink += rwd::kernel::grid_statistics(MPI_COMM_WORLD, step.grids, 8, v).front()[2];
      } else {
        sink += static_cast<double>(hash_all(step, halo) & 1U);
      }
      const double t = rwd::bench::max_over(MPI_COMM_WORLD, MPI_Wtime() - t0);
      (stats ? ts : th) = t;
    }
    t_stats.push_back(ts);
    t_hash.push_back(th);
    ratio.push_back(ts / th);
  }
  if (rank == 0) {
    const double ms = rwd::bench::median(t_stats), mh = rwd::bench::median(t_hash);
    std::printf("# ranks %d, rounds %d, vars %d, halo %d, %.0f cell values on rank 0 (sink %g)\n", size, rounds, vars,
                halo, values, sink);
    std::printf("statistics  median %.4f s  %.2f ns per value\n", ms, 1e9 * ms / values);
    std::printf("checksums   median %.4f s  %.2f ns per value\n", mh, 1e9 * mh / values);
    std::printf("ratio statistics / checksums: median of per-round ratios %.2f\n", rwd::bench::median(ratio));
  }
  MPI_Finalize();
  return 0;
}

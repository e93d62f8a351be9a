// What a checkpoint costs the compute ranks: the collective write against a hand-off to a
// dedicated I/O rank (IoOptions::strategy = "dedicated"), side by side in rotating rounds
// (bench/kernel/HISTORY.md, "Dedicated I/O ranks").
//
//   mpiexec -n P rewind_bench_dedicated DIR [--rounds R] [--vars V] [--halo H]
//
// P-1 compute ranks hold the kernel bench's step (bench_step.hpp: 585 grids of 32^3 cells,
// V float64 variables, default 8 = 1.14 GiB; halo H, default 1 = the solver's layout) and
// the last rank is their I/O rank. Every round writes two checkpoints (steps 1, 2) into a
// fresh file with each of three contenders, durable (the commit's fsyncs included):
//   C  collective: the compute ranks write it; the cost is write_step's time.
//   D  dedicated, copying: the cost is write_step's time on the compute ranks (the copy of
//      the step's interiors into shared memory + the hand-off): a code that keeps its
//      fields in arrays of its own, as Rewind's solver does.
//   S  dedicated, from a span (Writer::span, ADIOS2's Put(span), Damaris's damaris_alloc):
//      the compute ranks produce the step in the writer's shared memory in their compute
//      phase (here: copy it there from their arrays, outside the timer, as a code computing
//      its output there would produce it), then hand it over; the cost is span()'s time
//      (waiting for a free slot) + write_step's.
// Before step 2 the compute ranks "compute" (sleep) as long as the last collective
// write took, so step 2 shows the steady state: the I/O rank has finished step 1 unless it
// is slower than the collective write. Step 1's cost also holds the shared window's
// allocation (once per file).
// Reported: per-round costs of step 2 (max over compute ranks), the ratios D/C and S/C
// (target <= 10 %), and the I/O rank's durable throughput (its write_step time per step)
// against the collective write's (target >= 1.0). Medians over rounds of per-round ratios.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    else if (a.empty() || a[0] == '-') {
      if (rank == 0)
        std::fprintf(stderr, "rewind_bench_dedicated: unknown option '%s' (usage: mpiexec -n P rewind_bench_dedicated DIR "
                     "[--rounds R] [--vars V] [--halo H])\n", a.c_str());
      MPI_Finalize();
      return 2;
    } else dir = a;
  }
  if (rounds < 1 || nvars < 1 || halo < 0 || !std::filesystem::is_directory(dir)) {
    if (rank == 0)
      std::fprintf(stderr, "rewind_bench_dedicated: %s\n",
                   !std::filesystem::is_directory(dir) ? ("no directory '" + dir + "'").c_str()
                                                       : "--rounds and --vars must be >= 1, --halo >= 0");
    MPI_Finalize();
    return 2;
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
  // Per contender (C, D, S): step 2's cost, step 1's, the writer's bytes per second.
  enum { C, D, S, kContenders };
  const char* names[kContenders] = {"collective write", "dedicated hand-off, copying",
                                    "dedicated hand-off, from a span"};
  std::vector<double> cost[kContenders], first[kContenders], rate[kContenders];
  std::vector<double> ratio[kContenders], io_ratio[kContenders];
  long long bytes = 0;

  // The step produced in a span: the interiors of the bench's arrays (the compute phase).
  auto fill = [&](const k::LocalGrids& span) {
    const k::BlockShape b = bs.grids.block;
    const int h = bs.grids.halo, px = b.sx + 2 * h, py = b.sy + 2 * h;
    for (std::size_t g = 0; g < span.grids.size(); ++g)
      for (const auto& f : bs.info.fields) {
        const auto sl = static_cast<std::size_t>(f.slot);
        const double* src = bs.grids.grids[g].fields[sl];
        auto* dst = const_cast<double*>(span.grids[g].fields[sl]);
        for (int z = 0; z < b.sz; ++z)
          for (int y = 0; y < b.sy; ++y, dst += b.sx)
            std::memcpy(dst, src + (static_cast<std::size_t>(z + h) * py + y + h) * px + h, sizeof(double) * b.sx);
      }
  };
  auto write_two = [&](const std::string& path, k::IoOptions opt, double compute_seconds, bool in_span,
                       double* first_cost, const k::WriterEnv& env) {
    opt.write_views = false;
    k::Writer w = k::Writer::create(compute, path, bs.common, opt, env);
    k::StepInfo s = bs.info;
    double step_cost[2] = {0, 0};
    k::WriteStats st;
    for (int i = 0; i < 2; ++i) {
      s.step = i + 1;
      if (i == 1) std::this_thread::sleep_for(std::chrono::duration<double>(compute_seconds));
      MPI_Barrier(compute);
      double t0 = MPI_Wtime(), spent = 0;
      if (in_span) {
        const k::LocalGrids span = w.span(s, bs.grids);
        spent = MPI_Wtime() - t0;
        fill(span);  // computing the step: not the checkpoint's cost
        t0 = MPI_Wtime();
        st = w.write_step(s, span);
      } else {
        st = w.write_step(s, bs.grids);
      }
      step_cost[i] = max_over(compute, spent + MPI_Wtime() - t0);
    }
    w.close();
    bytes = st.bytes;
    if (first_cost) *first_cost = step_cost[0];
    return step_cost[1];
  };

  double last_c = 1.0;
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < kContenders; ++j) {
      const int who = (j + r) % kContenders;  // C D S, D S C, S C D, ...
      const std::string path = who == C ? cfile : dfile;
      if (rank == 0) rwd::bench::remove_and_settle(path);
      MPI_Barrier(MPI_COMM_WORLD);
      if (who == C) {
        if (!io) {
          double f = 0;
          const double c = write_two(path, {}, 0.0, false, &f, {});
          cost[C].push_back(c);
          first[C].push_back(f);
          rate[C].push_back(static_cast<double>(bytes) / c);
          last_c = c;
        }
      } else if (io) {
        const k::IoRankStats st = k::serve_io_ranks(MPI_COMM_WORLD, io_comm);
        const double io_rate = static_cast<double>(st.bytes) / st.write_seconds;
        MPI_Send(&io_rate, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      } else {
        k::IoOptions opt;
        opt.strategy = k::Strategy::dedicated;
        double f = 0;
        cost[who].push_back(write_two(path, opt, last_c, who == S, &f, k::WriterEnv{MPI_COMM_WORLD, {}}));
        first[who].push_back(f);
        k::release_io_ranks(MPI_COMM_WORLD);
        double io_rate = 0;
        if (rank == 0) MPI_Recv(&io_rate, 1, MPI_DOUBLE, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rate[who].push_back(io_rate);
      }
      MPI_Bcast(&last_c, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
      const std::size_t i = cost[C].size() - 1;
      for (int who : {D, S}) {
        ratio[who].push_back(cost[who][i] / cost[C][i]);
        io_ratio[who].push_back(rate[who][i] / rate[C][i]);
      }
      std::printf("round %d  collective %.3f s (%.0f MiB/s)  hand-off copying %.3f s, from a span %.3f s (first step "
                  "%.3f / %.3f s)  I/O rank %.0f / %.0f MiB/s\n",
                  r, cost[C][i], rate[C][i] / 1048576.0, cost[D][i], cost[S][i], first[D][i], first[S][i],
                  rate[D][i] / 1048576.0, rate[S][i] / 1048576.0);
      std::fflush(stdout);
    }
  }
  if (rank == 0) {
    rwd::bench::remove_and_settle(cfile);
    rwd::bench::remove_and_settle(dfile);
    std::printf("# %d compute ranks + 1 I/O rank, %d rounds, step %lld bytes, halo %d; durable (fsync included)\n",
                ncompute, rounds, bytes, halo);
    for (int who : {C, D, S})
      std::printf("sum %-36s median %.3f s  (first step of a file: %.3f s)\n", names[who], median(cost[who]),
                  median(first[who]));
    auto line = [](const char* what, const std::vector<double>& v) {
      std::printf("ratio %-44s median %5.1f %%  min %5.1f %%  max %5.1f %%\n", what, 100 * median(v),
                  100 * *std::min_element(v.begin(), v.end()), 100 * *std::max_element(v.begin(), v.end()));
    };
    line("hand-off copying / collective write", ratio[D]);
    line("hand-off from a span / collective write", ratio[S]);
    line("I/O rank (copying) / collective MiB/s", io_ratio[D]);
    line("I/O rank (span) / collective MiB/s", io_ratio[S]);
  }
  for (MPI_Comm* c : {&compute, &io_comm})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  MPI_Finalize();
  return 0;
}

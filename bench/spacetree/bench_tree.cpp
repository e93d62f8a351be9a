// Benchmarks of the tree, the halo exchange and the neighbourhood server:
//   halo      halo-exchange time per step on a 3-D tree (all ranks compute), against
//             a plain memcpy of the same number of halo bytes on each rank;
//   nbserver  neighbourhood-server queries per second (world rank 0 serves, the
//             others query as fast as they can).
//
// Usage: mpirun -np P rewind_bench_tree halo     [--depth 3] [--s 16] [--vars 1] [--steps 20] [--adaptive]
//        mpirun -np P rewind_bench_tree nbserver [--depth 3] [--s 16] [--seconds 2] [--batch 1]
// Times are the max over ranks of each step, then the median over steps.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/launch/roles.hpp"
#include "rewind/nbserver/client.hpp"
#include "rewind/nbserver/server.hpp"
#include "rewind/forest/forest.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"

namespace st = rwd::spacetree;
namespace nb = rwd::nbserver;

namespace {

struct Options {
  std::string mode = "halo";
  int depth = 3, s = 16, vars = 1, steps = 20, batch = 1;
  double seconds = 2.0;
  bool adaptive = false;
};

Options parse(int argc, char** argv) {
  Options o;
  if (argc > 1) o.mode = argv[1];
  for (int i = 2; i + 1 < argc || (i < argc && std::string(argv[i]) == "--adaptive"); ++i) {
    const std::string a = argv[i];
    if (a == "--adaptive") { o.adaptive = true; continue; }
    const char* v = argv[++i];
    if (a == "--depth") o.depth = std::atoi(v);
    else if (a == "--s") o.s = std::atoi(v);
    else if (a == "--vars") o.vars = std::atoi(v);
    else if (a == "--steps") o.steps = std::atoi(v);
    else if (a == "--batch") o.batch = std::atoi(v);
    else if (a == "--seconds") o.seconds = std::atof(v);
  }
  return o;
}

st::Tree make_tree(const Options& o) {
  st::TreeShape sh;
  sh.domain = st::Box{{0, 0, 0}, {1, 1, 1}};
  sh.r = {2, 2, 2};
  sh.s = {o.s, o.s, o.s};
  sh.max_depth = o.depth + (o.adaptive ? 1 : 0);
  if (!o.adaptive) return st::Tree::full(sh, o.depth);
  // Full to depth-1, then refined twice around a sphere (balanced).
  st::Tree t = st::Tree::full(sh, o.depth - 1);
  t.adapt_until_stable([](st::Uid, const st::Box& b) {
    double d2 = 0;
    for (int a = 0; a < 3; ++a) {
      const double c = 0.5 * (b.lo[a] + b.hi[a]) - 0.5;
      d2 += c * c;
    }
    return std::sqrt(d2) < 0.35 ? st::Mark::refine : st::Mark::keep;
  }, 4);
  t.balance();
  return t;
}

double now() { return MPI_Wtime(); }
double max_over(double t, MPI_Comm c) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, c);
  return m;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int bench_halo(const Options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const st::Tree tree = make_tree(o);
  const st::Topology topo(tree, st::partition_morton(tree, size));
  rwd::forest::Forest fo(st::make_local_plan(topo, rank), o.vars, MPI_COMM_WORLD);
  for (std::size_t g = 0; g < fo.size(); ++g)
    for (int v = 0; v < o.vars; ++v)
      for (std::size_t i = 0; i < fo.block_size(); ++i) fo.data(g, v)[i] = std::sin(0.001 * static_cast<double>(i + g));
  std::vector<int> vars(static_cast<std::size_t>(o.vars));
  for (int v = 0; v < o.vars; ++v) vars[static_cast<std::size_t>(v)] = v;

  auto timed = [&](auto&& step) {
    std::vector<double> t;
    for (int i = 0; i < o.steps + 2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = now();
      step();
      const double dt = max_over(now() - t0, MPI_COMM_WORLD);
      if (i >= 2) t.push_back(dt);  // two warm-up steps
    }
    return median(t);
  };
  const double t_halo = timed([&] { fo.exchange_halos(vars, -1, rwd::forest::Interp::linear); });
  const auto stats = fo.last_exchange_stats();
  const double t_restrict = timed([&] { fo.restrict_levels(vars, 0); });
  const double t_comm = timed([&] { fo.communicate(vars, rwd::forest::Interp::linear); });

  // The same number of halo bytes, copied contiguously by memcpy on every rank.
  const auto n = static_cast<std::size_t>(stats.halo_bytes);
  std::vector<char> src(std::max<std::size_t>(n, 1), 1), dst(std::max<std::size_t>(n, 1), 0);
  const double t_memcpy = timed([&] {
    std::memcpy(dst.data(), src.data(), n);
    src[0] = dst[n / 2];  // keep the copy observable
  });

  std::int64_t loc[3] = {stats.halo_bytes, stats.bytes_sent, static_cast<std::int64_t>(fo.size())}, glob[3] = {};
  MPI_Reduce(loc, glob, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  std::int64_t max_halo = 0;
  MPI_Reduce(&stats.halo_bytes, &max_halo, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("halo: tree %s depth %d s=%d grids=%zu cells=%lld vars=%d ranks=%d imbalance=%.3f\n",
                o.adaptive ? "adaptive" : "full", o.depth, o.s, tree.size(), static_cast<long long>(tree.total_cells()),
                o.vars, size, topo.partition().imbalance());
    std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1fx |\n", size,
                static_cast<double>(glob[0]) / 1e6, static_cast<double>(glob[1]) / 1e6, t_halo * 1e3, t_restrict * 1e3,
                t_comm * 1e3, t_memcpy * 1e3, static_cast<double>(max_halo) / t_memcpy / 1e9, t_halo / t_memcpy);
    std::printf("  (ranks | halo MB/step all ranks | MB sent between ranks | exchange_halos ms | restrict ms | "
                "communicate ms | memcpy of max-rank halo bytes ms | memcpy GB/s | exchange/memcpy)\n");
  }
  return 0;
}

int bench_nbserver(const Options& o) {
  const rwd::launch::Roles roles = rwd::launch::split_roles(MPI_COMM_WORLD);
  if (!roles.has_server()) {
    std::fprintf(stderr, "nbserver benchmark needs at least 2 processes (server + compute)\n");
    return 1;
  }
  const st::Tree tree = make_tree(o);
  if (roles.role == rwd::launch::Role::server) {
    nb::Server server(st::Topology(tree, st::partition_morton(tree, roles.compute_size)), roles.service());
    const double t0 = now();
    const nb::ServerStats s = server.serve();
    const double wall = now() - t0;
    std::printf("nbserver: tree grids=%zu compute ranks=%d batch=%d\n", tree.size(), roles.compute_size, o.batch);
    std::printf("  server: %lld requests in %.2f s wall, busy %.2f s (%.0f%%), %.1f MB in, %.1f MB out\n",
                static_cast<long long>(s.requests), wall, s.busy_seconds, 100.0 * s.busy_seconds / wall,
                static_cast<double>(s.bytes_in) / 1e6, static_cast<double>(s.bytes_out) / 1e6);
    std::fflush(stdout);
    return 0;
  }
  nb::Client client(roles);
  std::vector<st::Uid> all;
  for (const auto& n : tree.nodes()) all.push_back(n.uid);
  // The plan first (what a compute rank really does once per partition).
  MPI_Barrier(roles.compute());
  double t0 = now();
  const st::LocalPlan plan = client.plan();
  const double t_plan = max_over(now() - t0, roles.compute());
  // Then neighbour queries as fast as possible for a fixed time.
  std::size_t next = static_cast<std::size_t>(roles.compute_rank) * 7919 % all.size();
  std::int64_t requests = 0;
  MPI_Barrier(roles.compute());
  t0 = now();
  double elapsed = 0;
  std::vector<st::Uid> batch(static_cast<std::size_t>(o.batch));
  while (elapsed < o.seconds) {
    for (int k = 0; k < 64; ++k) {
      for (auto& u : batch) u = all[next++ % all.size()];
      (void)client.neighbours(batch);
      ++requests;
    }
    elapsed = now() - t0;
  }
  std::int64_t total = 0;
  MPI_Reduce(&requests, &total, 1, MPI_INT64_T, MPI_SUM, 0, roles.compute());
  const double wall = max_over(elapsed, roles.compute());
  if (roles.compute_rank == 0) {
    std::printf("| %d | %d | %.0f | %.0f | %.1f |\n", roles.compute_size, o.batch, static_cast<double>(total) / wall,
                static_cast<double>(total) * o.batch / wall, t_plan * 1e3);
    std::printf("  (compute ranks | UIDs per request | neighbour requests/s (all ranks) | UIDs answered/s | "
                "plan request ms (max over ranks, %zu grids on rank 0))\n",
                plan.grids.size());
    std::fflush(stdout);
  }
  client.shutdown_server(roles.compute());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Options o = parse(argc, argv);
  int rc = 2;
  try {
    if (o.mode == "halo") rc = bench_halo(o);
    else if (o.mode == "nbserver") rc = bench_nbserver(o);
    else std::fprintf(stderr, "usage: rewind_bench_tree halo|nbserver [options]\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewind_bench_tree: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}

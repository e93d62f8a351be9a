// `rewind halo CASE.toml`: the launch model and the three-phase ghost-layer exchange,
// end to end, checked against a known field.
//
// Under `mpirun -np P`, world rank 0 becomes the neighbourhood server (it builds and
// partitions the tree and answers topology queries), the other ranks compute: they
// ask the server for their plan once, fill their leaves with a linear field, run the
// communication phase (bottom-up, horizontal, top-down) and compare every halo cell
// with the field, which the exchange reproduces exactly up to round-off.
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "case_sections.hpp"
#include "resource_guard.hpp"
#include "commands.hpp"
#include "rewind/launch/roles.hpp"
#include "rewind/nbserver/client.hpp"
#include "rewind/nbserver/server.hpp"
#include "rewind/forest/forest.hpp"

namespace rwd::cli {
namespace {

namespace st = rwd::spacetree;

struct HaloOptions {
  std::string case_file;
  std::vector<std::string> overrides;
  int vars = 5;
  int rounds = 10;
  std::string memory_limit;
};

double field(const std::array<double, 3>& x, int var) {
  return 1.0 + 0.1 * var + 2.1 * x[0] - 3.3 * x[1] + 0.7 * x[2];
}

std::array<double, 3> centre(const forest::Forest& f, std::size_t g, std::int64_t i, std::int64_t j, std::int64_t k) {
  const auto& box = f.grid(g).box;
  const auto& s = f.shape().s;
  const std::int64_t idx[3] = {i, j, k};
  std::array<double, 3> x{};
  for (int a = 0; a < 3; ++a) x[a] = box.lo[a] + (static_cast<double>(idx[a]) + 0.5) * box.extent(a) / s[a];
  return x;
}

// Halo cells of grid g in direction dir: on each axis -1 -> index -1, +1 -> s, 0 -> 0..s-1.
template <typename F>
void for_halo(const forest::Forest& f, const std::array<std::int8_t, 3>& dir, F&& fn) {
  const auto& s = f.shape().s;
  std::int64_t lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = dir[a] < 0 ? -1 : dir[a] > 0 ? s[a] : 0;
    hi[a] = dir[a] < 0 ? 0 : dir[a] > 0 ? s[a] + 1 : s[a];
  }
  for (auto k = lo[2]; k < hi[2]; ++k)
    for (auto j = lo[1]; j < hi[1]; ++j)
      for (auto i = lo[0]; i < hi[0]; ++i) fn(i, j, k);
}

st::Tree tree_of(const HaloOptions& o) { return config::build_tree(load_tree_case(o.case_file, o.overrides)); }

int compute(const HaloOptions& o, st::PlanSource& source, MPI_Comm comm, bool has_server) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto t0 = std::chrono::steady_clock::now();
  st::LocalPlan plan = source.plan();
  const double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  forest::Forest forest(std::move(plan), o.vars, comm);
  std::vector<int> vars(static_cast<std::size_t>(o.vars));
  std::iota(vars.begin(), vars.end(), 0);
  const auto& s = forest.shape().s;

  const auto fill_leaves = [&] {
    for (std::size_t g = 0; g < forest.size(); ++g)
      for (int v = 0; v < o.vars; ++v) {
        std::fill_n(forest.data(g, v), forest.block_size(), 0.0);
        if (!forest.grid(g).is_leaf()) continue;  // coarse grids get their data bottom-up
        for (int k = 0; k < s[2]; ++k)
          for (int j = 0; j < s[1]; ++j)
            for (int i = 0; i < s[0]; ++i) forest.at(g, v, i, j, k) = field(centre(forest, g, i, j, k), v);
      }
  };
  const forest::BoundaryFill boundary = [&](std::size_t g, const std::array<std::int8_t, 3>& dir, int v) {
    for_halo(forest, dir, [&](auto i, auto j, auto k) { forest.at(g, v, i, j, k) = field(centre(forest, g, i, j, k), v); });
  };

  double seconds = 0.0;
  std::int64_t sent = 0;
  for (int r = 0; r < o.rounds; ++r) {
    fill_leaves();
    MPI_Barrier(comm);
    const auto a = std::chrono::steady_clock::now();
    forest.communicate(vars, forest::Interp::linear, boundary);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    sent += forest.last_exchange_bytes();
  }

  // Every halo and every interior cell of every level against the field.
  double err = 0.0;
  std::int64_t checked = 0;
  const bool flat = forest.shape().dim() == 2;
  for (std::size_t g = 0; g < forest.size(); ++g)
    for (int v = 0; v < o.vars; ++v)
      for (int k = flat ? 0 : -1; k <= (flat ? 0 : s[2]); ++k)
        for (int j = -1; j <= s[1]; ++j)
          for (int i = -1; i <= s[0]; ++i) {
            err = std::max(err, std::abs(forest.at(g, v, i, j, k) - field(centre(forest, g, i, j, k), v)));
            ++checked;
          }

  double max_err = 0.0, max_seconds = 0.0, max_plan = 0.0;
  std::int64_t total_checked = 0, total_sent = 0, grids = static_cast<std::int64_t>(forest.size()), max_grids = 0,
               min_grids = 0;
  MPI_Reduce(&err, &max_err, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(&plan_s, &max_plan, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(&checked, &total_checked, 1, MPI_INT64_T, MPI_SUM, 0, comm);
  MPI_Reduce(&sent, &total_sent, 1, MPI_INT64_T, MPI_SUM, 0, comm);
  MPI_Reduce(&grids, &max_grids, 1, MPI_INT64_T, MPI_MAX, 0, comm);
  MPI_Reduce(&grids, &min_grids, 1, MPI_INT64_T, MPI_MIN, 0, comm);
  const double tol = 1e-10;
  int ok = 1;
  if (rank == 0) {
    const auto& p = forest.plan();
    fmt::print("tree        {} grids on {} levels, d-grid {}x{}x{}, {} cells\n", p.global_grids, p.levels, s[0], s[1],
               s[2], p.global_grids * forest.shape().cells_per_grid());
    fmt::print("plan        {} compute rank{}, {}..{} grids each, from {} in {:.2f} ms\n", size, size == 1 ? "" : "s",
               min_grids, max_grids, has_server ? "the neighbourhood server" : "the in-process topology",
               1e3 * max_plan);
    fmt::print("exchange    bottom-up + horizontal + top-down, {} variable{}, {} rounds: {:.3f} ms per round, "
               "{:.2f} MB sent between ranks per round\n",
               o.vars, o.vars == 1 ? "" : "s", o.rounds, 1e3 * max_seconds / o.rounds,
               static_cast<double>(total_sent) / o.rounds / 1e6);
    ok = max_err <= tol;
    fmt::print("check       {} cells (interiors and halos, every level) against a linear field: max error {:.2e} -> {}\n",
               total_checked, max_err, ok ? "exact up to round-off" : "WRONG");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  return ok ? 0 : 2;
}

int run_halo(const HaloOptions& o) {
  int world = 1, world_rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  // Every rank reads the case and checks, before anything is built, that its part fits:
  // world rank 0 holds the tree (and, alone, the fields), the others share the fields.
  const auto cost = estimate_case(load_tree_case(o.case_file, o.overrides));
  const GuardRole role{.holds_tree = world_rank == 0,
                       .compute_ranks = world == 1 ? 1 : (world_rank == 0 ? 0 : world - 1),
                       .variables = o.vars};
  guard(cost, role, o.memory_limit, MPI_COMM_WORLD);
  if (world == 1) {
    const st::Tree tree = tree_of(o);
    const st::Topology topo(tree, st::partition_morton(tree, 1));
    nbserver::TopologyPlanSource source(topo, 0);
    fmt::print("roles       1 process: one compute rank, topology in-process (no server)\n");
    return compute(o, source, MPI_COMM_WORLD, false);
  }
  auto roles = launch::split_roles(MPI_COMM_WORLD);
  if (roles.role == launch::Role::server) {
    // The server alone reads the case and builds the tree; a bad case must still
    // release the compute ranks, so errors end the whole job.
    const st::Tree tree = tree_of(o);
    const auto part = st::partition_morton(tree, roles.compute_size);
    fmt::print("roles       world rank 0 = neighbourhood server, ranks 1..{} = compute ranks\n", world - 1);
    fmt::print("partition   imbalance {:.2f} % along the Lebesgue curve\n", 100.0 * part.imbalance());
    std::fflush(stdout);
    nbserver::Server server(st::Topology(tree, part), roles.service());
    const auto stats = server.serve();
    fmt::print("server      answered {} requests ({} errors), {:.1f} kB in, {:.1f} kB out\n", stats.requests,
               stats.errors, stats.bytes_in / 1e3, stats.bytes_out / 1e3);
    return 0;
  }
  // An exception here reaches run_cli, which prints it and calls MPI_Abort, so the
  // server is never left waiting.
  nbserver::Client client(roles);
  const int rc = compute(o, client, roles.compute(), true);
  std::fflush(stdout);
  client.shutdown_server(roles.compute());
  return rc;
}

const Registration reg{Command{
    "halo", "Run the three-phase ghost-layer exchange on a case's tree and check every halo", true,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<HaloOptions>();
      sub.add_option("case", o->case_file, "Case file (TOML)")->required();
      sub.add_option("--set", o->overrides, "Override a case value: key=value (repeatable)");
      sub.add_option("--vars", o->vars, "Cell variables to exchange")->check(CLI::Range(1, 64));
      sub.add_option("--rounds", o->rounds, "Exchange rounds to time")->check(CLI::Range(1, 100000));
      sub.add_option("--memory-limit", o->memory_limit,
                     "Memory each process may use (8G, 512MiB, ...; 'off': no check). Default: what the node has "
                     "available, shared by the job's processes on it");
      return [o] { return run_halo(*o); };
    },
    20}};

}  // namespace
}  // namespace rwd::cli

// Solver throughput: cell updates per second per core and the pressure solver's
// share of a time step, on a case of at least one million cells.
//
//   bench_solver [--case 3d|2d|CASE.toml] [--depth D] [--steps N] [--set key=value ...]
//   mpirun -np P bench_solver ...   (every rank computes; plans from the in-process
//                                    topology, so no server rank is involved)
//
// CASE.toml: a case file as `rewind run` takes it (cases/default.toml, the cylinder;
// cases/cavity-3d.toml), with --set overrides; --depth then sets tree.depth.
//
// The line "restrict" is Solver::sync_coarse_levels(), the bottom-up pass that makes a
// uniform tree's parents the average of their leaves (0 for an adaptive tree, whose
// halo exchange restricts anyway). `rewind run` pays it only at steps that are written
// or windowed above the leaves; here every step pays it, so its share of a step is what
// such a step costs more.
//
// 3d: lid-driven cube, 16^3 d-grids, depth 3 -> 128^3 = 2.1 M cells.
// 2d: lid-driven square, 16^2 d-grids, depth 6 -> 1024^2 = 1.05 M cells.
// The run starts from rest with the lid moving, so the pressure solver does real
// work every step (no converged steady state to coast on).
#include <fmt/core.h>
#include <mpi.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rewind/solver/solver.hpp"
#include "rewind/config/case_file.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/topology.hpp"

using namespace rwd;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string kind = "3d";
  int depth = -1, steps = 20;
  std::vector<std::string> sets;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--case")) kind = argv[i + 1];
    else if (!std::strcmp(argv[i], "--depth")) depth = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--set")) sets.emplace_back(argv[i + 1]);
    else {
      if (rank == 0) fmt::print(stderr, "bench_solver: unknown option {}\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  const bool from_file = kind != "3d" && kind != "2d";
  const bool three = kind == "3d";
  if (depth < 0 && !from_file) depth = three ? 3 : 6;
  if (from_file && depth >= 0) sets.push_back(fmt::format("tree.depth={}", depth));
  std::string text;
  if (from_file) {
    std::ifstream in(kind);
    if (!in) {
      if (rank == 0) fmt::print(stderr, "bench_solver: cannot open case file {}\n", kind);
      MPI_Finalize();
      return 2;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  } else {
    text = fmt::format(R"(
[domain]
lo = [0.0, 0.0, 0.0]
hi = [1.0, 1.0, 1.0]
[tree]
r = [2, 2, {}]
s = [16, 16, {}]
depth = {}
[physics]
nu = 0.001
[time]
end = 100.0
[boundary.ymax]
type = "moving_wall"
velocity = [1.0, 0.0, 0.0]
[solver]
tolerance = 1e-6
)", three ? 2 : 1, three ? 16 : 1, depth);
  }
  auto doc = config::CaseDocument::parse(text, from_file ? kind : "bench", sets);
  auto sc = solver::parse_solver_case(doc);
  const auto tree = config::build_tree(sc.tree);
  spacetree::Topology topo(tree, spacetree::partition_morton(tree, size));
  solver::Solver s(sc, spacetree::make_local_plan(topo, rank), MPI_COMM_WORLD);
  const auto cells = s.global_leaf_cells();
  s.step();  // warm-up (first-touch, caches)
  MPI_Barrier(MPI_COMM_WORLD);
  const auto before = s.phase_times();
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < steps; ++n) {
    s.step();
    s.sync_coarse_levels();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& t = s.phase_times();
  if (rank == 0) {
    const double per_step = wall / steps;
    const double pressure = (t.pressure - before.pressure) / steps;
    const double cycles = static_cast<double>(t.pressure_cycles - before.pressure_cycles) / steps;
    fmt::print("case {} depth {}: {} leaf cells, {} rank(s), {} steps\n", kind, sc.tree.base_depth, cells, size, steps);
    fmt::print("  wall per step          {:8.3f} s\n", per_step);
    fmt::print("  cell updates/s         {:8.2f} M  ({:.2f} M per core)\n", cells / per_step * 1e-6,
               cells / per_step * 1e-6 / size);
    fmt::print("  pressure solve / step  {:8.3f} s  ({:.0f} % of the step, {:.2f} V-cycles, {:.3f} s per cycle)\n",
               pressure, 100 * pressure / per_step, cycles, cycles > 0 ? pressure / cycles : 0.0);
    fmt::print("  predictor {:.3f}  rhs {:.3f}  correction {:.3f}  exchange {:.3f}  dt {:.3f}  (s/step, rank 0)\n",
               (t.predictor - before.predictor) / steps, (t.projection_rhs - before.projection_rhs) / steps,
               (t.correction - before.correction) / steps, (t.exchange - before.exchange) / steps,
               (t.dt - before.dt) / steps);
    const double restrict = (t.restrict - before.restrict) / steps;
    fmt::print("  restrict (coarse levels = leaves' average) {:.4f} s per written or windowed step, {:.2f} % of a "
               "step\n", restrict, 100 * restrict / (per_step - restrict));
  }
  MPI_Finalize();
  return 0;
}

// `rewind run CASE.toml`: run the flow solver on a case file.
//
// Without mpirun (one process) the process is the only compute rank and takes its
// plan from the in-process topology. Under `mpirun -np P` world rank 0 is the
// neighbourhood server and ranks 1..P-1 compute (see rewind/nbserver); if the
// nbserver module is not built, every rank computes and builds its plan locally.
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "case_sections.hpp"
#include "commands.hpp"

#if defined(REWIND_SOLVER_AVAILABLE)
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"
#endif
#if defined(REWIND_SOLVER_AVAILABLE) && defined(REWIND_NBSERVER_AVAILABLE)
#include "rewind/nbserver/client.hpp"
#include "rewind/nbserver/server.hpp"
#define REWIND_RUN_WITH_SERVER 1
#endif

namespace rwd::cli {
namespace {

struct RunOptions {
  std::string case_file;
  std::vector<std::string> overrides;
  std::string monitor;
  std::string profiles;
  int profile_points = 129;
  std::int64_t steps = -1;
  bool quiet = false;
};

#if defined(REWIND_SOLVER_AVAILABLE)
std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60)
                   : fmt::format("{:02}:{:02}", t / 60, t % 60);
}

std::string csv_header(const solver::Monitors& m) {
  std::string h = "step,time,dt,kinetic_energy,max_velocity,max_divergence,pressure_cycles,pressure_residual";
  if (m.has_obstacle) h += ",cd,cl,cl_z,dp,strouhal";
  if (m.has_nusselt) h += ",nu_xmin,nu_xmax";
  if (m.has_tg) h += ",tg_error";
  return h + "\n";
}

std::string csv_row(const solver::Monitors& m) {
  std::string r = fmt::format("{},{:.10g},{:.6g},{:.10g},{:.8g},{:.4g},{},{:.4g}", m.step, m.time, m.dt, m.kinetic_energy,
                              m.max_velocity, m.max_divergence, m.pressure_cycles, m.pressure_residual);
  if (m.has_obstacle) r += fmt::format(",{:.8g},{:.8g},{:.8g},{:.8g},{:.6g}", m.cd, m.cl, m.cl_z, m.dp, m.strouhal);
  if (m.has_nusselt) r += fmt::format(",{:.8g},{:.8g}", m.nu_xmin, m.nu_xmax);
  if (m.has_tg) r += fmt::format(",{:.6g}", m.tg_error);
  return r + "\n";
}

// Centre-line profiles at the end of a run (cavity benchmarks): u and T along the
// vertical line through the domain centre, v and T along the horizontal one.
void write_profiles(solver::Solver& s, const std::string& file, int n, bool print) {
  const auto& dom = s.forest().shape().domain;
  std::array<double, 3> mid{};
  for (int a = 0; a < 3; ++a) mid[a] = 0.5 * (dom.lo[a] + dom.hi[a]);
  std::string out = "s,x,y,u_vertical,v_vertical,T_vertical,u_horizontal,v_horizontal,T_horizontal\n";
  for (int q = 0; q < n; ++q) {
    // Clamp inside so the wall points fall in the last cell (ghost-cell interpolation
    // then gives the wall value).
    const double f = std::clamp(static_cast<double>(q) / (n - 1), 1e-9, 1.0 - 1e-9);
    auto pv = mid, ph = mid;
    pv[1] = dom.lo[1] + f * dom.extent(1);
    ph[0] = dom.lo[0] + f * dom.extent(0);
    const double uv = s.sample(solver::kU, pv), vv = s.sample(solver::kV, pv), tv = s.sample(solver::kT, pv);
    const double uh = s.sample(solver::kU, ph), vh = s.sample(solver::kV, ph), th = s.sample(solver::kT, ph);
    out += fmt::format("{:.6f},{:.8g},{:.8g},{:.8g},{:.8g},{:.8g},{:.8g},{:.8g},{:.8g}\n", f, ph[0], pv[1], uv, vv, tv,
                       uh, vh, th);
  }
  if (!print) return;
  std::ofstream f(file);
  if (!f) throw std::runtime_error(fmt::format("cannot write profile file '{}'", file));
  f << out;
  fmt::print("profiles: {}\n", file);
}

int run_compute(const RunOptions& o, solver::SolverCase sc, spacetree::LocalPlan plan, MPI_Comm comm, bool print) {
  using clock = std::chrono::steady_clock;
  if (o.steps >= 0) sc.time.max_steps = o.steps;
  const std::string monitor_file = o.monitor.empty() ? sc.monitor.file : o.monitor;
  const double progress_every = o.quiet ? 0.0 : sc.monitor.progress;
  const std::int64_t interval = sc.monitor.interval;
  const auto t_setup = clock::now();
  solver::Solver s(std::move(sc), std::move(plan), comm);
  const auto& c = s.config();
  const std::int64_t cells = s.global_leaf_cells();
  if (print)
    fmt::print("rewind run: {}-D, {} leaf cells, {} levels, nu = {:g}{}, end time {:g}\n", c.dim(), cells,
               s.forest().plan().levels, c.physics.nu, c.physics.energy ? fmt::format(", alpha = {:g}", c.physics.alpha) : "",
               c.time.end);

  std::unique_ptr<std::ofstream> csv;
  auto write_monitor = [&](bool force) {
    if (!force && (s.scalar_state().step % interval) != 0) return;
    const auto m = s.monitors();  // collective
    if (!print || monitor_file.empty()) return;
    if (!csv) {
      csv = std::make_unique<std::ofstream>(monitor_file);
      if (!*csv) throw std::runtime_error(fmt::format("cannot write monitor file '{}'", monitor_file));
      *csv << csv_header(m);
    }
    *csv << csv_row(m);
    csv->flush();
  };
  write_monitor(true);

  const auto t0 = clock::now();
  auto last_print = t0;
  std::int64_t steps = 0;
  solver::StepInfo info;
  double sum_cycles = 0;
  while (!s.finished()) {
    info = s.step();
    ++steps;
    sum_cycles += info.pressure.cycles;
    write_monitor(false);
    const auto now = clock::now();
    const double since = std::chrono::duration<double>(now - last_print).count();
    if (print && progress_every > 0 && since >= progress_every) {
      last_print = now;
      const double wall = std::chrono::duration<double>(now - t0).count();
      const double rate = static_cast<double>(cells) * static_cast<double>(steps) / wall;
      const double per_step = wall / static_cast<double>(steps);
      double left = (c.time.end - info.time) / info.dt;
      if (c.time.max_steps < std::numeric_limits<std::int64_t>::max())
        left = std::min(left, static_cast<double>(c.time.max_steps - info.step));
      fmt::print("step {:>7}  t = {:<10.5g} dt = {:<9.3e} p: {:>2} cycles |div| = {:<9.2e}{} {:6.2f} Mcell/s  ETA {}\n",
                 info.step, info.time, info.dt, info.pressure.cycles, info.pressure.residual,
                 info.pressure.converged ? " " : "!", rate * 1e-6, hms(left * per_step));
      std::fflush(stdout);
    }
  }
  if (s.scalar_state().step % interval != 0) write_monitor(true);
  if (!o.profiles.empty()) write_profiles(s, o.profiles, o.profile_points, print);
  const double wall = std::chrono::duration<double>(clock::now() - t0).count();
  if (print) {
    fmt::print("done: {} steps to t = {:.6g} in {:.2f} s wall ({:.2f} s setup), {:.2f} Mcell updates/s, "
               "{:.2f} pressure cycles/step\n",
               steps, s.scalar_state().time, wall, std::chrono::duration<double>(t0 - t_setup).count(),
               steps > 0 ? static_cast<double>(cells) * static_cast<double>(steps) / wall * 1e-6 : 0.0,
               steps > 0 ? sum_cycles / static_cast<double>(steps) : 0.0);
    if (!monitor_file.empty()) fmt::print("monitors: {}\n", monitor_file);
  }
  return 0;
}
#endif

#if defined(REWIND_RUN_WITH_SERVER)
// World rank 0 serves the topology; the compute ranks ask it for their plans.
int run_with_server(const RunOptions& o, solver::SolverCase sc, const spacetree::Tree& tree) {
  auto roles = nbserver::split_roles(MPI_COMM_WORLD);
  if (roles.role == nbserver::Role::server) {
    nbserver::Server server(spacetree::Topology(tree, spacetree::partition_morton(tree, roles.compute_size)),
                            roles.service);
    server.serve();
    return 0;
  }
  if (roles.role != nbserver::Role::compute) return 0;
  nbserver::Client client(roles);
  auto plan = client.plan();
  const int rc = run_compute(o, std::move(sc), std::move(plan), roles.compute, roles.compute_rank == 0);
  client.shutdown_server(roles.compute);
  return rc;
}
#endif

int run_run(const RunOptions& o) {
#if !defined(REWIND_SOLVER_AVAILABLE)
  (void)o;
  throw std::runtime_error("this build has no solver (rewind_solver)");
#else
  auto doc = spacetree::CaseDocument::load(o.case_file, o.overrides);
  (void)doc.get_string("case.name", "");
  (void)doc.get_string("case.description", "");
  auto sc = solver::parse_solver_case(doc);
  mark_sections_of_other_modules(doc, {"case", "domain", "tree", "run", "physics", "time", "boundary", "obstacle",
                                       "initial", "solver", "monitor"});
  doc.reject_unknown();

  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);

  const spacetree::Tree tree = spacetree::build_tree(sc.tree);
#if defined(REWIND_RUN_WITH_SERVER)
  if (world_size > 1) return run_with_server(o, std::move(sc), tree);
#endif
  // Every rank computes; plans come from the in-process topology.
  spacetree::Topology topo(tree, spacetree::partition_morton(tree, world_size));
  auto plan = spacetree::make_local_plan(topo, world_rank);
  return run_compute(o, std::move(sc), std::move(plan), MPI_COMM_WORLD, world_rank == 0);
#endif
}

const Registration reg{Command{
    "run", "Run the flow solver on a case file (under mpirun: rank 0 = neighbourhood server)", true,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<RunOptions>();
      sub.add_option("case", o->case_file, "Case file (TOML)")->required();
      sub.add_option("--set", o->overrides, "Override a case value: key=value (repeatable)");
      sub.add_option("--monitor", o->monitor, "Monitor CSV file (default: monitor.file of the case)");
      sub.add_option("--steps", o->steps, "Stop after this many steps");
      sub.add_option("--profiles", o->profiles, "Write centre-line profiles (u, v, T) to this CSV at the end");
      sub.add_option("--profile-points", o->profile_points, "Points per profile line")->check(CLI::Range(2, 100000));
      sub.add_flag("-q,--quiet", o->quiet, "No progress lines");
      return [o] { return run_run(*o); };
    },
    30}};

}  // namespace
}  // namespace rwd::cli

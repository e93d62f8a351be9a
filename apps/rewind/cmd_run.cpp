// `rewind run CASE.toml`: run the flow solver on a case file.
//
// Without mpirun (one process) the process is the only compute rank and takes its
// plan from the in-process topology. Under `mpirun -np P` world rank 0 is the
// neighbourhood server and ranks 1..P-1 compute (see rewind/nbserver). Output,
// restart and branches go through run_io.hpp.
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>

#include "case_sections.hpp"
#include "resource_guard.hpp"
#include "commands.hpp"
#include "rewind/nbserver/client.hpp"
#include "rewind/nbserver/server.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"
#include "run_io.hpp"

namespace rwd::cli {
namespace {

struct RunOptions {
  std::string case_file;
  std::string output;   ///< --output FILE (overrides output.file)
  std::string restart;  ///< --restart FILE[@STEP]
  bool force = false;   ///< overwrite an existing output file
  std::vector<std::string> overrides;
  std::string monitor;
  std::string profiles;
  int profile_points = 129;
  std::int64_t steps = -1;
  bool quiet = false;
  std::string memory_limit;
};

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

// What a run writes and where it starts from (the kernel side of `rewind run`).
struct RunIo {
  std::optional<RestartPoint> restart;
  OutputSettings output;
  kernel::CommonInfo common;
  RunOutput::Mode mode = RunOutput::Mode::create;
  std::string monitor_file;
  bool monitor_append = false;  ///< continue the parent's monitor CSV (same-file restart)
  std::string estimate;         ///< the resource guard's summary of the case
};

// Leaf cells per level of the whole tree. Collective over `comm`.
std::vector<std::int64_t> leaf_cells_per_level(const spacetree::Forest& f, MPI_Comm comm) {
  std::vector<std::int64_t> local(static_cast<std::size_t>(f.plan().levels), 0), total(local.size(), 0);
  for (std::size_t g = 0; g < f.size(); ++g)
    if (f.grid(g).is_leaf()) local[static_cast<std::size_t>(f.grid(g).level())] += f.shape().cells_per_grid();
  MPI_Allreduce(local.data(), total.data(), static_cast<int>(local.size()), MPI_INT64_T, MPI_SUM, comm);
  return total;
}

int run_compute(const RunOptions& o, solver::SolverCase sc, spacetree::LocalPlan plan, MPI_Comm comm, bool print,
                const RunIo& io) {
  using clock = std::chrono::steady_clock;
  std::int64_t first_step = 0;
  if (io.restart) first_step = io.restart->step.step;
  if (o.steps >= 0) sc.time.max_steps = first_step + o.steps;  // --steps counts from the start (or restart)
  const std::string& monitor_file = io.monitor_file;
  const double progress_every = o.quiet ? 0.0 : sc.monitor.progress;
  const std::int64_t interval = sc.monitor.interval;
  const auto t_setup = clock::now();
  solver::Solver s(std::move(sc), std::move(plan), comm);
  const auto& c = s.config();
  if (io.restart) {
    restore_solver(s, *io.restart, comm);
    if (print)
      fmt::print("restart     from {} step {} (t = {:.6g})\n", io.restart->file, io.restart->step.step,
                 io.restart->step.time);
  }
  RunOutput output(comm, io.output, io.common, io.mode, print);
  if (print && !output.path().empty())
    fmt::print("output      {} {}\n", io.mode == RunOutput::Mode::append ? "continuing" : "writing", output.path());
  const auto plan_outputs = [&](bool first) {
    s.set_event_time(output.next_event_time(s.scalar_state().time));
    output.after_step(s, first, s.finished());
  };
  const std::int64_t cells = s.global_leaf_cells();
  const auto per_level = leaf_cells_per_level(s.forest(), comm);
  if (print) {
    fmt::print("rewind run: {}-D, {} leaf cells, {} levels, nu = {:g}{}, end time {:g}\n", c.dim(), cells,
               s.forest().plan().levels, c.physics.nu, c.physics.energy ? fmt::format(", alpha = {:g}", c.physics.alpha) : "",
               c.time.end);
    std::string levels;
    for (std::size_t l = 0; l < per_level.size(); ++l)
      if (per_level[l] > 0) levels += fmt::format("{}{} on level {}", levels.empty() ? "" : ", ", per_level[l], l);
    fmt::print("tree        leaf cells: {}\n", levels);
    fmt::print("estimate    {}\n", io.estimate);
  }

  std::unique_ptr<std::ofstream> csv;
  auto write_monitor = [&](bool force) {
    if (!force && (s.scalar_state().step % interval) != 0) return;
    const auto m = s.monitors();  // collective
    if (!print || monitor_file.empty()) return;
    if (!csv) {
      csv = std::make_unique<std::ofstream>(monitor_file, io.monitor_append ? std::ios::app : std::ios::trunc);
      if (!*csv) throw std::runtime_error(fmt::format("cannot write monitor file '{}'", monitor_file));
      if (!io.monitor_append) *csv << csv_header(m);
    }
    *csv << csv_row(m);
    csv->flush();
  };
  if (!io.monitor_append) write_monitor(true);  // a continued CSV already has this row
  plan_outputs(true);

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
    plan_outputs(false);
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

// World rank 0 serves the topology; the compute ranks ask it for their plans.
int run_with_server(const RunOptions& o, solver::SolverCase sc, const std::function<spacetree::Tree()>& make_tree,
                    const RunIo& io) {
  auto roles = nbserver::split_roles(MPI_COMM_WORLD);
  if (roles.role == nbserver::Role::server) {
    // Only the server holds the whole tree (built from the case, or from a file).
    const spacetree::Tree tree = make_tree();
    nbserver::Server server(spacetree::Topology(tree, spacetree::partition_morton(tree, roles.compute_size)),
                            roles.service);
    server.serve();
    return 0;
  }
  if (roles.role != nbserver::Role::compute) return 0;
  nbserver::Client client(roles);
  auto plan = client.plan();
  const int rc = run_compute(o, std::move(sc), std::move(plan), roles.compute, roles.compute_rank == 0, io);
  client.shutdown_server(roles.compute);
  return rc;
}

// The file a branch goes to when --output is not given: beside the parent, named
// after the restart step, never an existing file.
std::string branch_name(const std::string& parent, std::int64_t step) {
  namespace fs = std::filesystem;
  const fs::path p(parent);
  for (int n = 1;; ++n) {
    const std::string suffix = n == 1 ? "" : fmt::format("-{}", n);
    fs::path candidate = p.parent_path() / fmt::format("{}.branch{}{}.h5", p.stem().string(), step, suffix);
    if (!fs::exists(candidate)) return candidate.string();
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) ||
         std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}

// Settings a restart may not change: the grids come from the file.
void refuse_tree_overrides(const std::vector<std::string>& overrides) {
  for (const auto& kv : overrides)
    for (const char* section : {"domain.", "tree.", "run."})
      if (kv.rfind(section, 0) == 0)
        throw std::runtime_error(fmt::format(
            "--set {}: a restart continues on the grids stored in the file; the tree cannot change", kv));
}

int run_run(const RunOptions& o) {
  RunIo io;
  std::optional<spacetree::CaseDocument> doc_holder;
  if (!o.restart.empty()) {
    if (!o.case_file.empty())
      throw std::runtime_error("give a case file or --restart, not both: a restart runs the case stored in the file");
    refuse_tree_overrides(o.overrides);
    io.restart = find_restart_point(o.restart);
    doc_holder.emplace(spacetree::CaseDocument::parse(io.restart->case_text,
                                                      io.restart->file + " (its stored case)", o.overrides));
  }
  if (!doc_holder) {
    if (o.case_file.empty()) throw std::runtime_error("no case file given (or --restart FILE[@STEP])");
    doc_holder.emplace(spacetree::CaseDocument::load(o.case_file, o.overrides));
  }
  auto& doc = *doc_holder;
  read_case_header(doc);
  auto sc = solver::parse_solver_case(doc);
  io.output = parse_output_settings(doc);
  mark_sections_of_other_modules(doc, {"case", "domain", "tree", "run", "physics", "time", "boundary", "obstacle",
                                       "initial", "solver", "monitor", "output"});
  doc.reject_unknown();
  io.monitor_file = o.monitor.empty() ? sc.monitor.file : o.monitor;

  // A restart never takes output.file from the stored case: that names the parent's
  // own file. Its output is --output, or the same file / a branch beside it (below).
  if (!o.output.empty() || io.restart) io.output.file = o.output;
  io.common = make_common(sc, doc.effective_text());
  if (io.restart) {
    const auto& rp = *io.restart;
    // Extending a run from its latest step (only the end changed) continues the same
    // file; anything else — an earlier step, changed physics or boundaries — branches.
    std::vector<std::string> changes;
    for (const auto& kv : o.overrides)
      if (kv.rfind("time.end=", 0) != 0 && kv.rfind("time.max_steps=", 0) != 0) changes.push_back(kv);
    const bool continues = rp.step.step == rp.last_committed && changes.empty();
    if (io.output.file.empty() || same_file(io.output.file, rp.file)) {
      if (!o.output.empty() && same_file(o.output, rp.file) && !continues)
        throw std::runtime_error(fmt::format(
            "--output {}: a branch never writes into its parent; choose another file", o.output));
      if (continues) {
        io.output.file = rp.file;  // continue the same run in the same file
        io.mode = RunOutput::Mode::append;
        io.monitor_append = o.monitor.empty();
      } else {
        io.output.file = branch_name(rp.file, rp.step.step);
      }
    }
    if (io.mode == RunOutput::Mode::create) {
      // A branch: the new file remembers its parent, the step, and what changed.
      const auto parent = kernel::Reader::open(rp.file);
      io.common.lineage = kernel::make_branch_common(parent, rp.step.step, o.overrides).lineage;
      if (o.monitor.empty())
        io.monitor_file = std::filesystem::path(io.output.file).replace_extension(".monitor.csv").string();
    }
  }
  if (io.mode == RunOutput::Mode::create && !io.output.file.empty() && std::filesystem::exists(io.output.file)) {
    if (!o.force)
      throw std::runtime_error(fmt::format("{} exists; use --force to overwrite it (or --output another file)",
                                           io.output.file));
    if (io.restart && same_file(io.output.file, io.restart->file))
      throw std::runtime_error(fmt::format("{}: a branch never overwrites its parent, not even with --force",
                                           io.output.file));
  }
  // The tree maker owns copies of what it reads: under mpirun the server calls it after
  // `sc` has been moved to the compute side (capturing `sc` by reference once dropped
  // every [[tree.refine]] region there).
  const std::function<spacetree::Tree()> make_tree = [tree_case = sc.tree, restart = io.restart] {
    return restart ? restart_tree(*restart, tree_case.shape) : spacetree::build_tree(tree_case);
  };

  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // Before any tree or field exists, every rank checks that its part fits: world rank 0
  // holds the tree (and, alone, the fields), the others share the fields.
  CaseCost cost;
  if (io.restart) {  // the tree is the stored step's: its size is known exactly
    const auto& st = io.restart->step;
    cost.estimate.grids = st.n_grids;
    cost.estimate.cells = st.n_cells;
    cost.shape = sc.tree.shape;
    cost.key = fmt::format("{}@{}", io.restart->file, st.step);
  } else {
    cost = estimate_case(sc.tree);
  }
  const GuardRole role{.holds_tree = world_rank == 0,
                       .compute_ranks = world_size == 1 ? 1 : (world_rank == 0 ? 0 : world_size - 1),
                       .variables = solver::kNumVars};
  guard(cost, role, o.memory_limit, MPI_COMM_WORLD);
  io.estimate = describe(cost, GuardRole{.holds_tree = world_size == 1, .compute_ranks = std::max(1, world_size - 1)},
                         o.memory_limit, MPI_COMM_WORLD);
  if (world_size > 1) return run_with_server(o, std::move(sc), make_tree, io);
  // One process: it computes, and its plan comes from the in-process topology.
  const spacetree::Tree tree = make_tree();
  spacetree::Topology topo(tree, spacetree::partition_morton(tree, world_size));
  auto plan = spacetree::make_local_plan(topo, world_rank);
  return run_compute(o, std::move(sc), std::move(plan), MPI_COMM_WORLD, world_rank == 0, io);
}

const Registration reg{Command{
    "run", "Run, restart or branch a simulation (under mpirun: rank 0 = neighbourhood server)", true,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<RunOptions>();
      sub.add_option("case", o->case_file, "Case file (TOML); not with --restart");
      sub.add_option("--set", o->overrides, "Override a case value: key=value (repeatable)");
      sub.add_option("-o,--output", o->output, "Output file (overrides output.file of the case)");
      sub.add_option("--restart", o->restart,
                     "Restart from FILE[@STEP] (STEP: latest checkpoint by default, N, #i or t=T); with --set or "
                     "from an earlier step this writes a branch file that remembers its parent");
      sub.add_flag("--force", o->force, "Overwrite an existing output file (never a branch's parent)");
      sub.add_option("--monitor", o->monitor, "Monitor CSV file (default: monitor.file of the case)");
      sub.add_option("--steps", o->steps, "Stop after this many steps (counted from the start or the restart)");
      sub.add_option("--profiles", o->profiles, "Write centre-line profiles (u, v, T) to this CSV at the end");
      sub.add_option("--profile-points", o->profile_points, "Points per profile line")->check(CLI::Range(2, 100000));
      sub.add_flag("-q,--quiet", o->quiet, "No progress lines");
      sub.add_option("--memory-limit", o->memory_limit,
                     "Memory each process may use (8G, 512MiB, ...; 'off': no check). Default: what the node has "
                     "available, shared by the job's processes on it");
      return [o] { return run_run(*o); };
    },
    30}};

}  // namespace
}  // namespace rwd::cli

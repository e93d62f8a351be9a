// `rewind run CASE.toml`: run the flow solver on a case file.
//
// Without mpirun (one process) the process is the only compute rank and takes its
// plan from the in-process topology. Under `mpirun -np P` world rank 0 is the
// neighbourhood server and ranks 1..P-1 compute (see rewind/nbserver). The loop, the
// output schedule and the branch policy are the driver library (rewind/driver).
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
#include "window_output.hpp"
#include "commands.hpp"
#include "rewind/collector/contact.hpp"
#include "rewind/mpi/comm.hpp"
#include "rewind/collector/file_service.hpp"
#include "rewind/collector/server.hpp"
#include "rewind/collector/token.hpp"
#include "rewind/driver/insitu.hpp"
#include "rewind/driver/live.hpp"
#include "rewind/live/link.hpp"
#include "rewind/live/relay.hpp"
#include "rewind/driver/observers.hpp"
#include "rewind/driver/run.hpp"
#include "rewind/kernel/io_ranks.hpp"
#include "rewind/launch/roles.hpp"
#include "rewind/nbserver/client.hpp"
#include "rewind/nbserver/server.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"

namespace rwd::cli {
namespace {

struct RunOptions {
  std::string case_file;
  std::string output;   ///< --output FILE (overrides output.file)
  std::string restart;  ///< --restart FILE[@STEP]
  bool force = false;   ///< overwrite an existing output file
  bool orphan_branches = false;  ///< ... even one with branches
  bool break_lock = false;       ///< take over a claim left by a job on another host
  std::vector<std::string> overrides;
  std::string monitor;
  std::string profiles;
  int profile_points = 129;
  std::int64_t steps = -1;
  bool quiet = false;
  std::string memory_limit;
  std::string listen;  ///< --listen HOST:PORT: serve live windows and steering (collector rank)
  std::string token;       ///< --token (visible in ps), or from --token-file / the environment
  std::string token_file;  ///< --token-file
  bool no_token = false;   ///< --token '': no token at all (loopback only), a warning
  bool token_generated = false;  ///< none given: agreed_token made one (in the contact file)
  bool pause_at_end = false;  ///< with --listen: pause at the end instead of exiting
};

// Centre-line profiles at the end of a run (cavity benchmarks): u and T along the
// vertical line through the domain centre, v and T along the horizontal one.
void write_profiles(solver::Solver& s, const std::string& file, int n, bool print, bool talk) {
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
  if (talk) fmt::print("profiles: {}\n", file);
}

// Leaf cells per level of the whole tree. Collective over `comm`.
std::vector<std::int64_t> leaf_cells_per_level(const forest::Forest& f, MPI_Comm comm) {
  std::vector<std::int64_t> local(static_cast<std::size_t>(f.plan().levels), 0), total(local.size(), 0);
  for (std::size_t g = 0; g < f.size(); ++g)
    if (f.grid(g).is_leaf()) local[static_cast<std::size_t>(f.grid(g).level())] += f.shape().cells_per_grid();
  MPI_Allreduce(local.data(), total.data(), static_cast<int>(local.size()), MPI_INT64_T, MPI_SUM, comm);
  return total;
}

int run_compute(const RunOptions& o, driver::RunSpec spec, spacetree::LocalPlan plan, MPI_Comm comm, bool print,
                const std::string& estimate, std::optional<insitu::Hook> hook, driver::LiveLink* live = nullptr) {
  spec.steps = o.steps;  // counted from the start, the restart point or an in-job branch point
  spec.quiet = o.quiet;
  const bool talk = print && !o.quiet;  // report lines; `print` (rank 0) still writes the files
  const double progress_every = o.quiet ? 0.0 : spec.solver_case.monitor.progress;
  const std::int64_t interval = spec.solver_case.monitor.interval;
  driver::Run run(std::move(spec), std::move(plan), comm, print);
  auto& s = run.solver();
  const auto& c = s.config();
  const std::int64_t cells = run.leaf_cells();
  const auto per_level = leaf_cells_per_level(s.forest(), comm);
  if (talk) {
    fmt::print("rewind run: {}-D, {} leaf cells, {} levels, nu = {:g}{}, end time {:g}\n", c.dim(), cells,
               s.forest().plan().levels, c.physics.nu, c.physics.energy ? fmt::format(", alpha = {:g}", c.physics.alpha) : "",
               c.time.end);
    std::string levels;
    for (std::size_t l = 0; l < per_level.size(); ++l)
      if (per_level[l] > 0) levels += fmt::format("{}{} on level {}", levels.empty() ? "" : ", ", per_level[l], l);
    fmt::print("tree        leaf cells: {}\n", levels);
    fmt::print("estimate    {}\n", estimate);
  }
  driver::OutputObserver output;
  driver::MonitorCsv monitor(interval);
  driver::Progress progress(progress_every);
  std::optional<driver::InsituObserver> analysis;  // the hook here
  std::optional<driver::InsituHandOff> hand_off;   // the hook on the I/O ranks
  if (hook) analysis.emplace(std::move(*hook), run.spec().insitu);
  else if (driver::insitu_on_io_ranks(run.spec())) hand_off.emplace(run.spec().insitu.every);
  if (live) run.add(*live);  // first: a boundary's steering precedes its output
  if (hand_off) run.add(*hand_off);  // before the output, which hands the step it marks over
  run.add(output);
  if (analysis) run.add(*analysis);  // after the output: a step a hook fails at is in the file
  run.add(monitor);
  run.add(progress);
  const auto sum = run.run();
  if (analysis) analysis->finish(run);
  if (!o.profiles.empty()) write_profiles(run.solver(), o.profiles, o.profile_points, print, talk);
  if (talk) {
    const double wall = sum.wall_seconds;
    fmt::print("done: {} to t = {:.6g} in {:.2f} s wall ({:.2f} s setup), {:.2f} Mcell updates/s, "
               "{:.2f} pressure cycles/step\n",
               count_of(sum.steps, "step"), run.solver().scalar_state().time, wall, sum.setup_seconds,
               sum.steps > 0 ? static_cast<double>(cells) * static_cast<double>(sum.steps) / wall * 1e-6 : 0.0,
               sum.steps > 0 ? sum.pressure_cycles / static_cast<double>(sum.steps) : 0.0);
    if (!run.spec().monitor_file.empty()) fmt::print("monitors: {}\n", run.spec().monitor_file);
  }
  return 0;
}

// The hook of a run whose hook runs on the I/O ranks: loaded there only (the compute ranks
// never map it); every rank of the job learns whether that worked, so a bad library is
// refused with one line as when every rank loads it. Collective over the job.
std::optional<insitu::Hook> load_on_io_ranks(const launch::Roles& roles, const std::string& library) {
  std::optional<insitu::Hook> hook;
  std::string error;
  if (roles.role == launch::Role::io) {
    try {
      hook.emplace(insitu::Hook::load(library));
    } catch (const insitu::HookError& e) {
      error = fmt::format("insitu.library: {}", e.what());
    }
  }
  throw_agreed(roles.service(), std::move(error));
  return hook;
}

collector::ServerOptions server_options(const RunOptions& o) {
  const auto ep = parse_host_port(o.listen);
  collector::ServerOptions so;
  so.host = ep->first;
  so.port = ep->second;
  so.token = o.token;
  so.name = "rewind-run";
  return so;
}

// Prints the collector's address and writes the run's contact file beside its output
// (collector/contact.hpp), so clients can connect by naming the run; a run without an
// output file has none. A file that cannot be written costs the run nothing but a note.
// `contact` removes the file when it goes (or on SIGTERM, SIGINT, SIGHUP). A generated
// token is in the contact file, never in the output; only a run with no contact file
// prints it (as Jupyter does), since nothing else could tell a client.
void say_listening(const RunOptions& o, std::uint16_t port, collector::ContactFile& contact, const std::string& output) {
  const auto so = server_options(o);
  fmt::print("collector   listening on {}:{} (live windows and steering: rewind window / rewind steer {}:{})\n", so.host,
             port, so.host, port);
  bool published = false;
  if (!output.empty()) {
    try {
      contact.publish(output, collector::make_contact(so.host, port, so.token));
      published = true;
      fmt::print("collector   contact file {} (rewind window / rewind steer {} ...){}\n",
                 collector::contact_path(output), output,
                 o.token_generated ? "; it holds the token generated for this run (mode 600)" : "");
    } catch (const std::exception& e) {
      fmt::print(stderr, "rewind run: note: {}; connect by address instead\n", e.what());
    }
  }
  if (o.token_generated && !published)
    fmt::print(
        "collector   token {} (generated; no contact file holds it: give it to clients with --token-file "
        "or REWIND_TOKEN, or start the run with a token of your own)\n",
        so.token);
  std::fflush(stdout);
}

void report_collector(const live::RelayStats& stats, bool quiet) {
  if (!quiet && stats.windows > 0)
    fmt::print("collector   {} live window{}: {} sent from memory shared with the compute ranks, {} through the "
               "collector's own arrays (zstd, or both shared slots still being written)\n",
               stats.windows, stats.windows == 1 ? "" : "s", stats.from_shared_memory, stats.windows - stats.from_shared_memory);
}

// The neighbourhood server's selection of a window, as the live collector takes it.
live::Selection nb_selection(nbserver::Client& nb, const window::Window& w) {
  nbserver::WindowRequest q;
  q.box = spacetree::Box{w.box.lo, w.box.hi};
  q.budget = w.budget;
  q.max_level = w.max_level;
  const auto sel = nb.select_window(q);
  live::Selection out;
  out.level = sel.level;
  out.stride = sel.stride;
  out.covered = {sel.covered.lo, sel.covered.hi};
  for (const auto& p : sel.pieces) {
    live::SelectedPiece s;
    s.uid = p.uid.raw();
    s.owner = p.owner;
    window::copy_placement(p, s.piece);
    out.pieces.push_back(s);
  }
  return out;
}

// A dedicated I/O rank: writes what the compute ranks hand off (and runs the in-situ
// hook on it) until they let it go.
int run_io_rank(const RunOptions& o, driver::RunSpec& spec, const launch::Roles& roles,
                std::optional<insitu::Hook> hook) {
  int io_rank = 0;
  MPI_Comm_rank(roles.io(), &io_rank);
  spec.quiet = o.quiet;
  std::optional<driver::InsituConsumer> analysis;
  if (hook) analysis.emplace(std::move(*hook), spec, roles.io(), io_rank == 0);
  const kernel::IoRankStats st = kernel::serve_io_ranks(roles.io_group(), roles.io(), analysis ? &*analysis : nullptr);
  if (analysis) analysis->finish();
  double mine[3] = {st.write_seconds, st.idle_seconds, static_cast<double>(st.steps)}, most[3] = {0, 0, 0};
  MPI_Reduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, 0, roles.io());
  if (io_rank == 0 && !o.quiet && most[2] > 0)
    fmt::print(
        "io ranks    {} I/O rank(s) wrote {:.0f} steps: {:.2f} MiB, {:.2f} s writing, {:.2f} s waiting for steps\n",
        roles.io_size, most[2], static_cast<double>(st.bytes) / 1048576.0, most[0], most[1]);
  return 0;
}

// The collector's rank. Windows are selected on the neighbourhood server's tree (fixed for
// the job: the last answers are kept); it stops once this rank and the compute ranks are done.
int run_collector_rank(const RunOptions& o, const driver::RunSpec& spec, const launch::Roles& roles) {
  nbserver::Client nb(roles.service(), roles.server_rank, -1);
  const live::Selector select = live::remembering([&nb](const window::Window& w) { return nb_selection(nb, w); });
  const live::RankLayout layout{
      .service = roles.service(), .first_compute = roles.first_compute, .compute_size = roles.compute_size};
  collector::ContactFile contact;  // RUN.h5.contact while the collector listens
  const auto stats = live::run_relay(layout, select, collector::server_info_of(spec.common), server_options(o),
                                     [&](std::uint16_t port) { say_listening(o, port, contact, spec.output.file); });
  contact.remove();
  nb.shutdown_one();
  report_collector(stats, spec.quiet);
  return 0;
}

// World rank 0 serves the topology; the compute ranks ask it for their plans.
int run_with_server(const RunOptions& o, driver::RunSpec spec, const std::function<spacetree::Tree()>& make_tree,
                    const std::string& estimate, std::optional<insitu::Hook> hook) {
  const bool live = !o.listen.empty();
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const bool collector_rank = live && world_size >= 3;  // else a thread of compute rank 0
  const bool dedicated = spec.output.io.strategy == kernel::Strategy::dedicated;
  auto roles = launch::split_roles(
      MPI_COMM_WORLD, launch::RoleLayout{.collector = collector_rank,
                                         .io_ranks_per_node = dedicated ? static_cast<int>(spec.output.io.io_ranks_per_node) : 0});
  if (driver::insitu_on_io_ranks(spec)) hook = load_on_io_ranks(roles, spec.insitu.library);
  if (roles.role == launch::Role::io) return run_io_rank(o, spec, roles, std::move(hook));
  if (roles.role == launch::Role::server) {
    // Only the server holds the whole tree (built from the case, or from a file).
    const spacetree::Tree tree = make_tree();
    nbserver::Server server(spacetree::Topology(tree, spacetree::partition_morton(tree, roles.compute_size)),
                            roles.service(), collector_rank ? 2 : 1);  // with a collector rank: until it is done too
    server.serve();
    return 0;
  }
  if (roles.role == launch::Role::collector) return run_collector_rank(o, spec, roles);
  if (roles.role != launch::Role::compute) return 0;
  // The I/O ranks stop when every compute rank has let them go, whatever way it leaves.
  struct IoRelease {
    MPI_Comm group;
    ~IoRelease() {
      if (group != MPI_COMM_NULL) kernel::release_io_ranks(group);
    }
  } io_release{roles.io_group()};
  spec.output.env.io_group = roles.io_group();
  nbserver::Client client(roles);
  auto plan = client.plan();
  // The collector: a rank of its own (3+ processes), else a thread of compute rank 0.
  std::optional<live::RelayThread> thread;
  collector::ContactFile contact;  // RUN.h5.contact while the thread listens
  std::optional<driver::LiveLink> link;
  if (live && roles.collector_rank >= 0) {
    link.emplace(live::Link::to_rank(roles.service(), roles.collector_rank, roles.compute()), o.pause_at_end);
  } else if (live) {
    if (roles.compute_rank == 0) thread.emplace(collector::server_info_of(spec.common), server_options(o), roles.compute_size);
    if (thread) say_listening(o, thread->port(), contact, spec.output.file);
    link.emplace(live::Link::to_thread(thread ? thread->channel() : nullptr, roles.compute()), o.pause_at_end);
  }
  // For agreeing on a failure of every compute rank (a damaged checkpoint, a blow-up):
  // nothing else talks on it, so the Ibarrier below meets only other failing ranks.
  const mpi::Comm failures = mpi::Comm::dup(roles.compute(), "rewind run");
  int rc = 0;
  try {
    rc = run_compute(o, std::move(spec), std::move(plan), roles.compute(), roles.compute_rank == 0, estimate,
                     std::move(hook), link ? &*link : nullptr);
  } catch (const std::exception& e) {
    // Every compute rank failed the same way: stop the server as at a normal end, one
    // line from the first compute rank, a non-zero exit, no MPI_Abort. A rank failing
    // alone (or a live run, whose collector waits for the ranks) goes on to the abort.
    if (live || !all_failed(failures, 5.0)) throw;
    client.shutdown_server(roles.compute());
    if (roles.compute_rank == 0) fmt::print(stderr, "rewind run: error: {}\n", e.what());
    throw ReportedError(e.what());
  }
  client.shutdown_server(roles.compute());
  if (thread) report_collector(thread->join(), o.quiet);
  contact.remove();
  return rc;
}

/// The --listen token, found on world rank 0 (--token, --token-file, its environment;
/// none given: a generated one; --token '': none, with a warning) and sent to every
/// rank, so that every rank decides alike (a rank of another node may lack the file or
/// the variable); AgreedError if it cannot be read. Sets o.token_generated.
std::string agreed_token(RunOptions& o) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string text;
  int head[3] = {0, 0, 0};  // failed, bytes, generated
  if (rank == 0) {
    try {
      if (!o.no_token) text = collector::resolve_token(o.token, o.token_file);
      if (!o.no_token && text.empty()) {
        text = collector::generate_token();
        head[2] = 1;
      }
    } catch (const std::exception& e) {
      text = e.what();
      head[0] = 1;
    }
    head[1] = static_cast<int>(text.size());
    const auto ep = parse_host_port(o.listen);  // elsewhere refused below: a token is needed
    if (o.no_token && head[0] == 0 && ep && collector::is_loopback_host(ep->first))
      fmt::print(stderr,
                 "rewind run: warning: --token '': no token; any user of this machine can steer, stop or "
                 "branch this run through {}\n",
                 o.listen);
  }
  MPI_Bcast(head, 3, MPI_INT, 0, MPI_COMM_WORLD);
  text.resize(static_cast<std::size_t>(head[1]));
  MPI_Bcast(text.data(), head[1], MPI_CHAR, 0, MPI_COMM_WORLD);
  if (head[0] != 0) throw AgreedError(text);
  o.token_generated = head[2] != 0;
  return text;
}

// The options and the case agree with the job's ranks (checked identically on every
// rank, before any rank splits off; AgreedError otherwise).
void check_run_options(const RunOptions& o, const driver::RunSpec& spec, int world_size) {
  if (o.pause_at_end && o.listen.empty())
    throw AgreedError("--pause-at-end needs --listen (a client must be able to resume, branch or stop the run)");
  const bool dedicated = spec.output.io.strategy == kernel::Strategy::dedicated;
  if (dedicated && world_size < (o.listen.empty() ? 3 : 4))
    throw AgreedError(fmt::format("output.io.strategy = \"dedicated\" needs an I/O rank besides the neighbourhood server{} "
                                  "and the compute ranks: run under mpirun -np {} or more (this job has {}), or "
                                  "choose another strategy: --set 'output.io.strategy=\"collective\"'{}",
                                  o.listen.empty() ? "" : ", the collector", o.listen.empty() ? 3 : 4, world_size,
                                  spec.restart ? " (a restart keeps the strategy of the file it starts from)" : ""));
  if (!o.listen.empty()) {  // checked identically on every rank, before any rank splits off
    const auto ep = parse_host_port(o.listen);
    if (!ep) throw AgreedError("--listen " + o.listen + ": expected HOST:PORT, e.g. 127.0.0.1:7400 (port 0: a free one)");
    if (!collector::is_loopback_host(ep->first) && o.token.empty())
      throw AgreedError("--listen " + o.listen + ": a non-loopback address needs a token (a shared secret: --token-file, "
                        "REWIND_TOKEN or --token)");
  }
}

// The memory guard, and the estimate to print: refused (AgreedError) where a rank's part
// would not fit.
std::string guard_memory(const RunOptions& o, const driver::RunSpec& spec, int world_rank, int world_size) {
  const auto& sc = spec.solver_case;
  const bool dedicated = spec.output.io.strategy == kernel::Strategy::dedicated;
  // Before any tree or field exists, every rank checks that its part fits: world rank 0
  // holds the tree (and, alone, the fields), the others share the fields.
  CaseCost cost;
  if (spec.restart && !spec.restart->refine) {  // the tree is the stored step's: its size is known exactly
    const auto& st = spec.restart->step;
    cost.estimate.grids = st.n_grids;
    cost.estimate.cells = st.n_cells;
    cost.shape = sc.tree.shape;
    cost.key = fmt::format("{}@{}", spec.restart->file, st.step);
  } else {
    cost = estimate_case(sc.tree);
  }
  const int io_ranks = dedicated ? static_cast<int>(spec.output.io.io_ranks_per_node) : 0;  // one node's worth
  const bool collector_rank = !o.listen.empty() && world_size >= 3;  // else the collector is a thread
  const int compute_ranks = world_size == 1 ? 1 : std::max(1, world_size - (collector_rank ? 2 : 1) - io_ranks);
  const GuardRole role{.holds_tree = world_rank == 0,
                       .compute_ranks = world_size == 1 ? 1 : (world_rank == 0 || (collector_rank && world_rank == 1) ? 0 : compute_ranks),
                       .variables = solver::kNumVars};
  guard(cost, role, o.memory_limit, MPI_COMM_WORLD);
  return describe(cost, std::max(1, compute_ranks), world_size == 1, o.memory_limit, MPI_COMM_WORLD);
}

// The in-situ hook is loaded on every rank before anything runs, so a missing
// library, entry point or ABI mismatch is refused with one line (the same on every rank);
// a hook for the I/O ranks is loaded by them alone, once the roles are known.
std::optional<insitu::Hook> load_compute_hook(const driver::RunSpec& spec) {
  if (driver::insitu_on_io_ranks(spec) && spec.output.file.empty())
    throw AgreedError("insitu.library with output.io.strategy = \"dedicated\" runs the hook on the I/O ranks, which "
                      "get the steps through the output file's hand-off, and this run has no output file: name one "
                      "(output.file or --output), or use another strategy to run the hook on the compute ranks");
  std::optional<insitu::Hook> hook;
  if (spec.insitu.enabled() && !driver::insitu_on_io_ranks(spec)) {
    try {
      hook.emplace(insitu::Hook::load(spec.insitu.library));
    } catch (const insitu::HookError& e) {
      throw AgreedError(fmt::format("insitu.library: {}", e.what()));
    }
  }
  return hook;
}

// One process: it computes, and its plan comes from the in-process topology.
int run_alone(const RunOptions& o, driver::RunSpec spec, const std::function<spacetree::Tree()>& make_tree,
              const std::string& estimate, std::optional<insitu::Hook> hook) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const spacetree::Tree tree = make_tree();
  spacetree::Topology topo(tree, spacetree::partition_morton(tree, world_size));
  auto plan = spacetree::make_local_plan(topo, world_rank);
  if (o.listen.empty())
    return run_compute(o, std::move(spec), std::move(plan), MPI_COMM_WORLD, world_rank == 0, estimate, std::move(hook));
  // Live on one process: the collector is a thread of this one (the Catalyst Live model).
  live::RelayThread thread(collector::server_info_of(spec.common), server_options(o), 1);
  collector::ContactFile contact;  // RUN.h5.contact while the thread listens
  say_listening(o, thread.port(), contact, spec.output.file);
  driver::LiveLink link(live::Link::to_thread(thread.channel(), MPI_COMM_WORLD), o.pause_at_end);
  const bool quiet = o.quiet;
  const int rc = run_compute(o, std::move(spec), std::move(plan), MPI_COMM_WORLD, true, estimate, std::move(hook), &link);
  report_collector(thread.join(), quiet);
  contact.remove();
  return rc;
}

int run_run(RunOptions o) {
  if (!o.listen.empty()) o.token = agreed_token(o);
  driver::RunRequest request{.case_file = o.case_file,
                             .restart = o.restart,
                             .overrides = o.overrides,
                             .output = o.output,
                             .monitor = o.monitor,
                             .force = o.force,
                             .orphan_branches = o.orphan_branches,
                             .break_lock = o.break_lock};
  auto spec = driver::plan_run(request, [](config::CaseDocument& doc) {
    read_case_header(doc);
    mark_sections_of_other_modules(doc, {"case", "domain", "tree", "run", "physics", "time", "boundary", "obstacle",
                                         "initial", "solver", "monitor", "output", "insitu"});
  });
  const auto& sc = spec.solver_case;
  // The tree maker owns copies of what it reads: under mpirun the server calls it after
  // `sc` has been moved to the compute side (capturing `sc` by reference once dropped
  // every [[tree.refine]] region there).
  const std::function<spacetree::Tree()> make_tree = [tree_case = sc.tree, restart = spec.restart] {
    return restart ? restart_tree(*restart, tree_case) : config::build_tree(tree_case);
  };

  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // One writing job per file: world rank 0 (the neighbourhood server, which outlives every
  // write of the job; or the one process) claims it before anything is created, and
  // holds the claim until it returns. In-job branches claim theirs on the compute root.
  kernel::FileClaim claim;
  try {
    claim = driver::claim_output(spec, request, MPI_COMM_WORLD, 0);
  } catch (const std::exception& e) {
    throw AgreedError(e.what());  // every rank has this verdict
  }
  if (world_rank == 0) {
    if (spec.restart && !spec.restart->note.empty()) fmt::print(stderr, "rewind run: note: {}\n", spec.restart->note);
    for (const auto& n : spec.notes) fmt::print(stderr, "rewind run: note: {}\n", n);
    if (!claim.note().empty()) fmt::print(stderr, "rewind run: note: {}\n", claim.note());
  }
  check_run_options(o, spec, world_size);
  const std::string estimate = guard_memory(o, spec, world_rank, world_size);
  if (spec.restart && spec.restart->refine) {  // a refined tree must keep every stored grid
    try {
      (void)restart_tree(*spec.restart, sc.tree);
    } catch (const std::runtime_error& e) {
      throw AgreedError(e.what());  // every rank builds the same tree
    }
  }
  std::optional<insitu::Hook> hook = load_compute_hook(spec);
  if (world_size > 1) return run_with_server(o, std::move(spec), make_tree, estimate, std::move(hook));
  return run_alone(o, std::move(spec), make_tree, estimate, std::move(hook));
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
      sub.add_flag("--orphan-branches", o->orphan_branches,
                   "With --force: overwrite even a file that has branches (they then point at steps that are gone)");
      sub.add_flag("--break-lock", o->break_lock,
                   "Take over the output file's claim (FILE.lock) left by a job on another host that has ended; a "
                   "claim of this host is checked (and taken over when its process is gone) without it");
      sub.add_option("--monitor", o->monitor,
                     "Monitor CSV file (default: OUTPUT.monitor.csv with --output, else monitor.file of the case; "
                     "never overwritten without --force)");
      sub.add_option("--steps", o->steps, "Stop after this many steps (counted from the start or the restart)");
      sub.add_option("--profiles", o->profiles, "Write centre-line profiles (u, v, T) to this CSV at the end");
      sub.add_option("--profile-points", o->profile_points, "Points per profile line")->check(CLI::Range(2, 100000));
      sub.add_flag("-q,--quiet", o->quiet, "No report or progress lines, only errors (and the collector's address)");
      sub.add_option("--listen", o->listen,
                     "Serve live windows and steering on HOST:PORT (port 0: a free one, printed); under mpirun -np 3+ "
                     "rank 1 becomes the collector, with fewer processes a thread of the compute rank serves");
      auto* token = add_token_options(sub, o->token, o->token_file, true);
      token->description(
          "Shared secret clients must send; visible to every local user in ps: prefer --token-file or "
          "REWIND_TOKEN. Default: a generated one, in the run's contact file (mode 600); '' for none "
          "(loopback only: any local user may then steer the run)");
      sub.add_flag("--pause-at-end", o->pause_at_end,
                   "With --listen: at the end time or step limit, pause (last step written) instead of exiting, so "
                   "clients can still look, branch, or set a later time.end; `rewind steer ... resume` or `stop` ends it");
      sub.add_option("--memory-limit", o->memory_limit,
                     "Memory each process may use (8G, 512MiB, ...; 'off': no check). Default: what the node has "
                     "available, shared by the job's processes on it");
      return [o, token] {
        o->no_token = token->count() > 0 && o->token.empty() && o->token_file.empty();
        return run_run(*o);
      };
    },
    30}};

}  // namespace
}  // namespace rwd::cli

#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "resource_guard.hpp"

namespace rwd::cli {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

namespace {
// MPI is initialised only for commands that need it, so `rewind tree` or
// `rewind info` run anywhere, even where MPI cannot start.
struct MpiSession {
  bool active = false;
  explicit MpiSession(bool want, int* argc, char*** argv) {
    int already = 0;
    MPI_Initialized(&already);
    if (want && !already) {
      int provided = 0;
      MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
      active = true;
    }
  }
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (active && !finalized) MPI_Finalize();
  }
};

int world_size() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
}  // namespace

int run_cli(int argc, char** argv) {
  auto& commands = registry();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const Command& a, const Command& b) { return a.order < b.order; });

  CLI::App app{"rewind — parallel output, restart and time travel for space-tree CFD", "rewind"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "rewind 0.1.0");
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    runners.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other error, naming the subcommand whose options were wrong.
    std::string where = "rewind";
    for (const auto& [sub, run] : runners)
      if (sub->parsed()) where += " " + sub->get_name();
    fmt::print(stderr, "{}: error: {} (see {} --help)\n", where, e.what(), where);
    return e.get_exit_code();
  }
  for (std::size_t i = 0; i < runners.size(); ++i) {
    if (!runners[i].first->parsed()) continue;
    const Command& cmd = commands[i];
    MpiSession mpi(cmd.needs_mpi, &argc, &argv);
    try {
      return runners[i].second();
    } catch (const AgreedError& e) {
      // Every rank threw this same error: one line from one rank, and a clean exit.
      int rank = 0;
      if (mpi.active) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0) fmt::print(stderr, "rewind {}: error: {}\n", cmd.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fflush(stdout);
      fmt::print(stderr, "rewind {}: error: {}\n", cmd.name, e.what());
      std::fflush(stderr);
      // One rank failing alone must not leave the others inside a collective.
      if (mpi.active && world_size() > 1) MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  }
  return 1;
}

}  // namespace rwd::cli

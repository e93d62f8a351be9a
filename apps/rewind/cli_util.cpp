#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "commands.hpp"
#include "resource_guard.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::cli {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::size_t used = 0;
        long long n = 0;
        try {
          n = std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        return used == v.size() && n > 0 ? "" : v + " is not a positive integer (1, 2, ...)";
      },
      "POSITIVE");
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::size_t used = 0;
        double x = -1;
        try {
          x = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        return used == v.size() && x >= 0 ? "" : v + " is not a number >= 0";
      },
      "NUMBER>=0");
}

std::string in_force_selector(const std::string& file, const std::string& sel, const std::string& command) {
  if (sel.rfind("t=", 0) != 0) return sel;
  char* end = nullptr;
  const double t = std::strtod(sel.c_str() + 2, &end);
  if (*end != '\0' || end == sel.c_str() + 2) return sel;  // malformed: find_step says so
  const auto steps = kernel::Reader::open(file).selectable_steps();
  if (steps.empty() || kernel::index_at_or_before(&t, 1, steps.back().time) >= 0) return sel;
  const auto& last = steps.back();
  fmt::print(stderr, "rewind {}: note: {}: {} is after the last committed step; using it, step {} (t = {:.6g}), the "
             "last at or before {} (as the ParaView reader does)\n", command, file, sel, last.step, last.time, sel);
  return std::to_string(last.step);
}

std::string count_of(std::int64_t n, const std::string& noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

CLI::Option* add_token_options(CLI::App& sub, std::string& token, std::string& token_file, bool server) {
  auto* opt = sub.add_option(
      "--token", token,
      std::string(server ? "Shared secret clients must send (required off 127.0.0.1)" : "Token of the server") +
          "; visible to every local user in ps: prefer --token-file or REWIND_TOKEN");
  sub.add_option("--token-file", token_file,
                 std::string("File holding the token (its first line; chmod 600)") +
                     "; default: the environment, REWIND_TOKEN or REWIND_TOKEN_FILE");
  return opt;
}

bool all_failed(MPI_Comm errors, double seconds) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Ibarrier(errors, &r);
  const double t0 = MPI_Wtime();
  for (;;) {
    int done = 0;
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (MPI_Wtime() - t0 > seconds) return false;  // the request stays pending: MPI_Abort follows
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

namespace {
// MPI is initialised only for commands that need it, so `rewind tree` or
// `rewind info` run anywhere, even where MPI cannot start.
struct MpiSession {
  bool active = false;
  MPI_Comm errors = MPI_COMM_NULL;  ///< only for agreeing on an error (all_failed)
  explicit MpiSession(bool want, int* argc, char*** argv) {
    int already = 0;
    MPI_Initialized(&already);
    if (want && !already) {
      kernel::keep_hdf5_until_exit();  // before MPI: a failed close must not crash MPI_Finalize
      int provided = 0;
      MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
      active = true;
      MPI_Comm_dup(MPI_COMM_WORLD, &errors);
    }
  }
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (active && !finalized) MPI_Finalize();
  }
  /// After an error on this rank: true if every rank of the job failed (a bad case, a
  /// missing file: every rank reads it, so every rank fails).
  [[nodiscard]] bool all_failed(double seconds) const { return cli::all_failed(errors, seconds); }
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
    // One line, like every other error, naming the subcommand whose options were wrong;
    // exit 2 for every usage error, as getopt tools do (not CLI11's own codes, 105-115).
    std::string where = "rewind";
    for (const auto& r : runners)
      if (r.first->parsed()) where += " " + r.first->get_name();
    fmt::print(stderr, "{}: error: {} (see {} --help)\n", where, e.what(), where);
    return kUsageExit;
  }
  for (std::size_t i = 0; i < runners.size(); ++i) {
    if (!runners[i].first->parsed()) continue;
    const Command& cmd = commands[i];
    MpiSession mpi(cmd.needs_mpi, &argc, &argv);
    try {
      return runners[i].second();
    } catch (const ReportedError&) {
      return cmd.error_exit;
    } catch (const AgreedError& e) {
      // Every rank threw this same error: one line from one rank, and a clean exit.
      int rank = 0;
      if (mpi.active) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0) fmt::print(stderr, "rewind {}: error: {}\n", cmd.name, e.what());
      return cmd.error_exit;
    } catch (const std::exception& e) {
      const int code = dynamic_cast<const UsageError*>(&e) != nullptr ? kUsageExit : cmd.error_exit;
      std::fflush(stdout);
      const bool parallel = mpi.active && world_size() > 1;
      // Every rank failed (the same bad input): one line, from rank 0, a clean exit.
      if (parallel && mpi.all_failed(5.0)) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) fmt::print(stderr, "rewind {}: error: {}\n", cmd.name, e.what());
        return code;
      }
      fmt::print(stderr, "rewind {}: error: {}\n", cmd.name, e.what());
      std::fflush(stderr);
      // One rank failing alone must not leave the others inside a collective.
      if (parallel) MPI_Abort(MPI_COMM_WORLD, code);
      return code;
    }
  }
  return 1;
}

}  // namespace rwd::cli

// Subcommand registry of the `rewind` command.
//
// Each subcommand lives in its own cmd_<name>.cpp and registers itself with a
// static `Registration` object; apps/CMakeLists.txt links the objects whole, so
// adding a subcommand means adding one file. A subcommand's run function returns
// the process exit code and throws on errors; main() turns an exception into one
// "rewind <cmd>: error: ..." line and a non-zero exit.
#pragma once
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rwd::cli {

struct Command {
  std::string name;
  std::string help;
  /// True if the command calls MPI (main initialises MPI before running it).
  bool needs_mpi = false;
  /// Adds options to `sub`; returns the function that runs the command.
  std::function<std::function<int()>(CLI::App& sub)> setup;
  int order = 100;  ///< position in `rewind --help`
  /// Exit code for an error (unreadable input, a failed run; bad options exit kUsageExit).
  /// `diff` answers "differ" with 1, so its errors exit 2, as cmp(1) and diff(1) do.
  int error_exit = 1;
};

/// Exit code of every command's usage error (a missing or bad option), as getopt tools exit.
inline constexpr int kUsageExit = 2;

/// A usage error a command finds after parsing (options that contradict each other, a value
/// of the wrong form): one line and exit kUsageExit, as CLI11's own parse errors.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::vector<Command>& registry();

struct Registration {
  explicit Registration(Command c) { registry().push_back(std::move(c)); }
};

/// Option checks whose refusal reads as a sentence ("--ranks: 0 is not a positive
/// integer"), unlike CLI11's numeric ranges that print the double's full range.
CLI::Validator positive_integer();
/// After an error on this rank: true if every rank of `errors` reports an error of its
/// own within `seconds`. Matches only other ranks' calls on `errors`, a communicator
/// nothing else uses; a rank that did not fail never joins, and this returns false.
bool all_failed(MPI_Comm errors, double seconds);
CLI::Validator non_negative_number();
/// The selector to read FILE@`sel` with in a window or an analysis (diff): `sel` itself,
/// except that t=T after the file's last committed step names that step (by number), the
/// last at or before T, as the ParaView reader takes it, with a note on stderr naming
/// `command`. A restart or a branch refuses such a T instead (the run has not got there).
std::string in_force_selector(const std::string& file, const std::string& sel, const std::string& command);

/// "1 step", "2 steps": a count and its noun, plural unless the count is 1.
std::string count_of(std::int64_t n, const std::string& noun);

/// --token and --token-file of a collector's server (`run --listen`, `serve`: the
/// secret clients must send) or client (`window`, `steer`); the token itself comes from
/// collector::resolve_token (which also reads REWIND_TOKEN / REWIND_TOKEN_FILE).
/// Returns the --token option (its count() tells `--token ''` from no --token).
CLI::Option* add_token_options(CLI::App& sub, std::string& token, std::string& token_file, bool server);

/// Runs the CLI on argv (main.cpp; the tests run the `rewind` program itself).
int run_cli(int argc, char** argv);

}  // namespace rwd::cli

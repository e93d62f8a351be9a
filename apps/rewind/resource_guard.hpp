// The resource guard: before a subcommand builds a tree or allocates fields, it
// estimates what the case needs (config/estimate.hpp) and refuses, with one line
// naming the key that asks for it, when a process would need more memory than it has.
//
// "Available" is the system's MemAvailable (or what the cgroup still allows, if less)
// divided by the processes of this job on the node; `--memory-limit SIZE` sets the
// per-process budget instead, `--memory-limit off` switches the guard off.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "rewind/config/estimate.hpp"

namespace rwd::cli {

/// An error every rank of the job has agreed on (thrown on all ranks with the same
/// text): run_cli prints it once, from world rank 0, and exits without MPI_Abort.
class AgreedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An error already printed, once, by the ranks that hit it (e.g. every compute rank
/// failed in agreement while the neighbourhood server had nothing to report): run_cli
/// prints nothing more and exits with the command's error code.
class ReportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Collective over `comm`: if any rank's `why` is not empty, throws AgreedError with the
/// lowest such rank's text on every rank; else returns.
void throw_agreed(MPI_Comm comm, std::string why);

/// What the guard is told about the process it runs in.
struct GuardRole {
  bool holds_tree = true;  ///< the neighbourhood server, or a single process
  int compute_ranks = 1;   ///< the fields are spread over this many compute ranks (0: none here)
  int variables = 17;      ///< cell arrays per grid (the solver's; `rewind halo`: --vars)
};

/// The memory a process may use: --memory-limit (bytes), or the system's available
/// memory / processes of `comm` on this node (comm may be MPI_COMM_NULL: a process alone).
/// nullopt: the guard is off.
std::optional<std::int64_t> memory_budget(const std::string& limit_option, MPI_Comm comm);

/// The estimate for a case, and the key that asks for most of it ("tree.depth",
/// "tree.refine[2].level", "tree.s").
struct CaseCost {
  config::TreeEstimate estimate;
  spacetree::TreeShape shape;
  std::string key;
  std::string key_value;  ///< the key's value as the case gives it, e.g. "9"
};
CaseCost estimate_case(const config::TreeCase& c, std::int64_t stop_above = INT64_MAX);

/// Refuses the case if `need` bytes exceed `budget`: throws AgreedError with one line.
/// Collective over `comm` when comm != MPI_COMM_NULL (every rank decides alike, and the
/// refusing rank's text is the one thrown everywhere); local otherwise.
void guard(const CaseCost& cost, const GuardRole& role, const std::string& limit_option, MPI_Comm comm);

/// Bytes one process of `role` needs for the case.
std::int64_t bytes_needed(const CaseCost& cost, const GuardRole& role);

/// One line for a summary, the same in `rewind tree` and `rewind run`: "<= N grids, M cells;
/// ~X per compute rank on R compute ranks, the tree ~T on rank 0 (Y available)"; `alone`
/// (a run of one process, no mpirun): "~X in the one process (tree and fields)". The
/// budget is what `comm`'s processes on this node may each use.
std::string describe(const CaseCost& cost, int compute_ranks, bool alone, const std::string& limit_option,
                     MPI_Comm comm);

}  // namespace rwd::cli

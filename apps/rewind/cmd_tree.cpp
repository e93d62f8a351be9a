// `rewind tree CASE.toml`: build the case's tree, partition it, print statistics.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "case_sections.hpp"
#include "resource_guard.hpp"
#include "commands.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/partition.hpp"

namespace rwd::cli {
namespace {

struct TreeOptions {
  std::string case_file;
  std::vector<std::string> overrides;
  int ranks = 0;
  bool json = false;
  std::string memory_limit;
};

int run_tree(const TreeOptions& o) {
  const auto tc = load_tree_case(o.case_file, o.overrides);
  const int ranks = o.ranks > 0 ? o.ranks : tc.ranks;
  // Before anything is built: what the tree alone will take in this process.
  const auto cost = estimate_case(tc);
  const GuardRole role{.holds_tree = true, .compute_ranks = 0};
  guard(cost, role, o.memory_limit, MPI_COMM_NULL);

  const spacetree::Tree tree = config::build_tree(tc);
  const auto stats = spacetree::statistics(tree);
  const auto part = spacetree::partition_morton(tree, ranks);
  const auto& sh = tree.shape();

  if (o.json) {
    nlohmann::json j;
    j["case"] = o.case_file;
    j["dim"] = sh.dim();
    j["r"] = sh.r;
    j["s"] = sh.s;
    j["levels"] = tree.levels();
    j["grids_per_level"] = stats.grids_per_level;
    j["leaves_per_level"] = stats.leaves_per_level;
    j["grids"] = stats.grids;
    j["leaves"] = stats.leaves;
    j["cells"] = stats.cells;
    j["leaf_cells"] = stats.leaf_cells;
    j["balanced"] = tree.is_balanced();
    j["ranks"] = ranks;
    j["cells_per_rank"] = part.cells_per_rank;
    j["imbalance"] = part.imbalance();
    j["estimated_grids"] = cost.estimate.grids;
    j["estimated_bytes"] = bytes_needed(cost, role);  // the tree, in this process (and the server's)
    j["estimated_bytes_per_compute_rank"] =
        bytes_needed(cost, GuardRole{.holds_tree = false, .compute_ranks = ranks, .variables = solver::kNumVars});
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("case        {}\n", o.case_file);
  fmt::print("shape       {}-D, r = [{}, {}, {}], d-grid {}x{}x{} (+1-cell halo), max depth {}\n", sh.dim(), sh.r[0],
             sh.r[1], sh.r[2], sh.s[0], sh.s[1], sh.s[2], sh.max_depth);
  fmt::print("domain      [{}, {}] x [{}, {}] x [{}, {}]{}\n", sh.domain.lo[0], sh.domain.hi[0], sh.domain.lo[1],
             sh.domain.hi[1], sh.domain.lo[2], sh.domain.hi[2],
             (sh.periodic[0] || sh.periodic[1] || sh.periodic[2])
                 ? fmt::format(", periodic in {}{}{}", sh.periodic[0] ? "x" : "", sh.periodic[1] ? "y" : "",
                               sh.periodic[2] ? "z" : "")
                 : "");
  fmt::print("\n{:>5} {:>10} {:>10} {:>14} {:>14}\n", "level", "grids", "leaves", "cells", "leaf cells");
  for (std::size_t l = 0; l < stats.grids_per_level.size(); ++l)
    fmt::print("{:>5} {:>10} {:>10} {:>14} {:>14}\n", l, stats.grids_per_level[l], stats.leaves_per_level[l],
               stats.grids_per_level[l] * sh.cells_per_grid(), stats.leaves_per_level[l] * sh.cells_per_grid());
  fmt::print("{:>5} {:>10} {:>10} {:>14} {:>14}\n", "all", stats.grids, stats.leaves, stats.cells, stats.leaf_cells);
  // The run's figure: what `mpirun -np ranks+1 rewind run` prints (the tree alone is what this
  // process needs, and what its guard checked).
  fmt::print("\nestimate      {}\n              (before building; `mpirun -np {} rewind run` prints the same)\n",
             describe(cost, ranks, false, o.memory_limit, MPI_COMM_NULL), ranks + 1);
  fmt::print("2:1 balanced  {}\n", tree.is_balanced() ? "yes" : "NO");
  fmt::print("partition     {} compute rank{} along the Lebesgue curve\n", ranks, ranks == 1 ? "" : "s");
  for (int r = 0; r < ranks; ++r)
    fmt::print("  rank {:>4}  {:>10} grids  {:>14} cells\n", r,
               part.cells_per_rank[static_cast<std::size_t>(r)] / sh.cells_per_grid(),
               part.cells_per_rank[static_cast<std::size_t>(r)]);
  fmt::print("imbalance     {:.2f} % (max / mean - 1)\n", 100.0 * part.imbalance());
  return 0;
}

const Registration reg{Command{
    "tree", "Build a case's space tree, partition it and print its statistics", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<TreeOptions>();
      sub.add_option("case", o->case_file, "Case file (TOML)")->required();
      sub.add_option("--set", o->overrides, "Override a case value: key=value (repeatable)");
      sub.add_option("--ranks", o->ranks, "Compute ranks to partition for (default: run.ranks)")
          ->check(positive_integer());
      sub.add_flag("--json", o->json, "Print machine-readable JSON");
      sub.add_option("--memory-limit", o->memory_limit,
                     "Memory this process may use (8G, 512MiB, ...; 'off': no check). Default: what the system has "
                     "available");
      return [o] { return run_tree(*o); };
    },
    10}};

}  // namespace
}  // namespace rwd::cli

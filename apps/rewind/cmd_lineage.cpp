// `rewind lineage FILE`: the branch tree around a Rewind file — its ancestors back to the
// original run and every branch found next to each file. Exits 1 with a warning when the
// chain is broken (a parent missing, or overwritten so that it no longer holds the
// branch step). Serial, read-only; needs no MPI.
#include <fmt/core.h>

#include <memory>

#include "commands.hpp"
#include "rewind/kernel/kernel.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

int run_lineage(const std::string& file) {
  // Open once up front so a bad file gives the kernel's one-line error and exit 1.
  (void)k::Reader::open(file);
  fmt::print("{}", k::format_branch_tree(file));
  const auto problems = k::lineage_problems(file);
  for (const auto& p : problems) fmt::print(stderr, "rewind lineage: warning: {}\n", p);
  return problems.empty() ? 0 : 1;
}

const Registration reg{Command{
    "lineage", "Print the branch tree of a Rewind HDF5 file (parents and branches)", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto f = std::make_shared<std::string>();
      sub.add_option("file", *f, "Rewind HDF5 file")->required();
      return [f] { return run_lineage(*f); };
    },
    41}};

}  // namespace
}  // namespace rwd::cli

// `rewind lineage FILE`: the branch tree around a Rewind file — its ancestors back to the
// original run and every branch found next to each file — and the settings steered along
// its timeline (when and what changed). Exits 1 with a warning when the
// chain is broken (a parent missing, or overwritten so that it no longer holds the
// branch step). Serial, read-only; needs no MPI.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <memory>

#include "commands.hpp"
#include "rewind/kernel/kernel.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

// Settings steered along the file's timeline (its parents' steps up to each branch point,
// then its own): when and what changed, and in which file.
void print_steering(const std::string& file) {
  std::vector<k::TimelineEntry> line;
  try {
    line = k::timeline(file);
  } catch (const k::FileError&) {
    return;  // a broken chain: lineage_problems says so
  }
  const auto changes = k::steering_changes(line);
  if (changes.empty()) return;
  fmt::print("steered along {}'s timeline:\n", file);
  for (const auto& ch : changes)
    fmt::print("  {} step {} (t={:.6g}): {}\n", ch.path, ch.step.step, ch.step.time, fmt::join(ch.changes, ", "));
}

int run_lineage(const std::string& file) {
  // Open once up front so a bad file gives the kernel's one-line error and exit 1.
  (void)k::Reader::open(file);
  fmt::print("{}", k::format_branch_tree(file));
  print_steering(file);
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

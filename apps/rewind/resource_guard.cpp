#include "resource_guard.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>

#include "rewind/mpi/comm.hpp"
#include "rewind/solver/solver.hpp"

namespace rwd::cli {
namespace {

std::optional<std::int64_t> read_number(const std::string& path) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word == "max") return std::nullopt;
  try {
    return std::stoll(word);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// MemAvailable, or what the cgroup (v2, else v1) still allows if that is less.
std::int64_t system_available_bytes() {
  std::int64_t avail = INT64_MAX;
  std::ifstream info("/proc/meminfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("MemAvailable:", 0) == 0) avail = std::stoll(line.substr(13)) * 1024;
  const auto cg = [&](const char* limit, const char* usage) {
    const auto l = read_number(limit), u = read_number(usage);
    if (l && *l < (std::int64_t{1} << 60)) avail = std::min(avail, *l - u.value_or(0));
  };
  cg("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current");
  cg("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes");
  return std::max<std::int64_t>(avail, 0);
}

std::string int3(const std::array<int, 3>& v) { return fmt::format("[{}, {}, {}]", v[0], v[1], v[2]); }

std::string grids_text(double g) {
  if (g >= 1e9) return fmt::format("{:.1f} billion", g / 1e9);
  if (g >= 1e6) return fmt::format("{:.1f} million", g / 1e6);
  return fmt::format("{:.0f}", g);
}

}  // namespace

std::optional<std::int64_t> memory_budget(const std::string& limit_option, MPI_Comm comm) {
  if (limit_option == "off") return std::nullopt;
  if (!limit_option.empty()) {
    try {
      return config::parse_bytes(limit_option);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("--memory-limit: {} (or 'off')", e.what()));
    }
  }
  int local = 1;
  if (comm != MPI_COMM_NULL) local = mpi::Comm::split_shared(comm, "memory budget").size();
  return system_available_bytes() / local;
}

CaseCost estimate_case(const config::TreeCase& c, std::int64_t stop_above) {
  CaseCost cost{config::estimate_tree(c, stop_above), c.shape, "tree.depth", std::to_string(c.base_depth)};
  // Which key asks for most of it: the uniform base, or one refine region.
  auto base = c;
  base.regions.clear();
  double best = static_cast<double>(config::estimate_tree(base, stop_above).grids);
  if (best < 64 && c.shape.cells_per_grid() >= 4096) cost.key = "tree.s", cost.key_value = int3(c.shape.s);
  for (std::size_t i = 0; i < c.regions.size(); ++i) {
    auto one = base;
    one.regions = {c.regions[i]};
    const double g = static_cast<double>(config::estimate_tree(one, stop_above).grids);
    if (g > best) {
      best = g;
      cost.key = fmt::format("tree.refine[{}].level", i);
      cost.key_value = std::to_string(c.regions[i].level);
    }
  }
  return cost;
}

std::int64_t bytes_needed(const CaseCost& cost, const GuardRole& role) {
  return config::bytes_needed(cost.estimate, config::memory_model(cost.shape, role.variables), role.holds_tree,
                                 role.compute_ranks);
}

std::string describe(const CaseCost& cost, int compute_ranks, bool alone, const std::string& limit_option,
                     MPI_Comm comm) {
  const auto budget = memory_budget(limit_option, comm);
  const auto bytes = [&](bool tree, int ranks) {
    const GuardRole role{.holds_tree = tree, .compute_ranks = ranks, .variables = solver::kNumVars};
    return config::format_bytes(static_cast<double>(bytes_needed(cost, role)));
  };
  const std::string memory =
      alone ? fmt::format("~{} in the one process (tree and fields)", bytes(true, 1))
            : fmt::format("~{} per compute rank on {} compute rank{}, the tree ~{} on rank 0", bytes(false, compute_ranks),
                          compute_ranks, compute_ranks == 1 ? "" : "s", bytes(true, 0));
  return fmt::format("<= {} grids, {:.3g} cells; {}{}", grids_text(static_cast<double>(cost.estimate.grids)),
                     static_cast<double>(cost.estimate.cells), memory,
                     budget ? fmt::format(" ({} available)", config::format_bytes(static_cast<double>(*budget)))
                            : " (guard off)");
}

void guard(const CaseCost& cost, const GuardRole& role, const std::string& limit_option, MPI_Comm comm) {
  const auto budget = memory_budget(limit_option, comm);
  if (!budget) return;  // "off" is the same option on every rank: no rank waits below
  const auto need = bytes_needed(cost, role);
  std::string why;
  if (need > *budget)
    why = fmt::format("{}{}: the tree would have up to {} grids ({:.3g} cells) and need ~{} per process, "
                      "but only {} {} (--memory-limit SIZE or 'off' overrides)",
                      cost.key, cost.key_value.empty() ? "" : " = " + cost.key_value, grids_text(static_cast<double>(cost.estimate.grids)),
                      static_cast<double>(cost.estimate.cells), config::format_bytes(static_cast<double>(need)),
                      config::format_bytes(static_cast<double>(*budget)),
                      limit_option.empty() ? "is available" : "is allowed by --memory-limit");
  if (comm == MPI_COMM_NULL) {
    if (!why.empty()) throw AgreedError(why);
    return;
  }
  // Every rank decides alike: the lowest refusing rank's line is thrown everywhere.
  throw_agreed(comm, std::move(why));
}

void throw_agreed(MPI_Comm comm, std::string why) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    int ok, rank;
  } mine{why.empty() ? 1 : 0, rank}, first{};
  MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, comm);
  if (first.ok == 1) return;
  int n = static_cast<int>(why.size());
  MPI_Bcast(&n, 1, MPI_INT, first.rank, comm);
  why.resize(static_cast<std::size_t>(n));
  MPI_Bcast(why.data(), n, MPI_CHAR, first.rank, comm);
  throw AgreedError(why);
}

}  // namespace rwd::cli

// A live window's colour ranges (window_ranges.hpp).
#include "window_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rewind/kernel/grid_statistics.hpp"

namespace rwd::live {

std::vector<double> window_ranges(KeptRanges& kept, std::vector<std::size_t> shown, const kernel::LocalGrids& grids,
                                  const std::vector<int>& vars, const StateKey& state, MPI_Comm comm) {
  if (!(kept.state == state)) kept = {state, {}};
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> lo(vars.size(), inf), hi(vars.size(), -inf), all_lo(vars.size()), all_hi(vars.size());
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  for (const auto g : shown)
    for (std::size_t v = 0; v < vars.size(); ++v) {
      auto& by_uid = kept.by_slot[vars[v]];
      auto it = by_uid.find(grids.grids[g].uid);
      if (it == by_uid.end()) it = by_uid.emplace(grids.grids[g].uid, kernel::grid_range(grids, g, vars[v])).first;
      const auto& r = it->second;
      if (std::isnan(r[0])) continue;  // no non-solid cell
      lo[v] = std::min(lo[v], r[0]);
      hi[v] = std::max(hi[v], r[1]);
    }
  const int n = static_cast<int>(vars.size());
  MPI_Reduce(lo.data(), all_lo.data(), n, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(hi.data(), all_hi.data(), n, MPI_DOUBLE, MPI_MAX, 0, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return {};
  std::vector<double> out;
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t v = 0; v < vars.size(); ++v) {
    const bool any = all_lo[v] <= all_hi[v];
    out.push_back(any ? all_lo[v] : nan);
    out.push_back(any ? all_hi[v] : nan);
  }
  return out;
}

}  // namespace rwd::live

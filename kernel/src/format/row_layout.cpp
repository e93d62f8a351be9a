#include "format/row_layout.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace rwd::kernel::detail {

std::vector<RowRun> runs_of(const std::vector<std::int64_t>& rows) {
  std::vector<RowRun> runs;
  for (std::int64_t r : rows) {
    if (!runs.empty() && runs.back().start + runs.back().count == r) ++runs.back().count;
    else runs.push_back({r, 1});
  }
  return runs;
}

std::vector<RowRun> merge_runs(std::vector<RowRun> runs) {
  std::sort(runs.begin(), runs.end(), [](const RowRun& a, const RowRun& b) { return a.start < b.start; });
  std::vector<RowRun> merged;
  for (const auto& r : runs) {
    if (r.count <= 0) continue;
    if (!merged.empty() && merged.back().start + merged.back().count == r.start) merged.back().count += r.count;
    else merged.push_back(r);
  }
  return merged;
}

std::vector<std::size_t> local_order(const std::vector<GridRecord>& grids) {
  std::vector<std::size_t> perm(grids.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = grids[a];
    const auto& y = grids[b];
    return std::tie(x.level, x.sort_key, x.uid) < std::tie(y.level, y.sort_key, y.uid);
  });
  return perm;
}

RowLayout assign_rows(const std::vector<int>& levels, const std::vector<std::int64_t>& total,
                      const std::vector<std::int64_t>& before) {
  const std::size_t n_levels_max = total.size();
  RowLayout out;
  out.level_start.assign(n_levels_max + 1, 0);
  for (std::size_t l = 0; l < n_levels_max; ++l) {
    out.level_start[l + 1] = out.level_start[l] + total[l];
    if (total[l] > 0) out.n_levels = static_cast<int>(l) + 1;
  }
  out.n_grids = out.level_start[n_levels_max];
  std::vector<std::int64_t> next(n_levels_max);
  for (std::size_t l = 0; l < n_levels_max; ++l) next[l] = out.level_start[l] + before[l];
  out.row_of.reserve(levels.size());
  for (int l : levels) out.row_of.push_back(next[static_cast<std::size_t>(l)]++);
  out.runs = runs_of(out.row_of);
  return out;
}

RowLookup::RowLookup(std::vector<std::pair<std::uint64_t, std::int64_t>> pairs) : sorted_(std::move(pairs)) {
  std::sort(sorted_.begin(), sorted_.end());
}

std::optional<std::uint64_t> RowLookup::duplicate() const {
  for (std::size_t i = 1; i < sorted_.size(); ++i)
    if (sorted_[i].first == sorted_[i - 1].first) return sorted_[i].first;
  return std::nullopt;
}

std::optional<std::int64_t> RowLookup::find(std::uint64_t uid) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(uid, std::int64_t{-1}));
  if (it == sorted_.end() || it->first != uid) return std::nullopt;
  return it->second;
}

}  // namespace rwd::kernel::detail

// Phase 3 of Writer::write_step: every grid's parent and child rows.
#include <fmt/core.h>

#include "write/write_step.hpp"

namespace rwd::kernel::detail {

std::string exchange_links(MPI_Comm comm, int max_children, const LocalGrids& grids, StepRows& rows) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const std::size_t nloc = rows.perm.size();
  const auto nc = static_cast<std::size_t>(max_children);
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  const int nloc_i = static_cast<int>(nloc) * 2;
  MPI_Allgather(&nloc_i, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int acc = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = acc;
    acc += counts[static_cast<std::size_t>(r)];
  }
  std::vector<std::uint64_t> mine(nloc * 2), all(static_cast<std::size_t>(acc));
  for (std::size_t k = 0; k < nloc; ++k) {
    mine[2 * k] = grids.grids[rows.perm[k]].uid;
    mine[2 * k + 1] = static_cast<std::uint64_t>(rows.layout.row_of[k]);
  }
  MPI_Allgatherv(mine.data(), nloc_i, MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T, comm);
  std::vector<std::pair<std::uint64_t, std::int64_t>> pairs(all.size() / 2);
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {all[2 * i], static_cast<std::int64_t>(all[2 * i + 1])};
  std::vector<int> rank_of_row(static_cast<std::size_t>(std::max<std::int64_t>(0, rows.layout.n_grids)), -1);
  for (int r = 0; r < size; ++r)
    for (int i = displs[static_cast<std::size_t>(r)] / 2;
         i < (displs[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)]) / 2; ++i) {
      const std::int64_t row = pairs[static_cast<std::size_t>(i)].second;
      if (row >= 0 && row < rows.layout.n_grids) rank_of_row[static_cast<std::size_t>(row)] = r;
    }
  all = {};
  const RowLookup lookup(std::move(pairs));

  std::string bad;
  if (const auto twice = lookup.duplicate()) bad = fmt::format("uid {} appears twice", *twice);
  const std::int64_t roots = rows.layout.level_start.size() > 1 ? rows.layout.level_start[1] : 0;
  if (rows.layout.n_grids > 0 && roots != 1)
    bad = fmt::format("the tree must have exactly one level-0 (root) grid, found {}", roots);
  auto row_of = [&](std::uint64_t uid) -> std::int64_t {
    if (uid == kNoUid) return -1;
    const auto row = lookup.find(uid);
    if (!row && bad.empty()) bad = fmt::format("link to uid {}, which no rank has", uid);
    return row.value_or(-1);
  };
  rows.parent_row.assign(nloc, -1);
  rows.parent_rank.assign(nloc, -1);
  rows.child_rows.assign(nloc * nc, -1);
  for (std::size_t k = 0; k < nloc; ++k) {
    const auto& g = grids.grids[rows.perm[k]];
    rows.parent_row[k] = row_of(g.parent_uid);
    if (rows.parent_row[k] >= 0) rows.parent_rank[k] = rank_of_row[static_cast<std::size_t>(rows.parent_row[k])];
    for (std::size_t j = 0; j < g.child_uids.size(); ++j) rows.child_rows[k * nc + j] = row_of(g.child_uids[j]);
  }
  return bad;
}

}  // namespace rwd::kernel::detail

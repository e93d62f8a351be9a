// Groups of compute ranks for futures (groups.hpp).
#include "groups.hpp"

#include <limits>
#include <stdexcept>

#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/topology.hpp"

namespace rwd::driver {

JobTree gather_job_tree(const spacetree::LocalPlan& plan, MPI_Comm job) {
  int ranks = 1;
  MPI_Comm_size(job, &ranks);
  std::vector<std::uint64_t> mine;
  mine.reserve(plan.grids.size());
  for (const auto& g : plan.grids) mine.push_back(g.uid.raw());
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks), 0);
  mpi::check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, job), "futures", "MPI_Allgather");
  for (std::size_t r = 1; r < counts.size(); ++r) at[r] = at[r - 1] + counts[r - 1];
  std::vector<std::uint64_t> all(static_cast<std::size_t>(at.back() + counts.back()));
  mpi::check(MPI_Allgatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(), at.data(), MPI_UINT64_T, job),
             "futures", "MPI_Allgatherv");
  std::vector<spacetree::Uid> uids;
  uids.reserve(all.size());
  for (const auto u : all) uids.push_back(spacetree::Uid::from_raw(u));
  JobTree out{spacetree::Tree::from_uids(plan.shape, std::move(uids)), {}};
  auto& p = out.partition;
  p.ranks = ranks;
  p.owner.assign(out.tree.size(), -1);
  p.cells_per_rank.assign(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r)
    for (int i = at[static_cast<std::size_t>(r)];
         i < at[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)]; ++i) {
      const auto node = out.tree.find(spacetree::Uid::from_raw(all[static_cast<std::size_t>(i)]));
      if (!node) throw std::logic_error("futures: a grid of a plan is not in the job's tree");
      p.owner[static_cast<std::size_t>(*node)] = r;
      p.cells_per_rank[static_cast<std::size_t>(r)] += plan.shape.cells_per_grid();
    }
  return out;
}

std::vector<std::shared_ptr<Group>> split_group(const Group& parent, std::size_t k, const JobTree& job, int job_rank) {
  const int n = static_cast<int>(k);
  if (n < 1 || n > parent.size) throw std::logic_error("split_group: more groups than ranks");
  std::vector<std::shared_ptr<Group>> out;
  int first = parent.first, mine = -1;
  for (int i = 0; i < n; ++i) {
    auto g = std::make_shared<Group>();
    g->first = first;
    g->size = parent.size / n + (i < parent.size % n ? 1 : 0);
    g->member = parent.member && job_rank >= g->first && job_rank < g->first + g->size;
    if (g->member) mine = i;
    first += g->size;
    out.push_back(std::move(g));
  }
  if (!parent.member) return out;
  auto& g = *out[static_cast<std::size_t>(mine)];
  g.owned = mpi::Comm::split(parent.comm, mine, job_rank, "futures");
  g.comm = g.owned;
  const spacetree::Topology topo(job.tree, spacetree::join_ranks(job.partition, g.size));
  g.plan = spacetree::make_local_plan(topo, job_rank - g.first);
  return out;
}

std::vector<LaneWord> share_lanes(const std::vector<LaneWord>& mine, const std::vector<bool>& member, MPI_Comm job) {
  constexpr int kFields = 5;
  const double none = std::numeric_limits<double>::lowest();
  std::vector<double> in(mine.size() * kFields, none), out(in.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (!member[i]) continue;
    const auto& w = mine[i];
    const std::array<double, kFields> v{w.event, w.step, w.time, w.finished, w.written};
    for (int f = 0; f < kFields; ++f) in[i * kFields + static_cast<std::size_t>(f)] = v[static_cast<std::size_t>(f)];
  }
  mpi::check(MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_MAX, job), "futures",
             "MPI_Allreduce");
  std::vector<LaneWord> words(mine.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    const double* v = &out[i * kFields];
    words[i] = {v[0], v[1], v[2], v[3], v[4]};
  }
  return words;
}

}  // namespace rwd::driver

#include "rewind/spacetree/plan.hpp"

namespace rwd::spacetree {

LocalPlan make_local_plan(const Topology& topology, int rank) {
  const Tree& tree = topology.tree();
  LocalPlan plan;
  plan.shape = tree.shape();
  plan.rank = rank;
  plan.ranks = topology.partition().ranks;
  plan.levels = tree.levels();
  plan.global_grids = static_cast<std::int64_t>(tree.size());
  for (const auto idx : topology.partition().grids_of(tree, rank)) {
    const Uid uid = tree.nodes()[static_cast<std::size_t>(idx)].uid;
    plan.grids.push_back(GridInfo{uid, tree.bounding_box(idx), topology.family(uid), topology.neighbours(uid)});
  }
  return plan;
}

}  // namespace rwd::spacetree

// What a compute rank knows about its own grids: the cached answers of the
// neighbourhood server, asked once per (re)partition.
//
// A compute rank never holds the whole tree: it holds a LocalPlan. The plan comes
// either from the in-process topology (one compute rank, no server) or from the
// neighbourhood server over MPI (rewind/nbserver/client.hpp); both produce the same
// LocalPlan for the same tree and partition.
#pragma once
#include <cstdint>
#include <vector>

#include "rewind/spacetree/topology.hpp"

namespace rwd::spacetree {

/// One grid owned by this rank, with everything the exchange and the solver need.
struct GridInfo {
  Uid uid;
  Box box;
  Family family;                      ///< parent / children with owners
  std::vector<Neighbour> neighbours;  ///< Topology::neighbours(uid)
  [[nodiscard]] int level() const { return uid.level(); }
  [[nodiscard]] bool is_leaf() const { return family.children.empty(); }
};

struct LocalPlan {
  TreeShape shape;
  int rank = 0;            ///< this compute rank
  int ranks = 1;           ///< number of compute ranks
  int levels = 1;          ///< levels of the whole tree
  std::int64_t global_grids = 0;
  std::vector<GridInfo> grids;  ///< this rank's grids in UID order
};

/// Builds rank `rank`'s plan directly from the topology (no server involved).
LocalPlan make_local_plan(const Topology& topology, int rank);

/// Anything that can hand a compute rank its plan: the in-process topology or the
/// neighbourhood-server client.
class PlanSource {
 public:
  virtual ~PlanSource() = default;
  /// Collective over the compute ranks that share the source.
  virtual LocalPlan plan() = 0;
};

}  // namespace rwd::spacetree

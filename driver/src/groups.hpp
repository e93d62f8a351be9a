// The compute ranks a future computes on (run.hpp, "Futures"): the job's, or after a fork a
// contiguous stretch of the forked future's. Private to rewind::driver.
#pragma once
#include <mpi.h>

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "rewind/mpi/comm.hpp"
#include "rewind/spacetree/plan.hpp"

namespace rwd::driver {

struct Group {
  int first = 0;                  ///< its first rank among the job's compute ranks
  int size = 1;                   ///< how many it has
  bool member = false;            ///< this rank computes on it
  MPI_Comm comm = MPI_COMM_NULL;  ///< members: its communicator (the job's own for the whole job)
  mpi::Comm owned;                ///< a split's communicator, freed with the group
  spacetree::LocalPlan plan;      ///< members: this rank's grids on it
};

/// The whole tree with the job's partition, gathered from every compute rank's plan (the
/// neighbourhood server's partition, as the ranks hold it). Collective over `job`.
struct JobTree {
  spacetree::Tree tree;
  spacetree::Partition partition;
};
JobTree gather_job_tree(const spacetree::LocalPlan& plan, MPI_Comm job);

/// `parent` cut into `k` groups (1 <= k <= parent.size): its ranks in order, floor(size/k)
/// each, the first size % k one more. A member's plan is the job's partition with its
/// consecutive pieces joined onto its group (spacetree::join_ranks), so a grid's rank on a
/// group follows from its rank in the job (the live relay maps windows so). Collective
/// over the parent's members; other ranks only learn where the groups are.
std::vector<std::shared_ptr<Group>> split_group(const Group& parent, std::size_t k, const JobTree& job, int job_rank);

/// What every rank must know of a future its group computes: shared by its members once a
/// round (share_lanes): what happened at its turn, its step and time, whether its solver has
/// finished, the last step its file holds.
struct LaneWord {
  double event = 0, step = 0, time = 0, finished = 0, written = -1;
};
/// Every future's word from its members (`mine[i]` where this rank is one, ignored
/// elsewhere), the same on every rank. Collective over `job`.
std::vector<LaneWord> share_lanes(const std::vector<LaneWord>& mine, const std::vector<bool>& member, MPI_Comm job);

}  // namespace rwd::driver

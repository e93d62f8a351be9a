// The launch model: split_roles (launch/roles.hpp).
#include "rewind/launch/roles.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace rwd::launch {

namespace {
/// On every node, the last `per_node` of its ranks that are not services become I/O
/// ranks (at least one compute rank stays); each I/O rank serves a contiguous block of
/// its node's compute ranks. Collective over `world`.
struct IoSplit {
  bool io = false;          ///< this rank is an I/O rank
  mpi::Comm group, io_comm;
  int io_size = 0;
};
IoSplit split_io_ranks(MPI_Comm world, int per_node, bool service) {
  const int rank = [&] { int x = 0; MPI_Comm_rank(world, &x); return x; }();
  IoSplit out;
  mpi::Comm node = mpi::Comm::split_shared(world, "launch");
  // This node's non-service ranks, in world order.
  mpi::Comm workers = mpi::Comm::split(node, service ? MPI_UNDEFINED : 0, rank, "launch");
  int m = 0, bad = 0;
  if (!service) m = workers.size();
  if (!service && m < 2) bad = 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, world);
  if (bad)
    throw std::invalid_argument(
        "launch: output.io.strategy = \"dedicated\" needs at least two processes per node besides the neighbourhood "
        "server and the collector (an I/O rank and a compute rank); run with more processes per node, or another strategy");
  int io_ranks = 0;
  if (!service) {
    const int k = std::min(per_node, m - 1), c = m - k, me = workers.rank();
    out.io = me >= c;
    // Compute rank j of the node goes to I/O rank j * k / c: contiguous blocks in world order.
    const int group = out.io ? me - c : me * k / c;
    out.group = mpi::Comm::split(workers, group, out.io ? m + me : me, "launch");  // the I/O rank last
    io_ranks = out.io ? 1 : 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &io_ranks, 1, MPI_INT, MPI_SUM, world);
  out.io_size = io_ranks;
  out.io_comm = mpi::Comm::split(world, out.io ? 0 : MPI_UNDEFINED, rank, "launch");
  return out;
}
}  // namespace

Roles split_roles(MPI_Comm world, RoleLayout layout) {
  int size = 0, rank = 0;
  MPI_Comm_size(world, &size);
  MPI_Comm_rank(world, &rank);
  // Every rank sees the same size, so every rank throws (or not) together.
  if (layout.collector && size < 3)
    throw std::invalid_argument("launch: a collector needs at least 3 processes (server, collector, compute), got " +
                                std::to_string(size));
  Roles r;
  r.service_ = mpi::Comm::dup(world, "launch");
  if (size == 1) {
    r.role = Role::compute;
    r.compute_ = mpi::Comm::dup(world, "launch");
    r.compute_rank = 0;
    r.compute_size = 1;
    return r;
  }
  r.server_rank = kServerRank;
  r.collector_rank = layout.collector ? kCollectorRank : -1;
  r.first_compute = first_compute_rank(size, layout.collector);
  r.role = rank == r.server_rank ? Role::server : (rank == r.collector_rank ? Role::collector : Role::compute);
  if (layout.io_ranks_per_node > 0) {
    IoSplit io = split_io_ranks(world, layout.io_ranks_per_node, r.role != Role::compute);
    if (io.io) r.role = Role::io;
    r.io_group_ = std::move(io.group);
    r.io_ = std::move(io.io_comm);
    r.io_size = io.io_size;
  }
  // Compute ranks keep their world order (key = world rank).
  r.compute_ = mpi::Comm::split(world, r.role == Role::compute ? 0 : MPI_UNDEFINED, rank, "launch");
  r.compute_rank = r.compute_.rank();
  int computing = r.role == Role::compute ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &computing, 1, MPI_INT, MPI_SUM, world);
  r.compute_size = computing;
  return r;
}

}  // namespace rwd::launch

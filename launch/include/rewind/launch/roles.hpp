// The launch model: which part each process of the job plays (docs/protocol.md, "Ranks").
//
// One `mpirun -np P rewind run ...` job. split_roles() gives world rank 0 the
// neighbourhood server, optionally world rank 1 the collector, optionally the last k
// other ranks of every node I/O ranks (output.io.strategy = "dedicated", kernel/io_ranks.hpp),
// and every other rank a compute rank; the compute ranks get their own communicator
// (MPI_Comm_split). With one process in total there is no server: that process computes,
// and its plan comes from the in-process topology.
#pragma once
#include <mpi.h>

#include "rewind/mpi/comm.hpp"

namespace rwd::launch {

enum class Role { compute, server, collector, io };

/// World ranks of the services when the job has more than one process: the
/// neighbourhood server, then (RoleLayout::collector) the collector; the compute ranks
/// follow in world order.
inline constexpr int kServerRank = 0;
inline constexpr int kCollectorRank = 1;

/// The world (= service) rank of compute rank 0 in a job of `world_size` processes,
/// with or without a collector rank: the one definition of where the compute ranks
/// start (Roles::first_compute).
constexpr int first_compute_rank(int world_size, bool collector) {
  return world_size == 1 ? 0 : collector ? kCollectorRank + 1 : kServerRank + 1;
}

struct RoleLayout {
  /// Reserve world rank 1 for the collector (needs at least 3 processes).
  bool collector = false;
  /// Dedicated I/O ranks per node (0: none). Each node keeps at least one compute rank;
  /// a node with a single process besides the services cannot have one (an error).
  int io_ranks_per_node = 0;
};

/// This process's part in the job. Move-only: it owns its communicators (rwd::mpi::Comm
/// frees them, unless MPI is already finalised) and lends them out as MPI_Comm.
class Roles {
 public:
  Role role = Role::compute;
  /// Duplicate of the world communicator, for server / collector traffic (all ranks).
  [[nodiscard]] MPI_Comm service() const { return service_; }
  /// The compute ranks' communicator; MPI_COMM_NULL on the server and collector.
  [[nodiscard]] MPI_Comm compute() const { return compute_; }
  /// Rank of the neighbourhood server in `service`; -1 if there is none (1 process).
  int server_rank = -1;
  /// Rank of the collector in `service`; -1 if there is none.
  int collector_rank = -1;
  /// Rank in `service` of compute rank 0 (first_compute_rank); compute ranks follow in
  /// world order, after the services (I/O ranks, the last of each node, excepted).
  int first_compute = 0;
  /// This process's rank in `compute` (-1 elsewhere) and the number of compute ranks.
  int compute_rank = -1;
  int compute_size = 0;

  [[nodiscard]] bool has_server() const { return server_rank >= 0; }

  /// With I/O ranks: this compute or I/O rank's I/O group (the compute ranks one I/O rank
  /// serves, then that I/O rank; kernel/io_ranks.hpp); MPI_COMM_NULL elsewhere.
  [[nodiscard]] MPI_Comm io_group() const { return io_group_; }
  /// The I/O ranks' communicator (on I/O ranks only).
  [[nodiscard]] MPI_Comm io() const { return io_; }
  /// I/O ranks in the job.
  int io_size = 0;

 private:
  friend Roles split_roles(MPI_Comm world, RoleLayout layout);
  mpi::Comm service_, compute_, io_group_, io_;
};

/// Collective over `world`. Throws std::invalid_argument on every rank if the layout
/// needs more processes than there are (a collector needs 3; I/O ranks need a node with
/// two processes besides the services).
Roles split_roles(MPI_Comm world, RoleLayout layout = {});

}  // namespace rwd::launch

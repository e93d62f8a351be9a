// The compute ranks' side of the neighbourhood server. The launch model that gives each
// process its part (launch::Roles, launch::split_roles) is rewind/launch/roles.hpp.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "rewind/launch/roles.hpp"
#include "rewind/nbserver/messages.hpp"
#include "rewind/spacetree/plan.hpp"

namespace rwd::nbserver {

/// Error answered by the server (ErrorReply) or a protocol violation in its reply.
class ServerError : public wire::CodedError<ErrorCode> {
 public:
  using CodedError::CodedError;
};

struct ClientStats {
  std::int64_t requests = 0;
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
};

/// A compute rank's connection to the server: blocking request/reply, one request
/// in flight. Not collective except where stated. Throws ServerError when the
/// server answers with an error, std::runtime_error on MPI errors.
class Client final : public spacetree::PlanSource {
 public:
  /// `service` and `server_rank` from Roles; `compute_rank` is this rank's number in
  /// the partition. Does not take ownership of `service`.
  Client(MPI_Comm service, int server_rank, int compute_rank);
  explicit Client(const launch::Roles& roles) : Client(roles.service(), roles.server_rank, roles.compute_rank) {}

  /// Owner of each UID (-1 for a grid that does not exist).
  std::vector<std::int32_t> owners(std::span<const spacetree::Uid> uids);
  /// Topology::neighbours of each UID. ServerError(unknown_uid) if one does not exist.
  std::vector<std::vector<spacetree::Neighbour>> neighbours(std::span<const spacetree::Uid> uids);
  /// Topology::family of each UID. ServerError(unknown_uid) if one does not exist.
  std::vector<spacetree::Family> families(std::span<const spacetree::Uid> uids);
  /// Grids on `level` overlapping `box`, with owners.
  BoxReply grids_in_box(const spacetree::Box& box, int level);

  /// The sliding-window selection on the server's tree, with the owner of each piece
  /// (the collector's question). ServerError(bad_argument) for a bad box.
  WindowReply select_window(const WindowRequest& request);
  /// One shutdown request of this process alone (the collector's, see Server).
  void shutdown_one();

  /// This rank's plan: asked from the server on the first call after construction or
  /// invalidate(), then served from the cache. Not collective (each rank asks for
  /// its own plan), but every compute rank is expected to call it once per partition.
  spacetree::LocalPlan plan() override;
  /// Forgets the cached plan (call after a repartition).
  void invalidate() { cached_.reset(); }

  /// Collective over `compute` (all compute ranks): waits until every compute rank
  /// is done with the server, then compute rank 0 asks it to stop and waits for the
  /// acknowledgement.
  void shutdown_server(MPI_Comm compute);

  [[nodiscard]] const ClientStats& stats() const { return stats_; }

  /// Sends one request and returns the decoded reply (ErrorReply turned into
  /// ServerError; a reply with another id or of an unexpected kind is an error).
  Message call(const Body& request);

 private:
  MPI_Comm service_;
  int server_;
  int rank_;
  std::uint32_t next_id_ = 1;
  std::optional<spacetree::LocalPlan> cached_;
  ClientStats stats_;
  std::vector<std::byte> in_;
};

/// The plan straight from an in-process topology (one process, no server).
class TopologyPlanSource final : public spacetree::PlanSource {
 public:
  TopologyPlanSource(const spacetree::Topology& topology, int rank) : topology_(topology), rank_(rank) {}
  spacetree::LocalPlan plan() override { return spacetree::make_local_plan(topology_, rank_); }

 private:
  const spacetree::Topology& topology_;
  int rank_;
};

}  // namespace rwd::nbserver

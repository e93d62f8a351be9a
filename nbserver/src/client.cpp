// The nbserver client (compute ranks) and the role split of the launch model.
#include "rewind/nbserver/client.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "rewind/mpi/message.hpp"
#include "rewind/nbserver/server.hpp"

namespace rwd::nbserver {

namespace st = rwd::spacetree;

namespace {

template <typename T>
T expect(Message&& m, const char* what) {
  if (auto* b = std::get_if<T>(&m.body)) return std::move(*b);
  throw ServerError(ErrorCode::unknown_type, std::string("nbserver client: unexpected reply type to a ") + what);
}

}  // namespace

// --- Roles ---------------------------------------------------------------------------

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
  r.server_rank = 0;
  r.collector_rank = layout.collector ? 1 : -1;
  r.role = rank == 0 ? Role::server : (layout.collector && rank == 1 ? Role::collector : Role::compute);
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

// --- Client --------------------------------------------------------------------------

Client::Client(MPI_Comm service, int server_rank, int compute_rank)
    : service_(service), server_(server_rank), rank_(compute_rank) {
  if (server_rank < 0) throw std::invalid_argument("nbserver client: no server in this job (one process?)");
}

Message Client::call(const Body& request) {
  Message m;
  m.request_id = next_id_++;
  m.body = request;
  const std::vector<std::byte> out = encode(m);
  mpi::check(MPI_Send(out.data(), static_cast<int>(out.size()), MPI_BYTE, server_, kRequestTag, service_), "nbserver client", "MPI_Send");
  mpi::receive_message(server_, kReplyTag, service_, in_, "nbserver client");
  const auto count = static_cast<std::int64_t>(in_.size());
  ++stats_.requests;
  stats_.bytes_sent += static_cast<std::int64_t>(out.size());
  stats_.bytes_received += count;
  Message reply;
  try {
    reply = decode(in_);
  } catch (const ProtocolError& e) {
    throw ServerError(e.code(), std::string("nbserver client: bad reply: ") + e.what());
  }
  if (auto* err = std::get_if<ErrorReply>(&reply.body))
    throw ServerError(err->code, "nbserver: " + err->message);
  if (reply.request_id != m.request_id)
    throw ServerError(ErrorCode::malformed, "nbserver client: reply to request " + std::to_string(reply.request_id) +
                                                ", expected " + std::to_string(m.request_id));
  return reply;
}

std::vector<std::int32_t> Client::owners(std::span<const st::Uid> uids) {
  auto r = expect<OwnerReply>(call(OwnerRequest{{uids.begin(), uids.end()}}), "owner request");
  if (r.owners.size() != uids.size()) throw ServerError(ErrorCode::malformed, "nbserver client: owner reply of wrong length");
  return std::move(r.owners);
}

std::vector<std::vector<st::Neighbour>> Client::neighbours(std::span<const st::Uid> uids) {
  auto r = expect<NeighboursReply>(call(NeighboursRequest{{uids.begin(), uids.end()}}), "neighbours request");
  if (r.lists.size() != uids.size()) throw ServerError(ErrorCode::malformed, "nbserver client: neighbours reply of wrong length");
  return std::move(r.lists);
}

std::vector<st::Family> Client::families(std::span<const st::Uid> uids) {
  auto r = expect<FamilyReply>(call(FamilyRequest{{uids.begin(), uids.end()}}), "family request");
  if (r.families.size() != uids.size()) throw ServerError(ErrorCode::malformed, "nbserver client: family reply of wrong length");
  return std::move(r.families);
}

BoxReply Client::grids_in_box(const st::Box& box, int level) {
  return expect<BoxReply>(call(BoxRequest{box, level}), "box request");
}

WindowReply Client::select_window(const WindowRequest& request) {
  return expect<WindowReply>(call(request), "window request");
}

void Client::shutdown_one() { expect<ShutdownReply>(call(ShutdownRequest{}), "shutdown request"); }

st::LocalPlan Client::plan() {
  if (!cached_) {
    auto r = expect<PlanReply>(call(PlanRequest{rank_}), "plan request");
    if (r.plan.rank != rank_) throw ServerError(ErrorCode::malformed, "nbserver client: plan of another rank");
    cached_ = std::move(r.plan);
  }
  return *cached_;
}

void Client::shutdown_server(MPI_Comm compute) {
  mpi::check(MPI_Barrier(compute), "nbserver client", "MPI_Barrier");
  int crank = 0;
  MPI_Comm_rank(compute, &crank);
  if (crank == 0) expect<ShutdownReply>(call(ShutdownRequest{}), "shutdown request");
}

}  // namespace rwd::nbserver

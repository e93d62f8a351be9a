// The nbserver client (compute ranks).
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

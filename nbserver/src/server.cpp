// The neighbourhood server: request handler (pure) and MPI loop.
#include "rewind/nbserver/server.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "rewind/mpi/message.hpp"
#include "rewind/mpi/comm.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/wire/overloaded.hpp"

namespace rwd::nbserver {

namespace st = rwd::spacetree;

namespace {

using wire::Overloaded;

ErrorReply error(ErrorCode code, std::string msg) { return ErrorReply{code, std::move(msg)}; }


}  // namespace

// The first UID of `uids` that is not a grid of the tree, as an error reply; none if all are.
std::optional<Body> unknown_uid(const st::Topology& topo, const std::vector<st::Uid>& uids) {
  for (const auto u : uids)
    if (!topo.tree().contains(u))
      return error(ErrorCode::unknown_uid, "no grid with UID " + std::to_string(u.raw()) + " in the tree");
  return std::nullopt;
}

Message answer(const st::Topology& topo, const Message& request, const window::TreeArrays* arrays) {
  Message reply;
  reply.request_id = request.request_id;
  {
    reply.body = std::visit(
        Overloaded{
            [&](const OwnerRequest& r) -> Body {
              OwnerReply b;  // -1 for a UID that is not in the tree
              b.owners.reserve(r.uids.size());
              for (const auto u : r.uids) b.owners.push_back(topo.owner(u));
              return b;
            },
            [&](const NeighboursRequest& r) -> Body {
              if (auto e = unknown_uid(topo, r.uids)) return *e;
              NeighboursReply b;
              b.lists.reserve(r.uids.size());
              for (const auto u : r.uids) b.lists.push_back(topo.neighbours(u));
              return b;
            },
            [&](const FamilyRequest& r) -> Body {
              if (auto e = unknown_uid(topo, r.uids)) return *e;
              FamilyReply b;
              b.families.reserve(r.uids.size());
              for (const auto u : r.uids) b.families.push_back(topo.family(u));
              return b;
            },
            [&](const BoxRequest& r) -> Body {
              if (r.level < 0) return error(ErrorCode::bad_argument, "box request: negative level " + std::to_string(r.level));
              BoxReply b;
              b.uids = topo.grids_in_box(r.box, r.level);
              b.owners.reserve(b.uids.size());
              for (const auto u : b.uids) b.owners.push_back(topo.owner(u));
              return b;
            },
            [&](const PlanRequest& r) -> Body {
              if (r.rank < 0 || r.rank >= topo.partition().ranks)
                return error(ErrorCode::bad_argument, "plan request: rank " + std::to_string(r.rank) + " outside 0.." +
                                                          std::to_string(topo.partition().ranks - 1));
              return PlanReply{st::make_local_plan(topo, r.rank)};
            },
            [&](const WindowRequest& r) -> Body {
              std::optional<window::TreeArrays> own;
              if (!arrays) arrays = &own.emplace(window::arrays_of(topo.tree()));
              window::Selection sel;
              try {
                sel = window::select(arrays->view(), window::Window{{r.box.lo, r.box.hi}, r.budget, r.max_level, window::Lod::uniform});
              } catch (const std::invalid_argument& e) {
                return error(ErrorCode::bad_argument, std::string("window request: ") + e.what());
              }
              WindowReply b;
              b.level = sel.level;
              b.stride = sel.stride;
              b.values = sel.values;
              b.covered = st::Box{sel.covered.lo, sel.covered.hi};
              const auto& nodes = topo.tree().nodes();
              b.pieces.reserve(sel.pieces.size());
              for (const auto& p : sel.pieces) {
                WindowPiece q;
                q.uid = nodes[static_cast<std::size_t>(p.row)].uid;
                q.owner = topo.owner(q.uid);
                window::copy_placement(p, q);
                b.pieces.push_back(q);
              }
              return b;
            },
            [&](const ShutdownRequest&) -> Body { return ShutdownReply{}; },
            [&](const auto& other) -> Body {
              return error(ErrorCode::unknown_type, "message type " + std::to_string(static_cast<unsigned>(type_of(Body{other}))) +
                                                        " is not a request");
            },
        },
        request.body);
  }
  return reply;
}

std::vector<std::byte> handle_frame(const st::Topology& topology, std::span<const std::byte> frame, bool& shutdown,
                                    const window::TreeArrays* arrays) {
  shutdown = false;
  Message request;
  try {
    request = decode(frame);
  } catch (const ProtocolError& e) {
    Message reply;
    // Echo the id if the header got that far; it helps the client match the error.
    if (frame.size() >= 12)
      for (std::size_t b = 0; b < 4; ++b)
        reply.request_id |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(frame[8 + b])) << (8 * b);
    reply.body = ErrorReply{e.code(), e.what()};
    return encode(reply);
  }
  shutdown = std::holds_alternative<ShutdownRequest>(request.body);
  return encode(answer(topology, request, arrays));
}

Server::Server(st::Topology topology, MPI_Comm service, int clients)
    : topology_(std::move(topology)), service_(service), clients_(clients), arrays_(window::arrays_of(topology_.tree())) {}

ServerStats Server::serve() {
  ServerStats stats;
  std::vector<std::byte> in;
  // The server is idle most of a run (plans are fetched once per partition; windows come
  // when a client asks): a blocking probe would spin a core away from the compute ranks
  // for the whole run (50-72 ms of CPU per step measured on 2 cores). Napping adds at most
  // a cap (1 ms) to the first request of a burst, 0.1 ms to the next ones (warm, see
  // mpi/backoff.hpp); back-to-back requests meet the spin.
  mpi::Backoff napping;
  for (;;) {
    const MPI_Status status = mpi::receive_message(MPI_ANY_SOURCE, kRequestTag, service_, in, "nbserver", &napping);
    const auto count = static_cast<std::int64_t>(in.size());
    const auto t0 = std::chrono::steady_clock::now();
    bool shutdown = false;
    const std::vector<std::byte> out = handle_frame(topology_, in, shutdown, &arrays_);
    stats.busy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++stats.requests;
    stats.bytes_in += count;
    stats.bytes_out += static_cast<std::int64_t>(out.size());
    if (out.size() > kHeaderSize && static_cast<std::uint8_t>(out[6]) == static_cast<std::uint8_t>(MessageType::error_reply))
      ++stats.errors;
    mpi::check(MPI_Send(out.data(), static_cast<int>(out.size()), MPI_BYTE, status.MPI_SOURCE, kReplyTag, service_), "nbserver", "MPI_Send");
    if (shutdown && --clients_ <= 0) return stats;
    napping.warm_for(mpi::kWarmAfterRequest);
  }
}

}  // namespace rwd::nbserver

// A live window's cells, gathered from the compute ranks (window_gather.hpp).
#include "window_gather.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "rewind/live/link.hpp"

namespace rwd::live {

namespace col = rwd::collector;

struct WindowGather::Plan {
  col::WindowReply out;            ///< the reply, its arrays not yet placed
  WindowCommand command;           ///< to the compute ranks
};

namespace {

using std::chrono::microseconds;

col::ServiceError refused(const Reply& r) {
  return {col::ErrorCode::bad_argument, r.message.empty() ? std::string("refused") : r.message};
}

void stamp(col::WindowReply& out, const Reply& r) {
  out.step = r.step;
  out.time = r.time;
  out.file = r.file;
  out.ranges.clear();  // the colour ranges of what it shows (1.13)
  for (std::size_t v = 0; v + 1 < r.ranges.size(); v += 2) out.ranges.push_back({r.ranges[v], r.ranges[v + 1]});
}

/// The receives of a window's cells (rank mode), each straight into its place in the
/// reply's arrays. Posted in array order, every message lands in one contiguous stretch
/// of the frame's arrays (values[0] run by run, values[1], ..., cell_type): the receives
/// completed from the first on are bytes a streamed reply can send.
class Receives {
 public:
  Receives(const RankLayout& layout, bool shared, std::size_t n) : layout_(layout), shared_(shared) {
    reqs_.reserve(n);
    expect_.reserve(n);
  }

  void post(void* at, const Run& run, MPI_Datatype type, int tag, std::uint64_t size) {
    reqs_.emplace_back();
    expect_.push_back({run.cells, run.cells * size, type});
    MPI_Irecv(at, static_cast<int>(run.cells), type, layout_.first_compute + run.owner, tag, layout_.service,
              &reqs_.back());
  }

  /// Completes what has come; returns how many receives did (0 if none).
  int test() {
    if (done_.size() != reqs_.size()) done_.resize(reqs_.size()), st_.resize(reqs_.size());
    int count = 0;
    MPI_Testsome(static_cast<int>(reqs_.size()), reqs_.data(), &count, done_.data(), st_.data());
    if (count == MPI_UNDEFINED || count <= 0) return 0;
    for (int i = 0; i < count; ++i) {
      const auto k = static_cast<std::size_t>(done_[static_cast<std::size_t>(i)]);
      int got = 0;
      MPI_Get_count(&st_[static_cast<std::size_t>(i)], expect_[k].type, &got);
      const bool in_place = shared_ && got == 0;  // no data: the rank wrote into the shared slot
      short_ = short_ || (!in_place && static_cast<std::uint64_t>(got) != expect_[k].cells);
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // the ranks' stores before their messages
    for (; first_ < reqs_.size() && reqs_[first_] == MPI_REQUEST_NULL; ++first_) ready_ += expect_[first_].bytes;
    return count;
  }

  void cancel() {
    for (auto& rq : reqs_)
      if (rq != MPI_REQUEST_NULL) MPI_Cancel(&rq);
    MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  }

  [[nodiscard]] bool done() const { return first_ == reqs_.size(); }
  /// Bytes of the frame's arrays complete from the first on.
  [[nodiscard]] std::uint64_t ready() const { return ready_; }
  [[nodiscard]] bool short_data() const { return short_; }

 private:
  struct Expect {
    std::uint64_t cells, bytes;
    MPI_Datatype type;
  };
  const RankLayout& layout_;
  bool shared_;
  std::vector<MPI_Request> reqs_;
  std::vector<Expect> expect_;
  std::vector<int> done_;
  std::vector<MPI_Status> st_;
  std::size_t first_ = 0;  ///< receives before it have completed
  std::uint64_t ready_ = 0;
  bool short_ = false;
};

}  // namespace

col::WindowReply WindowGather::gather(const Selection& sel, const col::WindowRequest& r, col::WindowStream* stream) {
  Plan plan;
  auto& out = plan.out;
  out.level = sel.level;
  out.lod = sel.lod == window::Lod::adaptive ? "adaptive" : "uniform";
  out.stride = sel.stride;
  out.lo = sel.covered.lo;
  out.hi = sel.covered.hi;
  out.variables = r.variables;
  plan.command.vars = r.variables;
  plan.command.file = r.file;  // the future whose state it shows ("" = the first)
  out.cells = 0;
  for (std::size_t i = 0; i < sel.pieces.size(); ++i) {
    const auto& p = sel.pieces[i];
    col::PieceMessage piece;
    piece.row = -1;
    piece.uid = p.uid;
    window::copy_placement(p.piece, piece);
    out.cells += piece.cells();
    out.pieces.push_back(piece);
    PiecePlacement q{p.uid, p.owner, {}, {}, p.piece.stride};
    for (std::size_t a = 0; a < 3; ++a) q.first[a] = p.piece.first[a], q.count[a] = p.piece.count[a];
    plan.command.pieces.push_back(q);
  }
  WindowTarget target;
  const bool shared = place(plan, r.variables.size(), stream, target) != nullptr;
  plan.command.slots = slots_.tokens();
  auto reply = link_.thread_mode() ? from_root(plan, target) : from_ranks(plan, target, shared, stream);
  ++stats_.windows;
  if (shared) ++stats_.from_shared_memory;
  return reply;
}

// Where the values go. A streamed reply (codec none) goes to the socket as it is: its
// arrays live in a slot shared with the compute ranks of this node, which extract their
// cells straight into it (memory.hpp), so the values are copied once on this side.
// Otherwise, and when no slot is free, the arrays of an earlier reply, if the server has
// handed one back (no zero fill, no fresh pages). Every cell is overwritten.
std::shared_ptr<ReplySlots::Slot> WindowGather::place(Plan& plan, std::size_t nv, col::WindowStream* stream,
                                                      WindowTarget& target) {
  auto& out = plan.out;
  target.values.resize(nv);
  auto slot = stream != nullptr ? slots_.take(out.cells * (8 * nv + 1)) : nullptr;
  if (slot) {
    auto* base = slot->segment.data();
    auto arrays = std::make_shared<col::WindowReply::SharedArrays>();
    for (std::size_t v = 0; v < nv; ++v) {
      target.values[v] = reinterpret_cast<double*>(base) + v * out.cells;
      arrays->values.emplace_back(target.values[v], out.cells);
    }
    target.types = reinterpret_cast<std::uint8_t*>(base) + nv * out.cells * 8;
    arrays->cell_type = {target.types, out.cells};
    arrays->keep = std::shared_ptr<const void>(slot.get(), [slot](const void*) { slot->busy = false; });
    out.shared = std::move(arrays);
    plan.command.shm = slot->segment.name();
    return slot;
  }
  slots_.reuse_arrays(out);
  out.values.resize(nv);
  for (std::size_t v = 0; v < nv; ++v) {
    out.values[v].resize(out.cells);
    target.values[v] = out.values[v].data();
  }
  out.cell_type.resize(out.cells);
  target.types = out.cell_type.data();
  return nullptr;
}

// Thread mode: rank 0 fills the arrays (its cells and the other ranks') and then replies.
col::WindowReply WindowGather::from_root(Plan& plan, const WindowTarget& target) {
  const Reply reply = link_.command(plan.command, target);
  if (!reply.ok) throw refused(reply);
  stamp(plan.out, reply);
  return std::move(plan.out);
}

// Rank mode: the compute ranks send their pieces' cells run by run (link.hpp), each
// message received straight into its place in the reply's arrays; every receive is
// posted before the command goes (no rank's send waits while another's are copied).
col::WindowReply WindowGather::from_ranks(Plan& plan, const WindowTarget& target, bool shared,
                                          col::WindowStream* stream) {
  auto& out = plan.out;
  const auto runs = runs_of(plan.command.pieces);
  Receives rx(link_.layout(), shared, runs.size() * (target.values.size() + 1));
  for (auto* values : target.values)
    for (const auto& run : runs) rx.post(values + run.at, run, MPI_DOUBLE, kValuesTag, 8);
  for (const auto& run : runs) rx.post(target.types + run.at, run, MPI_BYTE, kTypesTag, 1);
  link_.send_command(plan.command, {});
  Reply reply;
  bool replied = false, streaming = false;
  // Test and nap rather than MPI_Waitall: under mpi_yield_when_idle a blocking wait spins
  // through sched_yield, and the values come only once every compute rank has copied them.
  for (auto nap = microseconds(20); !replied || !rx.done();) {
    if (!replied && link_.poll_reply(reply)) {
      replied = true;
      nap = microseconds(20);
      if (!reply.ok) {
        rx.cancel();
        throw refused(reply);
      }
      stamp(out, reply);
      // Written to the client while the rest arrives (codec none): the header and JSON
      // now, each array's bytes as their receives complete.
      streaming = stream != nullptr && stream->begin(out);
      if (streaming && rx.ready() > 0 && !rx.short_data()) stream->ready(rx.ready());
    }
    const std::uint64_t before = rx.ready();
    const int count = rx.test();
    if (streaming && rx.ready() > before && !rx.short_data()) stream->ready(rx.ready());
    if (count > 0) {
      nap = microseconds(20);
      continue;
    }
    // Before the reply a running run may be up to a step from its boundary: naps up to
    // 2 ms until the boundary is due, then 0.1 ms (reply_nap), the status followed meanwhile.
    if (!replied) link_.drain_status();
    std::this_thread::sleep_for(nap);
    nap = std::min(2 * nap, replied ? microseconds(100) : link_.reply_nap_cap());
  }
  if (rx.short_data()) {
    if (streaming) stream->abort(std::move(out));
    throw col::ServiceError(col::ErrorCode::internal, "live window: short data from a rank");
  }
  return std::move(out);
}

}  // namespace rwd::live

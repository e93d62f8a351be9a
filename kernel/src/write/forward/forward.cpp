// Handing steps to the rank that writes them: the compute side (Forwarder, forward.hpp).
// The writing side is io_ranks.cpp; the wire, the shared memory and the slots' layout have
// a file each.
#include "write/forward/forward.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

#include "io/collective.hpp"
#include "rewind/kernel/options.hpp"
#include "rewind/mpi/message.hpp"

namespace rwd::kernel::detail {

namespace {
/// Some array of `grids` starts in [begin, end).
bool points_into(const LocalGrids& grids, const std::byte* begin, const std::byte* end) {
  const auto in = [&](const void* p) {
    const auto* b = static_cast<const std::byte*>(p);
    return p != nullptr && !std::less<const std::byte*>{}(b, begin) && std::less<const std::byte*>{}(b, end);
  };
  return std::any_of(grids.grids.begin(), grids.grids.end(), [&](const GridRecord& r) {
    return in(r.cell_type) || std::any_of(r.fields.begin(), r.fields.end(), in);
  });
}
}  // namespace

// --- the compute side --------------------------------------------------------------------

Forwarder::Forwarder(MPI_Comm comm, bool append, const std::string& path, const CommonInfo* common,
                     const IoOptions& options, const WriterEnv& env)
    : comm_(mpi::Comm::dup(comm, "Writer")), path_(path) {
  if (options.strategy == Strategy::dedicated) {
    if (env.io_group == MPI_COMM_NULL)
      throw FileError(ErrorKind::invalid_argument, path,
                      "output.io.strategy = \"dedicated\" needs I/O ranks: run it with `rewind run` under mpirun, "
                      "which takes output.io.io_ranks_per_node processes per node for them");
    group_ = env.io_group;
    dedicated_ = true;
    MPI_Comm_rank(group_, &me_);
    int n = 0;
    MPI_Comm_size(group_, &n);
    server_ = n - 1;
  } else {  // aggregated: the node's first compute rank writes for the node
    node_ = mpi::Comm::split_shared(comm_, "Writer");
    me_ = node_.rank();
    leaders_ = mpi::Comm::split(comm_, me_ == 0 ? 0 : MPI_UNDEFINED, comm_.rank(), "Writer");
    group_ = node_;
    server_ = 0;
    if (me_ == 0) local_server_.emplace(node_, leaders_, true, nullptr, env.on_phase);
  }
  slots_ = std::max<std::int64_t>(1, options.steps_in_flight);
  Packer msg;
  msg.put(Op::open);
  msg.put(static_cast<std::uint8_t>(append));
  msg.put(path);
  msg.put(common ? *common : CommonInfo{});
  msg.put(options);
  command(msg, true);
  const auto r = reply();
  Unpacker u(r);
  if (u.get<std::uint8_t>() == 0) throw u.error();
  last_step_ = u.get<std::int64_t>();
  common_ = u.common();
  open_ = true;
}

Forwarder::~Forwarder() {
  if (!open_) return;
  try {
    close();
  } catch (const std::exception& e) {
    // Every rank has the same error: one line, unless a step's error said it already.
    if (!failed_ && comm_.rank() == 0) std::fprintf(stderr, "rewind: closing %s: %s\n", path_.c_str(), e.what());
  }
}

void Forwarder::command(Packer& msg, bool wait) {
  if (!local_server_) {
    // Nonblocking: a step's description may be large, and the server may still be
    // writing the step before; the buffer lives until the step is settled.
    sends_.emplace_back(MPI_REQUEST_NULL, std::move(msg.bytes()));
    auto& [rq, bytes] = sends_.back();
    mpi::check(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, server_, kCommandTag, group_, &rq),
               "I/O ranks", "MPI_Isend");
    if (wait) complete_sends(sends_.size());
    return;
  }
  // This rank is its group's server too: the command goes to itself, then it serves it.
  MPI_Request rq;
  mpi::check(
      MPI_Isend(msg.bytes().data(), static_cast<int>(msg.bytes().size()), MPI_BYTE, me_, kCommandTag, group_, &rq),
      "I/O ranks", "MPI_Isend");
  local_server_->serve_one();
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

void Forwarder::complete_sends(std::size_t n) {
  for (; n > 0 && !sends_.empty(); --n) {
    MPI_Wait(&sends_.front().first, MPI_STATUS_IGNORE);
    sends_.pop_front();
  }
}

std::vector<std::byte> Forwarder::reply() {
  std::vector<std::byte> r;
  mpi::receive_message(server_, kReplyTag, group_, r, "I/O ranks");
  return r;
}

void Forwarder::settle_one(WriteStats* into) {
  const std::int64_t step = in_flight_.front();
  in_flight_.pop_front();
  complete_sends(1);  // that step's description
  const auto r = reply();
  Unpacker u(r);
  if (u.get<std::uint8_t>() == 0) {
    failed_ = true;
    const FileError e = u.error();
    const char* by = dedicated_ ? "the I/O ranks" : "the node's writing rank";
    // A failed write names its step already (detail::abandon_step): say who failed there.
    std::string problem = e.problem();
    const auto at = problem.find(") not written: ");
    if (problem.rfind(fmt::format("step {} (t = ", step), 0) == 0 && at != std::string::npos)
      problem.insert(at + 13, fmt::format(" by {}", by));
    else problem = fmt::format("step {} (written by {}): {}", step, by, problem);
    throw FileError(e.kind(), e.file(), problem, e.detail());
  }
  const auto written = u.get<std::int64_t>();
  const auto bytes = u.get<std::int64_t>();
  const auto seconds = u.get<double>();
  consumer_declined_ = u.get<std::uint8_t>() == 0;  // the I/O ranks send "the consumer is active"
  if (into && written >= 0) {  // -1: a step for the consumer only
    into->handoff.written_step = written;
    into->handoff.written_seconds = seconds;
    into->handoff.written_bandwidth = seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0;
  }
}

WriteStats Forwarder::write_step(const StepInfo& info, const LocalGrids& grids) {
  return forward(info, grids, true, nullptr);
}

WriteStats Forwarder::hand_off(const StepInfo& info, const LocalGrids& grids, bool write,
                               const std::vector<FieldSpec>& consume) {
  if (!dedicated_) throw no_consumer(path_);
  return forward(info, grids, write, &consume);
}

WriteStats Forwarder::forward(const StepInfo& info, const LocalGrids& grids, bool write,
                              const std::vector<FieldSpec>* consume) {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  agree_step_info(comm_, info, path_);
  // A span lent for this step (Writer::span) is taken as it is or dropped: either way this
  // hand-off ends it.
  const std::optional<Lent> lent = std::move(lent_);
  lent_.reset();
  WriteStats st = lent ? lent->waited : WriteStats{};
  st.handoff.handed_off = true;
  const double t0 = MPI_Wtime() - st.handoff.wait_seconds;
  // Room for this step: at most slots_ steps in flight (the same count on every rank, so
  // every rank settles, and throws, at the same call).
  while (static_cast<std::int64_t>(in_flight_.size()) >= slots_) settle_one(&st);
  const SlotLayout layout = slot_layout(info, write, consume);
  const std::int64_t need = slot_bytes(layout, grids);
  const bool from_span = lent && is_lent(*lent, layout, grids);
  // The span's arrays are in a slot already; a hand-off of other arrays that points into
  // it (a consumer's step, or one laid out otherwise) would copy the slot onto itself.
  const bool misused = lent && !from_span && points_into(grids, lent->begin, lent->end);
  // One reduction for the window decision and the step's totals: {ranks that must grow,
  // bytes, grids, ranks handing over a span, ranks handing a span over wrongly}.
  std::int64_t mine[5] = {need > slot_capacity_ ? 1 : 0, need, static_cast<std::int64_t>(grids.grids.size()),
                          from_span ? 1 : 0, misused ? 1 : 0};
  std::int64_t totals[5] = {0, 0, 0, 0, 0};
  MPI_Allreduce(mine, totals, 5, MPI_INT64_T, MPI_SUM, comm_);
  if (totals[4] != 0)
    throw FileError(ErrorKind::invalid_argument, path_,
                    fmt::format("step {}: a span (Writer::span) goes to the write_step of the step it was taken for, "
                                "with the same fields; not to a hand-off of other fields",
                                info.step));
  if (totals[0] != 0 && totals[3] != 0)  // a new window would drop the spans' contents
    throw FileError(ErrorKind::invalid_argument, path_,
                    fmt::format("step {}: a rank's step is larger than the span it was lent (Writer::span): "
                                "hand every rank's span to write_step, or none",
                                info.step));
  ensure_capacity(need, totals[0] != 0, &st);
  st.handoff.wait_seconds = MPI_Wtime() - t0;
  const std::int64_t offset = (next_slot_++ % slots_) * slot_capacity_;
  Packer msg;
  msg.put(Op::step);
  msg.put(offset);
  msg.put(static_cast<std::uint8_t>((write ? kWriteStep : 0) | (consume ? kConsumeStep : 0)));
  msg.put(info);
  msg.put(consume ? *consume : std::vector<FieldSpec>{});
  pack_step(layout, grids, comm_.rank(), window().mine() + offset, msg, !from_span);
  st.handoff.copied_bytes = from_span ? 0 : need;
  window().sync();
  command(msg, false);
  in_flight_.push_back(info.step);  // a step for the consumer only holds its slot too
  if (write) last_step_ = info.step;
  // Aggregated: the node leader writes the step inside this call (its command serves it),
  // so every rank of the node settles it now, the leader's error with the others: a rank
  // that settled later would compute on into a collective the failed ones have left.
  if (!dedicated_) settle_one(&st);

  double times[2] = {MPI_Wtime() - t0, st.handoff.wait_seconds}, most[2] = {0, 0};
  MPI_Allreduce(times, most, 2, MPI_DOUBLE, MPI_MAX, comm_);
  st.bytes_local = need;
  st.bytes = totals[1];
  st.n_grids = totals[2];
  st.seconds = most[0];
  st.handoff.wait_seconds = most[1];
  st.bandwidth = st.seconds > 0 ? static_cast<double>(st.bytes) / st.seconds : 0.0;
  return st;
}

LocalGrids Forwarder::span(const StepInfo& info, const LocalGrids& like) {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  lent_.reset();
  WriteStats waited;
  const double t0 = MPI_Wtime();
  while (static_cast<std::int64_t>(in_flight_.size()) >= slots_) settle_one(&waited);
  const SlotLayout layout = slot_layout(info, true, nullptr);
  const std::int64_t need = slot_bytes(layout, like);
  fit(need, &waited);
  waited.handoff.wait_seconds = MPI_Wtime() - t0;
  // The slot the next hand-off takes (hand_off's offset).
  std::byte* slot = window().mine() + (next_slot_ % slots_) * slot_capacity_;
  lent_ = Lent{layout, slot_grids(layout, like, slot), waited, slot, slot + need};
  return lent_->grids;
}

bool Forwarder::is_lent(const Lent& lent, const SlotLayout& layout, const LocalGrids& grids) {
  if (layout.slots != lent.layout.slots || layout.types != lent.layout.types || layout.padded || grids.halo != 0 ||
      grids.block != lent.grids.block || grids.grids.size() != lent.grids.grids.size())
    return false;
  for (std::size_t g = 0; g < grids.grids.size(); ++g) {
    const GridRecord &a = grids.grids[g], &b = lent.grids.grids[g];
    if (layout.types && a.cell_type != b.cell_type) return false;
    for (int s : layout.slots) {
      const auto i = static_cast<std::size_t>(s);
      if (i >= a.fields.size() || a.fields[i] != b.fields[i]) return false;
    }
  }
  return true;
}

bool Forwarder::fit(std::int64_t need, WriteStats* st) {
  std::int64_t grow = need > slot_capacity_ ? 1 : 0, any = 0;
  MPI_Allreduce(&grow, &any, 1, MPI_INT64_T, MPI_SUM, comm_);
  ensure_capacity(need, any != 0, st);
  return any != 0;
}

void Forwarder::ensure_capacity(std::int64_t need, bool grow_any, WriteStats* st) {
  if (!grow_any) return;
  // A new window for the group: nothing of the old one may be in flight, nor lent.
  while (!in_flight_.empty()) settle_one(st);
  lent_.reset();
  slot_capacity_ = std::max(slot_capacity_, need + need / 8 + 4096);  // room for a little growth
  Packer msg;
  msg.put(Op::resize);
  msg.put(slot_capacity_ * slots_);
  command(msg, true);
  if (!local_server_) own_window_.allocate(group_, slot_capacity_ * slots_);
  next_slot_ = 0;
}

void Forwarder::prepare(const StepInfo& info, const LocalGrids& grids, const std::vector<FieldSpec>* consume) {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  if (!dedicated_) consume = nullptr;  // only I/O ranks have a consumer
  // First touch now, not in the first hand-off's copy: fresh pages cost a fault each
  // (on a VM a host fault: bench/kernel/first_touch.cpp measures it), milliseconds per MiB.
  if (fit(slot_bytes(slot_layout(info, true, consume), grids), nullptr))
    std::memset(window().mine(), 0, static_cast<std::size_t>(slot_capacity_ * slots_));
}

std::optional<FileError> Forwarder::settle_all() {
  std::optional<FileError> first;
  while (!in_flight_.empty()) {
    try {
      settle_one(nullptr);
    } catch (const FileError& e) {
      if (!first) first = e;
    }
  }
  return first;
}

void Forwarder::settle() {
  if (auto e = settle_all()) throw *e;
}

void Forwarder::close() {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  open_ = false;
  std::optional<FileError> first = settle_all();  // the last steps are written before the file closes
  Packer msg;
  msg.put(Op::close);
  command(msg, true);
  const auto r = reply();
  Unpacker u(r);
  if (u.get<std::uint8_t>() == 0 && !first) first = u.error();
  complete_sends(sends_.size());
  own_window_.release();  // the leader's window is its server's, released there
  if (first) throw *first;
}

}  // namespace rwd::kernel::detail

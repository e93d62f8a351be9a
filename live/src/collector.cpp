// The live link, the collector's side (collector.hpp): one core for a collector rank and
// for a collector thread of compute rank 0.
#include "rewind/live/collector.hpp"

#include <fmt/core.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "channel.hpp"
#include "rewind/collector/file_service.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/live/link.hpp"
#include "rewind/live/memory.hpp"
#include "rewind/live/messages.hpp"
#include "rewind/mpi/backoff.hpp"

namespace rwd::live {

namespace {

namespace col = rwd::collector;
using Bytes = std::vector<std::byte>;
using col::ErrorCode;
using col::ServiceError;

col::RunState run_state(State s) {
  switch (s) {
    case State::running: return col::RunState::running;
    case State::paused: return col::RunState::paused;
    case State::stopping: return col::RunState::stopping;
    case State::finished: return col::RunState::finished;
  }
  return col::RunState::running;
}

std::vector<ParamValue> values_of(const col::ParamValues& values) {
  std::vector<ParamValue> out;
  for (const auto& [name, v] : values) {
    if (const auto* d = std::get_if<double>(&v)) out.push_back({name, {*d}});
    else {
      const auto& a = std::get<std::array<double, 3>>(v);
      out.push_back({name, {a[0], a[1], a[2]}});
    }
  }
  return out;
}

class Core {
 public:
  /// Rank mode: the compute root is service rank layout.first_compute.
  Core(const RankLayout& layout, Selector selector, col::ServerInfo info)
      : layout_(layout), selector_(std::move(selector)), info_(std::move(info)) {
    pool_.reserve(kPoolReplies);  // recycle() does not allocate
  }
  /// Thread mode: the compute root is this process's main thread, behind `channel`.
  Core(std::shared_ptr<ThreadChannel> channel, int compute_size, col::ServerInfo info)
      : channel_(std::move(channel)), info_(std::move(info)) {
    layout_.compute_size = compute_size;
    pool_.reserve(kPoolReplies);
  }

  /// Runs `f` on the core's thread and returns its result (or rethrows). Called by the
  /// server's worker thread.
  template <class F>
  auto post(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    {
      std::lock_guard lock(mutex_);
      if (closed_) throw ServiceError(ErrorCode::internal, "the run has ended; the collector is shutting down");
      jobs_.emplace_back([&task] { task(); });
    }
    cv_.notify_one();
    return result.get();
  }

  /// The core thread's loop: runs jobs and follows the run's status until it ends.
  void loop(col::Server* server) {
    for (;;) {
      drain_status();
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, std::chrono::milliseconds(2), [&] { return !jobs_.empty(); });
        if (!jobs_.empty()) {
          job = std::move(jobs_.front());
          jobs_.pop_front();
        } else if (finished_) {
          closed_ = true;
          break;
        }
      }
      if (job) job();
    }
    if (server) server->stop();  // the worker is idle: no job is queued or running
    command(Bye{});
  }

  col::ServerInfo info() {
    std::lock_guard lock(mutex_);
    col::ServerInfo i = info_;
    i.files = status_.files;
    return i;
  }

  std::vector<col::StepRecord> steps() {
    return post([this] {
      return with_files([](col::FileService& fs) { return fs.steps(); });
    });
  }

  col::WindowReply window(const col::WindowRequest& r, col::WindowStream* stream) {
    if (r.time != "live") {
      return post([this, r] {
        return with_files([&](col::FileService& fs) {
          try {
            return fs.window(r);
          } catch (const ServiceError& e) {
            if (e.code() != ErrorCode::no_such_step) throw;
            const auto now = status();  // a time not reached yet: say where the job is
            throw ServiceError(e.code(), fmt::format("{}; the running job is at step {} (t = {:.6g}): ask for time "
                                                     "\"live\"", e.what(), now.step, now.time));
          }
        });
      });
    }
    return post([this, r, stream] { return live_window(r, stream); });
  }

  col::RunStatus status() {
    std::lock_guard lock(mutex_);
    col::RunStatus s;
    s.state = run_state(status_.state);
    s.step = status_.step;
    s.time = status_.time;
    s.steps_per_second = s.state == col::RunState::running && std::isfinite(rate_) && rate_ > 0 ? rate_ : 0.0;
    s.file = status_.file;
    s.parent = status_.parent;
    s.ranks = static_cast<std::uint32_t>(layout_.compute_size);
    s.clients = server_ ? static_cast<std::uint32_t>(server_->stats().open) : 0;
    return s;
  }

  col::ControlReply control(col::ControlAction a) {
    const Action action = a == col::ControlAction::pause ? Action::pause : a == col::ControlAction::resume ? Action::resume : Action::stop;
    const Reply r = steer(ControlCommand{action});
    {
      // The reply is the newest word on the run's state (steer drained every status sent
      // before it); the run's own status says so only at its next boundary, and a client
      // asking at once after a resume must not read "paused".
      std::lock_guard lock(mutex_);
      status_.state = r.state;
      status_.step = r.step;
      status_.time = r.time;
    }
    return {run_state(r.state), r.step, r.time};
  }

  std::vector<col::ParameterInfo> parameters() {
    const Reply r = steer(ParametersQuery{});
    std::vector<col::ParameterInfo> out;
    for (const auto& p : r.parameters) {
      col::ParameterInfo q;
      q.name = p.name;
      if (p.vector && p.value.size() == 3) q.value = std::array<double, 3>{p.value[0], p.value[1], p.value[2]};
      else q.value = p.value.empty() ? 0.0 : p.value[0];
      q.unit = p.unit;
      q.min = p.min;
      q.max = p.max;
      q.min_open = p.min_open;
      q.max_open = p.max_open;
      q.description = p.description;
      out.push_back(std::move(q));
    }
    return out;
  }

  col::SetReply set(const col::ParamValues& values) {
    const Reply r = steer(SetCommand{values_of(values)});
    col::SetReply out;
    out.step = r.step;
    out.time = r.time;
    out.values = values;
    return out;
  }

  col::BranchReply branch(const col::BranchRequest& b) {
    std::string file = b.file;
    if (file.empty()) {
      std::lock_guard lock(mutex_);
      file = status_.file;
    }
    if (file.empty()) throw ServiceError(ErrorCode::conflict, "the run writes no file to branch from");
    // No file asked: "@SEL", a step on the timeline of the file being written (through its
    // parents; driver/src/live.cpp on_timeline).
    const Reply r = steer(BranchCommand{(b.file.empty() ? "" : file) + "@" + b.from, values_of(b.values), b.output});
    col::BranchReply out{r.file, r.parent, r.step, r.time};
    {
      // The run is on the branch now; its own status says so only at its next boundary,
      // and a client asking at once must not see the file it left.
      std::lock_guard lock(mutex_);
      status_.file = out.file;
      status_.parent = out.parent;
      status_.step = out.step;
      status_.time = out.time;
    }
    return out;
  }

  void set_server(col::Server* s) { server_ = s; }
  [[nodiscard]] CollectorStats stats() const { return stats_; }

  /// Keeps the arrays of a written reply for the next live window (I/O thread).
  void recycle(col::WindowReply&& w) noexcept {
    if (w.shared) return;  // its slot is free again once the reply is gone
    std::uint64_t bytes = w.cell_type.capacity();
    for (const auto& v : w.values) bytes += 8 * v.capacity();
    const std::lock_guard lock(pool_mutex_);
    if (pool_.size() < kPoolReplies && bytes <= kPoolBytes) pool_.push_back(std::move(w));
  }

  /// Frees the kept replies (their arrays); the shared slots stay (at most two).
  void release_pool() noexcept {
    const std::lock_guard lock(pool_mutex_);
    pool_.clear();
  }

  /// A command to the compute ranks, answered at their next boundary. Core thread.
  Reply command(const Command& c, WindowTarget target = {}) {
    send_command(c, std::move(target));
    // The answer comes at the run's next step boundary, up to a whole step away: poll
    // often at first (a paused run answers at once), then back off to 2 ms.
    Reply reply;
    mpi::wait_until(
        [&] {
          if (poll_reply(reply)) return true;
          drain_status();
          return false;
        },
        {.spin = std::chrono::microseconds(0), .first = std::chrono::microseconds(50), .cap = reply_nap_cap()});
    return reply;
  }

 private:
  [[nodiscard]] bool thread_mode() const { return channel_ != nullptr; }

  void send_command(const Command& c, WindowTarget target) {
    Bytes frame = encode(c);
    if (thread_mode()) {
      channel_->push_command({std::move(frame), std::move(target)});
      return;
    }
    // Not MPI_Send: a window's command (its piece list) is beyond the eager limit, so a
    // blocking send waited for the root's receive at its next step boundary, spinning
    // through sched_yield for up to a whole step. The reply can only follow the receive.
    sent_.emplace_back(std::move(frame), MPI_REQUEST_NULL);
    auto& s = sent_.back();
    MPI_Isend(s.first.data(), static_cast<int>(s.first.size()), MPI_BYTE, layout_.first_compute, kCommandTag,
              layout_.service, &s.second);
  }

  /// The longest nap while a command's reply is due: a running run answers at its next
  /// boundary (up to a step away), a paused one at once.
  std::chrono::microseconds reply_nap_cap() {
    const std::lock_guard lock(mutex_);
    return status_.state == State::paused ? std::chrono::microseconds(100) : std::chrono::microseconds(2000);
  }

  /// The next frame from the compute root with `tag`, if one has come.
  std::optional<Bytes> try_receive(int tag) {
    if (thread_mode()) return tag == kReplyTag ? channel_->pop_reply() : channel_->pop_status();
    const int root = layout_.first_compute;
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(root, tag, layout_.service, &flag, &st);
    if (!flag) return std::nullopt;
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    Bytes b(static_cast<std::size_t>(n));
    MPI_Recv(b.data(), n, MPI_BYTE, root, tag, layout_.service, MPI_STATUS_IGNORE);
    return b;
  }

  /// The reply to the last command, if it has come.
  bool poll_reply(Reply& reply) {
    auto b = try_receive(kReplyTag);
    if (!b) return false;
    if (!thread_mode()) {  // complete: the root has received every command sent so far
      for (auto& s : sent_) MPI_Wait(&s.second, MPI_STATUS_IGNORE);
      sent_.clear();
    }
    reply = decode_reply(*b);
    return true;
  }

  void drain_status() {
    while (auto b = try_receive(kStatusTag)) {
      if (!thread_mode() && frame_type(*b) == kTreeType) {
        const std::lock_guard lock(mutex_);
        tree_ = std::make_shared<const TreeSnapshot>(decode_tree(*b));
        continue;
      }
      Status s = decode_status(*b);
      std::lock_guard lock(mutex_);
      // Steps per second over the last second or more of wall time.
      if (s.wall - rate_wall_ >= 1.0) {
        rate_ = static_cast<double>(s.steps - rate_steps_) / (s.wall - rate_wall_);
        rate_wall_ = s.wall;
        rate_steps_ = s.steps;
      }
      if (s.state == State::paused) rate_ = 0.0;
      finished_ = s.state == State::finished;
      status_ = std::move(s);
    }
  }

  // Past steps come from the files, read while the compute ranks hold at a boundary (in
  // thread mode rank 0's main thread then waits in the link: no HDF5 call meets ours).
  template <class F>
  auto with_files(F f) -> decltype(f(std::declval<col::FileService&>())) {
    std::vector<std::string> files;
    bool running = false;
    {
      std::lock_guard lock(mutex_);
      files = status_.files;
      running = !finished_;
    }
    if (files.empty()) throw ServiceError(ErrorCode::no_such_step, "the run writes no file (output.file is empty)");
    if (running) expect_ok(command(Hold{}));
    try {
      col::FileService fs(files);
      auto out = f(fs);
      if (running) expect_ok(command(Release{}));
      return out;
    } catch (...) {
      if (running) command(Release{});
      throw;
    }
  }

  // A steering command, answered at the compute ranks' next boundary: refused with
  // conflict once the run has ended, bad_argument for a value the run refuses.
  Reply steer(const Command& c) {
    return post([this, c] {
      Reply r = command(c);
      drain_status();  // what the root sent before its reply: a status read next is not older
      if (!r.ok) {
        throw ServiceError(r.message.find("has finished") != std::string::npos ? ErrorCode::conflict : ErrorCode::bad_argument,
                           r.message.empty() ? std::string("refused") : r.message);
      }
      return r;
    });
  }

  static Reply expect_ok(Reply r) {
    if (!r.ok) throw ServiceError(ErrorCode::bad_argument, r.message.empty() ? std::string("refused") : r.message);
    return r;
  }

  Selection select(const col::WindowRequest& r) {
    window::Window w;
    w.box.lo = r.lo;
    w.box.hi = r.hi;
    w.budget = static_cast<std::int64_t>(r.budget);
    if (selector_) return selector_(w);
    std::shared_ptr<const TreeSnapshot> tree;
    if (thread_mode()) {
      tree = channel_->tree();
    } else {
      const std::lock_guard lock(mutex_);
      tree = tree_;
    }
    if (!tree) throw ServiceError(ErrorCode::internal, "the run has not described its tree yet; ask again");
    return live::select(*tree, w);
  }

  col::WindowReply live_window(const col::WindowRequest& r, col::WindowStream* stream);

  /// A segment shared with the compute ranks of this node (memory.hpp), holding one
  /// reply's arrays while a connection writes them.
  struct Slot {
    SharedSegment segment;
    std::atomic<bool> busy{false};
  };
  std::shared_ptr<Slot> take_slot(std::uint64_t bytes);
  std::vector<std::uint64_t> slot_tokens() {
    const std::lock_guard lock(pool_mutex_);
    std::vector<std::uint64_t> out;
    for (const auto& s : slots_) out.push_back(s->segment.name().token);
    return out;
  }

  RankLayout layout_;
  std::shared_ptr<ThreadChannel> channel_;
  Selector selector_;
  col::ServerInfo info_;
  CollectorStats stats_;  ///< core thread
  col::Server* server_ = nullptr;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool closed_ = false, finished_ = false;
  Status status_;
  std::shared_ptr<const TreeSnapshot> tree_;  ///< rank mode without a selector
  std::deque<std::pair<Bytes, MPI_Request>> sent_;  ///< rank mode: commands in flight
  double rate_ = 0.0, rate_wall_ = 0.0;
  std::int64_t rate_steps_ = 0;
  static constexpr std::size_t kPoolReplies = 2;
  static constexpr std::uint64_t kPoolBytes = std::uint64_t{256} << 20;  ///< per kept reply
  std::mutex pool_mutex_;
  std::vector<col::WindowReply> pool_;          ///< written replies whose arrays the next windows reuse
  std::vector<std::shared_ptr<Slot>> slots_;  ///< at most kPoolReplies
  bool no_slots_ = false;                     ///< creating one failed: not tried again
};

col::WindowReply Core::live_window(const col::WindowRequest& r, col::WindowStream* stream) {
  const auto sel = select(r);
  WindowCommand command;
  command.vars = r.variables;
  col::WindowReply out;
  out.level = sel.level;
  out.stride = sel.stride;
  out.lo = sel.covered.lo;
  out.hi = sel.covered.hi;
  out.variables = r.variables;
  std::vector<std::uint64_t> offset(sel.pieces.size() + 1, 0);
  for (std::size_t i = 0; i < sel.pieces.size(); ++i) {
    const auto& p = sel.pieces[i];
    col::Piece piece;
    piece.row = -1;
    piece.uid = p.uid;
    window::copy_placement(p.piece, piece);
    offset[i + 1] = offset[i] + piece.cells();
    out.pieces.push_back(piece);
    PiecePlacement q{p.uid, p.owner, {}, {}, p.piece.stride};
    for (std::size_t a = 0; a < 3; ++a) q.first[a] = p.piece.first[a], q.count[a] = p.piece.count[a];
    command.pieces.push_back(q);
  }
  out.cells = offset.back();
  // Where the values go. A streamed reply (codec none) goes to the socket as it is: its
  // arrays live in a slot shared with the compute ranks of this node, which extract their
  // cells straight into it (memory.hpp), so the values are copied once on this side.
  // Otherwise, and when no slot is free, the arrays of an earlier reply, if the server has
  // handed one back (no zero fill, no fresh pages). Every cell is overwritten below.
  const std::size_t nv = r.variables.size();
  WindowTarget target;
  target.values.resize(nv);
  std::shared_ptr<Slot> slot = stream != nullptr ? take_slot(out.cells * (8 * nv + 1)) : nullptr;
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
    command.shm = slot->segment.name();
  } else {
    {
      const std::lock_guard lock(pool_mutex_);
      if (!pool_.empty()) {
        out.values = std::move(pool_.back().values);
        out.cell_type = std::move(pool_.back().cell_type);
        pool_.pop_back();
      }
    }
    out.values.resize(nv);
    for (std::size_t v = 0; v < nv; ++v) {
      out.values[v].resize(out.cells);
      target.values[v] = out.values[v].data();
    }
    out.cell_type.resize(out.cells);
    target.types = out.cell_type.data();
  }
  command.slots = slot_tokens();
  if (thread_mode()) {
    // Rank 0 fills the arrays (its cells and the other ranks') and then replies.
    const Reply reply = this->command(command, target);
    if (!reply.ok) throw ServiceError(ErrorCode::bad_argument, reply.message.empty() ? std::string("refused") : reply.message);
    out.step = reply.step;
    out.time = reply.time;
    out.file = reply.file;
    ++stats_.windows;
    if (slot) ++stats_.from_shared_memory;
    return out;
  }
  // Rank mode: the compute ranks send their pieces' cells run by run (link.hpp), each
  // message received straight into its place in the reply's arrays; every receive is
  // posted before the command goes (no rank's send waits while another's are copied).
  struct Run {
    int owner;
    std::uint64_t at, cells;
  };
  std::vector<Run> runs;
  for (std::size_t i = 0; i < sel.pieces.size(); ++i) {
    const int owner = sel.pieces[i].owner;
    if (i == 0 || sel.pieces[i - 1].owner != owner) runs.push_back({owner, offset[i], 0});
    runs.back().cells += offset[i + 1] - offset[i];
  }
  // Every message lands in one contiguous stretch of the frame's arrays (values[0] run by
  // run, values[1], ..., cell_type): the receives completed from the first on are bytes a
  // streamed reply can send.
  struct Expect {
    std::uint64_t cells, bytes;
    MPI_Datatype type;
  };
  std::vector<MPI_Request> reqs;
  std::vector<Expect> expect;
  reqs.reserve(runs.size() * (nv + 1));
  const auto recv = [&](void* at, const Run& run, MPI_Datatype type, int tag, std::uint64_t size) {
    reqs.emplace_back();
    expect.push_back({run.cells, run.cells * size, type});
    MPI_Irecv(at, static_cast<int>(run.cells), type, layout_.first_compute + run.owner, tag, layout_.service, &reqs.back());
  };
  for (auto* values : target.values)
    for (const auto& run : runs) recv(values + run.at, run, MPI_DOUBLE, kValuesTag, 8);
  for (const auto& run : runs) recv(target.types + run.at, run, MPI_BYTE, kTypesTag, 1);
  send_command(command, {});
  Reply reply;
  bool replied = false, streaming = false;
  // Test and nap rather than MPI_Waitall: under mpi_yield_when_idle a blocking wait spins
  // through sched_yield, and the values come only once every compute rank has copied them.
  const int n = static_cast<int>(reqs.size());
  std::vector<int> done(reqs.size());
  std::vector<MPI_Status> st(reqs.size());
  std::size_t first = 0;  // receives before it have completed
  std::uint64_t ready = 0;
  bool short_data = false;
  const auto reply_cap = reply_nap_cap();
  for (auto nap = std::chrono::microseconds(20); !replied || first < reqs.size();) {
    if (!replied && poll_reply(reply)) {
      replied = true;
      nap = std::chrono::microseconds(20);
      if (!reply.ok) {
        for (auto& rq : reqs)
          if (rq != MPI_REQUEST_NULL) MPI_Cancel(&rq);
        MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
        throw ServiceError(ErrorCode::bad_argument, reply.message.empty() ? std::string("refused") : reply.message);
      }
      out.step = reply.step;
      out.time = reply.time;
      out.file = reply.file;
      // Written to the client while the rest arrives (codec none): the header and JSON
      // now, each array's bytes as their receives complete.
      streaming = stream != nullptr && stream->begin(out);
      if (streaming && ready > 0 && !short_data) stream->ready(ready);
    }
    int count = 0;
    MPI_Testsome(n, reqs.data(), &count, done.data(), st.data());
    for (int i = 0; i < count; ++i) {
      const auto k = static_cast<std::size_t>(done[static_cast<std::size_t>(i)]);
      int got = 0;
      MPI_Get_count(&st[static_cast<std::size_t>(i)], expect[k].type, &got);
      const bool in_place = slot && got == 0;  // no data: the rank wrote into the shared slot
      short_data = short_data || (!in_place && static_cast<std::uint64_t>(got) != expect[k].cells);
    }
    if (count > 0) std::atomic_thread_fence(std::memory_order_acquire);  // the ranks' stores before their messages
    const std::uint64_t before = ready;
    for (; first < reqs.size() && reqs[first] == MPI_REQUEST_NULL; ++first) ready += expect[first].bytes;
    if (count > 0) nap = std::chrono::microseconds(20);
    if (streaming && ready > before && !short_data) stream->ready(ready);
    if (count == 0 || count == MPI_UNDEFINED) {
      // Before the reply a running run may be up to a step from its boundary: naps up to
      // 2 ms (a paused one answers at once: 0.1 ms), the status followed meanwhile.
      if (!replied) drain_status();
      std::this_thread::sleep_for(nap);
      nap = std::min(2 * nap, replied ? std::chrono::microseconds(100) : reply_cap);
    }
  }
  if (short_data) {
    if (streaming) stream->abort(std::move(out));
    throw ServiceError(ErrorCode::internal, "live window: short data from a rank");
  }
  ++stats_.windows;
  if (slot) ++stats_.from_shared_memory;
  return out;
}

/// A free slot of at least `bytes`, marked busy; null when both are busy (slow clients
/// still reading) or the memory cannot be had: the window then goes through the reply's
/// own arrays. Core thread.
std::shared_ptr<Core::Slot> Core::take_slot(std::uint64_t bytes) {
  if (bytes > kPoolBytes || no_slots_) return nullptr;
  const std::lock_guard lock(pool_mutex_);
  std::shared_ptr<Slot>* spare = nullptr;
  for (auto& s : slots_) {
    if (s->busy.load()) continue;
    if (s->segment.bytes() >= bytes) {
      s->busy = true;
      return s;
    }
    spare = &s;
  }
  if (spare == nullptr && slots_.size() >= kPoolReplies) return nullptr;
  try {
    // Rounded up to 4 MiB, so that windows of about one size share one segment.
    auto s = std::make_shared<Slot>();
    s->segment = SharedSegment::create((bytes + (std::uint64_t{4} << 20) - 1) & ~((std::uint64_t{4} << 20) - 1));
    s->busy = true;
    if (spare != nullptr) *spare = s;  // the old one is unmapped once no reply holds it
    else slots_.push_back(s);
    return s;
  } catch (const std::system_error&) {
    no_slots_ = true;  // e.g. no memfd here: every window takes the MPI path
    return nullptr;
  }
}

class LiveService final : public col::Service {
 public:
  explicit LiveService(Core& core) : core_(core) {}
  col::ServerInfo info() override { return core_.info(); }
  std::vector<col::StepRecord> steps() override { return core_.steps(); }
  col::WindowReply window(const col::WindowRequest& r) override { return core_.window(r, nullptr); }
  col::WindowReply window(const col::WindowRequest& r, col::WindowStream* stream) override { return core_.window(r, stream); }
  void recycle(col::WindowReply&& reply) noexcept override { core_.recycle(std::move(reply)); }
  void release_kept() noexcept override { core_.release_pool(); }
  [[nodiscard]] std::vector<std::string> capabilities() const override {
    return {"info", "steps", "window", "status", "control", "parameters", "set", "branch"};
  }
  col::RunStatus status() override { return core_.status(); }
  col::ControlReply control(col::ControlAction a) override { return core_.control(a); }
  std::vector<col::ParameterInfo> parameters() override { return core_.parameters(); }
  col::SetReply set(const col::ParamValues& values) override { return core_.set(values); }
  col::BranchReply branch(const col::BranchRequest& b) override { return core_.branch(b); }

 private:
  Core& core_;
};

void keep_freed_memory() {
#ifdef __GLIBC__
  // Window after window allocates the same large arrays. By default glibc hands freed
  // memory above a few MiB back to the kernel, so every window paid first-touch page
  // faults again (docs/benchmarks.md "Live windows (online)"): keep up to 512 MiB of
  // freed memory for the next window.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace

CollectorStats run_collector(const RankLayout& layout, Selector selector, col::ServerInfo info,
                             col::ServerOptions options, const std::function<void(std::uint16_t)>& on_listen) {
  keep_freed_memory();
  info.live = true;
  Core core(layout, std::move(selector), std::move(info));
  LiveService service(core);
  col::Server server(service, std::move(options));
  core.set_server(&server);
  try {
    server.start();
  } catch (...) {
    // The run must not wait for a collector that cannot serve: stop it cleanly (it
    // writes its final checkpoint at its first boundary), release the other ranks, then
    // report.
    core.command(ControlCommand{Action::stop});
    core.loop(nullptr);
    throw;
  }
  if (on_listen) on_listen(server.port());
  core.loop(&server);
  CollectorStats stats = core.stats();
  stats.server = server.stats();
  return stats;
}

struct ThreadCollector::Impl {
  std::shared_ptr<ThreadChannel> channel = std::make_shared<ThreadChannel>();
  std::unique_ptr<Core> core;
  std::unique_ptr<LiveService> service;
  std::unique_ptr<col::Server> server;
  std::thread thread;
  CollectorStats stats;
};

ThreadCollector::ThreadCollector(col::ServerInfo info, col::ServerOptions options, int compute_size)
    : impl_(std::make_unique<Impl>()) {
  info.live = true;
  auto& im = *impl_;
  im.core = std::make_unique<Core>(im.channel, compute_size, std::move(info));
  im.service = std::make_unique<LiveService>(*im.core);
  im.server = std::make_unique<col::Server>(*im.service, std::move(options));
  im.core->set_server(im.server.get());
  im.server->start();  // throws before any thread of ours runs
  im.thread = std::thread([&im] { im.core->loop(im.server.get()); });
}

ThreadCollector::~ThreadCollector() {
  if (impl_ && impl_->thread.joinable()) impl_->thread.join();
}

std::shared_ptr<ThreadChannel> ThreadCollector::channel() const { return impl_->channel; }
std::uint16_t ThreadCollector::port() const { return impl_->server->port(); }

CollectorStats ThreadCollector::join() {
  auto& im = *impl_;
  if (im.thread.joinable()) im.thread.join();
  im.stats = im.core->stats();
  im.stats.server = im.server->stats();
  return im.stats;
}

}  // namespace rwd::live

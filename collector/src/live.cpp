// The live collector rank: see rewind/collector/live.hpp.
#include "rewind/collector/live.hpp"

#include <fmt/core.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <thread>

#include "rewind/collector/file_service.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/driver/live.hpp"
#include "rewind/driver/live_memory.hpp"
#include "rewind/mpi/backoff.hpp"
#include "rewind/nbserver/client.hpp"
#include "rewind/window/select.hpp"

namespace rwd::collector {

namespace {

using json = nlohmann::json;

class Core {
 public:
  Core(const LiveLayout& layout, ServerInfo info)
      : layout_(layout), info_(std::move(info)), nb_(layout.service, layout.nbserver, -1) {
    pool_.reserve(kPoolReplies);  // recycle() does not allocate
  }

  /// Runs `f` on the main thread and returns its result (or rethrows). Called by the
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

  /// The main thread's loop: runs jobs and follows the run's status until it ends.
  void loop(Server* server) {
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
    command({{"op", "bye"}});
    nb_.shutdown_one();
  }

  ServerInfo info() {
    std::lock_guard lock(mutex_);
    ServerInfo i = info_;
    i.files = files_;
    return i;
  }

  std::vector<StepRecord> steps() {
    return post([this] {
      return with_files([](FileService& fs) { return fs.steps(); });
    });
  }

  WindowReply window(const WindowRequest& r, WindowStream* stream) {
    if (r.time != "live") {
      return post([this, r] {
        return with_files([&](FileService& fs) {
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

  RunStatus status() {
    std::lock_guard lock(mutex_);
    RunStatus s;
    s.state = parse_run_state(status_.value("state", std::string("running"))).value_or(RunState::running);
    s.step = status_.value("step", std::int64_t{0});
    s.time = status_.value("time", 0.0);
    s.steps_per_second = s.state == RunState::running && std::isfinite(rate_) && rate_ > 0 ? rate_ : 0.0;
    s.file = status_.value("file", std::string());
    s.parent = status_.value("parent", std::string());
    s.ranks = static_cast<std::uint32_t>(layout_.compute_size);
    s.clients = server_ ? static_cast<std::uint32_t>(server_->stats().open) : 0;
    return s;
  }

  ControlReply control(ControlAction a) {
    const json r = steer({{"op", to_string(a)}});
    ControlReply out;
    out.state = parse_run_state(r.value("state", std::string("running"))).value_or(RunState::running);
    out.step = r.value("step", std::int64_t{0});
    out.time = r.value("time", 0.0);
    return out;
  }

  std::vector<ParameterInfo> parameters() {
    const json r = steer({{"op", "parameters"}});
    std::vector<ParameterInfo> out;
    for (const auto& p : r.at("parameters")) {
      ParameterInfo q;
      q.name = p.at("name").get<std::string>();
      const auto v = p.at("value").get<std::vector<double>>();
      if (p.value("vector", false) && v.size() == 3) q.value = std::array<double, 3>{v[0], v[1], v[2]};
      else q.value = v.empty() ? 0.0 : v[0];
      q.unit = p.value("unit", std::string());
      q.min = p.value("min", 0.0);
      q.max = p.value("max", 0.0);
      q.description = p.value("description", std::string());
      out.push_back(std::move(q));
    }
    return out;
  }

  SetReply set(const ParamValues& values) {
    const json r = steer({{"op", "set"}, {"values", to_json(values)}});
    SetReply out;
    out.step = r.value("step", std::int64_t{0});
    out.time = r.value("time", 0.0);
    out.values = values;
    return out;
  }

  BranchReply branch(const BranchRequest& b) {
    std::string file = b.file;
    if (file.empty()) {
      std::lock_guard lock(mutex_);
      file = status_.value("file", std::string());
    }
    if (file.empty()) throw ServiceError(ErrorCode::conflict, "the run writes no file to branch from");
    const json r = steer({{"op", "branch"}, {"from", file + "@" + b.from}, {"values", to_json(b.values)},
                          {"output", b.output}});
    BranchReply out;
    out.file = r.value("file", std::string());
    out.parent = r.value("parent", std::string());
    out.step = r.value("step", std::int64_t{0});
    out.time = r.value("time", 0.0);
    {
      // The run is on the branch now; its own status says so only at its next boundary,
      // and a client asking at once must not see the file it left.
      std::lock_guard lock(mutex_);
      status_["file"] = out.file;
      status_["parent"] = out.parent;
      status_["step"] = out.step;
      status_["time"] = out.time;
    }
    return out;
  }

  void set_server(Server* s) { server_ = s; }
  [[nodiscard]] LiveStats stats() const { return stats_; }

  /// Keeps the arrays of a written reply for the next live window (I/O thread).
  void recycle(WindowReply&& w) noexcept {
    if (w.shared) return;  // its slot is free again once the reply is gone
    std::uint64_t bytes = w.cell_type.capacity();
    for (const auto& v : w.values) bytes += 8 * v.capacity();
    const std::lock_guard lock(pool_mutex_);
    if (pool_.size() < kPoolReplies && bytes <= kPoolBytes) pool_.push_back(std::move(w));
  }

  /// Frees the kept replies (their arrays); the shared slots stay (at most two).
  void release_pool() noexcept {
    const std::lock_guard lock(pool_mutex_);
    pool_.clear();  // keeps the capacity reserved for recycle()
  }

  /// A command to the compute ranks, answered at their next boundary. Main thread.
  json command(const json& c) {
    Pending p = send_command(c);
    // The answer comes at the run's next step boundary, up to a whole step away: poll
    // often at first (a paused run answers at once), then back off to 2 ms.
    json reply;
    mpi::wait_until(
        [&] {
          if (poll_reply(p, reply)) return true;
          drain_status();
          return false;
        },
        {.spin = std::chrono::microseconds(0), .first = std::chrono::microseconds(50), .cap = reply_nap_cap()});
    return reply;
  }

 private:
  struct Pending {
    std::string text;
    MPI_Request sent = MPI_REQUEST_NULL;
  };

  Pending send_command(const json& c) {
    Pending p{c.dump(), MPI_REQUEST_NULL};
    // Not MPI_Send: a window's command (its piece list) is beyond the eager limit, so a
    // blocking send waited for the root's receive at its next step boundary, spinning
    // through sched_yield for up to a whole step (most of the collector's CPU, taken
    // from the compute ranks on a shared node). The reply can only follow the receive.
    MPI_Isend(p.text.data(), static_cast<int>(p.text.size()), MPI_CHAR, layout_.first_compute, driver::kLiveCommandTag,
              layout_.service, &p.sent);
    return p;
  }

  /// The longest nap while a command's reply is due: a running run answers at its next
  /// boundary (up to a step away), a paused one at once.
  std::chrono::microseconds reply_nap_cap() {
    const std::lock_guard lock(mutex_);
    return status_.value("state", std::string()) == "paused" ? std::chrono::microseconds(100)
                                                             : std::chrono::microseconds(2000);
  }

  /// The next JSON message from the compute root with `tag`, if one has come.
  std::optional<json> try_receive(int tag) {
    const int root = layout_.first_compute;
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(root, tag, layout_.service, &flag, &st);
    if (!flag) return std::nullopt;
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string s(static_cast<std::size_t>(n), '\0');
    MPI_Recv(s.data(), n, MPI_CHAR, root, tag, layout_.service, MPI_STATUS_IGNORE);
    return json::parse(s);
  }

  /// The reply to `p`, if it has come: true and `reply` set.
  bool poll_reply(Pending& p, json& reply) {
    auto r = try_receive(driver::kLiveReplyTag);
    if (!r) return false;
    MPI_Wait(&p.sent, MPI_STATUS_IGNORE);  // complete: the root has received it
    reply = std::move(*r);
    return true;
  }

  void drain_status() {
    while (auto status = try_receive(driver::kLiveStatusTag)) {
      json j = std::move(*status);
      std::lock_guard lock(mutex_);
      // Steps per second over the last second or more of wall time.
      const double wall = j.value("wall", 0.0);
      const auto steps = j.value("steps", std::int64_t{0});
      if (wall - rate_wall_ >= 1.0) {
        rate_ = static_cast<double>(steps - rate_steps_) / (wall - rate_wall_);
        rate_wall_ = wall;
        rate_steps_ = steps;
      }
      if (j.value("state", "") == "paused") rate_ = 0.0;
      files_ = j.value("files", std::vector<std::string>{});
      finished_ = j.value("state", "") == "finished";
      status_ = std::move(j);
    }
  }

  // Past steps come from the files, read while the compute ranks hold at a boundary.
  template <class F>
  auto with_files(F f) -> decltype(f(std::declval<FileService&>())) {
    std::vector<std::string> files;
    bool running = false;
    {
      std::lock_guard lock(mutex_);
      files = files_;
      running = !finished_;
    }
    if (files.empty()) throw ServiceError(ErrorCode::no_such_step, "the run writes no file (output.file is empty)");
    if (running) expect_ok(command({{"op", "hold"}}));
    try {
      FileService fs(files);
      auto out = f(fs);
      if (running) expect_ok(command({{"op", "release"}}));
      return out;
    } catch (...) {
      if (running) command({{"op", "release"}});
      throw;
    }
  }

  static json to_json(const ParamValues& values) {
    json j = json::object();
    for (const auto& [name, v] : values) {
      if (const auto* d = std::get_if<double>(&v)) j[name] = std::vector<double>{*d};
      else {
        const auto& a = std::get<std::array<double, 3>>(v);
        j[name] = std::vector<double>{a[0], a[1], a[2]};
      }
    }
    return j;
  }

  // A steering command, answered at the compute ranks' next boundary: refused with
  // conflict once the run has ended, bad_argument for a value the run refuses.
  json steer(const json& c) {
    return post([this, c] {
      json r = command(c);
      drain_status();  // what the root sent before its reply: a status read next is not older
      if (!r.value("ok", false)) {
        const auto msg = r.value("message", std::string("refused"));
        throw ServiceError(msg.find("has finished") != std::string::npos ? ErrorCode::conflict : ErrorCode::bad_argument,
                           msg);
      }
      return r;
    });
  }

  static json expect_ok(json r) {
    if (!r.value("ok", false)) throw ServiceError(ErrorCode::bad_argument, r.value("message", std::string("refused")));
    return r;
  }

  WindowReply live_window(const WindowRequest& r, WindowStream* stream) {
    nbserver::WindowRequest q;
    q.box = spacetree::Box{r.lo, r.hi};
    q.budget = static_cast<std::int64_t>(r.budget);
    const auto sel = nb_.select_window(q);
    json pieces = json::array();
    for (const auto& p : sel.pieces)
      pieces.push_back({p.uid.raw(), p.owner, p.first[0], p.first[1], p.first[2], p.count[0], p.count[1], p.count[2],
                        p.stride});
    WindowReply out;
    out.level = sel.level;
    out.stride = sel.stride;
    out.lo = sel.covered.lo;
    out.hi = sel.covered.hi;
    out.variables = r.variables;
    std::vector<std::uint64_t> offset(sel.pieces.size() + 1, 0);
    for (std::size_t i = 0; i < sel.pieces.size(); ++i) {
      const auto& p = sel.pieces[i];
      Piece piece;
      piece.row = -1;
      piece.uid = p.uid.raw();
      window::copy_placement(p, piece);
      offset[i + 1] = offset[i] + piece.cells();
      out.pieces.push_back(piece);
    }
    out.cells = offset.back();
    // Where the values go. A streamed reply (codec none) goes to the socket as it is:
    // its arrays live in a slot shared with the compute ranks of this node, which
    // extract their cells straight into it (driver/live.hpp, "Shared memory"), so the
    // values are copied once on this side. Otherwise, and when no slot is free, the
    // arrays of an earlier reply, if the server has handed one back (no zero fill, no
    // fresh pages). Every cell is overwritten below.
    const std::size_t nv = r.variables.size();
    std::vector<double*> values_at(nv);
    std::uint8_t* types_at = nullptr;
    std::shared_ptr<Slot> slot = stream != nullptr ? take_slot(out.cells * (8 * nv + 1)) : nullptr;
    if (slot) {
      auto* base = slot->segment.data();
      auto arrays = std::make_shared<WindowReply::SharedArrays>();
      for (std::size_t v = 0; v < nv; ++v) {
        values_at[v] = reinterpret_cast<double*>(base) + v * out.cells;
        arrays->values.emplace_back(values_at[v], out.cells);
      }
      types_at = reinterpret_cast<std::uint8_t*>(base) + nv * out.cells * 8;
      arrays->cell_type = {types_at, out.cells};
      arrays->keep = std::shared_ptr<const void>(slot.get(), [slot](const void*) { slot->busy = false; });
      out.shared = std::move(arrays);
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
        values_at[v] = out.values[v].data();
      }
      out.cell_type.resize(out.cells);
      types_at = out.cell_type.data();
    }
    // The compute ranks send their pieces' cells run by run (driver/live.hpp): each
    // message is received straight into its place in the reply's arrays. The sizes and
    // places follow from the selection, so every receive is posted at once (no rank's
    // send waits while another's values are copied).
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
    // Every message lands in one contiguous stretch of the frame's arrays (values[0]
    // run by run, values[1], ..., cell_type): posted in that order, the receives that
    // have completed from the first on are bytes a streamed reply can send.
    struct Expect {
      std::uint64_t cells, bytes;
      MPI_Datatype type;
    };
    std::vector<MPI_Request> reqs;
    std::vector<Expect> expect;
    reqs.reserve(runs.size() * (r.variables.size() + 1));
    const auto recv = [&](void* at, const Run& run, MPI_Datatype type, int tag, std::uint64_t size) {
      reqs.emplace_back();
      expect.push_back({run.cells, run.cells * size, type});
      MPI_Irecv(at, static_cast<int>(run.cells), type, layout_.first_compute + run.owner, tag, layout_.service, &reqs.back());
    };
    for (auto* values : values_at)
      for (const auto& run : runs) recv(values + run.at, run, MPI_DOUBLE, driver::kLiveValuesTag, 8);
    for (const auto& run : runs) recv(types_at + run.at, run, MPI_BYTE, driver::kLiveTypesTag, 1);
    // The receives are posted before the command goes: the compute ranks' values flow as
    // soon as each rank has copied them, not after the collector has seen the command's
    // reply (traced: the values of a paused large window waited about 3 ms for it). A
    // refused command sends no values: its receives are cancelled.
    json command = {{"op", "window"}, {"vars", r.variables}, {"pieces", std::move(pieces)}, {"slots", slot_tokens()}};
    if (slot) {
      const auto& name = slot->segment.name();
      command["shm"] = {{"node", name.node}, {"pid", name.pid}, {"fd", name.fd}, {"token", name.token}, {"bytes", name.bytes}};
    }
    Pending cmd = send_command(command);
    json reply;
    bool replied = false, streaming = false;
    // Test and nap rather than MPI_Waitall: under mpi_yield_when_idle a blocking wait
    // spins through sched_yield, and the values come only once every compute rank has
    // copied them (on a shared node: once they get a core), so it spun for most of that.
    const int n = static_cast<int>(reqs.size());
    std::vector<int> done(reqs.size());
    std::vector<MPI_Status> st(reqs.size());
    std::size_t first = 0;  // receives before it have completed
    std::uint64_t ready = 0;
    bool short_data = false;
    const auto reply_cap = reply_nap_cap();
    for (auto nap = std::chrono::microseconds(20); !replied || first < reqs.size();) {
      if (!replied && poll_reply(cmd, reply)) {
        replied = true;
        nap = std::chrono::microseconds(20);
        if (!reply.value("ok", false)) {
          for (auto& rq : reqs)
            if (rq != MPI_REQUEST_NULL) MPI_Cancel(&rq);
          MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
          throw ServiceError(ErrorCode::bad_argument, reply.value("message", std::string("refused")));
        }
        out.step = reply.at("step").get<std::int64_t>();
        out.time = reply.at("time").get<double>();
        out.file = reply.value("file", std::string());
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
        // No data: the rank wrote its cells into the shared slot itself.
        const bool in_place = slot && got == 0;
        short_data = short_data || (!in_place && static_cast<std::uint64_t>(got) != expect[k].cells);
      }
      if (count > 0) std::atomic_thread_fence(std::memory_order_acquire);  // the ranks' stores before their messages
      const std::uint64_t before = ready;
      for (; first < reqs.size() && reqs[first] == MPI_REQUEST_NULL; ++first) ready += expect[first].bytes;
      if (count > 0) nap = std::chrono::microseconds(20);
      if (streaming && ready > before && !short_data) stream->ready(ready);
      if (count == 0 || count == MPI_UNDEFINED) {
        // Before the reply a running run may be up to a step from its boundary: naps up
        // to 2 ms (a paused one answers at once: 0.1 ms),
        // the status followed meanwhile; after it the values are on their way.
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

  /// A segment shared with the compute ranks of this node (driver/live_memory.hpp),
  /// holding one reply's arrays while a connection writes them.
  struct Slot {
    driver::SharedSegment segment;
    std::atomic<bool> busy{false};
  };

  /// A free slot of at least `bytes`, marked busy; null when both are busy (slow
  /// clients still reading) or the memory cannot be had: the window then goes through
  /// the reply's own arrays. Main thread.
  std::shared_ptr<Slot> take_slot(std::uint64_t bytes) {
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
      s->segment = driver::SharedSegment::create((bytes + (std::uint64_t{4} << 20) - 1) & ~((std::uint64_t{4} << 20) - 1));
      s->busy = true;
      if (spare != nullptr) *spare = s;  // the old one is unmapped once no reply holds it
      else slots_.push_back(s);
      return s;
    } catch (const std::system_error&) {
      no_slots_ = true;  // e.g. no memfd here: every window takes the MPI path
      return nullptr;
    }
  }

  /// The tokens of the slots the compute ranks may keep mapped.
  std::vector<std::uint64_t> slot_tokens() {
    const std::lock_guard lock(pool_mutex_);
    std::vector<std::uint64_t> out;
    for (const auto& s : slots_) out.push_back(s->segment.name().token);
    return out;
  }

  LiveLayout layout_;
  ServerInfo info_;
  LiveStats stats_;  ///< main thread
  Server* server_ = nullptr;
  nbserver::Client nb_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool closed_ = false, finished_ = false;
  json status_ = json::object();
  std::vector<std::string> files_;
  double rate_ = 0.0, rate_wall_ = 0.0;
  std::int64_t rate_steps_ = 0;
  static constexpr std::size_t kPoolReplies = 2;
  static constexpr std::uint64_t kPoolBytes = std::uint64_t{256} << 20;  ///< per kept reply
  std::mutex pool_mutex_;
  std::vector<WindowReply> pool_;  ///< written replies whose arrays the next windows reuse
  std::vector<std::shared_ptr<Slot>> slots_;  ///< at most kPoolReplies
  bool no_slots_ = false;                     ///< creating one failed: not tried again
};

class LiveService final : public Service {
 public:
  explicit LiveService(Core& core) : core_(core) {}
  ServerInfo info() override { return core_.info(); }
  std::vector<StepRecord> steps() override { return core_.steps(); }
  WindowReply window(const WindowRequest& r) override { return core_.window(r, nullptr); }
  WindowReply window(const WindowRequest& r, WindowStream* stream) override { return core_.window(r, stream); }
  void recycle(WindowReply&& reply) noexcept override { core_.recycle(std::move(reply)); }
  void release_kept() noexcept override { core_.release_pool(); }
  [[nodiscard]] std::vector<std::string> capabilities() const override {
    return {"info", "steps", "window", "status", "control", "parameters", "set", "branch"};
  }
  RunStatus status() override { return core_.status(); }
  ControlReply control(ControlAction a) override { return core_.control(a); }
  std::vector<ParameterInfo> parameters() override { return core_.parameters(); }
  SetReply set(const ParamValues& values) override { return core_.set(values); }
  BranchReply branch(const BranchRequest& b) override { return core_.branch(b); }

 private:
  Core& core_;
};

}  // namespace

LiveStats run_live_collector(const LiveLayout& layout, ServerInfo info, ServerOptions options,
                               const std::function<void(std::uint16_t)>& on_listen) {
#ifdef __GLIBC__
  // Window after window allocates the same large arrays. By default glibc hands freed
  // memory above a few MiB back to the kernel, so every window paid first-touch page
  // faults again (host faults at ~0.4 GB/s on a VM that reports freed pages; 50-130 ms
  // of a 33 MB window, docs/benchmarks.md "Live windows (online)"). This process is the
  // collector alone: keep up to 512 MiB of freed memory for the next window.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  info.live = true;
  Core core(layout, std::move(info));
  LiveService service(core);
  Server server(service, std::move(options));
  core.set_server(&server);
  try {
    server.start();
  } catch (...) {
    // The run must not wait for a collector that cannot serve: stop it cleanly (it
    // writes its final checkpoint at its first boundary), release the other ranks,
    // then report.
    core.command({{"op", "stop"}});
    core.loop(nullptr);
    throw;
  }
  if (on_listen) on_listen(server.port());
  core.loop(&server);
  LiveStats stats = core.stats();
  stats.server = server.stats();
  return stats;
}

}  // namespace rwd::collector

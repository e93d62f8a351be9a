// The live relay (relay.hpp): one core for a collector rank and for a collector thread
// of compute rank 0.
#include "rewind/live/relay.hpp"

#include "rewind/collector/freed_memory.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "channel.hpp"
#include "compute_link.hpp"
#include "job_queue.hpp"
#include "reply_slots.hpp"
#include "rewind/collector/file_service.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/live/messages.hpp"
#include "rewind/spacetree/partition.hpp"
#include "window_gather.hpp"

namespace rwd::live {

namespace {

namespace col = rwd::collector;
using Bytes = std::vector<std::byte>;
using col::ErrorCode;
using col::ServiceError;

// One core for a collector rank and for a collector thread of compute rank 0: the
// service's calls, run on the core thread through the queue of jobs (job_queue.hpp), to
// the compute ranks through the link (compute_link.hpp); a live window's cells gathered
// by window_gather.hpp into arrays reply_slots.hpp keeps.
class Core {
 public:
  /// Rank mode: the compute root is service rank layout.first_compute.
  Core(const RankLayout& layout, Selector selector, col::ServerInfo info)
      : link_(layout), selector_(std::move(selector)), info_(std::move(info)) {}
  /// Thread mode: the compute root is this process's main thread, behind `channel`.
  Core(std::shared_ptr<ThreadChannel> channel, int compute_size, col::ServerInfo info)
      : link_(std::move(channel), compute_size), info_(std::move(info)) {}

  /// The core thread's loop: runs jobs and follows the run's status until it ends.
  void loop(col::Server* server) {
    col::prefer_short_slices();  // wakes at once for a reply or a variable, beside busy ranks
    std::function<void()> job;
    for (;;) {
      link_.drain_status();
      if (!jobs_.next(job, std::chrono::milliseconds(2), link_.finished())) break;
      if (job) job();
    }
    if (server) server->stop();  // the worker is idle: no job is queued or running
    command(Bye{});
  }

  col::ServerInfo info() {
    col::ServerInfo i = info_;
    i.files = link_.status().first.files;
    return i;
  }

  std::vector<col::StepRecord> steps() {
    return jobs_.post([this] { return with_files([](col::FileService& fs) { return fs.steps(); }); });
  }

  col::WindowReply window(const col::WindowRequest& r, col::WindowStream* stream) {
    if (r.time == "live")
      return jobs_.post([this, r, stream] {
        auto q = r;
        const auto now = link_.status().first;  // of several futures, the first running unless one is named
        if (q.file.empty() && now.futures.size() > 1) {
          const auto f = std::find_if(now.futures.begin(), now.futures.end(),
                                      [](const FutureStatus& x) { return x.state != col::RunState::finished; });
          q.file = f != now.futures.end() ? f->file : now.file;
        }
        return gather_.gather(select(q), q, stream);
      });
    return jobs_.post([this, r] {
      return with_files([&](col::FileService& fs) {
        try {
          return fs.window(r);
        } catch (const ServiceError& e) {
          if (e.code() != ErrorCode::no_such_step) throw;
          const auto now = link_.status().first;  // a time not reached yet: say where the job is
          throw ServiceError(e.code(), fmt::format("{}; the running job is at step {} (t = {:.6g}): ask for time "
                                                   "\"live\"",
                                                   e.what(), now.step, now.time));
        }
      });
    });
  }

  col::RunStatus status() {
    const auto [now, rate] = link_.status();
    col::RunStatus s;
    s.state = now.state;
    s.step = now.step;
    s.time = now.time;
    s.steps_per_second = s.state == col::RunState::running && std::isfinite(rate) && rate > 0 ? rate : 0.0;
    s.file = now.file;
    s.parent = now.parent;
    s.ranks = static_cast<std::uint32_t>(link_.layout().compute_size);
    s.clients = server_ ? static_cast<std::uint32_t>(server_->stats().open) : 0;
    for (const auto& f : now.futures) {
      col::FutureStatus o{f.file,
                          f.parent,
                          f.state,
                          f.step,
                          f.time,
                          0.0,
                          f.changes,
                          static_cast<std::uint32_t>(f.first_rank),
                          static_cast<std::uint32_t>(f.ranks)};
      // Its rate since it started (a future's own; the job's above is over the last second).
      if (o.state == col::RunState::running && f.wall > 0 && std::isfinite(f.wall))
        o.steps_per_second = static_cast<double>(f.steps) / f.wall;
      s.futures.push_back(std::move(o));
    }
    return s;
  }

  col::ControlReply control(col::ControlAction a, const std::string& file) {
    const Reply r = steer(ControlCommand{a, file});
    // The reply is the newest word on the run's state (steer drained every status sent
    // before it); the run's own status says so only at its next boundary, and a client
    // asking at once after a resume must not read "paused".
    link_.update_status([&](Status& s) {
      for (auto& f : s.futures)
        if ((file.empty() || f.file == r.file) && f.state != col::RunState::finished) f.state = r.state;
      if (!file.empty() && s.futures.size() > 1) return;  // one future of several: the job's state stays
      s.state = r.state;
      s.step = r.step;
      s.time = r.time;
    });
    return {r.state, r.step, r.time};
  }

  std::vector<col::ParameterInfo> parameters() { return steer(ParametersQuery{}).parameters; }

  col::SetReply set(const col::ParamValues& values, const std::string& file) {
    const Reply r = steer(SetCommand{values, file});
    col::SetReply out;
    out.step = r.step;
    out.time = r.time;
    out.values = values;
    return out;
  }

  col::BranchReply branch(const col::BranchRequest& b) {
    const std::string file = b.file.empty() ? link_.status().first.file : b.file;
    if (file.empty()) throw ServiceError(ErrorCode::conflict, "the run writes no file to branch from");
    // No file asked: "@SEL", a step on the timeline of the file being written (through its
    // parents; driver/src/live.cpp on_timeline).
    BranchCommand c{(b.file.empty() ? "" : file) + "@" + b.from, {}};
    if (b.futures.empty()) c.futures.push_back({b.values, b.output});
    for (const auto& f : b.futures) c.futures.push_back({f.values, f.output});
    const Reply r = steer(c);
    col::BranchReply out{r.file, r.parent, r.step, r.time, r.files};
    // The run is on the branch now; its own status says so only at its next boundary,
    // and a client asking at once must not see the file it left.
    link_.update_status([&](Status& s) {
      s.file = out.file;
      s.parent = out.parent;
      s.step = out.step;
      s.time = out.time;
    });
    return out;
  }

  void set_server(col::Server* s) { server_ = s; }
  [[nodiscard]] RelayStats stats() const { return stats_; }
  ReplySlots& slots() { return slots_; }

  /// A command to the compute ranks, answered at their next boundary. Core thread.
  Reply command(const Command& c) { return link_.command(c); }

 private:
  // Past steps come from the files, read while the compute ranks hold at a boundary (in
  // thread mode rank 0's main thread then waits in the link: no HDF5 call meets ours).
  template <class F>
  auto with_files(F f) -> decltype(f(std::declval<col::FileService&>())) {
    // Right after the start the job has not yet said which files it writes (its first
    // boundary does): a query then waits for that, not "the run writes no file".
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!link_.described() && !link_.finished() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      link_.drain_status();
    }
    const std::vector<std::string> files = link_.status().first.files;
    const bool running = !link_.finished();
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
    return jobs_.post([this, c] {
      Reply r = command(c);
      link_.drain_status();  // what the root sent before its reply: a status read next is not older
      if (!r.ok) {
        throw ServiceError(
            r.message.find("has finished") != std::string::npos ? ErrorCode::conflict : ErrorCode::bad_argument,
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
    if (r.lod == "adaptive" && !r.variables.empty()) return select_adaptive(r, w);
    if (selector_) return on_group(selector_(w), r.file);
    const auto tree = link_.tree(r.file);
    if (!tree) throw ServiceError(ErrorCode::internal, "the run has not described its tree yet; ask again");
    return live::select(*tree, w);
  }

  // The neighbourhood server's selection names the grids' ranks in the job's partition; a
  // future forked onto a group of the compute ranks holds them on its group, the job's
  // consecutive pieces joined (spacetree::join_ranks, driver/src/groups.hpp).
  Selection on_group(Selection s, const std::string& file) {
    const auto now = link_.status().first;
    const int ranks = link_.layout().compute_size;
    const auto f = std::find_if(now.futures.begin(), now.futures.end(),
                                [&](const FutureStatus& x) { return x.file == (file.empty() ? now.file : file); });
    if (f == now.futures.end() || f->ranks >= ranks || f->ranks < 1) return s;
    for (auto& p : s.pieces) p.owner = f->first_rank + spacetree::joined_rank(p.owner, ranks, f->ranks);
    return s;
  }

  /// The details an adaptive window of the live state ranks grids by: one variable's, of
  /// every grid of one future's state, on the tree they were computed on.
  struct Details {
    std::string var, file;
    std::int64_t step = -1;
    std::shared_ptr<const TreeSnapshot> tree;
    std::vector<double> by_row;  ///< empty: a step would store no statistics (uniform rule)
    std::vector<double> shares;  ///< by row, max_children each; empty: none (whole grids)
  };

  // An adaptive window of the live state: the details of its first variable from the
  // compute ranks (their next boundary; at once when paused), computed by the writer's
  // code, on the tree they send with them. Kept while the run stays paused at their step
  // (a client looking around a paused step asks once); a running job's are asked anew.
  Selection select_adaptive(const col::WindowRequest& r, window::Window w) {
    w.lod = window::Lod::adaptive;
    const std::string& var = r.variables.front();
    const auto now = link_.status().first;
    const bool still = now.state != col::RunState::running && details_ && details_->var == var &&
                       details_->file == r.file && details_->step == now.step && details_->tree == link_.tree(r.file);
    if (!still) {
      details_.reset();
      const Reply rep = expect_ok(command(DetailsCommand{var, r.file}));
      link_.drain_status();  // the tree, sent before the reply
      Details d{var, r.file, rep.step, link_.tree(rep.file), {}, {}};
      if (!d.tree) throw ServiceError(ErrorCode::internal, "the run sent details without its tree; ask again");
      if (!rep.uids.empty()) {
        std::unordered_map<std::uint64_t, std::size_t> of;  // uid -> its index in the reply
        of.reserve(rep.uids.size());
        for (std::size_t i = 0; i < rep.uids.size(); ++i) of.emplace(rep.uids[i], i);
        const auto& uid = d.tree->topo.uid;
        const std::size_t per = rep.shares.size() / rep.uids.size();
        if (per != 0 && per != static_cast<std::size_t>(d.tree->topo.max_children))
          throw ServiceError(ErrorCode::internal, "the run's shares do not fit its tree; ask again");
        d.by_row.resize(uid.size());
        d.shares.resize(uid.size() * per);
        for (std::size_t i = 0; i < uid.size(); ++i) {
          const auto it = of.find(uid[i]);
          if (it == of.end() || of.size() != uid.size())
            throw ServiceError(ErrorCode::internal, "the run's tree changed while its details came; ask again");
          d.by_row[i] = rep.details[it->second];
          std::copy_n(rep.shares.begin() + static_cast<std::ptrdiff_t>(it->second * per), per,
                      d.shares.begin() + static_cast<std::ptrdiff_t>(i * per));
        }
      }
      details_ = std::move(d);
    }
    return live::select(*details_->tree, w, details_->by_row, details_->shares);
  }

  ComputeLink link_;
  JobQueue jobs_;
  std::optional<Details> details_;  ///< core thread
  ReplySlots slots_;
  RelayStats stats_;  ///< core thread
  WindowGather gather_{link_, slots_, stats_};
  Selector selector_;
  col::ServerInfo info_;
  col::Server* server_ = nullptr;
};

class LiveService final : public col::Service {
 public:
  explicit LiveService(Core& core) : core_(core) {}
  col::ServerInfo info() override { return core_.info(); }
  std::vector<col::StepRecord> steps() override { return core_.steps(); }
  col::WindowReply window(const col::WindowRequest& r) override { return core_.window(r, nullptr); }
  col::WindowReply window(const col::WindowRequest& r, col::WindowStream* stream) override {
    return core_.window(r, stream);
  }
  void recycle(col::WindowReply&& reply) noexcept override { core_.slots().recycle(std::move(reply)); }
  void release_kept() noexcept override { core_.slots().release_pool(); }
  [[nodiscard]] std::vector<std::string> capabilities() const override {
    return {"info", "steps", "window", "status", "control", "parameters", "set", "branch"};
  }
  col::RunStatus status() override { return core_.status(); }
  col::ControlReply control(col::ControlAction a, const std::string& file) override { return core_.control(a, file); }
  std::vector<col::ParameterInfo> parameters() override { return core_.parameters(); }
  col::SetReply set(const col::ParamValues& values, const std::string& file) override {
    return core_.set(values, file);
  }
  col::BranchReply branch(const col::BranchRequest& b) override { return core_.branch(b); }

 private:
  Core& core_;
};

}  // namespace

RelayStats run_relay(const RankLayout& layout, Selector selector, col::ServerInfo info, col::ServerOptions options,
                     const std::function<void(std::uint16_t)>& on_listen) {
  // Up to 512 MiB of freed reply memory stays mapped for the next window.
  col::keep_freed_memory(std::uint64_t{256} << 20);
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
    core.command(ControlCommand{col::ControlAction::stop, ""});
    core.loop(nullptr);
    throw;
  }
  if (on_listen) on_listen(server.port());
  core.loop(&server);
  RelayStats stats = core.stats();
  stats.server = server.stats();
  return stats;
}

Selector remembering(Selector select, std::size_t keep) {
  using Answered = std::deque<std::pair<window::Window, Selection>>;  // newest first
  return [select = std::move(select), keep, last = std::make_shared<Answered>()](const window::Window& w) {
    const auto hit = std::find_if(last->begin(), last->end(), [&](const auto& e) {
      const window::Window& a = e.first;
      return a.box.lo == w.box.lo && a.box.hi == w.box.hi && a.budget == w.budget && a.max_level == w.max_level;
    });
    if (hit != last->end()) {
      std::rotate(last->begin(), hit, hit + 1);  // to the front
      return last->front().second;
    }
    Selection s = select(w);  // a refusal (an exception) is not remembered
    last->emplace_front(w, s);
    if (last->size() > keep) last->pop_back();
    return s;
  };
}

struct RelayThread::Impl {
  std::shared_ptr<ThreadChannel> channel = std::make_shared<ThreadChannel>();
  std::unique_ptr<Core> core;
  std::unique_ptr<LiveService> service;
  std::unique_ptr<col::Server> server;
  std::thread thread;
  RelayStats stats;
};

RelayThread::RelayThread(col::ServerInfo info, col::ServerOptions options, int compute_size)
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

RelayThread::~RelayThread() {
  if (impl_ && impl_->thread.joinable()) impl_->thread.join();
}

std::shared_ptr<ThreadChannel> RelayThread::channel() const { return impl_->channel; }
std::uint16_t RelayThread::port() const { return impl_->server->port(); }

RelayStats RelayThread::join() {
  auto& im = *impl_;
  if (im.thread.joinable()) im.thread.join();
  im.stats = im.core->stats();
  im.stats.server = im.server->stats();
  return im.stats;
}

}  // namespace rwd::live

#include "rewind/driver/live.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rewind/driver/steering.hpp"
#include "rewind/mpi/backoff.hpp"
#include "rewind/window/select.hpp"

namespace rwd::driver {

namespace {

using json = nlohmann::json;

void send_text(MPI_Comm c, int dest, int tag, const std::string& s) {
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, dest, tag, c);
}

// A paused or held run may wait for its next command for minutes. Blocking MPI calls
// would spin through sched_yield under mpi_yield_when_idle the whole time, taking the
// cores of a shared node from the collector and its clients (on the 2-core benchmark VM
// two paused compute ranks kept both busy), so those waits poll with a back-off
// (50 us -> 1 ms; until `warm`, shortly after a command, when the next one is likely
// soon: 50 us of spinning, then 20 us -> 0.1 ms) instead. `test` returns true once done.
using Clock = std::chrono::steady_clock;
template <class Test>
void wait_napping(Test test, Clock::time_point warm) {
  using std::chrono::microseconds;
  const bool is_warm = Clock::now() < warm;
  mpi::wait_until(test, {.spin = microseconds(is_warm ? 50 : 0), .first = microseconds(is_warm ? 20 : 50),
                         .cap = microseconds(1000), .warm_cap = microseconds(100), .warm_until = warm});
}

std::string recv_text(MPI_Comm c, int src, int tag, Clock::time_point warm) {
  MPI_Status st;
  wait_napping([&] {
    int flag = 0;
    MPI_Iprobe(src, tag, c, &flag, &st);
    return flag != 0;
  }, warm);
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  std::string s(static_cast<std::size_t>(n), '\0');
  MPI_Recv(s.data(), n, MPI_CHAR, src, tag, c, MPI_STATUS_IGNORE);
  return s;
}

// `idle`: the root may take long to have a command (see wait_napping); else the ranks
// meet at a step boundary and a blocking broadcast is the fastest.
void bcast_text(MPI_Comm c, std::string& s, bool idle, Clock::time_point warm) {
  long long n = static_cast<long long>(s.size());
  if (idle) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibcast(&n, 1, MPI_LONG_LONG, 0, c, &req);
    wait_napping([&] {
      int done = 0;
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      return done != 0;
    }, warm);
  } else {
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, c);
  }
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, 0, c);
}

int var_index(const std::string& name) {
  for (const auto& f : solver::state_fields())
    if (name == f.name) return f.var;
  throw std::invalid_argument(fmt::format("unknown variable '{}'", name));
}

json where(Run& run) {
  const auto st = run.solver().scalar_state();
  return {{"step", st.step}, {"time", st.time}};
}

std::vector<std::string> overrides_of(Run& run, const json& values) {
  const auto params = steerable_parameters(run.spec());
  std::vector<std::string> out;
  for (const auto& [name, v] : values.items()) {
    std::vector<double> value;
    if (v.is_array())
      for (const auto& x : v) value.push_back(x.get<double>());
    else
      value.push_back(v.get<double>());
    out.push_back(steering_override(params, name, value));
  }
  return out;
}

// The collector's shared segment for this window (live.hpp, "Shared memory"), mapped by
// this rank: its data, or null if the command offers none, it is too small, or this rank
// cannot map it (another node, no access). Segments the collector no longer lists are
// unmapped first.
std::byte* shared_place(const json& c, std::vector<SharedSegment>& attached, std::uint64_t need) {
  // REWIND_LIVE_SHARED_MEMORY=0: this rank never maps it (a fault-finding switch; it then
  // behaves as a rank of another node).
  static const bool allowed = [] {
    const char* e = std::getenv("REWIND_LIVE_SHARED_MEMORY");
    return e == nullptr || std::string(e) != "0";
  }();
  std::vector<std::uint64_t> alive;
  if (const auto it = c.find("slots"); it != c.end() && it->is_array())
    for (const auto& t : *it)
      if (t.is_number_unsigned()) alive.push_back(t.get<std::uint64_t>());
  std::erase_if(attached, [&](const SharedSegment& s) {
    return std::find(alive.begin(), alive.end(), s.name().token) == alive.end();
  });
  const auto it = c.find("shm");
  if (it == c.end() || !allowed) return nullptr;
  SegmentName name;
  try {
    name = {it->at("node").get<std::string>(), it->at("pid").get<int>(), it->at("fd").get<int>(),
            it->at("token").get<std::uint64_t>(), it->at("bytes").get<std::uint64_t>()};
  } catch (const json::exception&) {
    return nullptr;  // not a segment this rank understands: the values go over MPI
  }
  if (name.bytes < need) return nullptr;
  for (const auto& s : attached)
    if (s.name().token == name.token) return s.data();
  std::string why;
  auto s = SharedSegment::attach(name, &why);
  if (!s) {
    // Of the collector's node but not mapped: unexpected, so said (once per rank).
    static bool said = false;
    if (!why.empty() && !std::exchange(said, true))
      fmt::print(stderr, "rewind run: note: a compute rank on {} cannot map the collector's shared memory ({}); its "
                         "live window values go over MPI\n", node_id().substr(0, node_id().find('/')), why);
    return nullptr;
  }
  attached.push_back(std::move(*s));
  return attached.back().data();
}

// The cells of the window pieces this rank owns: per variable, piece after piece, x
// fastest; then the cell types in the same order. Into the collector's shared segment
// when this rank can map it, else sent to the collector run by run (live.hpp) without
// waiting for it to receive them (`sends`, completed before the buffers are used
// again). `values` and `types` are the caller's, kept between windows: fresh memory
// would cost the run a page fault per 4 KiB at every window.
// Returns true if this rank wrote its cells into the collector's memory.
bool send_window(Run& run, const json& c, MPI_Comm service, int collector, int rank, std::vector<double>& values,
                 std::vector<std::uint8_t>& types, std::vector<MPI_Request>& sends,
                 std::vector<SharedSegment>& attached) {
  auto& s = run.solver();
  auto& forest = s.forest();
  const auto& sh = forest.shape();
  const std::array<int, 3> cells{sh.s[0], sh.s[1], sh.s[2]};
  const std::array<int, 3> padded{sh.s[0] + 2, sh.s[1] + 2, sh.s[2] + 2};
  std::vector<int> vars;
  for (const auto& v : c.at("vars")) vars.push_back(var_index(v.get<std::string>()));
  struct Mine {
    std::size_t grid;
    window::Piece piece;
    std::uint64_t at;  ///< its first cell's place in the reply's arrays
  };
  std::vector<Mine> mine;
  std::vector<int> runs;  // cells of each run of consecutive pieces of this rank
  std::size_t n = 0;
  std::uint64_t total = 0;  // every piece's cells
  bool in_run = false;
  for (const auto& p : c.at("pieces")) {
    const std::uint64_t piece_cells = static_cast<std::uint64_t>(std::max(0, p.at(5).get<int>())) *
                                      static_cast<std::uint64_t>(std::max(0, p.at(6).get<int>())) *
                                      static_cast<std::uint64_t>(std::max(0, p.at(7).get<int>()));
    const bool ours = p.at(1).get<int>() == rank;
    if (ours && !in_run) runs.push_back(0);
    in_run = ours;
    const std::uint64_t at = total;
    total += piece_cells;
    if (!ours) continue;
    const auto g = forest.local_index(spacetree::Uid::from_raw(p.at(0).get<std::uint64_t>()));
    if (g < 0) throw std::runtime_error("live window: a piece's grid is not on its owner");
    window::Piece q;
    for (int a = 0; a < 3; ++a) {
      q.first[static_cast<std::size_t>(a)] = p.at(2 + a).get<int>();
      q.count[static_cast<std::size_t>(a)] = p.at(5 + a).get<int>();
    }
    q.stride = p.at(8).get<int>();
    mine.push_back({static_cast<std::size_t>(g), q, at});
    n += static_cast<std::size_t>(q.values());
    runs.back() += static_cast<int>(q.values());
  }
  MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  sends.assign(runs.size() * (vars.size() + 1), MPI_REQUEST_NULL);
  auto* req = sends.data();
  if (std::byte* shm = shared_place(c, attached, total * (8 * vars.size() + 1)); shm != nullptr && !mine.empty()) {
    // In place: no buffer of this rank, no MPI copy. The empty messages say each
    // (variable, run) is written; the fence orders the stores before them.
    static const char nothing = 0;
    const auto written = [&](int tag) {
      std::atomic_thread_fence(std::memory_order_release);
      for (std::size_t r = 0; r < runs.size(); ++r) MPI_Isend(&nothing, 0, MPI_BYTE, collector, tag, service, req++);
    };
    for (std::size_t k = 0; k < vars.size(); ++k) {
      auto* base = reinterpret_cast<double*>(shm) + k * total;
      for (const auto& m : mine) {
        window::Piece h = m.piece;  // the same cells in the halo'd array: one cell in
        for (auto& f : h.first) ++f;
        window::extract(h, padded, forest.data(m.grid, vars[k]), base + m.at);
      }
      written(kLiveValuesTag);
    }
    auto* t = reinterpret_cast<std::uint8_t*>(shm) + vars.size() * total * 8;
    for (const auto& m : mine) window::extract(m.piece, cells, s.cell_types(m.grid).data(), t + m.at);
    written(kLiveTypesTag);
    return true;
  }
  values.resize(n * vars.size());
  types.resize(n);
  // Each variable goes as soon as it is copied: the collector receives it while this
  // rank copies the next.
  double* out = values.data();
  for (const int v : vars) {
    const double* src = out;
    for (const auto& m : mine) {
      window::Piece h = m.piece;  // the same cells in the halo'd array: one cell in
      for (auto& f : h.first) ++f;
      out = window::extract(h, padded, forest.data(m.grid, v), out);
    }
    for (const int len : runs) {
      MPI_Isend(src, len, MPI_DOUBLE, collector, kLiveValuesTag, service, req++);
      src += len;
    }
  }
  std::uint8_t* t = types.data();
  for (const auto& m : mine) t = window::extract(m.piece, cells, s.cell_types(m.grid).data(), t);
  const std::uint8_t* ct = types.data();
  for (const int len : runs) {
    MPI_Isend(ct, len, MPI_BYTE, collector, kLiveTypesTag, service, req++);
    ct += len;
  }
  return false;
}

// Runs `f` on every compute rank; if it throws on any, every rank throws the message
// of the lowest failing rank. Collective over `comm`.
template <class F>
void agreed(MPI_Comm comm, F f) {
  std::string message;
  bool failed = false;
  try {
    f();
  } catch (const std::exception& e) {
    failed = true;
    message = e.what();
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = failed ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  long long n = static_cast<long long>(message.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, first, comm);
  message.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(message.data(), static_cast<int>(n), MPI_CHAR, first, comm);
  throw std::runtime_error(message);
}

// The branch file can be created: made and removed again (one rank only: O_EXCL).
void probe_create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot create the branch file: {}", path, std::strerror(errno)));
  ::close(fd);
  ::unlink(path.c_str());
}

// Everything an in-job branch needs, checked before the run changes anything: `from`
// names a committed checkpoint of one of the job's files (or `pending`, the one the
// branch writes first), the values and the output name pass plan_branch, and (on the
// `probing` rank) the branch file can be created. Serial; throws one line.
void check_branch(Run& run, const std::string& from, const std::vector<std::string>& changes,
                  const std::string& output, const std::optional<PendingCheckpoint>& pending, bool probing) {
  const auto file = kernel::split_step_spec(from).first;
  const auto& files = run.files();
  if (std::none_of(files.begin(), files.end(), [&](const std::string& f) { return same_file(f, file); }))
    throw std::invalid_argument(fmt::format("{} is not one of this job's files", file));
  std::error_code ec;  // a name the system refuses (too long, a loop), in its words
  if (!output.empty()) (void)std::filesystem::symlink_status(output, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw std::invalid_argument(fmt::format("{}: {}", output, ec.message()));
  const auto spec = plan_branch(find_restart_point(from, pending), changes, output);
  if (probing) probe_create(spec.output.file);
}

// The `branch` command: its reply's fields. Checked on every rank before anything
// changes (before the current state is checkpointed, too); undone if the branch cannot
// start (Run::branch). On any failure the run is where it was: same solver, same file,
// reopened. Only if that file cannot be reopened does the run pause there (`pause`),
// saying so (resume, stop, set and branch retry the reopening).
json steer_branch(Run& run, const json& c, MPI_Comm compute, const std::function<void()>& pause) {
  int rank = 0;
  MPI_Comm_rank(compute, &rank);
  const auto changes = overrides_of(run, c.at("values"));
  const auto from = c.at("from").get<std::string>();
  const auto output = c.value("output", std::string());
  const auto now = run.solver().scalar_state();
  std::optional<PendingCheckpoint> pending;
  if (!run.spec().output.file.empty() && now.step > run.output().last_written_step()) {
    kernel::StepEntry e;
    e.step = now.step;
    e.time = now.time;
    e.kind = kernel::StepKind::checkpoint;
    e.committed = true;
    e.case_overrides = run.spec().recorded_overrides;
    pending = PendingCheckpoint{run.spec().output.file, e};
  }
  const auto back = [&](const std::string& why) {
    try {
      run.reopen_output();
    } catch (const std::exception& e) {
      pause();
      throw std::runtime_error(fmt::format("{}; the run is paused at step {}: its file cannot be reopened ({})", why,
                                           now.step, e.what()));
    }
    throw std::runtime_error(why);
  };
  RestartPoint rp;
  RunSpec spec;
  run.close_output();  // its steps are read below
  try {
    agreed(compute, [&] { check_branch(run, from, changes, output, pending, rank == 0); });
    run.reopen_output();
    run.output().checkpoint_now(run.solver());  // nothing is lost
    run.close_output();
    agreed(compute, [&] {
      rp = find_restart_point(from);
      spec = plan_branch(rp, changes, output);
    });
  } catch (const std::exception& e) {
    back(e.what());
  }
  json reply = {{"file", spec.output.file}, {"parent", rp.file}, {"step", rp.step.step}, {"time", rp.step.time}};
  try {
    run.branch(std::move(spec));
  } catch (const std::exception& e) {
    back(fmt::format("the branch did not start: {}; the run goes on from step {} (t = {:.6g}) in {}", e.what(),
                     now.step, now.time, run.spec().output.file));
  }
  return reply;
}

}  // namespace

LiveLink::LiveLink(MPI_Comm service, int collector, MPI_Comm compute, bool pause_at_end)
    : service_(service), compute_(compute), collector_(collector), pause_at_end_(pause_at_end) {
  MPI_Comm_rank(compute_, &compute_rank_);
  t0_ = MPI_Wtime();
}

void LiveLink::send_status(Run& run, const char* state) {
  if (compute_rank_ != 0) return;
  const auto& spec = run.spec();
  int ranks = 1;
  MPI_Comm_size(compute_, &ranks);
  json j = where(run);
  j["state"] = state;
  j["file"] = spec.output.file;
  j["parent"] = spec.restart && spec.mode == RunOutput::Mode::create ? spec.restart->file : "";
  j["files"] = run.files();
  j["steps"] = steps_;
  j["wall"] = MPI_Wtime() - t0_;
  j["ranks"] = ranks;
  send_text(service_, collector_, kLiveStatusTag, j.dump());
}

void LiveLink::at_boundary(Run& run, const Boundary& b) {
  if (b.step) ++steps_;
  // A status at most 20 times a second (and at every new timeline): a fast run would
  // otherwise send thousands of messages a second nobody reads.
  const double now = MPI_Wtime();
  if (b.first || now - last_status_ >= 0.05) {
    last_status_ = now;
    send_status(run, paused_ ? "paused" : "running");
  }
  serve(run, false);
}

void LiveLink::at_end(Run& run) {
  if (pause_at_end_ && !run.stop_requested()) {
    paused_ = true;
    branched_ = false;
    send_status(run, "paused");
    serve(run, false);  // until resume, stop or branch
    if (branched_ || (!run.stop_requested() && !run.solver().finished())) return;  // the run goes on
  }
  paused_ = held_ = false;
  send_status(run, "finished");
  serve(run, true);
  MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
  // What the queries cost the run: the slowest rank's time in window commands (the
  // next step waits for it). Every rank served the same windows.
  double slowest = 0.0;
  MPI_Reduce(&window_seconds_, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, compute_);
  // And how many ranks wrote into the collector's memory (live.hpp, "Shared memory")
  // rather than sending their values over MPI.
  const int wrote_in_place = in_place_ > 0 ? 1 : 0;
  int ranks_in_place = 0, ranks = 1;
  MPI_Reduce(&wrote_in_place, &ranks_in_place, 1, MPI_INT, MPI_SUM, 0, compute_);
  MPI_Comm_size(compute_, &ranks);
  if (run.print() && !run.spec().quiet && windows_ > 0)
    fmt::print("live:       {} windows copied at step boundaries, {:.3f} s in them on the slowest compute rank "
               "({:.2f} ms per window); {} of {} compute ranks wrote into the collector's shared memory\n",
               windows_, slowest, 1e3 * slowest / static_cast<double>(windows_), ranks_in_place, ranks);
}

void LiveLink::serve(Run& run, bool ending) {
  for (;;) {
    std::string text;
    const bool idle = ending || paused_ || held_;  // the same on every compute rank
    if (compute_rank_ == 0) {
      if (idle) {
        text = recv_text(service_, collector_, kLiveCommandTag, warm_until_);
      } else {
        int flag = 0;
        MPI_Iprobe(collector_, kLiveCommandTag, service_, &flag, MPI_STATUS_IGNORE);
        if (flag) text = recv_text(service_, collector_, kLiveCommandTag, warm_until_);
      }
    }
    bcast_text(compute_, text, idle, warm_until_);
    if (text.empty()) return;
    warm_until_ = Clock::now() + mpi::kWarmAfterRequest;
    const json c = json::parse(text);
    const std::string op = c.at("op").get<std::string>();
    json reply = {{"ok", true}};
    bool leave = false;
    try {
      // The file is closed only after a failed branch that could not reopen it (the run
      // then paused): whatever would write again tries first.
      if (op == "resume" || op == "stop" || op == "set" || op == "branch") run.reopen_output();
      if (op == "window") {
        const double t0 = MPI_Wtime();
        for (const auto& v : c.at("vars")) var_index(v.get<std::string>());  // every rank throws alike
        reply.update(where(run));
        reply["file"] = run.spec().output.file;
        // The reply goes first: the collector posts its receives for the values only
        // once it has it (a large send would otherwise wait for a receive forever).
        if (compute_rank_ == 0) send_text(service_, collector_, kLiveReplyTag, reply.dump());
        run.solver().sync_coarse_levels();  // a coarse window shows this step, not the last one written
        if (send_window(run, c, service_, collector_, compute_rank_, values_, types_, sends_, attached_)) ++in_place_;
        if (values_.capacity() > kKeepValues) {
          MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
          values_ = {}, types_ = {};
        }
        window_seconds_ += MPI_Wtime() - t0;
        ++windows_;
        continue;
      } else if (op == "hold") {
        held_ = true;
      } else if (op == "release") {
        held_ = false;
      } else if (op == "pause" || op == "resume" || op == "stop") {
        if (ending) throw std::invalid_argument("the run has finished");
        paused_ = op == "pause";
        if (op == "stop") {
          run.request_stop();
          held_ = false;
          leave = true;
        }
        reply.update(where(run));
        reply["state"] = op == "pause" ? "paused" : op == "resume" ? "running" : "stopping";
        if (op == "pause") send_status(run, "paused");
      } else if (op == "parameters") {
        json list = json::array();
        for (const auto& p : steerable_parameters(run.spec()))
          list.push_back({{"name", p.name}, {"vector", p.vector}, {"unit", p.unit}, {"min", p.min}, {"max", p.max},
                          {"description", p.description}, {"value", p.value}});
        reply["parameters"] = list;
      } else if (op == "set") {
        if (ending) throw std::invalid_argument("the run has finished");
        const auto changes = overrides_of(run, c.at("values"));
        run.apply(changes);
        reply.update(where(run));
        reply["step"] = run.solver().scalar_state().step + 1;  // the first step computed with them
        reply["applied"] = changes;
      } else if (op == "branch") {
        if (ending) throw std::invalid_argument("the run has finished");
        reply.update(steer_branch(run, c, compute_, [&] {
          paused_ = true;
          send_status(run, "paused");
        }));
        held_ = false;
        branched_ = true;
        leave = true;
      } else if (op == "bye") {
        leave = true;
      } else {
        throw std::invalid_argument("unknown live command '" + op + "'");
      }
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"message", e.what()}};
    }
    if (compute_rank_ == 0) send_text(service_, collector_, kLiveReplyTag, reply.dump());
    if (leave) return;
  }
}

}  // namespace rwd::driver

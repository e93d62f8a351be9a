// The compute ranks' side of the live link (link.hpp).
#include "rewind/live/link.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "channel.hpp"
#include "rewind/kernel/grid_statistics.hpp"
#include "rewind/live/tree.hpp"
#include "rewind/mpi/backoff.hpp"
#include "rewind/window/select.hpp"
#include "window_ranges.hpp"

namespace rwd::live {
using collector::ControlAction;
using collector::RunState;

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::byte>;

// A paused or held run may wait for its next command for minutes. Blocking MPI calls
// would spin through sched_yield under mpi_yield_when_idle the whole time, taking the
// cores of a shared node from the collector and its clients, so those waits poll with a
// back-off (50 us -> 1 ms; until `warm`, shortly after a command, when the next one is
// likely soon: 50 us of spinning, then 20 us -> 0.1 ms). `test` returns true once done.
template <class Test>
void wait_napping(Test test, Clock::time_point warm) {
  using std::chrono::microseconds;
  const bool is_warm = Clock::now() < warm;
  mpi::wait_until(test, {.spin = microseconds(is_warm ? 50 : 0), .first = microseconds(is_warm ? 20 : 50),
                         .cap = microseconds(1000), .warm_cap = microseconds(100), .warm_until = warm});
}

// `idle`: the root may take long to have a command; else the ranks meet at a step
// boundary and a blocking broadcast is the fastest.
void bcast_bytes(MPI_Comm c, Bytes& b, bool idle, Clock::time_point warm) {
  long long n = static_cast<long long>(b.size());
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
  b.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(b.data(), static_cast<int>(n), MPI_BYTE, 0, c);
}

// REWIND_LIVE_SHARED_MEMORY=0: this rank never maps the collector's memory (a
// fault-finding switch; it then behaves as a rank of another node).
bool shared_memory_allowed() {
  static const bool allowed = [] {
    const char* e = std::getenv("REWIND_LIVE_SHARED_MEMORY");
    return e == nullptr || std::string(e) != "0";
  }();
  return allowed;
}

// A rank's pieces of a window.
struct Mine {
  std::size_t grid;
  window::Piece piece;
  std::uint64_t at;  ///< its first cell's place in the reply's arrays
};
struct Plan {
  std::vector<Mine> mine;
  std::vector<Run> runs;    ///< this rank's runs (runs_of); first / last index `mine`
  std::uint64_t total = 0;  ///< every piece's cells
  std::uint64_t cells = 0;  ///< this rank's
};

Plan plan_of(const WindowCommand& c, int rank, const kernel::LocalGrids& grids) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  index.reserve(grids.grids.size());
  for (std::size_t g = 0; g < grids.grids.size(); ++g) index.emplace(grids.grids[g].uid, g);
  Plan p;
  for (Run r : runs_of(c.pieces)) {
    p.total += r.cells;
    if (r.owner != rank) continue;
    const std::size_t first = p.mine.size();
    std::uint64_t at = r.at;
    for (std::size_t i = r.first; i < r.last; ++i) {
      const auto& q = c.pieces[i];
      const auto it = index.find(q.uid);
      if (it == index.end()) throw std::runtime_error(fmt::format("live window: grid {} is not on its owner", q.uid));
      window::Piece w;
      for (std::size_t a = 0; a < 3; ++a) w.first[a] = q.first[a], w.count[a] = q.count[a];
      w.stride = q.stride;
      p.mine.push_back({it->second, w, at});
      at += q.cells();
    }
    r.first = first, r.last = p.mine.size();
    p.cells += r.cells;
    p.runs.push_back(r);
  }
  return p;
}

// True if a piece of this rank's share is on a grid with children (its values are the
// children's averages: Host::sync_parents first).
bool above_leaves(const Plan& p, const kernel::LocalGrids& grids) {
  return std::any_of(p.mine.begin(), p.mine.end(),
                     [&](const Mine& m) { return !grids.grids[m.grid].child_uids.empty(); });
}

// Focuses the host back on the future at this boundary, however the command ends.
struct Focus {
  Host& host;
  explicit Focus(Host& h) : host(h) {}
  Focus(const Focus&) = delete;
  Focus& operator=(const Focus&) = delete;
  ~Focus() {
    try {
      host.focus("");
    } catch (...) {
    }
  }
};

}  // namespace

void Host::focus(const std::string& file) {
  if (file.empty()) return;
  const auto w = where();
  if (file != w.file)
    throw std::invalid_argument(fmt::format("{} is not a future of this run (it writes {})", file,
                                            w.file.empty() ? std::string("no file") : w.file));
}

struct Link::Impl {
  // Where the collector is.
  MPI_Comm service = MPI_COMM_NULL;  ///< rank mode: shared with the collector
  int collector = -1;
  std::shared_ptr<ThreadChannel> channel;  ///< thread mode, on compute rank 0
  bool thread_mode = false;
  bool send_tree = false;            ///< the collector selects on the tree we send
  std::map<std::string, std::uint64_t> tree_sent;  ///< per future (file): tree_version() last sent
  MPI_Comm compute = MPI_COMM_NULL;
  int rank = 0, ranks = 1;

  bool paused = false, held = false, branched = false, stopped = false;
  double t0 = 0.0, last_status = 0.0;
  Clock::time_point warm_until{};
  std::int64_t steps = 0;
  std::int64_t windows = 0, in_place = 0, windows_above_leaves = 0;
  double window_seconds = 0.0, parents_seconds = 0.0;
  WindowTarget target;  ///< thread mode, rank 0: the current window's arrays
  static constexpr std::size_t kKeepValues = std::size_t{8} << 20;  ///< 64 MiB of doubles
  std::vector<double> values;
  std::vector<std::uint8_t> types;
  std::vector<MPI_Request> sends;
  std::vector<SharedSegment> attached;
  KeptRanges kept_ranges;  ///< the shown grids' colour ranges (window_ranges.hpp)

  // --- messages to and from the collector (compute rank 0) ---------------------------

  void send_to_collector(const Bytes& b, int tag) {
    if (thread_mode) {
      if (tag == kReplyTag) channel->push_reply(b);
      else channel->push_status(b);
      return;
    }
    MPI_Send(b.data(), static_cast<int>(b.size()), MPI_BYTE, collector, tag, service);
  }

  // The next command, if one is waiting (or, `wait`, once one comes).
  Bytes next_command(bool wait) {
    Bytes b;
    if (thread_mode) {
      const auto take = [&] {
        auto c = channel->pop_command();
        if (!c) return false;
        b = std::move(c->frame);
        target = std::move(c->target);
        return true;
      };
      if (wait) wait_napping(take, warm_until);
      else take();
      return b;
    }
    MPI_Status st;
    const auto probe = [&] {
      int flag = 0;
      MPI_Iprobe(collector, kCommandTag, service, &flag, &st);
      return flag != 0;
    };
    if (wait) wait_napping(probe, warm_until);
    else if (!probe()) return b;
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    b.resize(static_cast<std::size_t>(n));
    MPI_Recv(b.data(), n, MPI_BYTE, collector, kCommandTag, service, MPI_STATUS_IGNORE);
    return b;
  }

  // The whole tree to the collector when it changed on any rank (collective).
  void share_tree(Host& host) {
    if (!send_tree) return;
    const std::uint64_t v = host.tree_version();
    const auto file = host.where().file;
    const auto sent = tree_sent.find(file);
    int changed = sent == tree_sent.end() || sent->second != v ? 1 : 0, any = 0;
    MPI_Allreduce(&changed, &any, 1, MPI_INT, MPI_MAX, compute);
    if (!any) return;
    tree_sent[file] = v;
    auto tree = gather_tree(compute, host.grids());
    if (rank != 0) return;
    tree->file = file;
    if (thread_mode) channel->set_tree(std::make_shared<const TreeSnapshot>(std::move(*tree)));
    else send_to_collector(encode(*tree), kStatusTag);  // in order with the statuses
  }

  void send_status(Host& host, RunState state) {
    if (rank != 0) return;
    Status s = host.where();
    s.state = state;
    // The job paused (or ending) holds every future: each says so, not its own "running".
    for (auto& f : s.futures)
      if (f.state == RunState::running && state != RunState::running) f.state = state;
    s.steps = steps;
    s.wall = MPI_Wtime() - t0;
    s.ranks = ranks;
    send_to_collector(encode(s), kStatusTag);
  }

  // --- a window ----------------------------------------------------------------------

  // The collector's segment for this window mapped by this rank, or null (none offered,
  // too small, another node, no access); segments the collector no longer lists are
  // unmapped first.
  std::byte* shared_place(const WindowCommand& c, std::uint64_t need) {
    std::erase_if(attached, [&](const SharedSegment& s) {
      return std::find(c.slots.begin(), c.slots.end(), s.name().token) == c.slots.end();
    });
    if (!c.shm || !shared_memory_allowed() || c.shm->bytes < need) return nullptr;
    for (const auto& s : attached)
      if (s.name().token == c.shm->token) return s.data();
    std::string why;
    auto s = SharedSegment::attach(*c.shm, &why);
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

  // Copies the cells of variable slot `var` of this rank's pieces [first, last) to `out`
  // (at out + piece offset when `placed`, else packed from out on); var < 0: the cell
  // types (uint8_t) instead. `streaming`: values with non-temporal stores, for memory
  // another process reads (window::extract_streaming; window::streaming_fence() before
  // the message that says they are there). Returns the end of what it wrote.
  template <class T>
  static T* extract_into(const Plan& p, std::size_t first, std::size_t last, const kernel::LocalGrids& grids, int var,
                         T* out, bool placed, bool streaming = false) {
    const int h = grids.halo;
    const std::array<int, 3> padded{grids.block.sx + 2 * h, grids.block.sy + 2 * h, grids.block.sz + 2 * h};
    T* o = out;
    for (std::size_t i = first; i < last; ++i) {
      const Mine& m = p.mine[i];
      window::Piece hp = m.piece;  // the same cells in the halo'd array
      for (auto& f : hp.first) f += h;
      const auto& g = grids.grids[m.grid];
      const T* src = nullptr;
      if constexpr (std::is_same_v<T, double>) src = g.fields[static_cast<std::size_t>(var)];
      else src = g.cell_type;
      T* dst = placed ? out + m.at : o;
      if (src == nullptr) o = std::fill_n(dst, m.piece.values(), T{0});
      else if constexpr (std::is_same_v<T, double>)
        o = streaming ? window::extract_streaming(hp, padded, src, dst) : window::extract(hp, padded, src, dst);
      else o = window::extract(hp, padded, src, dst);
    }
    return o;
  }

  // This rank's cells of a window, to the collector (or rank 0): in place into shared
  // memory when mappable (empty messages say so), else run by run over MPI. Returns true
  // if written in place.
  bool send_cells(const WindowCommand& c, const Plan& p, const kernel::LocalGrids& grids, const std::vector<int>& vars) {
    MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    sends.assign(p.runs.size() * (vars.size() + 1), MPI_REQUEST_NULL);
    auto* req = sends.data();
    const MPI_Comm comm = thread_mode ? compute : service;
    const int dest = thread_mode ? 0 : collector;
    // Run by run, variable after variable, each run sent as soon as it is written (an
    // empty message in shared memory): the collector streams a window's first bytes to its
    // client while this rank writes the rest.
    std::byte* shm = shared_place(c, p.total * (8 * vars.size() + 1));
    if (p.mine.empty()) shm = nullptr;  // nothing to send
    if (shm == nullptr) values.resize(p.cells * vars.size()), types.resize(p.cells);
    const auto each_run = [&](auto* base, int var, MPI_Datatype type, int tag) {
      auto* o = base;  // packed (over MPI)
      for (const Run& r : p.runs) {
        if (shm != nullptr) {
          extract_into(p, r.first, r.last, grids, var, base + r.at, false, true);
          window::streaming_fence();                            // the non-temporal stores, and
          std::atomic_thread_fence(std::memory_order_release);  // all stores, before the message
          static const char nothing = 0;
          MPI_Isend(&nothing, 0, MPI_BYTE, dest, tag, comm, req++);
        } else {
          auto* end = extract_into(p, r.first, r.last, grids, var, o, false);
          MPI_Isend(o, static_cast<int>(r.cells), type, dest, tag, comm, req++);
          o = end;
        }
      }
    };
    for (std::size_t k = 0; k < vars.size(); ++k)
      each_run(shm != nullptr ? reinterpret_cast<double*>(shm) + k * p.total : values.data() + k * p.cells, vars[k],
               MPI_DOUBLE, kValuesTag);
    each_run(shm != nullptr ? reinterpret_cast<std::uint8_t*>(shm) + vars.size() * p.total * 8 : types.data(), -1,
             MPI_BYTE, kTypesTag);
    return shm != nullptr;
  }

  // Thread mode, rank 0: its own cells straight into the reply, the other ranks' received
  // into their places (the collector's logic, relay.cpp, on this side).
  void gather_cells(const WindowCommand& c, const Plan& p, const kernel::LocalGrids& grids, const std::vector<int>& vars) {
    if (target.values.size() != vars.size() || target.types == nullptr)
      throw std::runtime_error("live window: the collector gave no arrays for it");
    const std::size_t n = p.mine.size();
    for (std::size_t k = 0; k < vars.size(); ++k) extract_into(p, 0, n, grids, vars[k], target.values[k], true);
    extract_into(p, 0, n, grids, -1, target.types, true);
    const auto runs = runs_of(c.pieces);
    std::vector<MPI_Request> reqs;
    const auto recv = [&](void* where, const Run& r, MPI_Datatype type, int tag) {
      reqs.emplace_back();
      MPI_Irecv(where, static_cast<int>(r.cells), type, r.owner, tag, compute, &reqs.back());
    };
    for (const auto* v : target.values)
      for (const auto& r : runs)
        if (r.owner != 0) recv(const_cast<double*>(v) + r.at, r, MPI_DOUBLE, kValuesTag);
    for (const auto& r : runs)
      if (r.owner != 0) recv(target.types + r.at, r, MPI_BYTE, kTypesTag);
    wait_napping([&] {
      int done = 0;
      MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
      return done != 0;
    }, Clock::now() + std::chrono::milliseconds(100));
    std::atomic_thread_fence(std::memory_order_acquire);  // the ranks' stores before their messages
  }

  void sync_parents(Host& host) {
    const double t = MPI_Wtime();
    host.sync_parents();
    parents_seconds += MPI_Wtime() - t;
    ++windows_above_leaves;
  }

  void window(Host& host, const WindowCommand& c, Reply& reply) {
    host.focus(c.file);  // every rank throws alike
    const Focus back{host};
    const double t0w = MPI_Wtime();
    std::vector<int> vars;
    for (const auto& v : c.vars) vars.push_back(host.variable(v));  // every rank throws alike
    const auto w = host.where();
    reply.step = w.step;
    reply.time = w.time;
    reply.file = w.file;
    const auto& grids = host.grids();
    // Everything that can fail happens before the reply goes (after it the collector waits
    // for the values): a rank that cannot place a piece makes every rank refuse.
    Plan p;
    std::string problem;
    try {
      p = plan_of(c, rank, grids);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    // {this rank failed, this rank has a piece above the leaves}, over every rank.
    std::array<int, 2> mine{problem.empty() ? 0 : 1, above_leaves(p, grids) ? 1 : 0}, any{0, 0};
    MPI_Allreduce(mine.data(), any.data(), 2, MPI_INT, MPI_MAX, compute);
    if (any[0])
      throw std::runtime_error(problem.empty() ? "live window: a compute rank could not place its pieces" : problem);
    if (any[1]) sync_parents(host);  // a leaf-only window (the bench's 10^6 values) skips the restriction
    std::vector<std::size_t> shown;
    for (const auto& m : p.mine) shown.push_back(m.grid);
    reply.ranges = window_ranges(kept_ranges, shown, grids, vars, {reply.file, reply.step, reply.time}, compute);
    // Rank mode: the reply goes first (the collector posts its receives for the values only
    // once it has it; a large send would otherwise wait for a receive forever).
    if (!thread_mode && rank == 0) send_to_collector(encode(reply), kReplyTag);
    if (thread_mode && rank == 0) {
      gather_cells(c, p, grids, vars);  // into the collector's shared slot, when it gave one
      if (c.shm) ++in_place;
      send_to_collector(encode(reply), kReplyTag);
    } else if (send_cells(c, p, grids, vars)) {
      ++in_place;
    }
    if (values.capacity() > kKeepValues) {
      MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
      values = {}, types = {};
    }
    window_seconds += MPI_Wtime() - t0w;
    ++windows;
  }

  // --- the details of a variable (adaptive windows) ----------------------------------

  /// Every grid's detail of `c.var`, computed by the kernel's own code over the compute
  /// ranks (so a paused run's equal the file's at that step, bit for bit), to the compute
  /// root, which replies them with their uids after sending the collector the tree they
  /// belong to (rank mode: before the reply, in order with the statuses).
  void details(Host& host, const DetailsCommand& c, Reply& reply) {
    host.focus(c.file);  // every rank throws alike
    const Focus back{host};
    const int var = host.variable(c.var);
    const auto w = host.where();
    reply.step = w.step;
    reply.time = w.time;
    reply.file = w.file;
    const auto& grids = host.grids();
    host.sync_parents();  // details compare each parent with its children: parents current
    int mine = 0, max_children = 0;
    for (const auto& g : grids.grids) mine = std::max(mine, static_cast<int>(g.child_uids.size()));
    MPI_Allreduce(&mine, &max_children, 1, MPI_INT, MPI_MAX, compute);
    std::vector<double> sh;  // each grid's octants' shares, max_children each, or none
    const auto st = kernel::grid_statistics(compute, grids, max_children, var, false, &sh);  // throws alike
    std::vector<std::uint64_t> uids;
    std::vector<double> d;
    if (!st.empty())
      for (std::size_t k = 0; k < st.size(); ++k) {
        uids.push_back(grids.grids[k].uid);
        d.push_back(st[k][2]);
      }
    // Shares or none is the block's to say, but a rank without grids has none either way.
    const int per_here = sh.empty() ? 0 : max_children;
    int per = 0;
    MPI_Allreduce(&per_here, &per, 1, MPI_INT, MPI_MAX, compute);
    const int n = static_cast<int>(uids.size());
    std::vector<int> counts(static_cast<std::size_t>(ranks)), displ(static_cast<std::size_t>(ranks));
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, compute);
    int total = 0;
    for (int q = 0; q < ranks; ++q)
      displ[static_cast<std::size_t>(q)] = total, total += counts[static_cast<std::size_t>(q)];
    if (rank == 0) {
      reply.uids.resize(static_cast<std::size_t>(total));
      reply.details.resize(static_cast<std::size_t>(total));
    }
    MPI_Gatherv(uids.data(), n, MPI_UINT64_T, reply.uids.data(), counts.data(), displ.data(), MPI_UINT64_T, 0, compute);
    MPI_Gatherv(d.data(), n, MPI_DOUBLE, reply.details.data(), counts.data(), displ.data(), MPI_DOUBLE, 0, compute);
    if (per > 0) {
      std::vector<int> sc(counts), sd(displ);
      for (std::size_t q = 0; q < sc.size(); ++q) sc[q] *= per, sd[q] *= per;
      if (rank == 0) reply.shares.resize(static_cast<std::size_t>(total) * static_cast<std::size_t>(per));
      MPI_Gatherv(sh.data(), n * per, MPI_DOUBLE, reply.shares.data(), sc.data(), sd.data(), MPI_DOUBLE, 0, compute);
    }
    auto tree = gather_tree(compute, grids);
    if (rank != 0) return;
    tree->file = w.file;
    if (thread_mode) channel->set_tree(std::make_shared<const TreeSnapshot>(std::move(*tree)));
    else send_to_collector(encode(*tree), kStatusTag);
  }

  // --- every command ----------------------------------------------------------------

  /// Serves commands until none waits (or, paused / held / ending, until one lets go).
  void serve(Host& host, bool ending) {
    for (;;) {
      const bool idle = ending || paused || held;  // the same on every compute rank
      Bytes b;
      if (rank == 0) b = next_command(idle);
      bcast_bytes(compute, b, idle, warm_until);
      if (b.empty()) return;
      warm_until = Clock::now() + mpi::kWarmAfterRequest;
      Reply reply;
      bool leave = false;
      try {
        const Command c = decode_command(b);
        if (const auto* w = std::get_if<WindowCommand>(&c)) {
          window(host, *w, reply);
          continue;  // replied in window()
        }
        leave = carry_out(host, c, reply, ending);
      } catch (const std::exception& e) {
        reply = Reply{};
        reply.ok = false;
        reply.message = e.what();  // nothing was sent for this command yet
      }
      if (rank == 0) send_to_collector(encode(reply), kReplyTag);
      if (leave) return;
    }
  }

  /// A command other than a window; true if the boundary ends here.
  bool carry_out(Host& host, const Command& c, Reply& reply, bool ending) {
    const auto here = [&] {
      const auto w = host.where();
      reply.step = w.step;
      reply.time = w.time;
      reply.file = w.file;
    };
    if (std::holds_alternative<Hold>(c)) {
      held = true;
    } else if (std::holds_alternative<Release>(c)) {
      held = false;
    } else if (const auto* k = std::get_if<ControlCommand>(&c); k && !k->file.empty()) {
      if (ending) throw std::invalid_argument("the run has finished");
      host.control(k->action, k->file);  // that future alone: the link's state stays
      host.focus(k->file);
      const Focus back{host};
      here();
      reply.state = k->action == ControlAction::pause    ? RunState::paused
                    : k->action == ControlAction::resume ? RunState::running
                                                         : RunState::stopping;
      send_status(host, paused ? RunState::paused : RunState::running);
    } else if (k) {
      if (ending) throw std::invalid_argument("the run has finished");
      const bool was_paused = paused;
      paused = k->action == ControlAction::pause;
      try {
        host.control(k->action, "");
      } catch (...) {
        paused = was_paused;
        throw;
      }
      here();
      reply.state = k->action == ControlAction::pause    ? RunState::paused
                    : k->action == ControlAction::resume ? RunState::running
                                                         : RunState::stopping;
      if (k->action == ControlAction::stop) {
        stopped = true;
        held = false;
        return true;
      }
      if (k->action == ControlAction::pause) send_status(host, RunState::paused);
    } else if (std::holds_alternative<ParametersQuery>(c)) {
      reply.parameters = host.parameters();
    } else if (const auto* s = std::get_if<SetCommand>(&c)) {
      if (ending) throw std::invalid_argument("the run has finished");
      reply.applied = host.set(s->values, s->file);
      {
        host.focus(s->file);
        const Focus back{host};
        here();
      }
      reply.step += 1;  // the first step computed with them
      send_status(host, paused ? RunState::paused : RunState::running);  // the changes in status at once, paused too
    } else if (const auto* br = std::get_if<BranchCommand>(&c)) {
      if (ending) throw std::invalid_argument("the run has finished");
      try {
        host.branch(*br, reply);
      } catch (const PausedError&) {
        paused = true;
        send_status(host, RunState::paused);
        throw;
      }
      held = false;
      branched = true;
      // The new futures in the status before the reply: a client asking at once lists them.
      send_status(host, paused ? RunState::paused : RunState::running);
      return true;
    } else if (const auto* d = std::get_if<DetailsCommand>(&c)) {
      details(host, *d, reply);
    } else if (std::holds_alternative<Bye>(c)) {
      return true;
    }
    return false;
  }
};

Link::Link(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  MPI_Comm_rank(impl_->compute, &impl_->rank);
  MPI_Comm_size(impl_->compute, &impl_->ranks);
  impl_->t0 = MPI_Wtime();
}
Link::Link(Link&&) noexcept = default;
Link& Link::operator=(Link&&) noexcept = default;
Link::~Link() {
  if (impl_) MPI_Waitall(static_cast<int>(impl_->sends.size()), impl_->sends.data(), MPI_STATUSES_IGNORE);
}

Link Link::to_rank(MPI_Comm service, int collector, MPI_Comm compute, bool send_tree) {
  auto i = std::make_unique<Impl>();
  i->service = service;
  i->collector = collector;
  i->compute = compute;
  i->send_tree = send_tree;
  return Link(std::move(i));
}

Link Link::to_thread(std::shared_ptr<ThreadChannel> channel, MPI_Comm compute) {
  auto i = std::make_unique<Impl>();
  i->channel = std::move(channel);
  i->thread_mode = true;
  i->send_tree = true;
  i->compute = compute;
  Link l(std::move(i));
  if (l.impl_->rank == 0 && !l.impl_->channel) throw std::invalid_argument("live link: compute rank 0 needs the channel");
  return l;
}

void Link::at_boundary(Host& host, bool first, bool stepped) {
  auto& im = *impl_;
  if (stepped) ++im.steps;
  im.share_tree(host);
  // A status at most 20 times a second (and at every new timeline): a fast run would
  // otherwise send thousands of messages a second nobody reads.
  const double now = MPI_Wtime();
  if (first || now - im.last_status >= 0.05) {
    im.last_status = now;
    im.send_status(host, im.paused ? RunState::paused : RunState::running);
  }
  im.serve(host, false);
}

bool Link::pause_at_end(Host& host) {
  auto& im = *impl_;
  if (im.stopped) return false;
  im.paused = true;
  im.branched = false;
  im.send_status(host, RunState::paused);
  im.serve(host, false);  // until resume, stop or branch
  return im.branched || !im.stopped;
}

Link::Summary Link::finish(Host& host) {
  auto& im = *impl_;
  im.paused = im.held = false;
  im.send_status(host, RunState::finished);
  im.serve(host, true);
  MPI_Waitall(static_cast<int>(im.sends.size()), im.sends.data(), MPI_STATUSES_IGNORE);
  // What the queries cost the run: the slowest rank's time in window commands (the next
  // step waits for it), and how many ranks wrote into the collector's memory.
  Summary s;
  s.windows = im.windows;
  s.ranks = im.ranks;
  MPI_Reduce(&im.window_seconds, &s.slowest, 1, MPI_DOUBLE, MPI_MAX, 0, im.compute);
  s.above_leaves = im.windows_above_leaves;
  MPI_Reduce(&im.parents_seconds, &s.parents, 1, MPI_DOUBLE, MPI_MAX, 0, im.compute);
  const int wrote = im.in_place > 0 ? 1 : 0;
  MPI_Reduce(&wrote, &s.ranks_in_place, 1, MPI_INT, MPI_SUM, 0, im.compute);
  return s;
}

bool Link::stopped() const { return impl_->stopped; }

std::vector<Run> runs_of(const std::vector<PiecePlacement>& pieces, std::uint64_t cap) {
  std::vector<Run> runs;
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const int owner = pieces[i].owner;
    if (runs.empty() || runs.back().owner != owner || runs.back().cells >= cap) runs.push_back({owner, i, i, at, 0});
    runs.back().last = i + 1;
    runs.back().cells += pieces[i].cells();
    at += pieces[i].cells();
  }
  return runs;
}

}  // namespace rwd::live

// The C API's live windows and steering (rewind/rewind.h, "Live windows and steering"):
// a live::Host over the code's grids, its declared parameters and its rewind_file, and the
// collector on a thread of rank 0 or on a rank of its own (rewind/live/*.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agree.hpp"
#include "handles.hpp"
#include "tree_check.hpp"
#include "rewind/collector/contact.hpp"
#include "rewind/collector/file_service.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/collector/server.hpp"
#include "rewind/collector/token.hpp"
#include "rewind/kernel/lineage.hpp"
#include "rewind/kernel/output_target.hpp"
#include "rewind/live/link.hpp"
#include "rewind/live/relay.hpp"

using namespace rwd::api;
namespace live = rwd::live;
namespace col = rwd::collector;

namespace {

struct Declared {
  col::ParameterInfo p;
};

// An event as the library keeps it (its strings live here until the next boundary).
struct Event {
  int kind = 0;
  std::string name;
  std::vector<double> value;
  std::string parent, file;
  std::int64_t step = 0;
  double time = 0.0;
};

std::string branch_name(const std::string& file, std::int64_t step) {
  const std::filesystem::path p(file);
  for (int n = 1;; ++n) {
    const auto stem = p.stem().string() + fmt::format(".branch{}{}", step, n == 1 ? "" : fmt::format("-{}", n));
    auto candidate = (p.parent_path() / (stem + p.extension().string())).string();
    if (!std::filesystem::exists(candidate)) return candidate;
  }
}

std::string value_text(const std::vector<double>& v) {
  std::string text;
  for (const double x : v) text += fmt::format("{}{}", text.empty() ? "" : ", ", x);
  return v.size() == 1 ? text : "[" + text + "]";
}

// The numbers of a "name=value" override as value_text writes them.
std::vector<double> parse_value(const std::string& text) {
  std::vector<double> out;
  std::string t = text;
  for (char& c : t)
    if (c == '[' || c == ']' || c == ',') c = ' ';
  std::size_t at = 0;
  while (at < t.size()) {
    std::size_t used = 0;
    const auto rest = t.substr(at);
    if (rest.find_first_not_of(' ') == std::string::npos) break;
    out.push_back(std::stod(rest, &used));
    at += used;
  }
  return out;
}

}  // namespace

struct rewind_live {
  MPI_Comm compute = MPI_COMM_NULL;
  MPI_Comm service = MPI_COMM_NULL;  ///< with a collector rank: it and the compute ranks
  bool own_compute = false;
  std::int64_t last_step = 0;  ///< the last boundary's, for the closing status
  double last_time = 0.0;
  std::string last_file;
  k::CommonInfo common;  ///< the variables windows may ask for, the geometry
  std::optional<live::RelayThread> thread;
  std::optional<live::Link> link;
  std::vector<col::ParameterInfo> parameters;
  std::vector<col::ParameterInfo> declared;  ///< with their initial values
  std::vector<std::string> files;  ///< every file this run wrote (the timelines)
  std::deque<Event> events;
  Event current;  ///< the one last handed out (its strings)
  bool stopped = false;
  int port = 0;
  std::uint64_t checked_tree = 0;  ///< the grids' generation last found a tree
};

namespace {

// The live link's view of a C code at one boundary.
class Host final : public live::Host {
 public:
  Host(rewind_live& l, std::int64_t step, double time, const rewind_grids& g, rewind_file* file)
      : l_(l), step_(step), time_(time), g_(g), file_(file) {}

  live::Status where() override {
    live::Status s;
    s.step = step_;
    s.time = time_;
    s.file = file_ != nullptr ? file_->writer.path() : l_.last_file;
    if (file_ != nullptr) s.parent = file_->writer.common().lineage.parent_file;
    s.files = l_.files;
    return s;
  }
  const k::LocalGrids& grids() override {
    if (!ready_) {
      grids_.block = l_.common.block;
      grids_.halo = g_.halo;
      grids_.grids = records_of(g_, l_.common.block);
      const auto nv = l_.common.variables.size();
      std::vector<int> slots;
      for (std::size_t v = 0; v < nv; ++v) slots.push_back(static_cast<int>(v));
      for (auto& r : grids_.grids) r.fields.resize(std::max(nv, r.fields.size()), nullptr);
      averages_.check(l_.compute, grids_, slots, refinement());  // the parents are averaged on demand
      ready_ = true;
    }
    return grids_;
  }
  /// The level of detail: parents without arrays get their children's averages, once per
  /// boundary and only for a window above the leaves (the link asks).
  void sync_parents() override {
    if (averaged_) return;
    std::vector<int> slots(l_.common.variables.size());
    std::iota(slots.begin(), slots.end(), 0);
    averages_.fill(l_.compute, grids_, slots, refinement());
    averaged_ = true;
  }
  [[nodiscard]] std::array<int, 3> refinement() const {
    const int r = l_.common.refinement;
    return {r, r, l_.common.dim == 3 ? r : 1};
  }
  int variable(const std::string& name) override {
    const auto& v = l_.common.variables;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].name == name) return static_cast<int>(i);
    std::string names;
    for (const auto& x : v) names += (names.empty() ? "" : ", ") + x.name;
    throw std::invalid_argument(fmt::format("unknown variable '{}' (there are {})", name, names));
  }
  std::vector<col::ParameterInfo> parameters() override { return l_.parameters; }
  std::vector<std::string> set(const col::ParamValues& values, const std::string& file) override {
    focus(file);  // this code's one future, or refused naming it
    auto changed = l_.parameters;
    std::vector<std::string> applied;
    for (const auto& change : values) {
      const std::string& name = change.first;  // not a structured binding: the lambda below captures it
      const col::ParamValue& value = change.second;
      const std::vector<double> v = col::components(value);
      auto it =
          std::find_if(changed.begin(), changed.end(), [&](const col::ParameterInfo& p) { return p.name == name; });
      if (it == changed.end())
        throw std::invalid_argument(fmt::format("'{}' is not a steerable parameter of this run", name));
      const std::size_t n = col::components(it->value).size();
      if (v.size() != n) throw std::invalid_argument(fmt::format("{}: {} components, not {}", name, n, v.size()));
      for (const double x : v)
        if (!std::isfinite(x) || x < it->min || x > it->max)
          throw std::invalid_argument(fmt::format("{} = {}: outside [{}, {}]", name, x, it->min, it->max));
      it->value = value;
      applied.push_back(fmt::format("{}={}", name, value_text(v)));
    }
    l_.parameters = std::move(changed);  // all or nothing
    for (const auto& [name, value] : values)
      l_.events.push_back({REWIND_EVENT_SET, name, col::components(value), {}, {}, 0, 0.0});
    record();
    return applied;
  }
  /// The steered parameters in force go with every step the file writes from now on.
  void record() {
    if (file_ == nullptr) return;
    file_->overrides.clear();
    for (std::size_t i = 0; i < l_.parameters.size(); ++i)
      if (l_.parameters[i].value != l_.declared[i].value)
        file_->overrides.push_back(
            fmt::format("{}={}", l_.parameters[i].name, value_text(col::components(l_.parameters[i].value))));
  }
  void branch(const live::BranchCommand& b, live::Reply& reply) override;
  void queue_branch_events(const k::StepEntry& from, const live::Future& future, const std::string& parent,
                           const std::string& output, std::size_t saved_events);
  void control(col::ControlAction a, const std::string& file) override {
    if (!file.empty()) {
      focus(file);
      if (a == col::ControlAction::pause)
        throw std::invalid_argument("this code computes one future: pause the run (no file named)");
    }
    if (a != col::ControlAction::stop) return;
    l_.stopped = true;
    l_.events.push_back({REWIND_EVENT_STOP, {}, {}, {}, {}, 0, 0.0});
  }
  std::uint64_t tree_version() override { return g_.generation; }

 private:
  rewind_live& l_;
  std::int64_t step_;
  double time_;
  const rewind_grids& g_;
  rewind_file* file_;
  bool ready_ = false;
  bool averaged_ = false;
  k::LocalGrids grids_;
  ParentAverages averages_;
};

// Go back to FILE@SELECTOR with the changes, into a new file: checked on every rank before
// anything changes; the current state is written first; then `file` writes the branch.
void Host::branch(const live::BranchCommand& b, live::Reply& reply) {
  if (file_ == nullptr) throw std::invalid_argument("this run writes no file: there is nothing to branch from");
  // The values are checked (and kept aside) like a set, but take effect with the branch.
  const auto saved = l_.parameters;
  const auto saved_overrides = file_->overrides;
  const auto saved_events = l_.events.size();
  std::vector<std::string> changes;
  k::StepEntry from;
  std::string parent, output;
  std::string problem;
  const auto& future = b.futures.empty() ? live::Future{} : b.futures.front();
  try {
    if (b.futures.size() > 1)
      throw std::invalid_argument(fmt::format(
          "this code takes one future at a time ({} asked): branch once, or fork with `rewind run --listen`",
          b.futures.size()));
    changes = set(future.values, "");
    // No file ("@SEL", the collector's default): a step on the timeline of the file being
    // written, through its parents (docs/file-format.md §6, "A branch's timeline").
    const bool named = !k::split_step_spec(b.from).first.empty();
    const auto spec =
        k::split_step_spec(named ? b.from : k::timeline_spec(l_.files.back(), k::split_step_spec(b.from).second));
    const std::string& path = spec.first;  // not a structured binding: the lambda below captures it
    const auto& sel = spec.second;
    if (named && std::none_of(l_.files.begin(), l_.files.end(), [&](const std::string& f) {
          std::error_code ec;
          return std::filesystem::equivalent(f, path, ec);
        }))
      throw std::invalid_argument(fmt::format("{} is not one of this run's files", path));
    parent = path;
    from = k::Reader::open(path).find_step(sel);
    if (from.kind != k::StepKind::checkpoint)
      throw std::invalid_argument(fmt::format("{}: step {} is a visualisation output; a branch needs a checkpoint", path, from.step));
    output = future.output.empty() ? branch_name(path, from.step) : future.output;
    if (!future.output.empty()) k::check_output_target(output);  // before anything opens it (a FIFO, a device)
    if (std::filesystem::exists(output)) throw std::invalid_argument(fmt::format("{} exists; a branch never overwrites a file", output));
  } catch (const std::exception& e) {
    problem = e.what();
  }
  l_.parameters = saved;  // until the branch starts
  file_->overrides = saved_overrides;
  l_.events.resize(saved_events);
  agree_or_throw(l_.compute, problem);
  // Nothing is lost: the current state goes into the current file first.
  if (step_ > file_->writer.last_step())
    if (rewind_file_write(file_, step_, time_, 0.0, REWIND_CHECKPOINT, &g_, 0, nullptr, 0) != REWIND_OK)
      throw std::runtime_error(rewind_last_error());
  rewind_file* next = nullptr;
  std::vector<const char*> kv;
  for (const auto& c : changes) kv.push_back(c.c_str());
  rewind_config options;
  options.io = file_->io;
  if (rewind_file_create_branch(&next, l_.compute, output.c_str(), parent.c_str(), from.step, static_cast<int>(kv.size()),
                                kv.data(), &options) != REWIND_OK)
    throw std::runtime_error(rewind_last_error());  // the same on every rank; the run goes on where it was
  // The code's handle now writes the branch (the old file closed, its claim released).
  file_->writer.close();
  std::swap(file_->writer, next->writer);
  std::swap(file_->claim, next->claim);
  file_->last_time = next->last_time;  // a new file: its times start again
  delete next;
  l_.files.push_back(output);
  queue_branch_events(from, future, parent, output, saved_events);
  reply.file = output;
  reply.parent = parent;
  reply.step = from.step;
  reply.time = from.time;
}

// The parameters as they were at the branch's step (the declared values, overridden by
// what the step records), then the branch's changes: the BRANCH event, then every one
// that differs from now as a SET event after it.
void Host::queue_branch_events(const k::StepEntry& from, const live::Future& future, const std::string& parent,
                               const std::string& output, std::size_t saved_events) {
  const auto before = l_.parameters;
  l_.parameters = l_.declared;
  for (const auto& o : from.case_overrides) {
    const auto eq = o.find('=');
    for (auto& p : l_.parameters)
      if (eq != std::string::npos && p.name == o.substr(0, eq))
        p.value = col::param_value(parse_value(o.substr(eq + 1)));
  }
  (void)set(future.values, "");
  l_.events.resize(saved_events);
  l_.events.push_back(Event{REWIND_EVENT_BRANCH, {}, {}, parent, output, from.step, from.time});
  for (std::size_t i = 0; i < l_.parameters.size(); ++i)
    if (l_.parameters[i].value != before[i].value)
      l_.events.push_back(
          {REWIND_EVENT_SET, l_.parameters[i].name, col::components(l_.parameters[i].value), {}, {}, 0, 0.0});
}

col::ServerOptions server_options(const std::string& listen, const char* token) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw Status(REWIND_ERR_ARGUMENT, fmt::format("listen \"{}\": expected HOST:PORT", listen));
  col::ServerOptions so;
  so.host = listen.substr(0, colon);
  try {
    const int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) throw std::out_of_range("port");
    so.port = static_cast<std::uint16_t>(port);
  } catch (const std::exception&) {
    throw Status(REWIND_ERR_ARGUMENT, fmt::format("listen \"{}\": the port is not a number from 0 to 65535", listen));
  }
  // NULL: the environment's token (REWIND_TOKEN, REWIND_TOKEN_FILE), else a generated
  // one (announce_token); "": none. Read where the collector listens.
  try {
    so.token = token != nullptr ? token : col::resolve_token("", "");
  } catch (const std::invalid_argument& e) {
    throw Status(REWIND_ERR_ARGUMENT, e.what());
  }
  if (token != nullptr && !so.token.empty() && so.token.find_first_not_of(" \t\r\n\v\f") == std::string::npos)
    throw Status(REWIND_ERR_ARGUMENT, "token: white space only; give a secret (or \"\" for none, on loopback)");
  if (!col::is_loopback_host(so.host) && so.token.empty())
    throw Status(REWIND_ERR_ARGUMENT, fmt::format("listen \"{}\": a non-loopback address needs a token", listen));
  so.name = "rewind-capi";
  return so;
}

// On the process that listens, before it does: a token of its own when none was given
// (printed, as Jupyter does: nothing else can tell a client), a warning for "" (none).
void announce_token(col::ServerOptions& so, const char* token) {
  if (token != nullptr && *token == '\0') {
    std::fprintf(stderr,
                 "rewind live: warning: token \"\": no token; any user of this machine can steer, stop or "
                 "branch this run through %s\n",
                 so.host.c_str());
    return;
  }
  if (!so.token.empty()) return;
  so.token = col::generate_token();
  std::printf(
      "rewind live: token %s (generated: clients give it with --token-file or REWIND_TOKEN; pass a token "
      "to rewind_live_start, or set REWIND_TOKEN_FILE, to keep it out of the output)\n",
      so.token.c_str());
  std::fflush(stdout);
}

}  // namespace

extern "C" {

rewind_status rewind_live_start(rewind_live** live, MPI_Comm world, int where, const char* listen, const char* token,
                      const rewind_config* cfg, MPI_Comm* compute, int* is_compute) {
  if (world == MPI_COMM_NULL) return fail(REWIND_ERR_ARGUMENT, "rewind_live_start: world is MPI_COMM_NULL");
  return guarded([&] {
    Call call("rewind_live_start");
    col::ServerOptions so;
    call.check([&] {
      need(live, "live") = nullptr;
      need(compute, "compute");
      need(is_compute, "is_compute");
      const auto& cf = need(cfg, "cfg");
      if (!cf.geometry || cf.common.variables.empty())
        throw Status(REWIND_ERR_ARGUMENT, "cfg: geometry and variables first (the windows' grids and names)");
      if (where != REWIND_COLLECTOR_THREAD && where != REWIND_COLLECTOR_RANK)
        throw Status(REWIND_ERR_ARGUMENT,
                     fmt::format("where = {}: REWIND_COLLECTOR_THREAD or REWIND_COLLECTOR_RANK", where));
      so = server_options(text(listen, "listen"), token);
    });
    agree(world, call.arg("where", std::int64_t{where}).arg("listen", std::string(listen != nullptr ? listen : "")));
    const auto& c = *cfg;
    int rank = 0, size = 1;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    auto l = std::make_unique<rewind_live>();
    l->common = c.common;
    col::ServerInfo info = col::server_info_of(c.common);
    if (where == REWIND_COLLECTOR_THREAD) {
      MPI_Comm_dup(world, &l->compute);
      l->own_compute = true;
      std::string problem;
      if (rank == 0) {
        try {
          announce_token(so, token);
          l->thread.emplace(info, so, size);
          l->port = l->thread->port();
        } catch (const std::exception& e) {
          problem = e.what();
        }
      }
      try {
        agree_or_throw(l->compute, problem);
      } catch (const std::invalid_argument& e) {
        MPI_Comm_free(&l->compute);
        throw Status(REWIND_ERR_NETWORK, e.what());
      }
      l->link.emplace(live::Link::to_thread(l->thread ? l->thread->channel() : nullptr, l->compute));
      *compute = l->compute;
      *is_compute = 1;
      *live = l.release();
      return;
    }
    // The collector takes the last rank: the code computes on the others.
    if (size < 2) throw Status(REWIND_ERR_ARGUMENT, "REWIND_COLLECTOR_RANK needs 2 or more processes (one becomes the collector)");
    const bool collector = rank == size - 1;
    MPI_Comm_dup(world, &l->service);  // the collector and the compute ranks
    MPI_Comm_split(world, collector ? 1 : 0, rank, &l->compute);
    l->own_compute = true;
    if (collector) {
      announce_token(so, token);
      const live::RankLayout layout{.service = l->service, .first_compute = 0, .compute_size = size - 1};
      (void)live::run_relay(layout, {}, info, so, [&](std::uint16_t port) {
        std::printf("rewind live: listening on %s:%u\n", so.host.c_str(), static_cast<unsigned>(port));
        std::fflush(stdout);
      });
      MPI_Comm_free(&l->compute);
      MPI_Comm_free(&l->service);
      *compute = MPI_COMM_NULL;
      *is_compute = 0;
      return;
    }
    l->link.emplace(live::Link::to_rank(l->service, size - 1, l->compute, /*send_tree=*/true));
    *compute = l->compute;
    *is_compute = 1;
    *live = l.release();
  });
}

rewind_status rewind_live_port(const rewind_live* live, int* port) {
  return guarded([&] { need(port, "port") = need(live, "live").port; });
}

rewind_status rewind_live_declare(rewind_live* live, const char* name, const char* unit, double min, double max, int n,
                        const double* value, const char* description) {
  return guarded([&] {
    auto& l = need(live, "live");
    const std::string nm = text(name, "name");
    if (n != 1 && n != 3) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{}: n = {}: 1 or 3 components", nm, n));
    need(value, "value");
    if (!(min <= max)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{}: min {} above max {}", nm, min, max));
    for (const auto& p : l.parameters)
      if (p.name == nm) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} is declared twice", nm));
    col::ParameterInfo p;
    p.name = nm;
    p.unit = unit != nullptr ? unit : "";
    p.min = min;
    p.max = max;
    p.description = description != nullptr ? description : "";
    p.value = col::param_value(std::span<const double>(value, static_cast<std::size_t>(n)));
    l.declared.push_back(p);
    l.parameters.push_back(std::move(p));
  });
}

rewind_status rewind_live_boundary(rewind_live* live, int64_t step, double time, const rewind_grids* grids, rewind_file* file) {
  if (live == nullptr) return fail(REWIND_ERR_ARGUMENT, "rewind_live_boundary: live is NULL");
  return guarded([&] {
    auto& l = *live;
    Call call("rewind_live_boundary");
    call.check([&] {
      need(grids, "grids");
      if (!std::isfinite(time)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("time = {}: not a finite number", time));
    });
    call.arg("step", step).arg("time", time).arg("file", std::string(file != nullptr ? file->writer.path() : ""));
    // A window walks the tree: it is checked when any rank's grids changed since the last.
    if (agree(l.compute, call, grids != nullptr && grids->generation != l.checked_tree)) {
      agree_problem(l.compute, "rewind_live_boundary", REWIND_ERR_ARGUMENT,
                    tree_problem(l.compute, l.common, grids->records), false);
      l.checked_tree = grids->generation;
    }
    const auto& g = *grids;
    l.events.clear();
    if (file != nullptr && std::find(l.files.begin(), l.files.end(), file->writer.path()) == l.files.end())
      l.files.push_back(file->writer.path());
    l.last_step = step;
    l.last_time = time;
    if (file != nullptr) l.last_file = file->writer.path();
    Host host(l, step, time, g, file);
    l.link->at_boundary(host, false, true);
  });
}

rewind_status rewind_live_next_event(rewind_live* live, rewind_event* event, int* has_event) {
  if (has_event != nullptr) *has_event = 0;
  if (live == nullptr || event == nullptr || has_event == nullptr)
    return fail(REWIND_ERR_ARGUMENT, "rewind_live_next_event: live, event or has_event is NULL");
  if (live->events.empty()) return REWIND_OK;
  live->current = std::move(live->events.front());
  live->events.pop_front();
  const auto& e = live->current;
  *event = rewind_event{};
  event->kind = e.kind;
  event->n = static_cast<int32_t>(e.value.size());
  event->name = e.name.c_str();
  for (std::size_t i = 0; i < e.value.size() && i < 3; ++i) event->value[i] = e.value[i];
  event->parent = e.parent.c_str();
  event->step = e.step;
  event->time = e.time;
  event->file = e.file.c_str();
  *has_event = 1;
  return REWIND_OK;
}

rewind_status rewind_live_finish(rewind_live* live) {
  if (live == nullptr) return REWIND_OK;
  // As rewind_file_close: ranks in another call would be left behind; the service goes on.
  if (const rewind_status rc = guarded([&] { agree(live->compute, Call("rewind_live_finish")); }); rc != REWIND_OK) return rc;
  const rewind_status rc = guarded([&] {
    rewind_grids none{0, {}, 0, {}, {}};
    Host host(*live, live->last_step, live->last_time, none, nullptr);
    (void)live->link->finish(host);
    if (live->thread) (void)live->thread->join();
  });
  live->link.reset();
  live->thread.reset();
  if (live->own_compute && live->compute != MPI_COMM_NULL) MPI_Comm_free(&live->compute);
  if (live->service != MPI_COMM_NULL) MPI_Comm_free(&live->service);
  delete live;
  return rc;
}

rewind_status rewind_live_start_f(rewind_live** live, MPI_Fint world, int where, const char* listen, const char* token,
                        const rewind_config* cfg, MPI_Fint* compute, int* is_compute) {
  MPI_Comm c = MPI_COMM_NULL;
  // Fortran has no NULL string: its '' asks for the default (the environment's token, or a generated one).
  const char* t = token != nullptr && *token == '\0' ? nullptr : token;
  const rewind_status rc = rewind_live_start(live, MPI_Comm_f2c(world), where, listen, t, cfg, &c, is_compute);
  if (compute != nullptr) *compute = MPI_Comm_c2f(c);
  return rc;
}

}  // extern "C"

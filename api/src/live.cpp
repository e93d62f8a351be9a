// The C API's live windows and steering (rewind/rewind.h, "Live windows and steering"):
// the C calls over the live service of live_impl.hpp (a live::Host over the code's grids,
// its declared parameters and its rewind_file, per future), and the collector on a
// thread of rank 0 or on a rank of its own (rewind/live/*.hpp).
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
#include "live_impl.hpp"
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

namespace {

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

// One future at the start: the code's, on every compute rank.
void start_futures(rewind_live& l) {
  MPI_Comm_rank(l.compute, &l.rank);
  auto& f = l.my();
  MPI_Comm_size(l.compute, &f.size);
  f.first = 0;
  f.comm = l.compute;
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
      start_futures(*l);
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
    start_futures(*l);
    *compute = l->compute;
    *is_compute = 1;
    *live = l.release();
  });
}

rewind_status rewind_live_port(const rewind_live* live, int* port) {
  return guarded([&] { need(port, "port") = need(live, "live").port; });
}

rewind_status rewind_live_allow_futures(rewind_live* live, int max_futures) {
  return guarded([&] {
    auto& l = need(live, "live");
    if (max_futures < 1 || max_futures > 16)
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("max_futures = {}: 1 to 16", max_futures));
    l.max_futures = max_futures;
  });
}

rewind_status rewind_live_declare(rewind_live* live, const char* name, const char* unit, double min, double max, int n,
                        const double* value, const char* description) {
  return guarded([&] {
    auto& l = need(live, "live");
    const std::string nm = text(name, "name");
    if (n != 1 && n != 3) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{}: n = {}: 1 or 3 components", nm, n));
    need(value, "value");
    if (!(min <= max)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{}: min {} above max {}", nm, min, max));
    if (l.futures.size() > 1)
      throw Status(REWIND_ERR_ARGUMENT,
                   fmt::format("{}: declared after a fork (declare before the first boundary)", nm));
    for (const auto& p : l.declared)
      if (p.name == nm) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} is declared twice", nm));
    col::ParameterInfo p;
    p.name = nm;
    p.unit = unit != nullptr ? unit : "";
    p.min = min;
    p.max = max;
    p.description = description != nullptr ? description : "";
    p.value = col::param_value(std::span<const double>(value, static_cast<std::size_t>(n)));
    l.declared.push_back(p);
    l.my().parameters.push_back(std::move(p));
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
    // The ranks of this rank's future make the same call (after a fork, a future's
    // step, time and file are its own). A window walks the tree: it is checked when any
    // rank's grids changed since the last.
    const MPI_Comm group = l.my().comm;
    const bool changed = agree(group, call, grids != nullptr && grids->generation != l.checked_tree);
    if (changed && grids != nullptr) {  // agreed: every rank gave its grids
      agree_problem(group, "rewind_live_boundary", REWIND_ERR_ARGUMENT, tree_problem(group, l.common, grids->records),
                    false);
      l.checked_tree = grids->generation;
    }
    l.events.clear();
    auto& f = l.my();
    if (file != nullptr) {
      if (std::find(l.files.begin(), l.files.end(), file->writer.path()) == l.files.end())
        l.files.push_back(file->writer.path());
      l.last_file = file->writer.path();
      if (l.futures.size() == 1) {  // a fork's futures are named by it
        f.file = l.last_file;
        f.parent = file->writer.common().lineage.parent_file;
      }
    }
    f.step = l.last_step = step;
    f.time = l.last_time = time;
    (void)round(l, grids, file);
    hold_while_paused(l, grids, file);
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
  event->future = e.future;
  event->futures = e.futures;
  event->changes = e.changes.c_str();
  event->comm = e.comm;
  *has_event = 1;
  return REWIND_OK;
}

rewind_status rewind_live_finish(rewind_live* live) {
  if (live == nullptr) return REWIND_OK;
  // As rewind_file_close: ranks in another call would be left behind; the service goes on.
  // After a fork, the ranks of this rank's future (the others may still compute theirs).
  if (const rewind_status rc = guarded([&] { agree(live->my().comm, Call("rewind_live_finish")); }); rc != REWIND_OK)
    return rc;
  const rewind_status rc = guarded([&] {
    // This future has ended; its ranks meet the others' boundaries until every one has.
    live->my().ended = true;
    while (round(*live, nullptr, nullptr)) nap_if_idle(*live);
    Host host(*live, live->mine, nullptr, nullptr);
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

rewind_status rewind_live_event_comm_f(const rewind_live* live, MPI_Fint* comm) {
  return guarded([&] {
    const auto& c = need(live, "live").current.comm;
    need(comm, "comm") = c == MPI_COMM_NULL ? 0 : MPI_Comm_c2f(c);
  });
}

}  // extern "C"

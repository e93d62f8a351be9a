// `rewind serve FILE... [--listen HOST:PORT] [--token-file F]`: the collector over Rewind
// files (offline sliding windows). Prints the address it listens on, serves until
// SIGINT or SIGTERM, then stops gracefully. Serial; needs no MPI.
#include <fmt/core.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "rewind/collector/file_service.hpp"
#include "rewind/collector/server.hpp"
#include "rewind/collector/token.hpp"
#include "window_output.hpp"

namespace rwd::cli {
namespace {

struct ServeOptions {
  std::vector<std::string> files;
  std::string listen = "127.0.0.1:0";
  std::string token, token_file;
  std::size_t max_clients = 16;
  double idle_timeout = 300;
};

int run_serve(const ServeOptions& o) {
  const auto ep = parse_host_port(o.listen);
  if (!ep) throw UsageError("--listen " + o.listen + ": expected HOST:PORT, e.g. 127.0.0.1:7400");
  collector::FileService service(o.files);
  collector::ServerOptions so;
  so.host = ep->first;
  so.port = ep->second;
  so.token = collector::resolve_token(o.token, o.token_file);
  so.max_clients = o.max_clients;
  so.idle_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.idle_timeout * 1000));
  // Block the signals before the server's threads exist, so they inherit the mask and
  // only sigwait below sees SIGINT/SIGTERM.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  collector::Server server(service, so);
  server.start();
  fmt::print("rewind serve: listening on {}:{} ({} file{}, {})\n", so.host, server.port(), o.files.size(),
             o.files.size() == 1 ? "" : "s", so.token.empty() ? "no token" : "token required");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.stop();
  const auto st = server.stats();
  fmt::print("rewind serve: stopped by {} after {} requests from {} connections ({} closed to make room, {} busy; "
             "replies held for clients at most {:.0f} MiB)\n",
             sig == SIGINT ? "SIGINT" : "SIGTERM", st.requests, st.accepted, st.evicted,
             st.refused_busy + st.refused_memory, static_cast<double>(st.reply_bytes_peak) / 1048576.0);
  return 0;
}

const Registration reg{Command{
    "serve", "Serve sliding-window queries over Rewind files (the collector, offline)", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<ServeOptions>();
      sub.add_option("files", o->files, "Rewind HDF5 files (a run and its branches)")->required();
      sub.add_option("--listen", o->listen, "HOST:PORT to listen on; port 0 picks a free one (printed)")->capture_default_str();
      add_token_options(sub, o->token, o->token_file, true);
      sub.add_option("--max-clients", o->max_clients,
                     "Sessions at once; beyond, one idle for 1 s gives way, else the newcomer is refused (busy)")
          ->capture_default_str();
      sub.add_option("--idle-timeout", o->idle_timeout, "Seconds a client may stay idle")->capture_default_str();
      return [o] { return run_serve(*o); };
    },
    70}};

}  // namespace
}  // namespace rwd::cli

// A collector server over the tests' fake services, for the Python client and
// `rewind steer` tests (no simulation needed):
//   collector_test_server [--offline] [--token T] [--boundary-ms N] [--steer-timeout-ms N]
// --offline serves the Service defaults (as `rewind serve`: steering is unsupported),
// otherwise test::SteerableService. Prints "listening on 127.0.0.1:PORT", serves until
// SIGINT/SIGTERM.
#include <csignal>
#include <cstdio>
#include <string>

#include "frame_util.hpp"
#include "rewind/collector/server.hpp"

using namespace rwd::collector;

int main(int argc, char** argv) {
  bool offline = false;
  ServerOptions o;
  test::SteerableService steerable;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--offline") offline = true;
    else if (a == "--token" && has_value) o.token = argv[++i];
    else if (a == "--boundary-ms" && has_value) steerable.boundary = std::chrono::milliseconds(std::stoi(argv[++i]));
    else if (a == "--steer-timeout-ms" && has_value) o.steer_timeout = std::chrono::milliseconds(std::stoi(argv[++i]));
    else {
      std::fprintf(stderr, "collector_test_server: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before the server's threads exist
  test::FakeService fake;
  Server server(offline ? static_cast<Service&>(fake) : steerable, o);
  server.start();
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.stop();
  return 0;
}

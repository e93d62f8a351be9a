// Online (live) window benchmarks (bench/live/HISTORY.md, "Live windows (online)").
// bench/live/run.sh drives it. Each mode starts one live run itself, the way users do
// (the command after `--`, e.g. `mpirun -np 4 rewind run CASE --listen 127.0.0.1:0`, or
// the C example `mpirun -np 3 heat OUT STEPS --listen 127.0.0.1:0 --collector rank
// --progress 1`), reads the run's output through a pipe and stamps every line on arrival:
// with `--set monitor.progress=1e-9` (the C example: `--progress 1`) the run prints one
// line "step N ..." per step, which is the step clock of the measurements below. The run is stopped (`stop`) at the
// end.
//
//   rewind_bench_live paused  [options] -- RUN...   the run paused (compute ranks wait at a
//       boundary, so nothing waits for a step): R rounds of, in rotated order,
//         live-none       the large window (--large-vars, --budget), Client::window end to
//                         end, as a client gets it by default on loopback (codec none)
//         live-none-kept  the same into the previous reply's arrays (window(request, out))
//         live-zstd       the same with a client that asks for zstd only
//         live-zstd-remote  the same with a client offering zstd, then none: what a client
//                         offers by default away from loopback; arrays zstd would not
//                         shrink by 1/8 come as they are (protocol revision 1.6)
//         raw             the same uncompressed value bytes over a loopback socket (request, reply)
//         rawwire         the zstd window's wire bytes (its encoded frame) over the same socket
//       then the 10^6-value window (--vars) once per round: its latency with no wait.
//   rewind_bench_live running [options] -- RUN...   the run computing: R rounds of an idle
//       phase and a phase with a client querying the window back to back (order rotated),
//       --phase S seconds each; then --latency N windows sent at random moments.
//
// Options: --rounds R (5), --phase S (12), --latency N (20), --budget B (1048576),
//          --lod-budget B (524288), --vars p, --large-vars u,v,w,p, --warmup STEPS (3).
// Output, one measurement per line (report.py makes the tables):
//   tp <round> live-<codec>[-kept] <value bytes> <wire bytes> <ms>   value bytes: f64 values + u8 types
//   tp <round> raw|rawwire <bytes> <ms>
//   codec <round> <value bytes> <wire bytes> <encode ms> <decode ms>  (zstd, in-process, untimed above)
//   lat paused <round> <ms> <values>
//   lat paused-lod <round> uniform|adaptive-fresh|adaptive-kept <ms> <values> <rule that answered> <var>
//                  (--lod-budget, default 2^19: adaptive-fresh includes the compute ranks' details pass)
//   phase <round> idle|query <steps> <seconds> <ms per step> <windows> <median window ms>
//   cpu <round> idle|query <ms of world rank 0> <rank 1> ... <this process>   CPU time in the phase
//   lat running <i> <ms> <values> <step> <ms from request to the step's progress line>
//   run <line>                                          the run's own lines (not progress)
// Over 500 lines: the job launcher, every measured mode and the report sit in one file
// so that one reader can check that live and raw contenders move the same bytes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rewind/collector/client.hpp"
#include "rewind/collector/token.hpp"

namespace col = rwd::collector;

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
double ms_since(Clock::time_point t0) { return ms_between(t0, Clock::now()); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The live run: a child process whose stdout and stderr come through a pipe, every
/// line stamped when it arrives.
class Job {
 public:
  explicit Job(const std::vector<std::string>& argv) {
    int fd[2];
    if (::pipe(fd) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fd[1]);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    fd_ = fd[0];
    reader_ = std::thread([this] { read(); });
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  /// The collector's port, from `rewind run`'s "collector   listening on HOST:PORT", or
  /// the C example's (examples/heat-c) "heat: listening on port PORT" (collector thread)
  /// or "rewind live: listening on HOST:PORT" (its collector rank).
  std::uint16_t port(std::chrono::seconds timeout) {
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      {
        const std::lock_guard lock(mutex_);
        for (const auto& l : lines_) {
          const auto at = l.text.find("listening on ");
          if (at == std::string::npos) continue;
          if (l.text.rfind("heat: listening on port ", 0) == 0)
            return static_cast<std::uint16_t>(std::atoi(l.text.c_str() + 24));
          if (l.text.rfind("collector", 0) != 0 && l.text.rfind("rewind live:", 0) != 0) continue;
          const auto colon = l.text.find(':', at);
          return static_cast<std::uint16_t>(std::atoi(l.text.c_str() + colon + 1));
        }
      }
      if (eof_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (const auto& l : lines()) std::fprintf(stderr, "%s\n", l.text.c_str());
    throw std::runtime_error("the run printed no collector address");
  }

  struct Line {
    Clock::time_point t;
    std::string text;
  };
  std::vector<Line> lines() const {
    const std::lock_guard lock(mutex_);
    return lines_;
  }
  /// Arrival time of each progress line ("step N ..."), by step.
  std::map<std::int64_t, Clock::time_point> steps() const {
    std::map<std::int64_t, Clock::time_point> out;
    const std::lock_guard lock(mutex_);
    for (const auto& l : lines_)
      if (l.text.rfind("step ", 0) == 0) out[std::atoll(l.text.c_str() + 5)] = l.t;
    return out;
  }
  /// Whether the run's output has ended (the run is over, or died).
  bool ended() const { return eof_; }
  std::int64_t last_step() const {
    const auto s = steps();
    return s.empty() ? -1 : s.rbegin()->first;
  }

  /// The run's processes by world rank (children of mpirun with OMPI_COMM_WORLD_RANK).
  std::vector<pid_t> ranks() const {
    std::map<int, pid_t> by_rank;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const auto name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(e.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const auto close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 2));
      char state = 0;
      pid_t parent = 0;
      rest >> state >> parent;
      if (parent != pid_) continue;
      std::ifstream env(e.path() / "environ");
      for (std::string v; std::getline(env, v, '\0');)
        if (v.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) by_rank[std::atoi(v.c_str() + 21)] = std::atoi(name.c_str());
    }
    std::vector<pid_t> out;
    for (const auto& [r, p] : by_rank) out.push_back(p);
    return out;
  }

  /// Waits for the run to exit (SIGTERM after `timeout`); its exit code.
  int wait(std::chrono::seconds timeout) {
    const auto end = Clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > end) {
        std::fprintf(stderr, "the run did not end in time: SIGTERM\n");
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

 private:
  void read() {
    std::string part;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      const auto now = Clock::now();
      part.append(buf, static_cast<std::size_t>(n));
      for (auto nl = part.find('\n'); nl != std::string::npos; nl = part.find('\n')) {
        const std::lock_guard lock(mutex_);
        lines_.push_back({now, part.substr(0, nl)});
        part.erase(0, nl + 1);
      }
    }
    eof_ = true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::vector<Line> lines_;
  std::atomic<bool> eof_{false};
};

/// The baseline: a loopback TCP byte pump in this process. A request is the 8-byte
/// count; the reply is that many bytes from a buffer written before the timer, read
/// into a buffer written before the timer. One connection for all rounds, no delay.
class RawTcp {
 public:
  explicit RawTcp(std::size_t max_bytes) : out_(max_bytes, 0x5a), in_(max_bytes, 0) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(listener_, 1) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("raw tcp: cannot listen on loopback");
    server_ = std::thread([this] { serve(); });
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0) throw std::runtime_error("raw tcp: cannot connect");
    no_delay(fd_);
  }
  RawTcp(const RawTcp&) = delete;
  RawTcp& operator=(const RawTcp&) = delete;
  ~RawTcp() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    server_.join();
    ::close(listener_);
  }
  /// Milliseconds from sending the request to holding the last of `n` bytes.
  double fetch(std::uint64_t n) {
    const auto t0 = Clock::now();
    if (!send_all(fd_, &n, sizeof n)) throw std::runtime_error("raw tcp: send");
    if (!recv_all(fd_, in_.data(), n)) throw std::runtime_error("raw tcp: receive");
    return ms_since(t0);
  }

 private:
  static void no_delay(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  static bool send_all(int fd, const void* p, std::size_t n) {
    const auto* b = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t k = ::send(fd, b, n, MSG_NOSIGNAL);
      if (k <= 0) return false;
      b += k;
      n -= static_cast<std::size_t>(k);
    }
    return true;
  }
  static bool recv_all(int fd, void* p, std::size_t n) {
    auto* b = static_cast<char*>(p);
    while (n > 0) {
      const ssize_t k = ::recv(fd, b, n, 0);
      if (k <= 0) return false;
      b += k;
      n -= static_cast<std::size_t>(k);
    }
    return true;
  }
  void serve() {
    const int c = ::accept(listener_, nullptr, nullptr);
    if (c < 0) return;
    no_delay(c);
    std::uint64_t n = 0;
    while (recv_all(c, &n, sizeof n) && n <= out_.size() && send_all(c, out_.data(), n)) {
    }
    ::close(c);
  }
  std::vector<char> out_, in_;
  int listener_ = -1, fd_ = -1;
  std::thread server_;
};

/// CPU time (user + system) of a process so far, in ms; 0 if it is gone.
double cpu_ms(pid_t pid) {
  std::ifstream stat(pid == 0 ? std::string("/proc/self/stat") : "/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0.0;
  std::istringstream rest(line.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> f; ++i)  // fields 14 and 15: utime, stime
    if (i >= 14) ticks += std::atof(f.c_str());
  return 1e3 * ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// CPU ms of each of `pids`, then of this process (the client).
std::vector<double> cpu_of(const std::vector<pid_t>& pids) {
  std::vector<double> out;
  for (const auto p : pids) out.push_back(cpu_ms(p));
  out.push_back(cpu_ms(0));
  return out;
}

struct Options {
  int rounds = 5, latency = 20, warmup = 3;
  double phase = 12.0;
  std::uint64_t budget = 1048576;
  std::uint64_t lod_budget = 524288;  ///< paused: uniform vs adaptive windows (2^19: level 2 of 2^20 leaves, 2^17)
  std::vector<std::string> vars{"p"}, large_vars{"u", "v", "w", "p"};
  std::vector<std::string> run;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) out.push_back(t);
  return out;
}

col::WindowRequest whole_domain(const col::ServerInfo& info, std::uint64_t budget, const std::vector<std::string>& vars) {
  col::WindowRequest r;
  r.lo = info.domain_lo;
  r.hi = info.domain_hi;
  r.budget = budget;
  r.time = "live";
  r.variables = vars;
  return r;
}

/// Uncompressed bytes a window delivers: its f64 values and u8 cell types.
std::uint64_t value_bytes(const col::WindowReply& w) { return w.cells * (8 * w.values.size() + 1); }

/// Waits until the run has printed `steps` more progress lines; throws, with the run's
/// output on stderr, if the run ends first.
void wait_steps(const Job& job, int steps) {
  const auto first = job.last_step();
  while (job.last_step() < first + steps) {
    if (job.ended()) {
      for (const auto& l : job.lines()) std::fprintf(stderr, "%s\n", l.text.c_str());
      throw std::runtime_error("the run ended before its step " + std::to_string(first + steps));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void echo_run(const Job& job) {
  for (const auto& l : job.lines())
    if (l.text.rfind("step ", 0) != 0) std::printf("run %s\n", l.text.c_str());
}

int finish(Job& job, col::Client& client) {
  try {
    client.control(col::ControlAction::stop);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stop: %s\n", e.what());
  }
  client.close();
  const int rc = job.wait(std::chrono::seconds(300));
  echo_run(job);
  std::fflush(stdout);
  return rc;
}

int paused(const Options& o) {
  Job job(o.run);
  const auto port = job.port(std::chrono::seconds(300));
  col::Client client("127.0.0.1", port, col::resolve_token("", ""));  // the default: codec none on loopback
  col::ClientOptions zo;
  zo.codecs = {"zstd"};
  col::Client zclient("127.0.0.1", port, col::resolve_token("", ""), zo);
  zo.codecs = {"zstd", "none"};
  col::Client rclient("127.0.0.1", port, col::resolve_token("", ""), zo);
  if (client.server().codec != col::Codec::none || zclient.server().codec != col::Codec::zstd ||
      rclient.server().codec != col::Codec::zstd)
    throw std::runtime_error("the server did not grant the codecs asked for");
  const auto info = client.info();
  wait_steps(job, o.warmup);
  client.control(col::ControlAction::pause);
  const auto large = whole_domain(info, o.budget, o.large_vars);
  const auto small = whole_domain(info, o.budget, o.vars);
  const auto probe = client.window(large);  // untimed: sizes, and first-touch costs
  zclient.window(large);
  rclient.window(large);
  col::WindowReply kept = probe;
  const std::uint64_t raw_bytes = value_bytes(probe);
  const auto frame = col::encode(col::Message{1, probe});
  const std::uint64_t wire_bytes = frame.size();
  const std::uint64_t remote_bytes =
      col::encode(col::Message{1, probe},
                  col::EncodeOptions{col::Codec::zstd, col::kMaxReplyBytes, col::kZstdLevel, true})
          .size();
  const std::uint64_t none_bytes = col::encode(col::Message{1, probe}, col::EncodeOptions{col::Codec::none}).size();
  RawTcp tcp(std::max(raw_bytes, wire_bytes));
  tcp.fetch(raw_bytes);
  // One end-to-end window, timed: "tp <round> <name> <value bytes> <wire bytes> <ms>".
  const auto live = [](int r, const char* name, std::uint64_t wire, const std::function<std::uint64_t()>& fetch) {
    const auto t0 = Clock::now();
    const std::uint64_t bytes = fetch();
    const double ms = ms_since(t0);
    std::printf("tp %d %s %llu %llu %.3f\n", r, name, static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(wire), ms);
  };
  for (int r = 0; r < o.rounds; ++r) {
    for (int k = 0; k < 6; ++k) {
      switch ((r + k) % 6) {
        case 0: live(r, "live-none", none_bytes, [&] { return value_bytes(client.window(large)); }); break;
        case 1:
          live(r, "live-none-kept", none_bytes, [&] {
            client.window(large, kept);
            return value_bytes(kept);
          });
          break;
        case 2: live(r, "live-zstd", wire_bytes, [&] { return value_bytes(zclient.window(large)); }); break;
        case 5: live(r, "live-zstd-remote", remote_bytes, [&] { return value_bytes(rclient.window(large)); }); break;
        case 3:
          std::printf("tp %d raw %llu %.3f\n", r, static_cast<unsigned long long>(raw_bytes), tcp.fetch(raw_bytes));
          break;
        default:
          std::printf("tp %d rawwire %llu %.3f\n", r, static_cast<unsigned long long>(wire_bytes), tcp.fetch(wire_bytes));
      }
      std::fflush(stdout);
    }
    // What the collector's encoder and the client's decoder cost for this reply
    // (zstd, level as the server), in this process, outside the timers above.
    auto t0 = Clock::now();
    const auto bytes = col::encode(col::Message{1, probe});
    const double enc = ms_since(t0);
    t0 = Clock::now();
    const auto back = col::decode(bytes);
    const double dec = ms_since(t0);
    std::printf("codec %d %llu %llu %.3f %.3f\n", r, static_cast<unsigned long long>(raw_bytes),
                static_cast<unsigned long long>(bytes.size()), enc, dec);
    t0 = Clock::now();
    const auto w = client.window(small);
    std::printf("lat paused %d %.3f %llu\n", r, ms_since(t0), static_cast<unsigned long long>(w.cells));
    // At --lod-budget (between two levels, where adaptive refines): uniform; adaptive
    // with details computed now by the compute ranks (each round another variable, so
    // none is kept from the round before); adaptive again, ranked by the details kept.
    const std::vector<std::string> var{o.large_vars[static_cast<std::size_t>(r) % o.large_vars.size()]};
    const auto lod = [&](const char* name, const char* rule) {
      auto q = whole_domain(info, o.lod_budget, var);
      q.lod = rule;
      const auto t1 = Clock::now();
      const auto a = client.window(q);
      std::printf("lat paused-lod %d %s %.3f %llu %s %s\n", r, name, ms_since(t1),
                  static_cast<unsigned long long>(a.cells), a.lod.c_str(), var.front().c_str());
    };
    if (r % 2 == 0) lod("uniform", "uniform");
    lod("adaptive-fresh", "adaptive");
    lod("adaptive-kept", "adaptive");
    if (r % 2 == 1) lod("uniform", "uniform");
    std::fflush(stdout);
  }
  zclient.close();
  rclient.close();
  return finish(job, client);
}

int running(const Options& o) {
  Job job(o.run);
  const auto port = job.port(std::chrono::seconds(300));
  col::Client client("127.0.0.1", port, col::resolve_token("", ""));
  const auto req = whole_domain(client.info(), o.budget, o.vars);
  wait_steps(job, o.warmup);  // first: a code that adopts Rewind describes its tree at its first boundary
  client.window(req);         // untimed: first-touch costs on every side
  const auto phase = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.phase));
  const auto pids = job.ranks();
  std::vector<double> idle_step;
  for (int r = 0; r < o.rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      const bool query = (r + k) % 2 == 1;
      const auto cpu0 = cpu_of(pids);
      const auto t0 = Clock::now(), end = t0 + phase;
      std::vector<double> ms;
      if (query) {
        while (Clock::now() < end) {
          const auto a = Clock::now();
          client.window(req);
          ms.push_back(ms_since(a));
        }
      } else {
        std::this_thread::sleep_until(end);
      }
      const auto t1 = Clock::now();
      // Steps whose progress line arrived inside the phase; their mean spacing.
      std::vector<Clock::time_point> in;
      for (const auto& [s, t] : job.steps())
        if (t >= t0 && t <= t1) in.push_back(t);
      const double per = in.size() > 1 ? ms_between(in.front(), in.back()) / static_cast<double>(in.size() - 1) : 0.0;
      if (!query && per > 0) idle_step.push_back(per);
      const auto cpu1 = cpu_of(pids);
      std::printf("phase %d %s %zu %.3f %.3f %zu %.3f\n", r, query ? "query" : "idle", in.size(), ms_between(t0, t1) / 1e3,
                  per, ms.size(), median(ms));
      std::printf("cpu %d %s", r, query ? "query" : "idle");
      for (std::size_t i = 0; i < cpu0.size(); ++i) std::printf(" %.0f", cpu1[i] - cpu0[i]);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  // Windows at random moments: the wait for the next boundary is uniform-ish in [0, step).
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> pause(0.0, 1.2 * median(idle_step));
  struct Shot {
    Clock::time_point sent;
    double ms;
    std::uint64_t values;
    std::int64_t step;
  };
  std::vector<Shot> shots;
  for (int i = 0; i < o.latency; ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(pause(rng)));
    const auto t0 = Clock::now();
    const auto w = client.window(req);
    shots.push_back({t0, ms_since(t0), w.cells, w.step});
  }
  wait_steps(job, 1);  // the last shot's progress line
  const auto clock = job.steps();
  for (std::size_t i = 0; i < shots.size(); ++i) {
    const auto& s = shots[i];
    const auto at = clock.find(s.step);
    std::printf("lat running %zu %.3f %llu %lld %.3f\n", i, s.ms, static_cast<unsigned long long>(s.values),
                static_cast<long long>(s.step), at == clock.end() ? -1.0 : ms_between(s.sent, at->second));
  }
  std::fflush(stdout);
  return finish(job, client);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: rewind_bench_live paused|running [--rounds R] [--phase S] [--latency N] [--budget B] "
                 "[--lod-budget B] [--vars p] "
                 "[--large-vars u,v,w,p] [--warmup STEPS] -- mpirun ... rewind run CASE --listen 127.0.0.1:0 ...\n");
    return 2;
  }
  const std::string mode = argv[1];
  Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--") {
      o.run.assign(argv + i + 1, argv + argc);
      break;
    }
    if (a == "--rounds" && more) o.rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--phase" && more) o.phase = std::atof(argv[++i]);
    else if (a == "--latency" && more) o.latency = std::max(1, std::atoi(argv[++i]));
    else if (a == "--budget" && more) o.budget = static_cast<std::uint64_t>(std::atof(argv[++i]));
    else if (a == "--vars" && more) o.vars = split(argv[++i]);
    else if (a == "--lod-budget" && more) o.lod_budget = static_cast<std::uint64_t>(std::atof(argv[++i]));
    else if (a == "--large-vars" && more) o.large_vars = split(argv[++i]);
    else if (a == "--warmup" && more) o.warmup = std::max(0, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "rewind_bench_live: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (o.run.empty()) {
    std::fprintf(stderr, "rewind_bench_live: no run command after --\n");
    return 2;
  }
  try {
    if (mode == "paused") return paused(o);
    if (mode == "running") return running(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewind_bench_live: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "rewind_bench_live: unknown mode %s\n", mode.c_str());
  return 2;
}

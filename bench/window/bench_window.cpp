// Offline sliding-window latency against reading the whole step and subsampling it
// (bench/window/HISTORY.md, "Sliding windows (offline)"). bench/window/run.sh drives it.
//
//   rewind_bench_window plan FILE...                  what each window answers (level, values, spacing)
//   rewind_bench_window run --round R FILE... [--budgets 10000,100000,1000000] [--var p] [--reps 3]
//                           [--only rewind|rewind_open|whole]
//   rewind_bench_window evict FILE...                 fsync + POSIX_FADV_DONTNEED, with mincore before/after
//   rewind_bench_window lod FILE... [--budgets ...] [--var p] [--reps 30] [--rounds 5]
//                           uniform against adaptive windows (lod), interleaved: p50/p95 per
//                           budget and box, warm (one open FileService, --reps each) and cold
//                           (evicted, a new FileService each, --rounds each)
//
// `run` prints one line per measurement:
//   m <round> <file stem> <who> <warm|cold> <budget> <ms> <values>
// who:
//   rewind       what `rewind window FILE --box <domain> --budget B --vars p` does: FileService
//                on the file + Handler::handle (open, step, topology, select, read rows, extract)
//   rewind_open  one request to a FileService that is already open (a `rewind serve`
//                session; the step's topology is cached from an untimed request before)
//   whole        (a): Reader::open + read_topology + read_rows of every leaf grid of the
//                step (the finest level, one contiguous run) + subsample with a stride so
//                that the value count equals rewind's (into buffers allocated and touched
//                before the timer)
// warm: the file is in the page cache (an untimed call first), the median of --reps
// calls; cold: the file's pages are dropped (fsync + POSIX_FADV_DONTNEED, checked with
// mincore) right before one call. The contenders' order rotates with the round.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "rewind/collector/file_service.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/window/kernel_view.hpp"
#include "rewind/window/select.hpp"

namespace col = rwd::collector;
namespace k = rwd::kernel;
namespace win = rwd::window;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// Fraction of the file's pages in the page cache (mincore), -1 if it cannot tell.
double resident_fraction(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  struct stat st {};
  ::fstat(fd, &st);
  double frac = -1;
  if (st.st_size > 0) {
    void* m = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      const long page = ::sysconf(_SC_PAGESIZE);
      const std::size_t pages = (static_cast<std::size_t>(st.st_size) + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page);
      std::vector<unsigned char> v(pages);
      if (::mincore(m, static_cast<std::size_t>(st.st_size), v.data()) == 0)
        frac = static_cast<double>(std::count_if(v.begin(), v.end(), [](unsigned char c) { return c & 1; })) / static_cast<double>(pages);
      ::munmap(m, static_cast<std::size_t>(st.st_size));
    }
  }
  ::close(fd);
  return frac;
}

/// Drops the file's clean pages from the page cache (no root needed). Returns the
/// resident fraction afterwards.
double evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return resident_fraction(path);
}

std::vector<std::int64_t> parse_list(const std::string& s) {
  std::vector<std::int64_t> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) out.push_back(static_cast<std::int64_t>(std::atof(t.c_str())));
  return out;
}

std::string stem(const std::string& p) { return std::filesystem::path(p).stem().string(); }

struct Domain {
  std::array<double, 3> lo{}, hi{};
};

Domain domain_of(const k::CommonInfo& c) { return {{c.domain[0], c.domain[2], c.domain[4]}, {c.domain[1], c.domain[3], c.domain[5]}}; }

/// The zoom box: 1/4 of the domain per axis (1/64 of its volume), starting at 3/8, so
/// its faces fall on cell faces of every level >= 2.
Domain zoom_of(const Domain& d) {
  Domain z;
  for (int a = 0; a < 3; ++a) {
    const double e = d.hi[a] - d.lo[a];
    z.lo[a] = d.lo[a] + 0.375 * e;
    z.hi[a] = z.lo[a] + 0.25 * e;
  }
  return z;
}

col::WindowRequest request(const Domain& box, std::int64_t budget, const std::string& var,
                           const char* lod = "uniform") {
  col::WindowRequest r;
  r.lod = lod;
  r.lo = box.lo;
  r.hi = box.hi;
  r.budget = static_cast<std::uint64_t>(budget);
  r.time = "latest";
  r.variables = {var};
  return r;
}

col::WindowReply window(col::FileService& service, const col::WindowRequest& req) {
  col::Handler handler(service);
  auto reply = handler.handle(req);
  if (const auto* e = std::get_if<col::ErrorReply>(&reply)) throw std::runtime_error(e->message);
  return std::get<col::WindowReply>(std::move(reply));
}

/// Per-axis values of a window answer: its covered box over its spacing.
std::array<long, 3> counts_of(const col::WindowReply& w) {
  std::array<long, 3> n{};
  for (int a = 0; a < 3; ++a) n[a] = std::lround((w.hi[a] - w.lo[a]) / w.pieces.front().spacing[a]);
  return n;
}

/// (a): the whole finest level of one variable, then every f-th cell per axis of the
/// global leaf lattice. Buffers come from the caller, allocated and touched once.
struct Whole {
  std::vector<double> leaves, out;
  std::int64_t run(const std::string& file, const std::string& var, int f) {
    const auto reader = k::Reader::open(file);
    const auto step = reader.find_step("latest");
    const auto topo = reader.read_topology(step.step);
    const auto& c = reader.common();
    const int deepest = topo.n_levels() - 1;
    std::vector<std::int64_t> rows;
    for (auto r = topo.level_offsets[static_cast<std::size_t>(deepest)]; r < topo.n_grids; ++r) rows.push_back(r);
    const std::array<int, 3> s{c.block.sx, c.block.sy, c.block.sz};
    const auto per = static_cast<std::size_t>(c.block.cells());
    if (leaves.size() < rows.size() * per) leaves.assign(rows.size() * per, 0.0);
    reader.read_rows(step.step, "cell_data", var, rows, leaves.data());
    // Grid position on the leaf lattice from its bbox; keep global cells with index % f == 0.
    const double ext[3] = {c.domain[1] - c.domain[0], c.domain[3] - c.domain[2], c.domain[5] - c.domain[4]};
    std::size_t n = 0;
    for (std::size_t g = 0; g < rows.size(); ++g) {
      const auto& b = topo.bbox[static_cast<std::size_t>(rows[g])];
      std::array<int, 3> first{};
      for (int a = 0; a < 3; ++a) {
        const long origin = std::lround((b[2 * a] - c.domain[2 * a]) / ext[a] * (s[a] << deepest));
        first[a] = static_cast<int>((f - origin % f) % f);
      }
      const double* src = leaves.data() + g * per;
      for (int z = first[2]; z < s[2]; z += f)
        for (int y = first[1]; y < s[1]; y += f)
          for (int x = first[0]; x < s[0]; x += f) {
            if (n == out.size()) out.push_back(0.0);
            out[n++] = src[x + static_cast<std::size_t>(s[0]) * (y + static_cast<std::size_t>(s[1]) * z)];
          }
    }
    return static_cast<std::int64_t>(n);
  }
};

int plan(const std::vector<std::string>& files, const std::vector<std::int64_t>& budgets, const std::string& var) {
  for (const auto& file : files) {
    col::FileService service({file});
    const auto info = service.info();
    const auto reader = k::Reader::open(file);
    const auto topo = reader.read_topology(reader.find_step("latest").step);
    const int deepest = topo.n_levels() - 1;
    const Domain d = domain_of(reader.common());
    for (const auto b : budgets) {
      const auto whole = window(service, request(d, b, var));
      const auto zoom = window(service, request(zoom_of(d), b, var));
      const auto nw = counts_of(whole), nz = counts_of(zoom);
      const double leaf_h = (d.hi[0] - d.lo[0]) / (info.block[0] << deepest);
      // plan <stem> <budget> <leaf cells per axis x y z> <whole: level stride values nx ny nz spacing_x>
      //      <zoom: level values nx ny nz spacing_x> <finer per axis>
      std::printf("plan %s %lld %d %d %d  %d %d %llu %ld %ld %ld %.6g  %d %llu %ld %ld %ld %.6g  %.3g\n", stem(file).c_str(),
                  static_cast<long long>(b), info.block[0] << deepest, info.block[1] << deepest, info.block[2] << deepest,
                  whole.level, whole.stride, static_cast<unsigned long long>(whole.cells), nw[0], nw[1], nw[2],
                  whole.pieces.front().spacing[0], zoom.level, static_cast<unsigned long long>(zoom.cells), nz[0], nz[1], nz[2],
                  zoom.pieces.front().spacing[0], whole.pieces.front().spacing[0] / zoom.pieces.front().spacing[0]);
      (void)leaf_h;
    }
  }
  return 0;
}

int run(const std::vector<std::string>& files, const std::vector<std::int64_t>& budgets, const std::string& var, int round,
        int reps, const std::string& only) {
  Whole whole;
  for (const auto& file : files) {
    const std::string name = stem(file);
    col::FileService session({file});
    const auto reader = k::Reader::open(file);
    const auto topo = reader.read_topology(reader.find_step("latest").step);
    const auto& c = reader.common();
    const int deepest = topo.n_levels() - 1;
    const Domain d = domain_of(c);
    for (const auto b : budgets) {
      const auto req = request(d, b, var);
      const auto probe = window(session, req);  // untimed: caches the topology, warms the file
      // (a)'s stride on the leaf lattice: rewind's answer spacing over the leaf spacing.
      const int f = static_cast<int>(std::lround(probe.pieces.front().spacing[0] / ((d.hi[0] - d.lo[0]) / (c.block.sx << deepest))));
      struct Contender {
        const char* who;
        std::function<std::int64_t()> call;
      };
      std::vector<Contender> cs{
          {"rewind", [&] { col::FileService s({file}); return static_cast<std::int64_t>(window(s, req).cells); }},
          {"rewind_open", [&] { return static_cast<std::int64_t>(window(session, req).cells); }},
          {"whole", [&] { return whole.run(file, var, f); }},
      };
      if (!only.empty())
        cs.erase(std::remove_if(cs.begin(), cs.end(), [&](const Contender& x) { return only != x.who; }), cs.end());
      if (cs.empty()) continue;
      std::rotate(cs.begin(), cs.begin() + round % static_cast<int>(cs.size()), cs.end());
      for (const char* cache : {"warm", "cold"}) {
        const bool cold = std::strcmp(cache, "cold") == 0;
        for (auto& ct : cs) {
          std::vector<double> t;
          std::int64_t values = 0;
          if (!cold) ct.call();  // warm-up, untimed
          for (int i = 0; i < (cold ? 1 : reps); ++i) {
            if (cold) {
              const double left = evict(file);
              if (left > 0.01) std::fprintf(stderr, "warning: %.1f %% of %s still cached after eviction\n", 100 * left, file.c_str());
            }
            const auto t0 = Clock::now();
            values = ct.call();
            t.push_back(ms_since(t0));
          }
          std::sort(t.begin(), t.end());
          std::printf("m %d %s %s %s %lld %.3f %lld\n", round, name.c_str(), ct.who, cache, static_cast<long long>(b),
                      t[t.size() / 2], static_cast<long long>(values));
          std::fflush(stdout);
          if (values != static_cast<std::int64_t>(probe.cells))
            std::fprintf(stderr, "warning: %s returned %lld values, rewind %llu\n", ct.who, static_cast<long long>(values),
                         static_cast<unsigned long long>(probe.cells));
        }
      }
    }
  }
  return 0;
}

double quantile(std::vector<double> t, double q) {
  std::sort(t.begin(), t.end());
  return t[std::min(t.size() - 1, static_cast<std::size_t>(q * static_cast<double>(t.size())))];
}

/// Uniform against adaptive windows of the same box and budget, interleaved call by call:
///   lod <file stem> <box> <budget> <warm|cold> <lod> <p50 ms> <p95 ms> <values> <pieces> <levels>
int lod(const std::vector<std::string>& files, const std::vector<std::int64_t>& budgets, const std::string& var,
        int reps, int rounds) {
  for (const auto& file : files) {
    const std::string name = stem(file);
    const auto reader = k::Reader::open(file);
    const auto st = reader.find_step("latest");
    if (!reader.has_statistics(st.step, var))
      throw std::runtime_error(
          fmt::format("{} step {} has no statistics of {}: adaptive windows would answer with the uniform rule "
                      "(regenerate it)",
                      file, st.step, var));
    const Domain d = domain_of(reader.common());
    col::FileService session({file});
    for (const auto& [bname, box] : {std::pair<const char*, Domain>{"whole", d}, {"zoom", zoom_of(d)}})
      for (const auto b : budgets) {
        const std::array<col::WindowRequest, 2> req{request(box, b, var, "uniform"), request(box, b, var, "adaptive")};
        std::array<col::WindowReply, 2> probe{window(session, req[0]), window(session, req[1])};  // untimed: warms
        for (const char* cache : {"warm", "cold"}) {
          const bool cold = std::strcmp(cache, "cold") == 0;
          std::array<std::vector<double>, 2> t;
          for (int i = 0; i < (cold ? rounds : reps); ++i)
            for (int j = 0; j < 2; ++j) {
              const int which = (i + j) % 2;  // alternate which goes first
              if (cold) evict(file);
              const auto t0 = Clock::now();
              if (cold) {
                col::FileService s({file});
                (void)window(s, req[static_cast<std::size_t>(which)]);
              } else {
                (void)window(session, req[static_cast<std::size_t>(which)]);
              }
              t[static_cast<std::size_t>(which)].push_back(ms_since(t0));
            }
          for (int j = 0; j < 2; ++j) {
            const auto& w = probe[static_cast<std::size_t>(j)];
            int lo = 99, hi = -1;
            for (const auto& p : w.pieces) {
              lo = std::min(lo, p.level);
              hi = std::max(hi, p.level);
            }
            std::printf("lod %s %s %lld %s %s %.3f %.3f %llu %zu %d-%d\n", name.c_str(), bname,
                        static_cast<long long>(b), cache, w.lod.c_str(), quantile(t[static_cast<std::size_t>(j)], 0.5),
                        quantile(t[static_cast<std::size_t>(j)], 0.95), static_cast<unsigned long long>(w.cells),
                        w.pieces.size(), lo, hi);
            std::fflush(stdout);
          }
        }
      }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: rewind_bench_window plan|run|evict|lod [--round R] [--budgets 10000,100000,1000000] [--var p] "
                 "[--reps 3] FILE...\n");
    return 2;
  }
  const std::string mode = argv[1];
  std::vector<std::string> files;
  std::vector<std::int64_t> budgets{10000, 100000, 1000000};
  std::string var = "p", only;
  int round = 0, reps = 3, rounds = 5;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--round" && i + 1 < argc) round = std::atoi(argv[++i]);
    else if (a == "--budgets" && i + 1 < argc) budgets = parse_list(argv[++i]);
    else if (a == "--var" && i + 1 < argc) var = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else files.push_back(a);
  }
  try {
    if (mode == "plan") return plan(files, budgets, var);
    if (mode == "run") return run(files, budgets, var, round, reps, only);
    if (mode == "lod") return lod(files, budgets, var, reps, rounds);
    if (mode == "evict") {
      for (const auto& f : files) {
        const double before = resident_fraction(f);
        const double after = evict(f);
        std::printf("evict %s: %.1f %% cached before, %.1f %% after\n", f.c_str(), 100 * before, 100 * after);
      }
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewind_bench_window: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "rewind_bench_window: unknown mode %s\n", mode.c_str());
  return 2;
}

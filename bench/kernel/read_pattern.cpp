// The restart-read access pattern alone: plain pread, no MPI, no HDF5.
//
//   rewind_bench_read_pattern FILE [ROUNDS]
//
// Two threads (two "ranks") read a 1.14 GiB file laid out like the kernel benchmark's
// checkpoint (8 variables x 585 rows of 256 KiB; rows by level: 1, 8, 64, 512) with a
// cold page cache (fdatasync + POSIX_FADV_DONTNEED before every read), in these patterns,
// rotated from round to round:
//   halves        each thread one contiguous half of the file in one pread (raw MPI-IO's
//                 pattern in the kernel benchmark)
//   halves-64MiB  the same halves in 64 MiB preads
//   kernel        each thread its rows of every level of every variable, in file order
//                 (the kernel's restart read with partition_rows: 4 pieces per variable)
//   kernel-1run   each thread one contiguous half of every variable (1 piece per
//                 variable: what a contiguous row split would read)
//   kernel-rot    the kernel's pieces, thread 1 starting at variable 4 (the two threads
//                 never in the same variable)
//   xchg          an aggregated read: each thread reads its contiguous half in 64 MiB
//                 chunks into a staging buffer and copies each chunk out, half into its
//                 own destination and half into the other thread's (what two-phase I/O
//                 would do for the kernel's rows), the copy after the read
//   xchg-async    the same with the copy of chunk k on a helper thread while chunk k+1
//                 is read (two staging buffers)
// Creates FILE (1.14 GiB) if it is shorter. Prints one line per read and, at the end,
// the best and median seconds per pattern (bench/kernel/HISTORY.md, "Restart reads: the access pattern").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kRow = 256 * 1024;
constexpr int kVars = 8, kThreads = 2;
constexpr long kLevelRows[4] = {1, 8, 64, 512}, kLevelStart[4] = {0, 1, 9, 73};
constexpr long kVarBytes = 585 * kRow, kTotal = kVars * kVarBytes;

struct Range {
  long offset, bytes;
};

/// The byte ranges thread t reads, in order, for a pattern.
std::vector<Range> ranges(const std::string& pattern, int t) {
  std::vector<Range> out;
  if (pattern == "halves" || pattern == "halves-64MiB") {
    const long half = kTotal / kThreads, step = pattern == "halves" ? half : 64L << 20;
    for (long d = 0; d < half; d += step) out.push_back({half * t + d, std::min(step, half - d)});
    return out;
  }
  for (int vv = 0; vv < kVars; ++vv) {
    const int v = pattern == "kernel-rot" ? (vv + t * kVars / kThreads) % kVars : vv;
    if (pattern == "kernel-1run") {
      out.push_back({v * kVarBytes + kVarBytes / kThreads * t, kVarBytes / kThreads});
      continue;
    }
    for (int l = 0; l < 4; ++l) {
      const long a = kLevelRows[l] * t / kThreads, b = kLevelRows[l] * (t + 1) / kThreads;
      if (b > a) out.push_back({v * kVarBytes + (kLevelStart[l] + a) * kRow, (b - a) * kRow});
    }
  }
  return out;
}

bool read_all(int fd, char* buf, const std::vector<Range>& rs) {
  for (const auto& r : rs)
    for (long done = 0; done < r.bytes;) {
      const ssize_t n = ::pread(fd, buf, static_cast<std::size_t>(r.bytes - done), r.offset + done);
      if (n <= 0) return false;
      done += n;
      buf += n;
    }
  return true;
}

/// Thread t's aggregated read: its contiguous half in 64 MiB chunks, each chunk copied
/// out half to its own destination, half to the other thread's (second half of it).
bool exchange(int fd, int t, bool async, std::vector<std::vector<char>>& stage, std::vector<std::vector<char>>& dests,
              std::size_t per_thread) {
  const auto rs = ranges("halves-64MiB", t);
  const auto me = static_cast<std::size_t>(t), other = static_cast<std::size_t>(1 - t);
  std::size_t own_at = 0, other_at = per_thread / 2;
  std::thread copier;
  bool ok = true;
  for (std::size_t i = 0; i < rs.size() && ok; ++i) {
    char* st = stage[me * 2 + (async ? i % 2 : 0)].data();
    ok = read_all(fd, st, {rs[i]});
    if (copier.joinable()) copier.join();  // chunk i-1's copy, which used the other buffer
    auto copy = [&, st, n = static_cast<std::size_t>(rs[i].bytes)] {
      std::memcpy(dests[me].data() + own_at, st, n / 2);
      std::memcpy(dests[other].data() + other_at, st + n / 2, n - n / 2);
      own_at += n / 2;
      other_at += n - n / 2;
    };
    if (async) copier = std::thread(copy);
    else copy();
  }
  if (copier.joinable()) copier.join();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
    std::puts("usage: rewind_bench_read_pattern FILE [ROUNDS]");
    return argc < 2 ? 2 : 0;
  }
  const std::string path = argv[1];
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 8;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "rewind_bench_read_pattern: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  if (::lseek(fd, 0, SEEK_END) < kTotal) {
    std::vector<char> mib(1 << 20, 7);
    for (long o = 0; o < kTotal; o += 1 << 20)
      if (::pwrite(fd, mib.data(), mib.size(), o) != static_cast<ssize_t>(mib.size())) {
        std::fprintf(stderr, "rewind_bench_read_pattern: cannot write %s\n", path.c_str());
        return 1;
      }
    ::fsync(fd);
  }
  // Destination buffers touched up front: only the page cache is fresh memory.
  // (a thread reads at most half the rows of each level, rounded up: one row per level more)
  const auto per_thread = static_cast<std::size_t>(kTotal / kThreads + 4 * kVars * kRow);
  std::vector<std::vector<char>> bufs(kThreads, std::vector<char>(per_thread, 1));
  const std::vector<std::string> patterns = {"halves", "halves-64MiB", "kernel", "kernel-1run", "kernel-rot",
                                             "xchg", "xchg-async"};
  std::vector<std::vector<char>> dests(kThreads, std::vector<char>(per_thread, 1));  // xchg targets
  std::vector<std::vector<char>> stage(kThreads * 2, std::vector<char>(64L << 20, 1));
  std::map<std::string, std::vector<double>> secs;
  bool ok = true;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t q = 0; q < patterns.size(); ++q) {
      const std::string& p = patterns[(q + static_cast<std::size_t>(r)) % patterns.size()];
      ::fdatasync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> th;
      for (int t = 0; t < kThreads; ++t)
        th.emplace_back([&, t] {
          const int f = ::open(path.c_str(), O_RDONLY);
          if (f < 0) ok = false;
          else if (p.rfind("xchg", 0) == 0) {
            if (!exchange(f, t, p == "xchg-async", stage, dests, per_thread)) ok = false;
          } else if (!read_all(f, bufs[static_cast<std::size_t>(t)].data(), ranges(p, t))) ok = false;
          if (f >= 0) ::close(f);
        });
      for (auto& x : th) x.join();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      secs[p].push_back(s);
      std::printf("read %d %-13s %.3f s\n", r, p.c_str(), s);
      std::fflush(stdout);
    }
  ::close(fd);
  if (!ok) {
    std::fprintf(stderr, "rewind_bench_read_pattern: a read of %s failed\n", path.c_str());
    return 1;
  }
  std::printf("# pattern        best s   median s   (%d rounds, %.3f GiB, cold page cache)\n", rounds,
              static_cast<double>(kTotal) / (1 << 30));
  for (const auto& p : patterns) {
    auto v = secs[p];
    std::sort(v.begin(), v.end());
    std::printf("sum %-13s %7.3f %9.3f\n", p.c_str(), v.front(), v[v.size() / 2]);
  }
  return 0;
}

// What a page-cache write of data that lives in memory can reach, against dd's.
//
//   rewind_bench_page_cache_limit FILE [ROUNDS]
//
// The kernel benchmark's page-cache target is "90 % of dd". dd writes one 1 MiB buffer
// over and over: a buffer that stays in the CPU cache. A checkpoint writer copies a step
// that lives in DRAM. This program writes the benchmark's step size (1 226 960 320
// bytes) to FILE with the same system calls, single-threaded, no MPI, no HDF5, with only
// the source of the bytes changing, in a new order every round (see kOrder):
//   dd          dd if=/dev/zero of=FILE bs=1M (the benchmark's D; includes starting dd)
//   hot-1MiB    write() of one 1 MiB buffer, again and again (what dd does)
//   dram-1MiB   write() of consecutive 1 MiB pieces of a 1.14 GiB buffer in DRAM,
//               filled before any timer
//   dram-1call  one write() of that whole buffer (raw MPI-IO on one rank also issues
//               writes of 128 MiB and more)
// Each timer covers open (create) + the writes + close, no fsync: a page-cache write.
// Before each write the file is unlinked, then sync, 1 s, sync (untimed); after the
// timer the file is fsynced (untimed). Prints each write and, at the end, the best and
// median GiB/s per contender and the median of the per-round ratios to dd
// (bench/kernel/HISTORY.md, "Page-cache writes: the limit").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kBytes = 1226960320L;  // the kernel benchmark's step
constexpr long kMiB = 1L << 20;
// Orders: a Williams Latin square, so every contender follows every other one equally
// often over 4 rounds (a rotation always puts the same contender before each one, and
// on this VM what a write leaves behind can slow the next: bench/kernel/HISTORY.md).
constexpr int kOrder[4][4] = {{0, 1, 3, 2}, {1, 2, 0, 3}, {2, 3, 1, 0}, {3, 0, 2, 1}};

/// Writes `bytes` from `src` to `fd`, advancing through the source when `walk` (or
/// rewriting the same `piece` bytes when not), in `piece`-sized write() calls.
bool write_all(int fd, const char* src, long bytes, long piece, bool walk) {
  for (long done = 0; done < bytes;) {
    const long want = std::min(piece, bytes - done);
    const ssize_t n = ::write(fd, walk ? src + done : src, static_cast<std::size_t>(want));
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
    std::puts("usage: rewind_bench_page_cache_limit FILE [ROUNDS]");
    return argc < 2 ? 2 : 0;
  }
  const std::string path = argv[1];
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 8;
  if (rounds < 1) {
    std::fprintf(stderr, "rewind_bench_page_cache_limit: ROUNDS must be a positive number, not '%s'\n", argv[2]);
    return 2;
  }
  std::vector<char> dram(static_cast<std::size_t>(kBytes));
  for (std::size_t i = 0; i < dram.size(); ++i) dram[i] = static_cast<char>(i * 131 + 7);
  std::vector<char> hot(static_cast<std::size_t>(kMiB), 7);
  const long dd_count = (kBytes + kMiB - 1) / kMiB;  // dd writes whole MiB: its own byte count
  const std::string dd_cmd = "dd if=/dev/zero of='" + path + "' bs=1M count=" + std::to_string(dd_count) + " status=none";

  const std::vector<std::string> names = {"dd", "hot-1MiB", "dram-1MiB", "dram-1call"};
  std::map<std::string, std::vector<double>> gibs;
  std::map<std::string, std::vector<double>> ratio_to_dd;  // per round
  for (int r = 0; r < rounds; ++r) {
    std::map<std::string, double> this_round;
    for (std::size_t q = 0; q < names.size(); ++q) {
      const std::string& c = names[static_cast<std::size_t>(kOrder[r % 4][q])];
      ::unlink(path.c_str());
      ::sync();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      ::sync();
      long bytes = kBytes;
      const auto t0 = std::chrono::steady_clock::now();
      bool ok = true;
      if (c == "dd") {
        ok = std::system(dd_cmd.c_str()) == 0;
        bytes = dd_count * kMiB;
      } else {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ok = fd >= 0;
        if (ok && c == "hot-1MiB") ok = write_all(fd, hot.data(), kBytes, kMiB, false);
        if (ok && c == "dram-1MiB") ok = write_all(fd, dram.data(), kBytes, kMiB, true);
        if (ok && c == "dram-1call") ok = write_all(fd, dram.data(), kBytes, kBytes, true);
        if (fd >= 0 && ::close(fd) != 0) ok = false;
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!ok) {
        std::fprintf(stderr, "rewind_bench_page_cache_limit: writing %s (%s) failed: %s\n", path.c_str(), c.c_str(),
                     std::strerror(errno));
        return 1;
      }
      const int fd = ::open(path.c_str(), O_WRONLY);  // untimed: leave nothing dirty for the next one
      if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
      }
      const double g = static_cast<double>(bytes) / s / static_cast<double>(1L << 30);
      gibs[c].push_back(g);
      this_round[c] = g;
      std::printf("write %d %-11s %.3f s %6.3f GiB/s\n", r, c.c_str(), s, g);
      std::fflush(stdout);
    }
    for (const auto& c : names) ratio_to_dd[c].push_back(this_round[c] / this_round["dd"]);
  }
  ::unlink(path.c_str());
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  std::printf("# contender     best GiB/s  median GiB/s  median ratio to dd   (%d rounds, page cache: no fsync in the timer)\n",
              rounds);
  for (const auto& c : names) {
    const auto& v = gibs[c];
    std::printf("sum %-11s %9.3f %13.3f %14.1f %%\n", c.c_str(), *std::max_element(v.begin(), v.end()), median(v),
                100.0 * median(ratio_to_dd[c]));
  }
  return 0;
}

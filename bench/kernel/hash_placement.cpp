// Where a row checksum costs least: XXH3 of every row of a page-cache write, taken on a
// helper thread or on the writing thread before or after each chunk is written.
//
//   rewind_bench_hash_placement FILE [--rounds R] [--chunk-kib K]
//
// Run it twice to see what CPU binding does (mpirun binds a rank to one core when there
// are no more ranks than cores, and the kernel's helper threads inherit the binding):
//   rewind_bench_hash_placement /work/benchdata/k/probe.tmp
//   taskset -c 0 rewind_bench_hash_placement /work/benchdata/k/probe.tmp
// The step is the kernel benchmark's size, 1.14 GiB, in 256 KiB arrays (32^3 float64, a
// grid row), filled before any timer. Each contender writes all of them to FILE with
// pwrite() in chunks of K KiB (default 1024), no MPI, no HDF5, no fsync (page cache):
//   write         the writes alone
//   helper        a helper thread hashes every array while the writes run
//   hash-write    each chunk hashed, then written, on the writing thread
//   write-hash    each chunk written, then hashed (its rows still in the cache) — what
//                 the kernel does on a rank bound to one CPU (kernel/src/write/write_data.cpp)
//   lockstep      a helper thread hashes each chunk while the writing thread writes it
//                 (never ahead of the writer, so both read the chunk's rows at the same
//                 time); when this process is bound to fewer CPUs than are online, the
//                 helper is moved to a CPU outside the binding (a spare core)
// Before each write the file is unlinked, then sync and 0.2 s (untimed). Order: a
// Williams Latin square per round. Prints the median seconds and the median of the
// per-round speed ratios to `write` (bench/kernel/HISTORY.md, "Checksums on a rank that
// mpirun binds to one core").
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kRowBytes = 32 * 32 * 32 * 8;
constexpr std::size_t kStepBytes = 1226960320;  // the kernel benchmark's step
constexpr int kContenders = 5;
const char* const kNames[kContenders] = {"write", "helper", "hash-write", "write-hash", "lockstep"};
// Williams design for 5 (odd: 10 rows): every contender follows every other one equally
// often over 10 rounds.
constexpr int kOrder[10][5] = {{0, 1, 4, 2, 3}, {1, 2, 0, 3, 4}, {2, 3, 1, 4, 0}, {3, 4, 2, 0, 1},
                               {4, 0, 3, 1, 2}, {3, 2, 4, 1, 0}, {4, 3, 0, 2, 1}, {0, 4, 1, 3, 2},
                               {1, 0, 2, 4, 3}, {2, 1, 3, 0, 4}};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--rounds R] [--chunk-kib K]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  int rounds = 20;
  std::size_t chunk_kib = 1024;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--chunk-kib" && i + 1 < argc) chunk_kib = static_cast<std::size_t>(std::atol(argv[++i]));
    else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], a.c_str());
      return 2;
    }
  }
  if (rounds < 1 || chunk_kib < 1) {
    std::fprintf(stderr, "%s: --rounds and --chunk-kib must be positive\n", argv[0]);
    return 2;
  }
  const std::size_t nrows = kStepBytes / kRowBytes;
  const std::size_t per = std::max<std::size_t>(1, chunk_kib * 1024 / kRowBytes);
  std::vector<std::vector<double>> rows(nrows, std::vector<double>(kRowBytes / 8));
  for (std::size_t k = 0; k < nrows; ++k)
    for (std::size_t i = 0; i < rows[k].size(); ++i) rows[k][i] = static_cast<double>(k * 7 + i);
  std::vector<std::uint64_t> sums(nrows);
  auto hash = [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) sums[k] = XXH3_64bits(rows[k].data(), kRowBytes);
  };
  auto write = [&](int fd, std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k)
      if (pwrite(fd, rows[k].data(), kRowBytes, static_cast<off_t>(k * kRowBytes)) != static_cast<ssize_t>(kRowBytes)) {
        std::fprintf(stderr, "pwrite %s: %s\n", path.c_str(), std::strerror(errno));
        std::exit(1);
      }
  };
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : -1;
  int spare = -1;  // an online CPU outside this process's binding, for lockstep's helper
  for (int cpu = 0; cpu < static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) && ncpu > 0; ++cpu)
    if (!CPU_ISSET(cpu, &cpus)) {
      spare = cpu;
      break;
    }
  auto run = [&](int c) {
    ::unlink(path.c_str());
    ::sync();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto t0 = std::chrono::steady_clock::now();
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) {
      std::fprintf(stderr, "open %s: %s\n", path.c_str(), std::strerror(errno));
      std::exit(1);
    }
    std::thread helper;
    std::atomic<std::size_t> started{0};  // lockstep: rows whose write has begun
    if (c == 1) helper = std::thread([&] { hash(0, nrows); });
    if (c == 4) {
      helper = std::thread([&] {
        for (std::size_t k0 = 0; k0 < nrows; k0 += per) {
          while (started.load(std::memory_order_acquire) <= k0) std::this_thread::yield();
          hash(k0, std::min(nrows, k0 + per));
        }
      });
      if (spare >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(spare, &one);
        pthread_setaffinity_np(helper.native_handle(), sizeof one, &one);
      }
    }
    for (std::size_t k0 = 0; k0 < nrows; k0 += per) {
      const std::size_t k1 = std::min(nrows, k0 + per);
      if (c == 2) hash(k0, k1);
      started.store(k1, std::memory_order_release);
      write(fd, k0, k1);
      if (c == 3) hash(k0, k1);
    }
    if (helper.joinable()) helper.join();
    ::close(fd);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("op %d %-10s %.4f s\n", c, kNames[c], s);
    return s;
  };
  std::printf("# %zu rows of %zu bytes (%.3f GiB), chunks of %zu rows, %d rounds, CPUs allowed %d, "
              "lockstep helper on %s, page cache (no fsync)\n",
              nrows, kRowBytes, nrows * kRowBytes / double(1 << 30), per, rounds, ncpu,
              spare >= 0 ? ("spare CPU " + std::to_string(spare)).c_str() : "the process's CPUs");
  std::vector<std::vector<double>> secs(kContenders), ratio(kContenders);
  for (int r = 0; r < rounds; ++r) {
    double t[kContenders];
    for (int i = 0; i < kContenders; ++i) {
      const int c = kOrder[r % 10][i];
      t[c] = run(c);
      secs[c].push_back(t[c]);
    }
    for (int c = 0; c < kContenders; ++c) ratio[c].push_back(t[0] / t[c]);
  }
  ::unlink(path.c_str());
  std::printf("# contender   median s   GiB/s   median speed ratio to write (per round)\n");
  for (int c = 0; c < kContenders; ++c)
    std::printf("sum %-10s %8.4f %7.2f %8.3f\n", kNames[c], median(secs[c]),
                nrows * kRowBytes / median(secs[c]) / double(1 << 30), median(ratio[c]));
  return 0;
}

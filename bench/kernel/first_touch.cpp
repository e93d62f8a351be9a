// How fast does this machine hand out memory it has not touched lately?
//
//   rewind_bench_first_touch [GIB]
//
// Maps, fills and keeps GIB (default 8) separate 1 GiB anonymous regions, printing the
// fill rate of each. On bare metal every region fills at about the same rate. On a VM
// whose host takes back freed guest pages (virtio-balloon free page reporting, as on
// this project's Firecracker CI machines) the first ~1-6 GiB, recently freed and still
// backed by the host, fill several times faster than the rest: every later first touch
// is a host page fault. The page cache is allocated the same way, so a write benchmark
// that creates fresh files meets either kind of memory from one round to the next
// (bench/kernel/HISTORY.md, "Why the write bandwidth is bimodal on this VM").
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  int gib = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::puts("usage: rewind_bench_first_touch [GIB]");
      return 0;
    }
    gib = std::atoi(argv[i]);
    if (gib < 1 || gib > 64) {
      std::fprintf(stderr, "rewind_bench_first_touch: GIB must be 1..64, got '%s'\n", argv[i]);
      return 2;
    }
  }
  const std::size_t n = std::size_t{1} << 30;
  std::vector<void*> held;
  for (int r = 0; r < gib; ++r) {
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "rewind_bench_first_touch: cannot map GiB %d\n", r);
      return 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::memset(p, 1, n);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("GiB %2d: first touch %.2f GB/s\n", r, n / s / 1e9);
    std::fflush(stdout);
    held.push_back(p);
  }
  for (void* p : held) ::munmap(p, n);
  return 0;
}

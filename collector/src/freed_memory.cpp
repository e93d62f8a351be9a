#include "rewind/collector/freed_memory.hpp"

#include <malloc.h>

#include <algorithm>
#include <mutex>

namespace rwd::collector {

void keep_freed_memory(std::uint64_t bytes) {
#ifdef __GLIBC__
  static std::mutex mutex;
  static std::uint64_t kept = 0;
  constexpr std::uint64_t kMaxKept = std::uint64_t{512} << 20;
  const std::uint64_t want = std::min(2 * bytes, kMaxKept);
  const std::lock_guard lock(mutex);
  if (want <= kept || bytes < (std::uint64_t{1} << 20)) return;
  if (kept == 0) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(want));
  kept = want;
#else
  (void)bytes;
#endif
}

}  // namespace rwd::collector

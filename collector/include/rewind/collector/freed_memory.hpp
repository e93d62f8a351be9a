// Window replies allocate the same large arrays window after window, in the collector
// (its reply slots) and in a client (the arrays it returns). By default glibc hands a
// freed block above its mmap threshold back to the kernel, so every fresh window paid a
// page fault and a page clear per 4 KiB again, more than the socket's own copy
// (bench/live/HISTORY.md, §2 "Live windows by default"). Both sides keep such memory mapped
// through this one function.
#pragma once
#include <cstdint>

namespace rwd::collector {

/// Serves blocks up to 32 MiB (glibc's maximum) from the heap and keeps up to
/// min(2 * bytes, 512 MiB) of freed memory mapped for the next window. Process-wide (glibc's
/// mallopt; elsewhere it does nothing), thread-safe; only ever raises the setting, so the
/// collector's and a client's calls in one process never undo each other; windows under
/// 1 MiB change nothing.
void keep_freed_memory(std::uint64_t bytes);

}  // namespace rwd::collector

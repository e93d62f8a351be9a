// Private: the hand-off's shared memory (forward.hpp): one MPI shared-memory window per
// group, a segment per client, which the server reads in place.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace rwd::kernel::detail {

/// The group's shared-memory window: each client's segment, seen by the server.
class SharedSlots {
 public:
  SharedSlots() = default;
  SharedSlots(const SharedSlots&) = delete;
  SharedSlots& operator=(const SharedSlots&) = delete;
  ~SharedSlots() { release(); }
  /// Collective over `group`: frees the old window and allocates `bytes` for this rank.
  void allocate(MPI_Comm group, std::int64_t bytes);
  /// Collective over the group (MPI_Win_free); no-op without a window or after MPI ends.
  void release();
  [[nodiscard]] bool empty() const { return win_ == MPI_WIN_NULL; }
  [[nodiscard]] std::byte* mine() const { return mine_; }
  /// Rank `r`'s segment (server side).
  [[nodiscard]] std::byte* of(int r) const;
  /// Memory barrier for the window (MPI_Win_sync): after writing, before reading.
  void sync() const;

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* mine_ = nullptr;
};

}  // namespace rwd::kernel::detail

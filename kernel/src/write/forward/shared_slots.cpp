// The hand-off's shared memory (shared_slots.hpp).
#include "write/forward/shared_slots.hpp"

#include "rewind/mpi/comm.hpp"

namespace rwd::kernel::detail {

void SharedSlots::allocate(MPI_Comm group, std::int64_t bytes) {
  release();
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each segment on its owner's NUMA node
  void* base = nullptr;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, group, &base, &win_);
  MPI_Info_free(&info);
  mpi::check(rc, "I/O ranks", "MPI_Win_allocate_shared");
  mine_ = static_cast<std::byte*>(base);
  // Passive target for the whole life of the window: MPI_Win_sync orders the copies into
  // a segment before the message that announces them (the separate-model rules).
  mpi::check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "I/O ranks", "MPI_Win_lock_all");
}

void SharedSlots::release() {
  if (win_ == MPI_WIN_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }
  win_ = MPI_WIN_NULL;
  mine_ = nullptr;
}

std::byte* SharedSlots::of(int r) const {
  MPI_Aint size = 0;
  int disp = 0;
  void* base = nullptr;
  mpi::check(MPI_Win_shared_query(win_, r, &size, &disp, &base), "I/O ranks", "MPI_Win_shared_query");
  return static_cast<std::byte*>(base);
}

void SharedSlots::sync() const {
  if (win_ != MPI_WIN_NULL) MPI_Win_sync(win_);
}

}  // namespace rwd::kernel::detail

// A lock between the job writing a run file and the processes that read the file while
// it is written (`rewind serve` following it; docs/file-format.md §5, "Reading a file
// while it is written").
//
// HDF5 1.10 without SWMR (which the MPI-IO driver cannot use) gives no reader a safe view
// of a file another process is changing: a reader that opens or reads the file while the
// writer flushes a step's metadata may find its structures half updated on disk, and
// fail -- or crash inside HDF5 (seen: free() of a garbage link while listing the steps).
// So the writer holds this lock exclusively from the start of each step to its last
// flush (and while it unlinks a crashed step), and a reader that follows the file holds
// it shared while it opens and reads; the committed steps it then sees are whole.
//
// An open-file-description lock (fcntl F_OFD_SETLK) on one byte at kStepLockOffset of the
// run file itself: far beyond any data, so it meets none of the locks HDF5 or MPI-IO
// take, and the system drops it when its holder ends, however it ends. Best effort:
// where the file cannot be opened or its file system has no such locks, nothing is held
// and supported() says so. Serial and process-local; a lock is not shared by threads.
#pragma once
#include <chrono>
#include <string>

namespace rwd::kernel {

/// The byte of the run file the lock covers (2^62: no file reaches it).
inline constexpr long long kStepLockOffset = 1LL << 62;

class StepLock {
 public:
  enum class Mode { shared, exclusive };
  /// Takes the lock of the file at `path` (exclusive: the file is opened for writing),
  /// trying for up to `wait`. Never throws: held() is false if another holder kept it
  /// that long, or if it cannot be had at all (then supported() is false too). Another
  /// `offset` is another, independent lock on the same file (FileClaim's: kClaimLockOffset).
  static StepLock take(const std::string& path, Mode mode, std::chrono::milliseconds wait,
                       long long offset = kStepLockOffset);

  StepLock() = default;
  StepLock(StepLock&& o) noexcept;
  StepLock& operator=(StepLock&& o) noexcept;
  StepLock(const StepLock&) = delete;
  StepLock& operator=(const StepLock&) = delete;
  ~StepLock();  ///< release()

  /// Drops the lock. Idempotent, never throws.
  void release() noexcept;
  [[nodiscard]] bool held() const { return held_; }
  /// False: the file could not be opened, or its file system has no OFD locks.
  [[nodiscard]] bool supported() const { return supported_; }

 private:
  int fd_ = -1;
  bool held_ = false;
  bool supported_ = true;
};

}  // namespace rwd::kernel

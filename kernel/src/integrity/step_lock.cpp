// The writer/reader lock of a run file (step_lock.hpp).
#include "rewind/kernel/step_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

namespace rwd::kernel {

StepLock StepLock::take(const std::string& path, Mode mode, std::chrono::milliseconds wait, long long offset) {
  using Clock = std::chrono::steady_clock;
  const bool exclusive = mode == Mode::exclusive;
  StepLock l;
  // O_NONBLOCK: opening a FIFO named like a run file must not wait for a writer; only a
  // regular file has steps to lock.
  l.fd_ = ::open(path.c_str(), (exclusive ? O_WRONLY : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat st {};
  if (l.fd_ < 0 || ::fstat(l.fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    l.supported_ = false;
    l.release();
    return l;
  }
  struct flock fl {};
  fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = offset;
  fl.l_len = 1;
  const auto end = Clock::now() + wait;
  auto nap = std::chrono::milliseconds(1);
  for (;;) {
    if (::fcntl(l.fd_, F_OFD_SETLK, &fl) == 0) {
      l.held_ = true;
      return l;
    }
    if (errno != EAGAIN && errno != EACCES && errno != EINTR) {  // no OFD locks here
      l.supported_ = false;
      l.release();
      return l;
    }
    const auto now = Clock::now();
    if (now >= end) return l;
    // Polled, not F_OFD_SETLKW: the wait stays bounded.
    std::this_thread::sleep_for(std::min<Clock::duration>(nap, end - now));
    nap = std::min(2 * nap, std::chrono::milliseconds(20));
  }
}

StepLock::StepLock(StepLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), held_(std::exchange(o.held_, false)), supported_(o.supported_) {}

StepLock& StepLock::operator=(StepLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    held_ = std::exchange(o.held_, false);
    supported_ = o.supported_;
  }
  return *this;
}

StepLock::~StepLock() { release(); }

void StepLock::release() noexcept {
  if (fd_ >= 0) ::close(fd_);  // closing the description drops its lock
  fd_ = -1;
  held_ = false;
}

}  // namespace rwd::kernel

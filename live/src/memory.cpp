#include "rewind/live/memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>
#include <utility>

#include "rewind/holder/holder.hpp"

namespace rwd::live {

namespace {

constexpr char kMagic[8] = {'R', 'W', 'D', 'L', 'I', 'V', 'E', '1'};

struct Header {
  char magic[8];
  std::uint64_t token;
  std::uint64_t bytes;
};
static_assert(sizeof(Header) <= SharedSegment::kHeaderBytes);

std::uint64_t random_token() {
  std::random_device rd;
  const std::uint64_t t = (std::uint64_t{rd()} << 32) ^ rd() ^ (static_cast<std::uint64_t>(::getpid()) << 17);
  return t == 0 ? 1 : t;
}

}  // namespace

const std::string& node_id() {
  static const std::string id = holder::node_name() + "/" + holder::boot_id();
  return id;
}

SharedSegment::SharedSegment(SharedSegment&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), fd_(std::exchange(o.fd_, -1)), name_(std::move(o.name_)) {}

SharedSegment& SharedSegment::operator=(SharedSegment&& o) noexcept {
  if (this != &o) {
    release();
    base_ = std::exchange(o.base_, nullptr);
    fd_ = std::exchange(o.fd_, -1);
    name_ = std::move(o.name_);
  }
  return *this;
}

SharedSegment::~SharedSegment() { release(); }

void SharedSegment::release() noexcept {
  if (base_ != nullptr) ::munmap(base_, kHeaderBytes + name_.bytes);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

SharedSegment SharedSegment::create(std::uint64_t bytes) {
  const auto fail = [](const char* what) { throw std::system_error(errno, std::generic_category(), what); };
  const int fd = ::memfd_create("rewind-live", MFD_CLOEXEC);
  if (fd < 0) fail("live window memory: memfd_create");
  const std::uint64_t total = kHeaderBytes + bytes;
  if (::ftruncate(fd, static_cast<off_t>(total)) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("live window memory: ftruncate");
  }
  // MAP_POPULATE: the pages exist before the first window (a first touch per 4 KiB by
  // the compute ranks would be paid by the run).
  void* p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("live window memory: mmap");
  }
  SharedSegment s;
  s.base_ = static_cast<std::byte*>(p);
  s.fd_ = fd;
  s.name_ = SegmentName{node_id(), static_cast<int>(::getpid()), fd, random_token(), bytes};
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.token = s.name_.token;
  h.bytes = bytes;
  std::memcpy(s.base_, &h, sizeof h);
  return s;
}

std::optional<SharedSegment> SharedSegment::attach(const SegmentName& name, std::string* why) {
  if (name.node != node_id() || name.pid <= 0 || name.fd < 0) return std::nullopt;
  const auto fail = [&](const std::string& what) -> std::optional<SharedSegment> {
    if (why != nullptr) *why = what;
    return std::nullopt;
  };
  const std::string path = "/proc/" + std::to_string(name.pid) + "/fd/" + std::to_string(name.fd);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return fail("open " + path + ": " + std::strerror(errno));
  const std::uint64_t total = kHeaderBytes + name.bytes;
  struct stat st {};
  void* p = MAP_FAILED;
  std::string failed;
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != total)
    failed = path + " is not the collector's memory (size)";
  else if (p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0); p == MAP_FAILED)
    failed = "mmap " + path + ": " + std::strerror(errno);
  ::close(fd);  // the mapping keeps the memory
  if (p == MAP_FAILED) return fail(failed);
  Header h{};
  std::memcpy(&h, p, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.token != name.token || h.bytes != name.bytes) {
    ::munmap(p, total);
    return fail(path + " is not the collector's memory (header)");
  }
  SharedSegment s;
  s.base_ = static_cast<std::byte*>(p);
  s.name_ = name;
  return s;
}

}  // namespace rwd::live

// The single-writer claim (claim.hpp): a flock'ed sidecar with a record of its holder.
#include "rewind/kernel/claim.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "rewind/kernel/error.hpp"

namespace rwd::kernel {

namespace {

constexpr const char* kRecordHeader = "rewind file claim";

std::string hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string first_line(const char* file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  return s;
}

/// Field 22 of /proc/PID/stat (start time in clock ticks after boot), or -1.
long long proc_start(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string s;
  if (!std::getline(in, s)) return -1;
  const auto close = s.rfind(')');  // the command name may hold spaces and ')'
  if (close == std::string::npos) return -1;
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  long long start = -1;
  return rest >> start ? start : -1;
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out;
  for (char c : all) out += c == '\0' || c == '\n' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.size() > 160 ? out.substr(0, 157) + "..." : out;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

ClaimRecord my_record() {
  ClaimRecord r;
  r.host = hostname();
  r.pid = static_cast<long>(::getpid());
  r.since = now_utc();
  r.command = command_line();
  r.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  r.proc_start = proc_start(r.pid);
  return r;
}

std::string encode(const ClaimRecord& r) {
  return fmt::format("{}\nhost={}\npid={}\nsince={}\ncommand={}\nboot_id={}\nproc_start={}\n", kRecordHeader, r.host,
                     r.pid, r.since, r.command, r.boot_id, r.proc_start);
}

/// The record in `text`; nullopt if it is not one.
std::optional<ClaimRecord> decode(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kRecordHeader) return std::nullopt;
  ClaimRecord r;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    try {
      if (key == "host") r.host = value;
      else if (key == "pid") r.pid = std::stol(value);
      else if (key == "since") r.since = value;
      else if (key == "command") r.command = value;
      else if (key == "boot_id") r.boot_id = value;
      else if (key == "proc_start") r.proc_start = std::stoll(value);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return r;
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  return out;
}

bool same_inode(int fd, const std::string& p) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(p.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

enum class Alive { yes, no, unknown };

/// Whether the record's process still runs: checkable on its own host only.
Alive alive(const ClaimRecord& r) {
  if (r.host != hostname()) return Alive::unknown;
  const std::string boot = first_line("/proc/sys/kernel/random/boot_id");
  if (!r.boot_id.empty() && !boot.empty() && r.boot_id != boot) return Alive::no;  // the host rebooted since
  if (r.pid <= 0 || (::kill(static_cast<pid_t>(r.pid), 0) != 0 && errno == ESRCH)) return Alive::no;
  const long long start = proc_start(r.pid);
  if (start >= 0 && r.proc_start > 0 && start != r.proc_start) return Alive::no;  // the number was reused
  return Alive::yes;
}

[[noreturn]] void refuse_held(const std::string& path, const std::optional<ClaimRecord>& r) {
  if (r && r->pid == static_cast<long>(::getpid()) && r->host == hostname())
    throw FileError(ErrorKind::claimed, path, "is written by this job already (its run or an earlier branch)");
  throw FileError(ErrorKind::claimed, path,
                  fmt::format("is being written by another job{}; one job writes a file at a time: wait for it to "
                              "end, or write another file",
                              r ? ": " + r->describe() : " (starting: its record is not written yet)"));
}

/// Decides on a record left without a lock: refuses, or returns the note of taking it over.
std::string judge(const std::string& path, const std::string& text, const ClaimOptions& options) {
  const auto r = decode(text);
  if (!r)
    throw FileError(ErrorKind::claimed, path,
                    fmt::format("{} exists and is not a Rewind claim; remove it if nothing else uses it",
                                claim_path(path)));
  switch (alive(*r)) {
    case Alive::yes: refuse_held(path, r);
    case Alive::no: return fmt::format("took over the claim of {}: that process has ended", r->describe());
    case Alive::unknown: break;
  }
  if (!options.break_lock)
    throw FileError(ErrorKind::claimed, path,
                    fmt::format("is claimed by a job on another host: {}; that cannot be checked from here: if the "
                                "job has ended, run again with --break-lock",
                                r->describe()));
  return fmt::format("broke the claim of {} (--break-lock)", r->describe());
}

}  // namespace

std::string claim_path(const std::string& path) { return path + ".lock"; }

std::string ClaimRecord::describe() const {
  return fmt::format("{}{}process {} on host {}, since {}{}", command.empty() ? "" : command,
                     command.empty() ? "" : " (", pid, host, since, command.empty() ? "" : ")");
}

std::optional<ClaimState> read_claim(const std::string& path) {
  std::ifstream in(claim_path(path), std::ios::binary);
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto r = decode(text);
  if (!r) return std::nullopt;
  const Alive a = alive(*r);
  return ClaimState{*r, a == Alive::yes, a != Alive::unknown, a == Alive::yes && r->pid == ::getpid()};
}

bool claimed_elsewhere(const std::string& path) {
  const auto c = read_claim(path);
  return c && c->live && !c->ours;
}

FileClaim FileClaim::take(const std::string& path, const ClaimOptions& options) {
  const std::string lock = claim_path(path);
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw FileError(ErrorKind::io, path, fmt::format("cannot create its claim {}: {}", lock, std::strerror(errno)));
    bool locked = true;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EWOULDBLOCK) {
        // Its holder writes the record right after locking: give it a moment to.
        auto r = decode(read_all(fd));
        for (int i = 0; i < 100 && !r; ++i) {
          ::usleep(10000);
          r = decode(read_all(fd));
        }
        ::close(fd);
        refuse_held(path, r);
      }
      if (e != ENOLCK && e != ENOSYS && e != EOPNOTSUPP && e != EINVAL) {
        ::close(fd);
        throw FileError(ErrorKind::io, path, fmt::format("cannot lock its claim {}: {}", lock, std::strerror(e)));
      }
      locked = false;  // no flock here: the record alone guards the file
    }
    if (!same_inode(fd, lock)) {  // released (and removed) by its holder meanwhile: again
      ::close(fd);
      continue;
    }
    std::string note;
    try {
      if (const std::string text = read_all(fd); !text.empty()) note = judge(path, text, options);
    } catch (...) {
      ::close(fd);
      throw;
    }
    const std::string record = encode(my_record());
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size()) || ::fsync(fd) != 0) {
      const int e = errno;
      ::unlink(lock.c_str());
      ::close(fd);
      throw FileError(ErrorKind::io, path, fmt::format("cannot write its claim {}: {}", lock, std::strerror(e)));
    }
    FileClaim c;
    c.path_ = path;
    c.fd_ = fd;
    c.locked_ = locked;
    c.note_ = std::move(note);
    return c;
  }
  throw FileError(ErrorKind::claimed, path, "its claim kept changing while this job tried to take it: try again");
}

FileClaim::FileClaim(FileClaim&& o) noexcept
    : path_(std::move(o.path_)), note_(std::move(o.note_)), fd_(o.fd_), locked_(o.locked_) {
  o.fd_ = -1;
}

FileClaim& FileClaim::operator=(FileClaim&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    note_ = std::move(o.note_);
    fd_ = o.fd_;
    locked_ = o.locked_;
    o.fd_ = -1;
  }
  return *this;
}

FileClaim::~FileClaim() { release(); }

void FileClaim::release() noexcept {
  if (fd_ < 0) return;
  // Removed while still locked: a job that opened the old sidecar meanwhile finds it is
  // no longer the path's (same_inode) and starts again on a fresh one.
  const std::string lock = claim_path(path_);
  if (same_inode(fd_, lock)) ::unlink(lock.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace rwd::kernel

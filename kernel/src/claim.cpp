// The single-writer claim (claim.hpp): a flock'ed sidecar with a record of its holder,
// and a lock on the file itself for the names the sidecar cannot see (hard links).
#include "rewind/kernel/claim.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "rewind/holder/holder.hpp"
#include "rewind/kernel/error.hpp"

namespace rwd::kernel {

namespace {

constexpr const char* kRecordHeader = "rewind file claim";

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out;
  for (char c : all) out += c == '\0' || c == '\n' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.size() > 160 ? out.substr(0, 157) + "..." : out;
}

ClaimRecord my_record() {
  ClaimRecord r;
  const holder::Process me = holder::self();
  r.node = me.node;
  r.pid = me.pid;
  r.since = holder::utc_text();
  r.command = command_line();
  r.boot_id = me.boot_id;
  r.proc_start = me.start;
  return r;
}

std::string encode(const ClaimRecord& r) {
  return fmt::format("{}\nhost={}\npid={}\nsince={}\ncommand={}\nboot_id={}\nproc_start={}\n", kRecordHeader, r.node,
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
      if (key == "host") r.node = value;  // the record's key for the machine
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

/// `path` as the system resolves it: absolute, `.`, `..` and symbolic links resolved; a
/// name that does not exist yet is its directory's resolved path plus the name, and a
/// dangling symbolic link the name it points to (where a writer creates the file).
std::string resolved(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return path;
  for (int hops = 0; hops < 40; ++hops) {  // as many as the system follows (ELOOP)
    if (auto c = fs::canonical(p, ec); !ec) return c.string();
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  const fs::path dir = fs::weakly_canonical(p.parent_path(), ec);
  return ec ? p.lexically_normal().string() : (dir / p.filename()).string();
}

/// A file's identity (device, inode): what every name of it shares.
using FileId = std::pair<unsigned long long, unsigned long long>;

std::optional<FileId> regular_file_id(const std::string& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

/// The files this process holds claims on (by identity), to tell "this job" from another.
std::mutex ids_mutex;
std::set<FileId> held_ids;

bool held_here(const FileId& id) {
  const std::lock_guard<std::mutex> g(ids_mutex);
  return held_ids.count(id) > 0;
}

/// Whether a process holds the claim lock on the regular file `target` (under any name).
bool file_claimed(const std::string& target) {
  const int fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kClaimLockOffset;
  fl.l_len = 1;
  const bool held = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

/// The holder of the claim on the file `id` and the name it writes it by: the process
/// that has the file open under a name whose sidecar records that process (/proc/PID/fd;
/// other users' processes only when run as root). None if it cannot be seen.
std::optional<std::pair<ClaimRecord, std::string>> find_holder(const FileId& id) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator proc("/proc", ec), end; !ec && proc != end; proc.increment(ec)) {
    const std::string pid = proc->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fe;
    for (fs::directory_iterator fd(proc->path() / "fd", fe); !fe && fd != end; fd.increment(fe)) {
      struct stat st {};
      if (::stat(fd->path().c_str(), &st) != 0 || FileId{st.st_dev, st.st_ino} != id) continue;
      std::error_code le;
      const std::string name = fs::read_symlink(fd->path(), le).string();
      std::ifstream in(name + ".lock", std::ios::binary);
      const auto r = decode(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
      if (!le && r && std::to_string(r->pid) == pid) return std::pair{*r, name};
    }
  }
  return std::nullopt;
}

using holder::Alive;

/// Whether the record's process still runs: checkable on its own node only.
Alive alive(const ClaimRecord& r) { return holder::alive({r.node, r.pid, r.boot_id, r.proc_start}); }

[[noreturn]] void refuse_held(const std::string& path, const std::optional<ClaimRecord>& r) {
  if (r && holder::is_self({r->node, r->pid, {}, 0}))
    throw FileError(ErrorKind::claimed, path, "is written by this job already (its run or an earlier branch)");
  throw FileError(ErrorKind::claimed, path,
                  fmt::format("is being written by another job{}; one job writes a file at a time: wait for it to "
                              "end, or write another file",
                              r ? ": " + r->describe() : " (starting: its record is not written yet)"));
}

/// Refuses a file whose own lock another claim holds: under another name (a hard link).
[[noreturn]] void refuse_other_name(const std::string& path, const FileId& id) {
  if (held_here(id))
    throw FileError(ErrorKind::claimed, path, "is written by this job already (its run or an earlier branch)");
  const auto h = find_holder(id);
  throw FileError(
      ErrorKind::claimed, path,
      fmt::format("is being written by another job{}; one job writes a file at a time: wait for it to "
                  "end, or write another file",
                  h ? fmt::format(": {}, under another name of the same file: {}", h->first.describe(), h->second)
                    : " under another name of the same file (a hard link)"));
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

std::string claim_path(const std::string& path) { return resolved(path) + ".lock"; }

std::string ClaimRecord::describe() const {
  if (pid <= 0) return command;  // a holder that could not be seen (read_claim)
  return fmt::format("{}{}process {} on host {}, since {}{}", command.empty() ? "" : command,
                     command.empty() ? "" : " (", pid, node, since, command.empty() ? "" : ")");
}

std::optional<ClaimState> read_claim(const std::string& path) {
  const std::string target = resolved(path);
  std::optional<ClaimState> named;
  if (std::ifstream in(target + ".lock", std::ios::binary); in) {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (const auto r = decode(text)) {
      const Alive a = alive(*r);
      named = ClaimState{*r, a == Alive::yes, a != Alive::unknown, a == Alive::yes && r->pid == ::getpid()};
    }
  }
  if (named && named->live) return named;
  // Claimed under another name (a hard link): the file's own lock says so.
  const auto id = regular_file_id(target);
  if (!id || !file_claimed(target)) return named;
  ClaimState s;
  s.live = true;
  s.ours = held_here(*id);
  if (const auto h = find_holder(*id)) s.record = h->first;
  else s.record.command = "a job that claimed it under another name (a hard link)";
  return s;
}

bool claimed_elsewhere(const std::string& path) {
  const auto c = read_claim(path);
  // A record from another host cannot be checked from here: the claiming rank of a job
  // spread over nodes, or a job elsewhere -- FileClaim::take decides (and names it).
  return c && !c->ours && (c->live || !c->checkable);
}

FileClaim FileClaim::take(const std::string& path, const ClaimOptions& options) {
  const std::string target = resolved(path), lock = target + ".lock";
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
      ::close(fd);  // another's record: left as it is
      throw;
    }
    FileClaim c;  // ours from here on: released (the sidecar removed) on any failure below
    c.path_ = path;
    c.lock_ = lock;
    c.target_ = target;
    c.fd_ = fd;
    c.locked_ = locked;
    c.note_ = std::move(note);
    const std::string record = encode(my_record());
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size()) || ::fsync(fd) != 0)
      throw FileError(ErrorKind::io, path, fmt::format("cannot write its claim {}: {}", lock, std::strerror(errno)));
    // The record first, then the file: whoever sees the (possibly new, empty) file finds
    // the record naming its holder (the other ranks of this job checking the output).
    c.hold_file(target);
    return c;
  }
  throw FileError(ErrorKind::claimed, path, "its claim kept changing while this job tried to take it: try again");
}

// The file's own lock, for the names the sidecar cannot see (a hard link). A file that
// does not exist yet is created here, empty, so that no moment passes unlocked.
void FileClaim::hold_file(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // a directory, a device: the writer refuses it
  if (const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666); fd >= 0) {
    created_ = true;
    ::close(fd);
  }
  // NFS turns the readers' flock(LOCK_SH) into POSIX locks of the whole file, which this
  // lock would refuse: there the sidecar alone guards the file.
  constexpr long kNfsMagic = 0x6969;
  struct statfs fs {};
  const bool nfs = ::statfs(target.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == kNfsMagic;
  if (!nfs) file_ = StepLock::take(target, StepLock::Mode::exclusive, std::chrono::milliseconds(0), kClaimLockOffset);
  const auto id = regular_file_id(target);
  if (file_.held() && id) {
    dev_ = id->first;
    ino_ = id->second;
    const std::lock_guard<std::mutex> g(ids_mutex);
    held_ids.insert(*id);
    return;
  }
  file_.release();
  if (!nfs && file_.supported() && id) refuse_other_name(path_, *id);  // release() removes what this made
  if (created_) ::unlink(target.c_str());  // no such locks here (or no such file: the writer says why)
  created_ = false;
}

FileClaim::FileClaim(FileClaim&& o) noexcept
    : path_(std::move(o.path_)),
      note_(std::move(o.note_)),
      lock_(std::move(o.lock_)),
      target_(std::move(o.target_)),
      fd_(std::exchange(o.fd_, -1)),
      locked_(o.locked_),
      created_(o.created_),
      file_(std::move(o.file_)),
      dev_(o.dev_),
      ino_(o.ino_) {}

FileClaim& FileClaim::operator=(FileClaim&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    note_ = std::move(o.note_);
    lock_ = std::move(o.lock_);
    target_ = std::move(o.target_);
    fd_ = std::exchange(o.fd_, -1);
    locked_ = o.locked_;
    created_ = o.created_;
    file_ = std::move(o.file_);
    dev_ = o.dev_;
    ino_ = o.ino_;
  }
  return *this;
}

FileClaim::~FileClaim() { release(); }

void FileClaim::release() noexcept {
  if (fd_ < 0) return;
  if (file_.held()) {
    // The file this claim created and nothing wrote to (a run that failed before it began):
    // removed while still locked, so no other claim finds it.
    struct stat st {};
    if (created_ && ::stat(target_.c_str(), &st) == 0 && st.st_size == 0 &&
        FileId{st.st_dev, st.st_ino} == FileId{dev_, ino_})
      ::unlink(target_.c_str());
    const std::lock_guard<std::mutex> g(ids_mutex);
    held_ids.erase({dev_, ino_});
  }
  file_.release();
  created_ = false;
  // Removed while still locked: a job that opened the old sidecar meanwhile finds it is
  // no longer the path's (same_inode) and starts again on a fresh one.
  if (same_inode(fd_, lock_)) ::unlink(lock_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace rwd::kernel

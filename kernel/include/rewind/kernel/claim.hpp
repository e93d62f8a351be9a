// One writing job per run file (docs/file-format.md §5, "One writing job").
//
// A job claims FILE before it creates, truncates or appends to it and holds the claim
// until it has closed the file for the last time; a second job is refused with one line
// naming the holder. Readers (rewind info, serve, window, ParaView) never look at it:
// they read the committed steps, whoever writes.
//
//   FileClaim claim = FileClaim::take("run.h5");   // throws FileError(claimed) naming the holder
//   ... Writer::create / append, write_step ..., close
//   claim.release();                                // or its destructor
//
// The claim is the sidecar FILE.lock (claim_path): an exclusive flock(2) on it, held by
// the claiming process for as long as it lives — the operating system drops it when the
// process ends, however it ends (kill -9 included) — and in it a record naming the holder
// (host, process, when it claimed, its command). A record whose lock is free was left by
// a job that did not release it: on the same host its process is checked (gone, a zombie,
// or a new process under the same number: the claim is taken over, FileClaim::note() says
// so); a record from another host cannot be checked from here and is refused unless the
// caller breaks it (ClaimOptions::break_lock, `rewind run --break-lock`). Where the file
// system has no flock (Lustre mounted without -o flock: ENOSYS), the record alone guards
// the file: the same checks, but two jobs starting within the same moment may both pass.
//
// One file, whatever name reaches it. The sidecar sits beside the file's resolved name
// (symbolic links followed, also a dangling one at the end; `.` and `..` resolved), so a
// symlink, a `..` path and another mount of the same directory all meet one sidecar. A
// hard link is another name of the same file in its own right: so the claim also locks
// the file itself — an open-file-description lock (fcntl F_OFD_SETLK) on one byte far
// beyond any data (kClaimLockOffset, beside the StepLock's), held with the sidecar's. It
// meets none of the locks HDF5 or MPI-IO take, and readers (h5py, `rewind verify`, which
// take flock(LOCK_SH) on the file) are not stopped by it. A file that does not exist yet
// is created empty by take() so that it is locked from the start (the run's writer then
// creates it over that); release() removes it again if nothing was written to it. Where
// the file system has no such locks (or turns readers' flock into POSIX locks: NFS), only
// the sidecar guards it, and a hard link is not recognised.
//
// Serial and process-local: in an MPI job one rank takes the claim (the others learn its
// verdict from it). Not thread-safe on one FileClaim; different files are independent.
#pragma once
#include <optional>
#include <string>

#include "rewind/kernel/step_lock.hpp"

namespace rwd::kernel {

/// The byte of the run file that FileClaim locks (beside the StepLock's: independent of it).
inline constexpr long long kClaimLockOffset = kStepLockOffset + 1;

/// The sidecar that holds the claim of `path`: its resolved name plus ".lock" ("run.h5"
/// in /data -> "/data/run.h5.lock"; a symlink "s.h5" -> "run.h5" -> the same).
std::string claim_path(const std::string& path);

/// Who claimed a file, as its record says.
struct ClaimRecord {
  std::string node;         ///< the claiming process's machine (holder::node_name(); "host=" in the file)
  long pid = 0;             ///< its process id
  std::string since;        ///< when it claimed the file (UTC, "2025-01-31 12:00:00 UTC")
  std::string command;      ///< its command line (may be shortened)
  std::string boot_id;      ///< the node's boot id, to tell a process of an earlier boot
  long long proc_start = 0; ///< the process's start time (clock ticks after boot), to tell a reused pid
  /// "rewind run ... (process 1234 on host vm, since 2025-01-31 12:00:00 UTC)"; a holder
  /// that could not be seen (pid 0, read_claim): `command` alone.
  [[nodiscard]] std::string describe() const;
};

/// What FileClaim::take may do with a claim it cannot check.
struct ClaimOptions {
  /// Take over a claim left by a process on another host (it cannot be checked from
  /// here). Never overrides a claim whose lock is held: that holder is alive.
  bool break_lock = false;
};

/// The current claim of `path`, or none: `live` is whether its holder is known to be
/// alive (its lock is held, or its process runs on this host). A file claimed under
/// another of its names (a hard link) is live too: its record is that holder's, found by
/// the processes that have the file open (/proc; if it cannot be seen, the record names
/// no process: pid 0). Serial, read-only.
struct ClaimState {
  ClaimRecord record;
  bool live = false;
  bool checkable = true;  ///< false: a record from another host (its process cannot be checked)
  bool ours = false;      ///< this process holds it
};
std::optional<ClaimState> read_claim(const std::string& path);
/// True if a live process other than this one holds `path`'s claim, or one on another
/// host (read_claim: not checkable from here): checks made before the claim is taken
/// leave the verdict to FileClaim::take, which names it.
bool claimed_elsewhere(const std::string& path);

/// A held claim (move-only). Releasing removes the sidecar.
class FileClaim {
 public:
  /// Claims `path` (which need not exist yet: then it is created empty, created()).
  /// Throws FileError(claimed) with one line naming the holder when another job holds it
  /// under any name ("is written by this job already" when this process does), or
  /// FileError(io) when the sidecar cannot be created (a read-only directory). Serial.
  static FileClaim take(const std::string& path, const ClaimOptions& options = {});
  FileClaim() = default;
  FileClaim(FileClaim&& o) noexcept;
  FileClaim& operator=(FileClaim&& o) noexcept;
  FileClaim(const FileClaim&) = delete;
  FileClaim& operator=(const FileClaim&) = delete;
  ~FileClaim();  ///< release(); never throws

  /// Gives the claim up: removes the file if take() created it and it is still empty,
  /// removes the sidecar (if it is still ours) and drops the locks.
  void release() noexcept;
  [[nodiscard]] bool held() const { return fd_ >= 0; }
  [[nodiscard]] const std::string& path() const { return path_; }
  /// The file system enforces the claim with a lock (false: the record alone guards it).
  [[nodiscard]] bool locked() const { return locked_; }
  /// A claim left behind and taken over ("took over the claim of ... : that process has
  /// ended"), or "".
  [[nodiscard]] const std::string& note() const { return note_; }
  /// take() created the file (it did not exist): an empty file until the run's writer
  /// creates it over that; checks that refuse an existing file make an exception for it.
  [[nodiscard]] bool created() const { return held() && created_; }

 private:
  void hold_file(const std::string& target);
  std::string path_, note_, lock_, target_;
  int fd_ = -1;
  bool locked_ = false, created_ = false;
  StepLock file_;                         ///< the lock on the file itself
  unsigned long long dev_ = 0, ino_ = 0;  ///< its identity, while file_ is held
};

}  // namespace rwd::kernel

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
// a job that did not release it: on the same host its process is checked (gone, or a new
// process under the same number: the claim is taken over, FileClaim::note() says so); a
// record from another host cannot be checked from here and is refused unless the caller
// breaks it (ClaimOptions::break_lock, `rewind run --break-lock`). Where the file system
// has no flock (Lustre mounted without -o flock: ENOSYS), the record alone guards the
// file: the same checks, but two jobs starting within the same moment may both pass.
//
// Serial and process-local: in an MPI job one rank takes the claim (the others learn its
// verdict from it). Not thread-safe on one FileClaim; different files are independent.
#pragma once
#include <optional>
#include <string>

namespace rwd::kernel {

/// The sidecar that holds the claim of `path`: "run.h5" -> "run.h5.lock".
std::string claim_path(const std::string& path);

/// Who claimed a file, as its record says.
struct ClaimRecord {
  std::string host;         ///< gethostname() of the claiming process
  long pid = 0;             ///< its process id
  std::string since;        ///< when it claimed the file (UTC, "2025-01-31 12:00:00 UTC")
  std::string command;      ///< its command line (may be shortened)
  std::string boot_id;      ///< the host's boot id, to tell a process of an earlier boot
  long long proc_start = 0; ///< the process's start time (clock ticks after boot), to tell a reused pid
  /// "rewind run ... (process 1234 on host vm, since 2025-01-31 12:00:00 UTC)".
  [[nodiscard]] std::string describe() const;
};

/// What FileClaim::take may do with a claim it cannot check.
struct ClaimOptions {
  /// Take over a claim left by a process on another host (it cannot be checked from
  /// here). Never overrides a claim whose lock is held: that holder is alive.
  bool break_lock = false;
};

/// The current claim of `path`, or none: `live` is whether its holder is known to be
/// alive (its lock is held, or its process runs on this host). Serial, read-only.
struct ClaimState {
  ClaimRecord record;
  bool live = false;
  bool checkable = true;  ///< false: a record from another host (its process cannot be checked)
  bool ours = false;      ///< this process holds it
};
std::optional<ClaimState> read_claim(const std::string& path);
/// True if a live process other than this one holds `path`'s claim (read_claim): checks
/// made before the claim is taken leave the verdict to FileClaim::take, which names it.
bool claimed_elsewhere(const std::string& path);

/// A held claim (move-only). Releasing removes the sidecar.
class FileClaim {
 public:
  /// Claims `path` (which need not exist yet). Throws FileError(claimed) with one line
  /// naming the holder when another job holds it, or FileError(io) when the sidecar
  /// cannot be created (a read-only directory). Serial.
  static FileClaim take(const std::string& path, const ClaimOptions& options = {});
  FileClaim() = default;
  FileClaim(FileClaim&& o) noexcept;
  FileClaim& operator=(FileClaim&& o) noexcept;
  FileClaim(const FileClaim&) = delete;
  FileClaim& operator=(const FileClaim&) = delete;
  ~FileClaim();  ///< release(); never throws

  /// Gives the claim up: removes the sidecar (if it is still ours) and drops the lock.
  void release() noexcept;
  [[nodiscard]] bool held() const { return fd_ >= 0; }
  [[nodiscard]] const std::string& path() const { return path_; }
  /// The file system enforces the claim with a lock (false: the record alone guards it).
  [[nodiscard]] bool locked() const { return locked_; }
  /// A claim left behind and taken over ("took over the claim of ... : that process has
  /// ended"), or "".
  [[nodiscard]] const std::string& note() const { return note_; }

 private:
  std::string path_, note_;
  int fd_ = -1;
  bool locked_ = false;
};

}  // namespace rwd::kernel

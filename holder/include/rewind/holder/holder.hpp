// Who holds a run, and is it alive: the process a side file beside a run file names —
// the writing job's claim (kernel/claim.hpp, FILE.lock) and the live collector's contact
// file (collector/contact.hpp, RUN.h5.contact) — and whether it still runs. One place for
// this machine's name, its boot and a process's identity, so that both side files judge
// a holder the same way: on its own node, a process is gone when its number is unused,
// a zombie, or reused by a process that started later, or when the node has rebooted
// since; on another node it cannot be checked from here.
//
// Each side file keeps its own text (docs/file-format.md, "One writing job";
// docs/collector-protocol.md, "Contact file"): the claim writes its time as
// utc_text(), the contact file as utc_iso().
//
// Header-only, POSIX and Linux's /proc; no MPI, no sockets. Thread-safe (no state).
#pragma once
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace rwd::holder {

/// This machine's host name (gethostname); "?" if it has none.
inline std::string node_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

/// This machine's boot id (/proc/sys/kernel/random/boot_id), "" where there is none: a
/// process named under another boot id is gone.
inline std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(in, s);
  return s;
}

/// The fields of /proc/PID/stat after the command name (the first is field 3, the
/// state), or none if the process is gone or /proc cannot be read.
inline std::vector<std::string> proc_stat(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(in, s)) return {};
  const auto close = s.rfind(')');  // the command name may hold spaces and ')'
  if (close == std::string::npos) return {};
  std::istringstream rest(s.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

/// When process `pid` started (clock ticks after boot, /proc/PID/stat field 22), or -1.
inline long long process_start(long pid) {
  const auto f = proc_stat(pid);
  try {
    return f.size() > 19 ? std::stoll(f[19]) : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

/// A process as a side file names it. `boot_id` "" and `start` 0: unknown (not
/// checked).
struct Process {
  std::string node;  ///< its machine's host name (node_name there)
  long pid = 0;
  std::string boot_id;  ///< its machine's boot id when it was named
  long long start = 0;  ///< its start time (process_start), to tell a reused number
};

/// This process.
inline Process self() {
  Process p;
  p.node = node_name();
  p.pid = static_cast<long>(::getpid());
  p.boot_id = boot_id();
  p.start = process_start(p.pid);
  return p;
}

enum class Alive { yes, no, unknown };

/// Whether `p` still runs. unknown: on another node (its processes cannot be seen from
/// here). no: its node has rebooted since, its number is unused or a zombie's (ended, not
/// yet reaped by its parent: mpirun, a shell), or another process's that started later.
/// A process of another user that runs is yes.
inline Alive alive(const Process& p) {
  if (p.node != node_name()) return Alive::unknown;
  const std::string boot = boot_id();
  if (!p.boot_id.empty() && !boot.empty() && p.boot_id != boot) return Alive::no;
  if (p.pid <= 0 || (::kill(static_cast<pid_t>(p.pid), 0) != 0 && errno == ESRCH)) return Alive::no;
  const auto stat = proc_stat(p.pid);
  if (!stat.empty() && (stat[0] == "Z" || stat[0] == "X")) return Alive::no;
  const long long start = process_start(p.pid);
  if (start >= 0 && p.start > 0 && start != p.start) return Alive::no;  // the number was reused
  return Alive::yes;
}

/// True if `p` is this process.
inline bool is_self(const Process& p) { return p.pid == static_cast<long>(::getpid()) && p.node == node_name(); }

/// Now, UTC, in `format` (strftime).
inline std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char out[64];
  std::strftime(out, sizeof out, format, &tm);
  return out;
}
/// Now as ISO 8601 UTC, "2025-01-31T12:00:00Z" (the contact file's `started`).
inline std::string utc_iso() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }
/// Now as "2025-01-31 12:00:00 UTC" (the claim's `since`, read by people in messages).
inline std::string utc_text() { return utc_now("%Y-%m-%d %H:%M:%S UTC"); }

}  // namespace rwd::holder

// The contact file of a live run (docs/collector-protocol.md, "Contact file").
//
// A `rewind run --listen` job with an output file RUN.h5 writes RUN.h5.contact beside it
// while its collector listens: where to connect and, when the job has one, the token.
// Where the file system is shared (a cluster's home or scratch), a client on a login
// node or a workstation that mounts it connects by naming the run (`rewind window RUN.h5
// --time live`, `rewind steer RUN.h5 status`, `rewind.connect("RUN.h5")`, the ParaView
// live source's ContactFile) instead of finding out the compute node and the port.
//
// The file: JSON {"version": 1, "host", "port", "token" (only when there is one),
// "node" (the collector's host name), "pid" (the collector's), "started" (ISO 8601,
// UTC)}; mode 0600 (it may hold the token), written atomically (a temporary file in the
// same folder, then rename) once the collector listens, removed when the job ends (also
// on SIGTERM, SIGINT and SIGHUP; a job killed by SIGKILL leaves it behind). A file left
// behind is *stale*: on the node it names, its pid is gone; readers say so.
//
// Pure but for the file system and the holder's checks (rewind/holder/holder.hpp: the
// node's name, whether a process runs); no MPI, no sockets.
#pragma once
#include <cstdint>
#include <string>

namespace rwd::collector {

inline constexpr int kContactVersion = 1;

/// True for addresses that only this machine can reach ("localhost", 127.0.0.0/8,
/// ::1): a collector listening there needs no token, a contact naming one is only
/// reachable from its node. Pure.
bool is_loopback_host(const std::string& host);

struct Contact {
  std::string host;  ///< where clients connect (the listen address; the node's name for a wildcard)
  std::uint16_t port = 0;
  std::string token;    ///< "" = none
  std::string node;     ///< the collector's machine (holder::node_name() there)
  long pid = 0;         ///< the collector's process id on `node`
  std::string started;  ///< when it began to listen, ISO 8601 UTC ("2025-01-31T12:00:00Z")
  std::string boot_id;  ///< `node`'s boot id (holder::boot_id); "" = not in the file
  long long pid_start = 0;  ///< the process's start (holder::process_start), to tell a reused pid; 0 = not in the file
};

/// RUN.h5.contact for the run file RUN.h5.
std::string contact_path(const std::string& run_file);

/// The contact of a collector listening on `listen_host`:`port` (a wildcard address,
/// 0.0.0.0 or ::, becomes this node's host name), this process and now.
Contact make_contact(const std::string& listen_host, std::uint16_t port, const std::string& token);

/// The file's JSON text.
std::string contact_json(const Contact& c);

/// Parses a contact file's text. Throws std::invalid_argument, one line naming `path`:
/// not JSON, a missing or mistyped key, a port outside 1..65535, a newer version.
Contact parse_contact(const std::string& text, const std::string& path);

/// Writes `c` to contact_path(run_file) atomically, mode 0600. Throws std::runtime_error
/// naming the file.
void write_contact(const std::string& run_file, const Contact& c);

/// True if `c` was written on this node (its `node` is this machine's) by a process that
/// no longer runs (holder::alive: gone, or a zombie): the job ended without removing it.
/// False when it is alive or on another node (whose processes cannot be seen from here).
bool contact_is_stale(const Contact& c);

/// The contact of the job writing `run_file` (a path to RUN.h5 or to RUN.h5.contact).
/// Throws std::invalid_argument, one line: no contact file (the run is not live, or has
/// ended), a file group or others may read (chmod 600), not readable, malformed, or
/// stale (naming the pid, node and start time).
Contact read_contact(const std::string& run_file);

/// The end of a one-line error about connecting to `c`, read from `path`: where the job
/// is, and when `c` listens on loopback of another node, that only a tunnel reaches it.
std::string contact_hint(const Contact& c, const std::string& path);

/// Writes the contact file of a listening collector and removes it again: at
/// destruction, and from a handler of SIGTERM, SIGINT and SIGHUP (which then ends the
/// process as the signal would have). One per process. Never throws from the destructor.
class ContactFile {
 public:
  ContactFile() = default;
  ContactFile(const ContactFile&) = delete;
  ContactFile& operator=(const ContactFile&) = delete;
  ~ContactFile();
  /// Writes the file for `run_file` (write_contact) and arms the signal handlers.
  void publish(const std::string& run_file, const Contact& c);
  /// Removes the file if it still is this process's. Idempotent, noexcept.
  void remove() noexcept;

 private:
  std::string path_;
};

}  // namespace rwd::collector

// Connecting to a live job by naming its run file: RUN.h5 → RUN.h5.contact (written by
// the job's collector, collector/contact.hpp) → host, port and token. Shared by
// `rewind window RUN.h5 --time live` and `rewind steer RUN.h5 ...`.
#pragma once
#include <cstdint>
#include <string>

#include "rewind/collector/client.hpp"

namespace rwd::cli {

/// Where a collector is, and what to add to an error about connecting to it.
struct JobAddress {
  std::string host;
  std::uint16_t port = 0;
  std::string token;
  std::string hint;  ///< "" for an address given as HOST:PORT
};

/// True if `source` names a run through its contact file: a path ending in ".contact",
/// or one for which PATH or PATH.contact exists.
bool names_run_file(const std::string& source);

/// The collector of the job writing `run_file` (RUN.h5 or RUN.h5.contact), from its
/// contact file; the token is --token / --token-file when given, else the contact
/// file's, else the environment's (collector::resolve_token). Throws
/// std::invalid_argument, one line, as collector::read_contact.
JobAddress job_address(const std::string& run_file, const std::string& token, const std::string& token_file);

/// A Client of `a`; an error connecting (refused, unreachable, no answer, refused
/// token) is rethrown with a.hint appended, the same exception type.
collector::Client connect_job(const JobAddress& a, const collector::ClientOptions& options);

/// A Client named `name` with a deadline of `timeout` seconds on every call, of the job
/// writing `source` when `job` (job_address), else of the collector at `host`:`port`;
/// the token as job_address says (for an address: --token, --token-file, the
/// environment).
collector::Client connect_to(bool job, const std::string& source, const std::string& host, std::uint16_t port,
                             const std::string& token, const std::string& token_file, double timeout, const char* name);

/// Which of the server's files (client.info().files) `name` means: the one spelled so, else
/// the one that is the same file on disk, else the only one with that file name
/// ("fast.h5" for "out/demo/fast.h5"); "" stays "" (the server's first). Throws
/// std::invalid_argument, one line listing what the server serves, when none or several match.
std::string served_file(collector::Client& client, const std::string& name);

}  // namespace rwd::cli

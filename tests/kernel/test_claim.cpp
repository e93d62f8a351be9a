// FileClaim (claim.hpp): one writing job per file. The holder is named on refusal; a
// record left by a process that has ended is taken over; a live holder found by its
// record alone (what guards a file system without flock) is refused; a record from
// another host needs break_lock.
#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/error.hpp"

using namespace rwd::kernel;

namespace {
std::string host() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string read(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A record as another process would have left it (no lock held).
void leave_record(const std::string& file, const std::string& h, long pid, long long start = 0) {
  std::ofstream(claim_path(file)) << "rewind file claim\nhost=" << h << "\npid=" << pid
                                  << "\nsince=2025-01-01 00:00:00 UTC\ncommand=rewind run old.toml\nproc_start="
                                  << start << "\n";
}

/// The text of the FileError(claimed) that taking `file` throws, or "" if it succeeds.
std::string refusal(const std::string& file, ClaimOptions o = {}) {
  try {
    FileClaim c = FileClaim::take(file, o);
  } catch (const FileError& e) {
    CHECK(e.kind() == ErrorKind::claimed);
    return e.what();
  }
  return "";
}

/// A process number no process has now (searched down from the largest).
long dead_pid() {
  long p = 4194303;
  std::ifstream("/proc/sys/kernel/pid_max") >> p;
  while (p > 2 && !(kill(static_cast<pid_t>(p - 1), 0) != 0 && errno == ESRCH)) --p;
  return p - 1;
}
}  // namespace

TEST_CASE("a file has one claim at a time; the refusal names the holder", "[kernel]") {
  const std::string f = "kernel_test_claim_a.h5";
  std::remove(claim_path(f).c_str());
  {
    FileClaim c = FileClaim::take(f);
    CHECK(c.held());
    CHECK(c.locked());  // a local file system has flock
    CHECK(c.note().empty());
    const std::string rec = read(claim_path(f));
    CHECK(rec.find("host=" + host() + "\n") != std::string::npos);
    CHECK(rec.find("pid=" + std::to_string(getpid()) + "\n") != std::string::npos);
    // Another claimant (here another open of this process: flock is per open file).
    CHECK(refusal(f) == f + ": is written by this job already (its run or an earlier branch)");
    const auto state = read_claim(f);
    REQUIRE(state);
    CHECK(state->live);
    CHECK(state->ours);
    CHECK_FALSE(claimed_elsewhere(f));
  }
  CHECK_FALSE(std::ifstream(claim_path(f)).good());  // released: the sidecar is gone
  CHECK_FALSE(read_claim(f));
}

TEST_CASE("a claim left by a process that has ended is taken over, saying whose", "[kernel]") {
  const std::string f = "kernel_test_claim_b.h5";
  const long pid = dead_pid();
  leave_record(f, host(), pid);
  const auto state = read_claim(f);
  REQUIRE(state);
  CHECK_FALSE(state->live);
  FileClaim c = FileClaim::take(f);
  CHECK(c.note() == "took over the claim of rewind run old.toml (process " + std::to_string(pid) + " on host " + host() +
                        ", since 2025-01-01 00:00:00 UTC): that process has ended");
  CHECK(read(claim_path(f)).find("pid=" + std::to_string(getpid()) + "\n") != std::string::npos);
}

TEST_CASE("a live holder known by its record alone is refused; a reused process number is not live", "[kernel]") {
  const std::string f = "kernel_test_claim_c.h5";
  const long parent = static_cast<long>(getppid());  // alive while this test runs
  leave_record(f, host(), parent);                     // no start time recorded: the pid decides
  const std::string why = refusal(f);
  CHECK(why.find(f + ": is being written by another job: rewind run old.toml (process " + std::to_string(parent) +
                 " on host " + host()) == 0);
  CHECK(claimed_elsewhere(f));
  leave_record(f, host(), parent, 1);  // the same number, another start time: an ended holder's
  FileClaim c = FileClaim::take(f);
  CHECK(c.note().find("that process has ended") != std::string::npos);
}

TEST_CASE("a claim from another host is refused unless broken", "[kernel]") {
  const std::string f = "kernel_test_claim_d.h5";
  leave_record(f, "elsewhere.example", 4242);
  const auto state = read_claim(f);
  REQUIRE(state);
  CHECK_FALSE(state->checkable);
  CHECK(refusal(f) == f + ": is claimed by a job on another host: rewind run old.toml (process 4242 on host "
                          "elsewhere.example, since 2025-01-01 00:00:00 UTC); that cannot be checked from here: if "
                          "the job has ended, run again with --break-lock");
  FileClaim c = FileClaim::take(f, {.break_lock = true});
  CHECK(c.note() == "broke the claim of rewind run old.toml (process 4242 on host elsewhere.example, since "
                    "2025-01-01 00:00:00 UTC) (--break-lock)");
}

TEST_CASE("a sidecar that is not a claim is not overwritten", "[kernel]") {
  const std::string f = "kernel_test_claim_e.h5";
  std::ofstream(claim_path(f)) << "something else\n";
  CHECK(refusal(f).find("is not a Rewind claim") != std::string::npos);
  CHECK(read(claim_path(f)) == "something else\n");
  std::remove(claim_path(f).c_str());
}

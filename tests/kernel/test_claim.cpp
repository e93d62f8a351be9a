// FileClaim (claim.hpp): one writing job per file. The holder is named on refusal; a
// record left by a process that has ended (or is a zombie) is taken over; a live holder
// found by its record alone (what guards a file system without flock) is refused; a
// record from another host needs break_lock. Every name of a file meets one claim: a
// symbolic link, a hard link, a `..` path, another mount of its folder.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
  // Not judged before the claim is taken: on a job spread over nodes this is the record of
  // the job's own claiming rank, seen from another node (driver: check_output).
  CHECK(claimed_elsewhere(f));
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

namespace {
namespace fs = std::filesystem;

/// An empty folder `name` (made afresh; removed with what is in it when done).
struct Folder {
  std::string path;
  explicit Folder(std::string name) : path(std::move(name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  [[nodiscard]] std::string operator/(const std::string& name) const { return path + "/" + name; }
};

/// Another process (another job, as far as the claim can tell) holding the claim it took
/// through `name`, until this is destroyed.
class Holder {
 public:
  explicit Holder(const std::string& name) {
    int up[2], down[2];
    REQUIRE(pipe(up) == 0);
    REQUIRE(pipe(down) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      close(up[0]);
      close(down[1]);
      char ok = 'n', wait = 0;
      try {
        FileClaim c = FileClaim::take(name);
        ok = 'y';
        (void)!write(up[1], &ok, 1);
        (void)!::read(down[0], &wait, 1);  // until the parent closes its end
      } catch (...) {
        (void)!write(up[1], &ok, 1);
      }
      _exit(0);
    }
    close(up[1]);
    close(down[0]);
    down_ = down[1];
    char ok = 0;
    const auto n = ::read(up[0], &ok, 1);
    close(up[0]);
    REQUIRE(n == 1);
    REQUIRE(ok == 'y');
  }
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;
  ~Holder() {
    close(down_);
    waitpid(pid_, nullptr, 0);
  }
  /// What a refusal says of it: "(process PID on host H, since ".
  [[nodiscard]] std::string named() const {
    return "(process " + std::to_string(pid_) + " on host " + host() + ", since ";
  }
  [[nodiscard]] long pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int down_ = -1;
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("a symbolic link to a file another job writes reaches its claim", "[kernel]") {
  const Folder d("kernel_test_claim_sym");
  std::ofstream(d / "w.h5") << "data";
  REQUIRE(symlink("w.h5", (d / "sym.h5").c_str()) == 0);
  CHECK(claim_path(d / "sym.h5") == claim_path(d / "w.h5"));
  const Holder h(d / "w.h5");
  const std::string why = refusal(d / "sym.h5");
  CHECK(starts_with(why, d / "sym.h5: is being written by another job: "));
  CHECK(why.find(h.named()) != std::string::npos);
  CHECK(claimed_elsewhere(d / "sym.h5"));
  CHECK(read(d / "w.h5") == "data");  // untouched
}

TEST_CASE("a file reached through a dangling symbolic link is claimed where it will be created", "[kernel]") {
  const Folder d("kernel_test_claim_dangling");
  REQUIRE(symlink("new.h5", (d / "sym.h5").c_str()) == 0);
  {
    const Holder h(d / "sym.h5");  // creates new.h5 (empty) to hold it from the start
    CHECK(fs::exists(d / "new.h5"));
    const std::string why = refusal(d / "new.h5");
    CHECK(starts_with(why, d / "new.h5: is being written by another job: "));
    CHECK(why.find(h.named()) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(d / "new.h5"));  // nothing was written to it: removed with the claim
  CHECK_FALSE(fs::exists(claim_path(d / "new.h5")));
}

TEST_CASE("a hard link to a file another job writes is refused, naming that job and its name", "[kernel]") {
  const Folder d("kernel_test_claim_hard");
  std::ofstream(d / "w.h5") << "data";
  REQUIRE(link((d / "w.h5").c_str(), (d / "hard.h5").c_str()) == 0);
  {
    const Holder h(d / "w.h5");
    const std::string why = refusal(d / "hard.h5");
    CHECK(starts_with(why, d / "hard.h5: is being written by another job: "));
    CHECK(why.find(h.named()) != std::string::npos);
    CHECK(why.find(", under another name of the same file: " + fs::canonical(d / "w.h5").string() + ";") !=
          std::string::npos);
    const auto state = read_claim(d / "hard.h5");  // what `rewind info` and a restart look at
    REQUIRE(state);
    CHECK(state->live);
    CHECK_FALSE(state->ours);
    CHECK(state->record.pid == h.pid());
    CHECK(claimed_elsewhere(d / "hard.h5"));
    // Readers are not held off: HDF5 (h5py, rewind verify) takes flock(LOCK_SH) on the file.
    const int fd = open((d / "hard.h5").c_str(), O_RDONLY);
    CHECK(flock(fd, LOCK_SH | LOCK_NB) == 0);
    close(fd);
    CHECK(read(d / "w.h5") == "data");
  }
  CHECK_FALSE(claimed_elsewhere(d / "hard.h5"));  // the job ended: free again
  FileClaim mine = FileClaim::take(d / "w.h5");
  CHECK(refusal(d / "hard.h5") == d / "hard.h5: is written by this job already (its run or an earlier branch)");
  CHECK_FALSE(claimed_elsewhere(d / "hard.h5"));  // ours
}

TEST_CASE("a path through .. reaches the claim of the file it names", "[kernel]") {
  const Folder d("kernel_test_claim_dotdot");
  fs::create_directories(d / "sub");
  const Holder h(d / "w.h5");
  const std::string why = refusal(d / "sub/../w.h5");
  CHECK(starts_with(why, d / "sub/../w.h5: is being written by another job: "));
  CHECK(why.find(h.named()) != std::string::npos);
}

TEST_CASE("another mount of the same folder (a bind mount) reaches the same claim", "[kernel]") {
  const Folder d("kernel_test_claim_bind");
  fs::create_directories(d / "a");
  fs::create_directories(d / "b");
  if (mount(fs::absolute(d / "a").c_str(), fs::absolute(d / "b").c_str(), nullptr, MS_BIND, nullptr) != 0) {
    WARN("skipped: cannot bind-mount here (" << std::strerror(errno) << "; needs root or CAP_SYS_ADMIN)");
    return;
  }
  struct Unmount {
    std::string at;
    ~Unmount() { umount2(at.c_str(), MNT_DETACH); }
  } unmount{fs::absolute(d / "b")};
  std::ofstream(d / "a/w.h5") << "data";
  const Holder h(d / "a/w.h5");
  const std::string why = refusal(d / "b/w.h5");
  CHECK(starts_with(why, d / "b/w.h5: is being written by another job: "));
  CHECK(why.find(h.named()) != std::string::npos);
  CHECK(claimed_elsewhere(d / "b/w.h5"));
}

TEST_CASE("a claim of a new file creates it empty, and removes it if nothing was written", "[kernel]") {
  const Folder d("kernel_test_claim_new");
  {
    FileClaim c = FileClaim::take(d / "w.h5");
    CHECK(c.created());
    CHECK(fs::file_size(d / "w.h5") == 0);
  }
  CHECK_FALSE(fs::exists(d / "w.h5"));
  {
    FileClaim c = FileClaim::take(d / "w.h5");
    std::ofstream(d / "w.h5") << "data";  // what the run's writer does
  }
  CHECK(read(d / "w.h5") == "data");
  FileClaim again = FileClaim::take(d / "w.h5");
  CHECK_FALSE(again.created());
}

TEST_CASE("a zombie (ended, not yet reaped) holds no claim", "[kernel]") {
  const std::string f = "kernel_test_claim_z.h5";
  const pid_t z = fork();
  REQUIRE(z >= 0);
  if (z == 0) _exit(0);
  // Its parent (this test) has not reaped it: kill(z, 0) still succeeds.
  std::string state;
  for (int i = 0; i < 500 && state != "Z"; ++i) {
    usleep(10000);
    std::ifstream in("/proc/" + std::to_string(z) + "/stat");
    std::string line;
    std::getline(in, line);
    const auto close = line.rfind(')');
    state = close == std::string::npos ? "" : line.substr(close + 2, 1);
  }
  REQUIRE(state == "Z");
  leave_record(f, host(), z);
  const auto claim = read_claim(f);
  REQUIRE(claim);
  CHECK_FALSE(claim->live);
  CHECK_FALSE(claimed_elsewhere(f));
  {
    FileClaim c = FileClaim::take(f);
    CHECK(c.note().find("process " + std::to_string(z) + " on host " + host()) != std::string::npos);
    CHECK(c.note().find("that process has ended") != std::string::npos);
  }
  waitpid(z, nullptr, 0);
}

// The other ranks of a job check its output (driver: check_output) while one rank takes
// the claim: a new, empty file must never be seen without the record that names its
// holder, or the check calls it "exists; use --force".
TEST_CASE("whoever sees a claimed new file also sees its live claim", "[kernel]") {
  const Folder d("kernel_test_claim_order");
  const std::string f = d / "w.h5";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (int i = 0; i < 3000; ++i) {
      try {
        FileClaim c = FileClaim::take(f);
      } catch (...) {
        _exit(1);
      }
    }
    _exit(0);
  }
  int seen = 0, unclaimed = 0;
  for (int status = 0; waitpid(child, &status, WNOHANG) == 0;) {
    if (!fs::exists(f)) continue;
    ++seen;
    const bool claimed = claimed_elsewhere(f);
    if (!claimed && fs::exists(f)) ++unclaimed;  // still there, yet nobody holds it
  }
  INFO("the file was seen " << seen << " times");
  CHECK(unclaimed == 0);
}

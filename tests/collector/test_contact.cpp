// The contact file of a live run (collector/contact.hpp; docs/collector-protocol.md,
// "Contact file"): the doc's example is what the code writes and reads; every bad file
// gets one line naming it; the file is private, atomic, stale when its writer is gone,
// and removed only by its writer.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "rewind/collector/contact.hpp"
#include "rewind/holder/holder.hpp"

using namespace rwd::collector;
namespace fs = std::filesystem;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The ```json block of the doc's "Contact file" section.
std::string doc_example() {
  const std::string doc = read_all(REWIND_COLLECTOR_DOC);
  const auto at = doc.find("## Contact file");
  REQUIRE(at != std::string::npos);
  std::smatch m;
  const std::string rest = doc.substr(at);
  REQUIRE(std::regex_search(rest, m, std::regex("```json\\n([^`]*)```")));
  return m[1].str();
}

/// A fresh folder for one test case, removed at its end.
struct Folder {
  fs::path dir = fs::temp_directory_path() / ("rewind_contact_" + std::to_string(::getpid()));
  Folder() { fs::create_directories(dir); }
  ~Folder() { fs::remove_all(dir); }
  [[nodiscard]] std::string run() const { return (dir / "run.h5").string(); }
};

void put(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

/// The message of the std::invalid_argument `f` throws ("" if none).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// The pid of a process that has ended.
long dead_pid() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}

}  // namespace

TEST_CASE("the doc's example contact file is what the code writes", "[collector][doc]") {
  const std::string text = doc_example();
  const Contact c = parse_contact(text, "x.contact");
  CHECK(c.host == "cn042");
  CHECK(c.port == 41235);
  CHECK(c.token == "3f9c0a6e5b");
  CHECK(c.node == "cn042");
  CHECK(c.pid == 81234);
  CHECK(c.started == "2026-11-26T07:12:03Z");
  CHECK(c.boot_id == "6f1c2e0a-5d3b-4c1e-9a7f-0b8d2c4e6a10");
  CHECK(c.pid_start == 73524117);
  CHECK(contact_json(c) == text);
  Contact old = c;  // written before boot_id and pid_start: no keys, and it still reads
  old.boot_id.clear();
  old.pid_start = 0;
  CHECK(contact_json(old).find("boot_id") == std::string::npos);
  CHECK(contact_json(old).find("pid_start") == std::string::npos);
  CHECK(parse_contact(contact_json(old), "x").pid_start == 0);
  Contact none = c;  // no token: no key at all
  none.token.clear();
  CHECK(contact_json(none).find("token") == std::string::npos);
  CHECK(parse_contact(contact_json(none), "x").token.empty());
}

TEST_CASE("a listening collector's contact: a wildcard address becomes the node's name", "[collector]") {
  const Contact any = make_contact("0.0.0.0", 7400, "t");
  CHECK(any.host == rwd::holder::node_name());
  CHECK(any.node == rwd::holder::node_name());
  CHECK(any.pid == static_cast<long>(::getpid()));
  CHECK(std::regex_match(any.started, std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ")));
  CHECK(make_contact("127.0.0.1", 7400, "").host == "127.0.0.1");
  CHECK(any.boot_id == rwd::holder::boot_id());
  CHECK(any.pid_start == rwd::holder::process_start(any.pid));
  CHECK(any.pid_start > 0);
}

TEST_CASE("a bad contact file is refused with one line naming it", "[collector]") {
  const std::string good = doc_example();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "is not JSON"},
      {"[1, 2]", "is not a JSON object"},
      {R"({"version": 1, "port": 7400, "node": "n", "pid": 1, "started": "s"})", "has no \"host\""},
      {R"({"version": 1, "host": "h", "port": "7400", "node": "n", "pid": 1, "started": "s"})",
       "has a malformed \"port\""},
      {R"({"version": 1, "host": "h", "port": 0, "node": "n", "pid": 1, "started": "s"})", "no usable host and port"},
      {R"({"version": 1, "host": "h", "port": 70000, "node": "n", "pid": 1, "started": "s"})",
       "no usable host and port"},
      {R"({"version": 1, "host": "h", "port": 1, "token": 5, "node": "n", "pid": 1, "started": "s"})",
       "has a malformed \"token\""},
      {R"({"version": 2, "host": "h", "port": 1, "node": "n", "pid": 1, "started": "s"})",
       "newer than this program's 1"},
      {R"({"version": 1, "host": "h", "port": 1, "node": "n", "pid": 1, "started": "s", "pid_start": "9"})",
       "has a malformed \"pid_start\""},
      {R"({"version": 1, "host": "h", "port": 1, "node": "n", "pid": 1, "started": "s", "boot_id": 3})",
       "has a malformed \"boot_id\""},
  };
  for (const auto& bad : cases) {
    const std::string& text = bad.first;
    const std::string& why = bad.second;
    CAPTURE(text);
    const std::string e = refusal([&] { (void)parse_contact(text, "/x/run.h5.contact"); });
    CHECK(e.rfind("contact file /x/run.h5.contact ", 0) == 0);
    CHECK(e.find(why) != std::string::npos);
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("the contact file is private, found by the run's name, and stale once its writer is gone", "[collector]") {
  Folder f;
  const std::string run = f.run(), path = contact_path(run);
  CHECK(path == run + ".contact");
  CHECK(refusal([&] { (void)read_contact(run); }).find("no contact file " + path + ": the run is not live") !=
        std::string::npos);
  const mode_t old = ::umask(0);  // the file is 0600 whatever the umask
  write_contact(run, make_contact("127.0.0.1", 4242, "tok"));
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(read_contact(run).port == 4242);
  CHECK(read_contact(path).token == "tok");  // the .contact file itself names it too
  ::chmod(path.c_str(), 0644);
  CHECK(refusal([&] { (void)read_contact(run); }).find("may be read or written by group or others (mode 0644): chmod 600") !=
        std::string::npos);
  Contact gone = make_contact("127.0.0.1", 4242, "");
  gone.pid = dead_pid();
  put(path, contact_json(gone), 0600);
  CHECK(contact_is_stale(gone));
  CHECK(refusal([&] { (void)read_contact(run); }).find("is stale: the job that wrote it (pid " + std::to_string(gone.pid)) !=
        std::string::npos);
  gone.node = rwd::holder::node_name() + "-elsewhere";  // another node's processes cannot be seen: not stale
  put(path, contact_json(gone), 0600);
  CHECK_FALSE(contact_is_stale(gone));
  CHECK(read_contact(run).node == gone.node);
  Contact reused = make_contact("127.0.0.1", 4242, "");  // this process's number, another start: reused
  CHECK_FALSE(contact_is_stale(reused));
  reused.pid_start += 1;
  CHECK(contact_is_stale(reused));
  Contact rebooted = make_contact("127.0.0.1", 4242, "");  // written under another boot of this machine
  rebooted.boot_id = "00000000-0000-0000-0000-000000000000";
  CHECK(contact_is_stale(rebooted));
  put(path, contact_json(reused), 0600);
  CHECK(refusal([&] { (void)read_contact(run); }).find("is stale") != std::string::npos);
}

TEST_CASE("a contact file is removed by the process that wrote it, never another's", "[collector]") {
  Folder f;
  const std::string run = f.run(), path = contact_path(run);
  {
    ContactFile mine;
    mine.publish(run, make_contact("127.0.0.1", 1111, ""));
    CHECK(fs::exists(path));
  }
  CHECK_FALSE(fs::exists(path));  // at destruction
  ContactFile mine;
  mine.publish(run, make_contact("127.0.0.1", 1111, ""));
  Contact other = make_contact("127.0.0.1", 2222, "");  // a later job wrote the same run's file
  other.pid = dead_pid();
  put(path, contact_json(other), 0600);
  mine.remove();
  CHECK(fs::exists(path));
  CHECK(parse_contact(read_all(path), path).port == 2222);
}

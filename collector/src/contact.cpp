// The contact file of a live run (see contact.hpp).
#include "rewind/collector/contact.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp needs std::exchange under C++20
#include <boost/asio/ip/address.hpp>

#include "rewind/holder/holder.hpp"

namespace rwd::collector {

namespace {

using json = nlohmann::json;

constexpr const char* kSuffix = ".contact";

/// The file a signal handler removes: a fixed buffer, as a handler may not allocate.
char g_signal_path[4096] = {};
struct sigaction g_previous[3];
constexpr std::array<int, 3> kSignals = {SIGTERM, SIGINT, SIGHUP};

extern "C" void remove_on_signal(int sig) {
  if (g_signal_path[0] != '\0') ::unlink(g_signal_path);
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  ::raise(sig);  // as the signal would have: the previous handler, or the default (the end)
}

std::string file_of(const std::string& run_file) {
  const std::string s(kSuffix);
  return run_file.size() > s.size() && run_file.compare(run_file.size() - s.size(), s.size(), s) == 0
             ? run_file
             : contact_path(run_file);
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw std::invalid_argument("contact file " + path + " " + why);
}

/// The text of `path`, which only its owner may read and write (it may hold a token).
std::string read_private(const std::string& path, const std::string& run_file) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    throw std::invalid_argument(run_file + ": no contact file " + path + ": the run is not live (a `rewind run --listen` "
                                "job writes it while its collector listens) or has ended");
  if (fd < 0) refuse(path, std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  std::string text;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && (st.st_mode & 077) == 0 && st.st_size <= 65536) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t n = 0;
    while (n < text.size()) {
      const ssize_t got = ::read(fd, text.data() + n, text.size() - n);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      n += static_cast<std::size_t>(got);
    }
    text.resize(n);
  }
  ::close(fd);
  if (!regular) refuse(path, "is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    refuse(path, std::string("may be read or written by group or others (mode ") + mode + "): chmod 600 " + path);
  }
  if (st.st_size > 65536) refuse(path, "is too large for a contact file");
  return text;
}

}  // namespace

std::string contact_path(const std::string& run_file) { return run_file + kSuffix; }

Contact make_contact(const std::string& listen_host, std::uint16_t port, const std::string& token) {
  Contact c;
  const bool wildcard = listen_host.empty() || listen_host == "0.0.0.0" || listen_host == "::" || listen_host == "[::]";
  c.node = holder::node_name();
  c.host = wildcard ? c.node : listen_host;
  c.port = port;
  c.token = token;
  const holder::Process self = holder::self();
  c.pid = self.pid;
  c.started = holder::utc_iso();
  c.boot_id = self.boot_id;
  c.pid_start = self.start > 0 ? self.start : 0;
  return c;
}

std::string contact_json(const Contact& c) {
  nlohmann::ordered_json j = {{"version", kContactVersion}, {"host", c.host}, {"port", c.port}};
  if (!c.token.empty()) j["token"] = c.token;
  j["node"] = c.node;
  j["pid"] = c.pid;
  j["started"] = c.started;
  if (!c.boot_id.empty()) j["boot_id"] = c.boot_id;
  if (c.pid_start > 0) j["pid_start"] = c.pid_start;
  return j.dump(2) + "\n";
}

Contact parse_contact(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    refuse(path, "is not JSON");
  }
  if (!j.is_object()) refuse(path, "is not a JSON object");
  const auto need = [&](const char* key, bool (json::*is)() const noexcept) -> const json& {
    const auto it = j.find(key);
    if (it == j.end()) refuse(path, std::string("has no \"") + key + "\"");
    if (!((*it).*is)()) refuse(path, std::string("has a malformed \"") + key + "\"");
    return *it;
  };
  const auto version = need("version", &json::is_number_integer).get<long long>();
  if (version > kContactVersion)
    refuse(path, "has version " + std::to_string(version) + ", newer than this program's " +
                     std::to_string(kContactVersion) + ": update Rewind");
  Contact c;
  c.host = need("host", &json::is_string).get<std::string>();
  const auto port = need("port", &json::is_number_integer).get<long long>();
  if (port < 1 || port > 65535 || c.host.empty()) refuse(path, "has no usable host and port");
  c.port = static_cast<std::uint16_t>(port);
  if (j.contains("token")) c.token = need("token", &json::is_string).get<std::string>();
  c.node = need("node", &json::is_string).get<std::string>();
  c.pid = static_cast<long>(need("pid", &json::is_number_integer).get<long long>());
  c.started = need("started", &json::is_string).get<std::string>();
  if (j.contains("boot_id")) c.boot_id = need("boot_id", &json::is_string).get<std::string>();
  if (j.contains("pid_start")) c.pid_start = need("pid_start", &json::is_number_integer).get<long long>();
  return c;
}

void write_contact(const std::string& run_file, const Contact& c) {
  const std::string path = contact_path(run_file), tmp = path + ".tmp" + std::to_string(::getpid());
  const auto fail = [&](const char* what) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("contact file " + path + ": " + what + ": " + std::strerror(e));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) fail("cannot be created");
  const std::string text = contact_json(c);
  bool ok = ::fchmod(fd, 0600) == 0;  // whatever the umask and an old file's mode
  for (std::size_t n = 0; ok && n < text.size();) {
    const ssize_t put = ::write(fd, text.data() + n, text.size() - n);
    if (put < 0 && errno == EINTR) continue;
    ok = put > 0;
    if (ok) n += static_cast<std::size_t>(put);
  }
  if (::close(fd) != 0) ok = false;
  if (!ok) fail("cannot be written");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot be put in place");
}

bool contact_is_stale(const Contact& c) {
  // A file without boot_id and pid_start (written before they were added): a reused pid looks alive.
  return c.pid > 0 && holder::alive({c.node, c.pid, c.boot_id, c.pid_start}) == holder::Alive::no;
}

Contact read_contact(const std::string& run_file) {
  const std::string path = file_of(run_file);
  Contact c = parse_contact(read_private(path, run_file), path);
  if (contact_is_stale(c))
    throw std::invalid_argument("contact file " + path + " is stale: the job that wrote it (pid " + std::to_string(c.pid) +
                                " on " + c.node + ", listening since " + c.started +
                                ") has ended without removing it; remove it");
  return c;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

std::string contact_hint(const Contact& c, const std::string& path) {
  std::string out = " (" + path + ": the job's collector on " + c.node + ", pid " + std::to_string(c.pid) + ", since " +
                    c.started + ")";
  if (is_loopback_host(c.host) && c.node != holder::node_name())
    out += "; it listens on loopback of " + c.node + " only: reach it through an SSH tunnel (docs/cluster.md, "
           "\"Connecting to a job\"), or start the run with --listen 0.0.0.0:PORT and a token";
  return out;
}

ContactFile::~ContactFile() { remove(); }

void ContactFile::publish(const std::string& run_file, const Contact& c) {
  write_contact(run_file, c);
  path_ = contact_path(run_file);
  if (path_.size() < sizeof g_signal_path) {
    std::memcpy(g_signal_path, path_.c_str(), path_.size() + 1);
    struct sigaction sa {};
    sa.sa_handler = remove_on_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

void ContactFile::remove() noexcept {
  if (path_.empty()) return;
  if (g_signal_path[0] != '\0') {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
    g_signal_path[0] = '\0';
  }
  // Only if it is still this process's: never another job's file.
  try {
    const Contact c = parse_contact(read_private(path_, path_), path_);
    if (holder::is_self({c.node, c.pid, {}, 0})) ::unlink(path_.c_str());
  } catch (...) {
  }
  path_.clear();
}

}  // namespace rwd::collector

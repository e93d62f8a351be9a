// The token from an option, a private file or the environment (see token.hpp).
#include "rewind/collector/token.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace rwd::collector {

namespace {
/// Closes a file descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw std::invalid_argument("token file " + path + " " + why);
}

bool blank(const std::string& token) {
  return std::all_of(token.begin(), token.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

/// What group and others may do to a file of mode `mode`, as the refusal says it.
std::string exposure(mode_t mode) {
  const bool read = (mode & 044) != 0, write = (mode & 022) != 0;
  if (read && write) return "may be read and changed";
  return read ? "may be read" : write ? "may be changed" : "may be used";
}
}  // namespace

std::string read_token_file(const std::string& path) {
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) refuse(path, std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  // Checked on the open file, not the name: what is checked is what is read.
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) refuse(path, "is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    refuse(path, exposure(st.st_mode) + " by group or others (mode " + mode + "): chmod 600 " + path);
  }
  std::string text(kMaxTokenBytes + 2, '\0');
  std::size_t n = 0;
  while (n < text.size()) {
    const ssize_t got = ::read(f.fd, text.data() + n, text.size() - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) refuse(path, std::string("cannot be read: ") + std::strerror(errno));
    if (got == 0) break;
    n += static_cast<std::size_t>(got);
  }
  text.resize(n);
  std::string token = text.substr(0, text.find('\n'));
  if (!token.empty() && token.back() == '\r') token.pop_back();
  if (token.empty()) refuse(path, "is empty (the token is its first line)");
  if (blank(token)) refuse(path, "holds a token of white space only (its first line): put a secret in it");
  if (token.size() > kMaxTokenBytes) refuse(path, "holds a token longer than " + std::to_string(kMaxTokenBytes) + " bytes");
  return token;
}

std::string resolve_token(const std::string& token, const std::string& token_file) {
  if (!token.empty() && !token_file.empty())
    throw std::invalid_argument("give the token with --token or --token-file, not both");
  if (!token.empty() && blank(token))
    throw std::invalid_argument("--token is white space only: give a secret (or --token '' for none, on loopback)");
  if (!token.empty()) return token;
  if (!token_file.empty()) return read_token_file(token_file);
  const std::string from_env = env(kTokenEnv), file_env = env(kTokenFileEnv);
  if (!from_env.empty() && !file_env.empty())
    throw std::invalid_argument(std::string("both ") + kTokenEnv + " and " + kTokenFileEnv + " are set; unset one");
  if (!from_env.empty() && blank(from_env))
    throw std::invalid_argument(std::string(kTokenEnv) + " is white space only: give a secret, or unset it");
  return file_env.empty() ? from_env : read_token_file(file_env);
}

std::string generate_token() {
  unsigned char bytes[kGeneratedTokenBytes];
  std::size_t n = 0;
  while (n < sizeof bytes) {
    const ssize_t got = ::getrandom(bytes + n, sizeof bytes - n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::runtime_error(std::string("no random token: getrandom: ") + std::strerror(errno));
    n += static_cast<std::size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

}  // namespace rwd::collector

// Where the token comes from (collector/token.hpp): a private file or the environment,
// refused with one line naming what is wrong, never the token itself.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "rewind/collector/token.hpp"

using namespace rwd::collector;
namespace fs = std::filesystem;

namespace {

/// A fresh directory, removed with everything in it; the environment's variables unset.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("rewind_token_" + std::to_string(::getpid()));
  Scratch() {
    fs::create_directories(dir);
    ::unsetenv(kTokenEnv);
    ::unsetenv(kTokenFileEnv);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    ::unsetenv(kTokenEnv);
    ::unsetenv(kTokenFileEnv);
  }
  std::string file(const std::string& name, const std::string& text, mode_t mode) const {
    const auto p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
};

/// The one-line message of what `f` throws (std::invalid_argument), "" if nothing.
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a token file: its first line, only if group and others can neither read nor write it", "[collector][token]") {
  const Scratch s;
  CHECK(read_token_file(s.file("a", "s3cret\n", 0600)) == "s3cret");
  CHECK(read_token_file(s.file("b", "s3cret\r\nsecond line\n", 0400)) == "s3cret");
  CHECK(read_token_file(s.file("c", "no newline", 0600)) == "no newline");
  for (const mode_t open : {0644, 0640, 0604, 0620, 0602}) {
    const auto path = s.file("open", "s3cret\n", open);
    const auto why = refusal([&] { (void)read_token_file(path); });
    CAPTURE(open, why);
    CHECK(why.find(path) != std::string::npos);
    CHECK(why.find("chmod 600") != std::string::npos);
    CHECK(why.find("s3cret") == std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
  }
  CHECK(refusal([&] { (void)read_token_file(s.file("empty", "\nsecret on line 2\n", 0600)); }).find("is empty") != std::string::npos);
  CHECK(refusal([&] { (void)read_token_file(s.file("long", std::string(kMaxTokenBytes + 1, 'x'), 0600)); }).find("longer") !=
        std::string::npos);
  CHECK(refusal([&] { (void)read_token_file((s.dir / "missing").string()); }).find("cannot be opened") != std::string::npos);
  CHECK(refusal([&] { (void)read_token_file(s.dir.string()); }).find("not a regular file") != std::string::npos);
}

TEST_CASE("resolve_token: --token, else --token-file, else REWIND_TOKEN, else REWIND_TOKEN_FILE", "[collector][token]") {
  const Scratch s;
  const auto file = s.file("t", "from-file\n", 0600);
  const auto other = s.file("u", "from-env-file\n", 0600);
  CHECK(resolve_token("", "").empty());
  CHECK(resolve_token("flag", "") == "flag");
  CHECK(resolve_token("", file) == "from-file");
  CHECK(!refusal([&] { (void)resolve_token("flag", file); }).empty());
  ::setenv(kTokenEnv, "from-env", 1);
  CHECK(resolve_token("", "") == "from-env");
  CHECK(resolve_token("flag", "") == "flag");  // an option beats the environment
  CHECK(resolve_token("", file) == "from-file");
  ::setenv(kTokenFileEnv, other.c_str(), 1);
  CHECK(refusal([&] { (void)resolve_token("", ""); }).find("both") != std::string::npos);
  ::unsetenv(kTokenEnv);
  CHECK(resolve_token("", "") == "from-env-file");
  ::chmod(other.c_str(), 0644);
  const auto why = refusal([&] { (void)resolve_token("", ""); });
  CHECK(why.find(other) != std::string::npos);
  CHECK(why.find("from-env-file") == std::string::npos);
}

TEST_CASE("a token file group or others may change is refused in those words, not as readable", "[collector][token]") {
  const Scratch s;
  const auto said = [&](mode_t mode) {
    const auto path = s.file(std::to_string(mode), "s3cret\n", mode);
    return refusal([&] { (void)read_token_file(path); });
  };
  CHECK(said(0620).find("may be changed by group or others (mode 0620): chmod 600") != std::string::npos);
  CHECK(said(0602).find("may be changed by group or others (mode 0602)") != std::string::npos);
  CHECK(said(0640).find("may be read by group or others (mode 0640)") != std::string::npos);
  CHECK(said(0666).find("may be read and changed by group or others (mode 0666)") != std::string::npos);
  CHECK(said(0620).find("may be read") == std::string::npos);
}

TEST_CASE("a token of white space only is refused wherever it comes from", "[collector][token]") {
  const Scratch s;
  CHECK(refusal([] { (void)resolve_token(" \t ", ""); }).find("white space only") != std::string::npos);
  const auto file = s.file("blank", "   \n", 0600);
  const auto why = refusal([&] { (void)resolve_token("", file); });
  CHECK(why.find(file) != std::string::npos);
  CHECK(why.find("white space only") != std::string::npos);
  ::setenv(kTokenEnv, "  ", 1);
  CHECK(refusal([] { (void)resolve_token("", ""); }).find("REWIND_TOKEN is white space only") != std::string::npos);
  CHECK(resolve_token(" inner space ", "") == " inner space ");  // not blank: a secret like any other
}

TEST_CASE("a generated token: 48 hex digits, a new one every time", "[collector][token]") {
  const auto a = generate_token(), b = generate_token();
  CHECK(a.size() == 2 * kGeneratedTokenBytes);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}

// `rewind keys --markdown` called in process, through the library the `rewind` executable
// is a thin main over (rewind_cli: rwd::cli::run_cli). The oracle is the two tables the
// command prints from, read here on their own: config's case-key table (every key but
// the [output.io] placeholder) and the kernel's I/O options table, less the two options a
// case may not set (flush_on_commit, write_views: driver/output.hpp says why). Every key
// is one row of the reference, and there is no other row.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "rewind/config/case_keys.hpp"
#include "rewind/kernel/options.hpp"

namespace {

struct Output {
  int code = -1;
  std::string out;
};

// Runs the `rewind` command line `args` in this process with its standard output captured.
Output run_captured(std::vector<std::string> args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(::fileno(file), STDOUT_FILENO);
  Output r;
  r.code = rwd::cli::run_cli(static_cast<int>(args.size()), argv.data());
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::fseek(file, 0, SEEK_SET);
  char buf[4096];
  for (std::size_t n = 0; (n = std::fread(buf, 1, sizeof buf, file)) > 0;) r.out.append(buf, n);
  std::fclose(file);
  return r;
}

// The keys of the reference's table rows, "| `KEY` | ...", in order.
std::vector<std::string> row_keys(const std::string& markdown) {
  std::vector<std::string> keys;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("| `", 0) == 0) keys.push_back(line.substr(3, line.find('`', 3) - 3));
  return keys;
}

}  // namespace

TEST_CASE("rewind keys --markdown, in process: one row per case key, io options expanded", "[apps][cli]") {
  std::set<std::string> expected;
  for (const auto& k : rwd::config::case_keys())
    if (k.type != rwd::config::KeyType::option) expected.insert(k.name);
  const std::size_t config_keys = expected.size();
  for (const auto& o : rwd::kernel::options_table())
    if (o.name != "flush_on_commit" && o.name != "write_views") expected.insert("output.io." + o.name);
  REQUIRE(config_keys > 50);                    // the table is there, and it is large
  REQUIRE(expected.size() > config_keys + 10);  // and so are the I/O options

  const Output r = run_captured({"rewind", "keys", "--markdown"});
  REQUIRE(r.code == 0);
  const std::vector<std::string> rows = row_keys(r.out);
  CHECK(rows.size() == expected.size());
  std::multiset<std::string> seen(rows.begin(), rows.end());
  for (const auto& key : expected) {
    INFO(key);
    CHECK(seen.count(key) == 1);
  }
  for (const auto& key : rows) {
    INFO(key);
    CHECK(expected.count(key) == 1);
  }
}

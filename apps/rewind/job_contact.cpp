#include "job_contact.hpp"

#include "commands.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "rewind/collector/contact.hpp"
#include "rewind/collector/token.hpp"

namespace rwd::cli {

namespace col = rwd::collector;

std::string served_file(col::Client& client, const std::string& name) {
  namespace fs = std::filesystem;
  if (name.empty()) return name;
  const auto files = client.info().files;
  if (std::find(files.begin(), files.end(), name) != files.end()) return name;
  std::error_code ec;
  for (const auto& f : files)
    if (fs::equivalent(f, name, ec)) return f;
  std::vector<std::string> same_name;
  for (const auto& f : files)
    if (fs::path(f).filename() == fs::path(name).filename()) same_name.push_back(f);
  if (same_name.size() == 1) return same_name.front();
  throw UsageError(fmt::format("--file {}: {} (served: {})", name,
                                          same_name.empty() ? "the server has no such file" : "more than one served file has that name",
                                          fmt::join(same_name.empty() ? files : same_name, ", ")));
}

bool names_run_file(const std::string& source) {
  std::error_code ec;
  return source.ends_with(".contact") || std::filesystem::exists(source, ec) ||
         std::filesystem::exists(col::contact_path(source), ec);
}

JobAddress job_address(const std::string& run_file, const std::string& token, const std::string& token_file) {
  const col::Contact c = col::read_contact(run_file);
  const std::string path = run_file.ends_with(".contact") ? run_file : col::contact_path(run_file);
  JobAddress a{c.host, c.port, "", col::contact_hint(c, path)};
  const bool given = !token.empty() || !token_file.empty();
  a.token = given || c.token.empty() ? col::resolve_token(token, token_file) : c.token;
  return a;
}

collector::Client connect_job(const JobAddress& a, const collector::ClientOptions& options) {
  try {
    return col::Client(a.host, a.port, a.token, options);
  } catch (const col::ClientError& e) {
    if (a.hint.empty()) throw;
    throw col::ClientError(e.code(), e.what() + a.hint);
  } catch (const std::runtime_error& e) {
    if (a.hint.empty()) throw;
    throw std::runtime_error(e.what() + a.hint);
  }
}

collector::Client connect_to(bool job, const std::string& source, const std::string& host, std::uint16_t port,
                             const std::string& token, const std::string& token_file, double timeout, const char* name) {
  collector::ClientOptions co;
  co.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000));
  co.name = name;
  const JobAddress at =
      job ? job_address(source, token, token_file) : JobAddress{host, port, collector::resolve_token(token, token_file), ""};
  return connect_job(at, co);
}

}  // namespace rwd::cli

#include "rewind/kernel/error.hpp"

#include "rewind/kernel/metadata.hpp"

namespace rwd::kernel {

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::not_hdf5: return "not_hdf5";
    case ErrorKind::not_rewind: return "not_rewind";
    case ErrorKind::newer_version: return "newer_version";
    case ErrorKind::truncated: return "truncated";
    case ErrorKind::corrupt: return "corrupt";
    case ErrorKind::missing_object: return "missing_object";
    case ErrorKind::bad_shape: return "bad_shape";
    case ErrorKind::no_such_step: return "no_such_step";
    case ErrorKind::io: return "io";
    case ErrorKind::no_space: return "no_space";
    case ErrorKind::claimed: return "claimed";
    case ErrorKind::invalid_argument: return "invalid_argument";
  }
  return "unknown";
}

const char* to_string(StepKind k) noexcept {
  return k == StepKind::checkpoint ? "checkpoint" : "visualisation";
}

namespace {
std::string one_line(std::string s, std::size_t max) {
  for (auto& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}
std::string compose(const std::string& file, const std::string& problem, const std::string& detail) {
  std::string s = file + ": " + problem;
  if (!detail.empty()) s += " (HDF5: " + detail + ")";
  return one_line(s, 400);
}
}  // namespace

FileError::FileError(ErrorKind kind, std::string file, std::string problem, std::string detail)
    : std::runtime_error(compose(file, problem, detail)),
      kind_(kind),
      file_(std::move(file)),
      problem_(std::move(problem)),
      detail_(std::move(detail)) {}

}  // namespace rwd::kernel

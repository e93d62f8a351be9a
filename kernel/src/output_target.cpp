// Where a job may create a file on a client's word (see output_target.hpp).
#include "rewind/kernel/output_target.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace rwd::kernel {

namespace {
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool under(const std::string& path, const std::string& root) {
  return path == root ||
         (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}
}  // namespace

void check_output_target(const std::string& path) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& why) { throw std::invalid_argument(path + ": " + why); };
  if (path.empty()) refuse("an empty file name");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    const bool link = S_ISLNK(st.st_mode);
    if (link && ::stat(path.c_str(), &st) != 0)
      refuse("a symbolic link to nothing; a branch is written into a new regular file, never through a link");
    if (!S_ISREG(st.st_mode))
      refuse(std::string("is ") + kind_of(st.st_mode) + "; a branch is written into a new regular file only");
  } else if (errno != ENOENT) {
    refuse(std::strerror(errno));
  }
  // The directory the file would be made in, with every link resolved.
  std::error_code ec;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const fs::path real = fs::canonical(dir, ec);
  if (ec) refuse("cannot create the branch file: its directory " + dir.string() + ": " + ec.message());
  for (const std::string root : {"/dev", "/proc", "/sys"})
    if (under(real.string(), root))
      refuse("lies under " + root + "; a branch is a file of the run's own, never a device or a system file");
  if (!fs::is_directory(real, ec)) refuse("its directory " + dir.string() + " is not a directory");
  if (::access(real.c_str(), W_OK | X_OK) != 0)
    refuse("its directory " + dir.string() + " is not writable by this job: " + std::strerror(errno));
}

}  // namespace rwd::kernel

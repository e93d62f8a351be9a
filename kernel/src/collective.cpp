#include "collective.hpp"

#include <fmt/core.h>

namespace rwd::kernel::detail {

std::string no_space_cause(const std::string& text) {
  for (const char* s : {"No space left on device", "MPI_ERR_NO_SPACE", "errno = 28,"})
    if (text.find(s) != std::string::npos) return "No space left on device";
  for (const char* s : {"Disk quota exceeded", "MPI_ERR_QUOTA", "errno = 122,"})
    if (text.find(s) != std::string::npos) return "Disk quota exceeded";
  return "";
}

/// Collective: every rank learns whether any rank failed; if so all throw the error of
/// the lowest failing rank (its kind and text are broadcast).
void agree(MPI_Comm comm, const std::optional<FileError>& local, const std::string& file) {
  if (comm == MPI_COMM_NULL) {
    if (local) throw *local;
    return;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int kind = local ? static_cast<int>(local->kind()) : 0;
  std::string problem = local ? local->problem() : std::string();
  std::string detail = local ? local->detail() : std::string();
  MPI_Bcast(&kind, 1, MPI_INT, first, comm);
  auto bcast_str = [&](std::string& s) {
    int n = static_cast<int>(s.size());
    MPI_Bcast(&n, 1, MPI_INT, first, comm);
    s.resize(static_cast<std::size_t>(n));
    if (n > 0) MPI_Bcast(s.data(), n, MPI_CHAR, first, comm);
  };
  bcast_str(problem);
  bcast_str(detail);
  if (rank != first) problem = fmt::format("{} (reported by rank {})", problem, first);
  throw FileError(static_cast<ErrorKind>(kind), file, problem, detail);
}

}  // namespace rwd::kernel::detail

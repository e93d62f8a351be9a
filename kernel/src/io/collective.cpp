#include "io/collective.hpp"

#include <fmt/core.h>
#include <xxhash.h>

#include <array>
#include <cstdint>

namespace rwd::kernel::detail {

std::string no_space_cause(const std::string& text) {
  for (const char* s : {"No space left on device", "MPI_ERR_NO_SPACE", "errno = 28,"})
    if (text.find(s) != std::string::npos) return "No space left on device";
  for (const char* s : {"Disk quota exceeded", "MPI_ERR_QUOTA", "errno = 122,"})
    if (text.find(s) != std::string::npos) return "Disk quota exceeded";
  return "";
}

void agree_step_info(MPI_Comm comm, const StepInfo& info, const std::string& file) {
  if (comm == MPI_COMM_NULL) return;
  std::string fields, overrides;
  for (const auto& f : info.fields) fields += fmt::format("{}/{}:{}:{}\n", f.group, f.name, f.slot, f.float32 ? 1 : 0);
  for (const auto& o : info.case_overrides) overrides += o + '\n';
  std::string scalars;  // names and the values' bits: bit-identical on every rank
  for (const auto& x : info.scalars)
    scalars += x.name + '=' + std::string(reinterpret_cast<const char*>(&x.value), sizeof x.value) + '\n';
  const auto kind = static_cast<std::uint8_t>(info.kind);
  const auto cell_type = static_cast<std::uint8_t>(info.write_cell_type ? 1 : 0);
  constexpr std::size_t n = 9;
  constexpr std::array<const char*, n> names{
      "step", "time", "dt", "kind", "write_cell_type", "fields", "case_overrides", "monitor_state", "scalars"};
  const std::array<std::uint64_t, n> h{
      XXH3_64bits(&info.step, sizeof info.step),
      XXH3_64bits(&info.time, sizeof info.time),
      XXH3_64bits(&info.dt, sizeof info.dt),
      XXH3_64bits(&kind, 1),
      XXH3_64bits(&cell_type, 1),
      XXH3_64bits(fields.data(), fields.size()),
      XXH3_64bits(overrides.data(), overrides.size()),
      XXH3_64bits(info.monitor_state.data(), info.monitor_state.size() * sizeof(double)),
      XXH3_64bits(scalars.data(), scalars.size())};
  std::array<std::uint64_t, 2 * n> mine{}, most{};
  for (std::size_t i = 0; i < n; ++i) mine[2 * i] = h[i], mine[2 * i + 1] = ~h[i];
  MPI_Allreduce(mine.data(), most.data(), static_cast<int>(2 * n), MPI_UINT64_T, MPI_MAX, comm);
  std::string differ;
  for (std::size_t i = 0; i < n; ++i)
    if (most[2 * i] != ~most[2 * i + 1]) differ += fmt::format("{}{}", differ.empty() ? "" : ", ", names[i]);
  if (!differ.empty())
    throw FileError(ErrorKind::invalid_argument, file,
                    fmt::format("the ranks describe step {} differently ({} differ): every rank passes the same "
                                "StepInfo to write_step, nothing was written",
                                info.step, differ));
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

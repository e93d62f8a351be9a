#include "integrity/checksum.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rwd::kernel::detail {

// The builds of the row hashes (xxh3_rows.hpp); the same bits, the vector ones several
// times faster on cache-hot rows where the CPU has AVX2 or AVX-512 (the best one it has).
#define REWIND_XXH3_DECLARE(isa)                                                   \
  namespace isa {                                                                  \
  std::uint64_t hash_bytes(const void* p, std::size_t n);                          \
  std::uint64_t hash_and_copy(void* dst, const void* src, std::size_t n);          \
  template <typename Stored, typename Mem>                                         \
  std::uint64_t hash_interior(const Mem* array, int sx, int sy, int sz, int halo); \
  }
REWIND_XXH3_DECLARE(base)
#if REWIND_HAVE_XXH3_AVX2
REWIND_XXH3_DECLARE(avx2)
REWIND_XXH3_DECLARE(avx512)
namespace {
const int kIsa = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
}  // namespace

std::uint64_t hash_bytes(const void* p, std::size_t n) {
  return kIsa == 2 ? avx512::hash_bytes(p, n) : kIsa == 1 ? avx2::hash_bytes(p, n) : base::hash_bytes(p, n);
}

// The AVX2 build even where the CPU has AVX-512: hashing rows as they stream from memory
// while copying them, it took ~5 % longer than the copy alone on this project's AMD EPYC
// VM, the AVX-512 build 8-17 % longer than the AVX2 one (bench/kernel/HISTORY.md, §16 "Restart reads: each row hashed
// as it is copied").
std::uint64_t hash_and_copy(void* dst, const void* src, std::size_t n) {
  return kIsa >= 1 ? avx2::hash_and_copy(dst, src, n) : base::hash_and_copy(dst, src, n);
}

template <typename Stored, typename Mem>
std::uint64_t hash_interior(const Mem* array, const BlockShape& b, int halo) {
  if (kIsa == 2) return avx512::hash_interior<Stored, Mem>(array, b.sx, b.sy, b.sz, halo);
  return kIsa == 1 ? avx2::hash_interior<Stored, Mem>(array, b.sx, b.sy, b.sz, halo)
                   : base::hash_interior<Stored, Mem>(array, b.sx, b.sy, b.sz, halo);
}
#else
std::uint64_t hash_bytes(const void* p, std::size_t n) { return base::hash_bytes(p, n); }

std::uint64_t hash_and_copy(void* dst, const void* src, std::size_t n) { return base::hash_and_copy(dst, src, n); }

template <typename Stored, typename Mem>
std::uint64_t hash_interior(const Mem* array, const BlockShape& b, int halo) {
  return base::hash_interior<Stored, Mem>(array, b.sx, b.sy, b.sz, halo);
}
#endif
#undef REWIND_XXH3_DECLARE

template std::uint64_t hash_interior<double, double>(const double*, const BlockShape&, int);
template std::uint64_t hash_interior<float, double>(const double*, const BlockShape&, int);
template std::uint64_t hash_interior<std::uint8_t, std::uint8_t>(const std::uint8_t*, const BlockShape&, int);

StepChecksums StepChecksums::open(const h5::Ctx& c, hid_t group, std::int64_t n_grids, h5::Dataset& d) {
  StepChecksums s;
  d = h5::open_dataset(c, group, kChecksums);
  const std::string names = h5::read_attr_string(c, d, "datasets");
  std::size_t at = 0;
  while (at < names.size()) {
    const std::size_t nl = names.find('\n', at);
    s.names_.push_back(names.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? names.size() : nl + 1;
  }
  const auto dims = h5::dims(c, d, kChecksums);
  if (dims.size() != 2 || dims[0] != static_cast<hsize_t>(n_grids) || dims[1] != s.names_.size())
    c.fail(ErrorKind::corrupt,
           fmt::format("{} is not shaped (grids, datasets) = ({}, {})", kChecksums, n_grids, s.names_.size()));
  return s;
}

StepChecksums StepChecksums::read(const h5::Ctx& c, hid_t group, std::int64_t n_grids) {
  if (!h5::exists(group, kChecksums)) return {};
  h5::Dataset d;
  StepChecksums s = open(c, group, n_grids, d);
  s.table_.resize(static_cast<std::size_t>(n_grids) * s.names_.size());
  if (!s.table_.empty())
    c.check_status(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.table_.data()), "read checksums",
                   ErrorKind::corrupt);
  return s;
}

StepChecksums StepChecksums::read(const h5::Ctx& c, hid_t group, std::int64_t n_grids,
                                  const std::vector<std::int64_t>& rows) {
  if (!h5::exists(group, kChecksums)) return {};
  h5::Dataset d;
  StepChecksums s = open(c, group, n_grids, d);
  s.rows_ = rows;
  s.table_.resize(rows.size() * s.names_.size());
  if (s.table_.empty()) return s;
  h5::Dataspace fs(c.check(H5Dget_space(d), "checksums space"));
  h5::select_rows(c, fs, h5::runs_of(rows));
  const auto n = static_cast<hsize_t>(s.table_.size());
  h5::Dataspace ms(c.check(H5Screate_simple(1, &n, nullptr), "memory space"));
  c.check_status(H5Dread(d, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, s.table_.data()), "read checksums",
                 ErrorKind::corrupt);
  return s;
}

std::size_t StepChecksums::index_of(std::int64_t row) const {
  if (rows_.empty()) return static_cast<std::size_t>(row);
  const auto it = std::lower_bound(rows_.begin(), rows_.end(), row);
  if (it == rows_.end() || *it != row)
    throw std::logic_error("StepChecksums: row " + std::to_string(row) + " was not read");
  return static_cast<std::size_t>(it - rows_.begin());
}

int StepChecksums::column(const std::string& dataset) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == dataset) return static_cast<int>(i);
  return -1;
}

std::string checksum_mismatch(const std::string& group, const std::string& dataset, std::int64_t row) {
  return fmt::format("{}/{}: grid row {} does not match its checksum (the data changed after it was written)", group,
                     dataset, row);
}

}  // namespace rwd::kernel::detail

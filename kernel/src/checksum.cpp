#include "checksum.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/core.h>

#include <type_traits>

namespace rwd::kernel::detail {

std::uint64_t hash_bytes(const void* p, std::size_t n) { return XXH3_64bits(p, n); }

template <typename Stored, typename Mem>
std::uint64_t hash_interior(const Mem* array, const BlockShape& b, int halo) {
  const std::size_t sx = static_cast<std::size_t>(b.sx);
  if constexpr (std::is_same_v<Stored, Mem>) {
    if (halo == 0) return hash_bytes(array, static_cast<std::size_t>(b.cells()) * sizeof(Stored));
  }
  const std::size_t px = sx + 2 * static_cast<std::size_t>(halo), py = static_cast<std::size_t>(b.sy) + 2 * static_cast<std::size_t>(halo);
  // The streaming state on the stack (XXH_INLINE_ALL makes it a complete type): this runs
  // once per grid row on the read and write paths, so no allocation per call.
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  std::vector<Stored> converted(std::is_same_v<Stored, Mem> ? 0 : sx);
  for (int z = 0; z < b.sz; ++z)
    for (int y = 0; y < b.sy; ++y) {
      const Mem* src = array + ((static_cast<std::size_t>(z + halo) * py + static_cast<std::size_t>(y + halo)) * px +
                                static_cast<std::size_t>(halo));
      if constexpr (std::is_same_v<Stored, Mem>) {
        XXH3_64bits_update(&state, src, sx * sizeof(Stored));
      } else {
        for (std::size_t x = 0; x < sx; ++x) converted[x] = static_cast<Stored>(src[x]);
        XXH3_64bits_update(&state, converted.data(), sx * sizeof(Stored));
      }
    }
  return XXH3_64bits_digest(&state);
}

template std::uint64_t hash_interior<double, double>(const double*, const BlockShape&, int);
template std::uint64_t hash_interior<float, double>(const double*, const BlockShape&, int);
template std::uint64_t hash_interior<std::uint8_t, std::uint8_t>(const std::uint8_t*, const BlockShape&, int);

StepChecksums StepChecksums::read(const h5::Ctx& c, hid_t group, std::int64_t n_grids) {
  StepChecksums s;
  if (!h5::exists(group, kChecksums)) return s;
  h5::Dataset d = h5::open_dataset(c, group, kChecksums);
  const std::string names = h5::read_attr_string(c, d, "datasets");
  std::size_t at = 0;
  while (at < names.size()) {
    const std::size_t nl = names.find('\n', at);
    s.names_.push_back(names.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? names.size() : nl + 1;
  }
  const auto dims = h5::dims(c, d, kChecksums);
  if (dims.size() != 2 || dims[0] != static_cast<hsize_t>(n_grids) || dims[1] != s.names_.size())
    c.fail(ErrorKind::corrupt, fmt::format("{} is not shaped (grids, datasets) = ({}, {})", kChecksums, n_grids, s.names_.size()));
  s.table_.resize(static_cast<std::size_t>(n_grids) * s.names_.size());
  if (!s.table_.empty())
    c.check_status(H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.table_.data()), "read checksums",
                   ErrorKind::corrupt);
  return s;
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

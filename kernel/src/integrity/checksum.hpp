// Private: per-row checksums of a step (docs/file-format.md §5, "Checksums").
//
// Every row of every dataset of a step has a 64-bit XXH3 hash (xxHash 0.8, seed 0) of
// its bytes as stored in the file (little-endian, the dataset's own element type). The
// writer hashes each row while it is cache-hot (right after packing it, or from the
// grid's array when the row is written zero-copy); a reader hashes what it read and
// compares before anything uses it, so a restart or a window never sees silent
// corruption of raw data (HDF5 checks its metadata, not contiguous raw data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/h5util.hpp"
#include "rewind/kernel/grids.hpp"

namespace rwd::kernel::detail {

inline constexpr const char* kChecksums = "checksums";  ///< dataset (ng, nd) u64 in the step group
inline constexpr const char* kChecksumAlgorithm = "xxh3-64";

/// Hash of `n` contiguous bytes.
std::uint64_t hash_bytes(const void* p, std::size_t n);

/// hash_bytes(src, n), while the `n` bytes are copied to `dst` as stream_copy copies them
/// (direct_io.hpp: non-temporal stores; fence with stream_fence): the bytes are read
/// from memory once, where hashing and then copying a row reads it twice.
std::uint64_t hash_and_copy(void* dst, const void* src, std::size_t n);

/// Hash of a grid's interior stored as `Stored`, read from an array of `Mem` values laid
/// out with `halo` ghost layers (x fastest). Equals hash_bytes of the packed row when
/// Stored == Mem; otherwise each value is converted to Stored first (float64 in memory
/// from a float32 dataset, which converts back exactly).
template <typename Stored, typename Mem>
std::uint64_t hash_interior(const Mem* array, const BlockShape& b, int halo);

/// The checksums of one step as read from its group; empty() for a step without them
/// (format 1.3 and older, or written with checksums = false).
class StepChecksums {
 public:
  StepChecksums() = default;
  /// Reads `checksums` of `group` (every rank the whole table: 8 bytes per row and
  /// dataset). Throws FileError(corrupt) for a table that does not match the step.
  static StepChecksums read(const h5::Ctx& c, hid_t group, std::int64_t n_grids);
  /// Only the checksums of `rows` (ascending, distinct, in range): what a read of a few
  /// rows (a window) needs, without reading 8 bytes per row of the whole step.
  static StepChecksums read(const h5::Ctx& c, hid_t group, std::int64_t n_grids, const std::vector<std::int64_t>& rows);
  [[nodiscard]] bool empty() const { return names_.empty(); }
  [[nodiscard]] const std::vector<std::string>& datasets() const { return names_; }
  /// Column of `dataset` ("cell_data/u", "uid", ...), or -1 if it has no checksum.
  [[nodiscard]] int column(const std::string& dataset) const;
  /// The checksum of `row` (one of those read) in `column`.
  [[nodiscard]] std::uint64_t at(std::int64_t row, int column) const {
    return table_[index_of(row) * names_.size() + static_cast<std::size_t>(column)];
  }

 private:
  [[nodiscard]] std::size_t index_of(std::int64_t row) const;
  static StepChecksums open(const h5::Ctx& c, hid_t group, std::int64_t n_grids, h5::Dataset& d);

  std::vector<std::string> names_;
  std::vector<std::uint64_t> table_;  ///< row-major (rows read, nd)
  std::vector<std::int64_t> rows_;    ///< the rows read, ascending; empty: every row
};

/// The error for a row whose data does not match its checksum: names the step, the
/// dataset and the grid (row, and uid when known).
std::string checksum_mismatch(const std::string& group, const std::string& dataset, std::int64_t row);

}  // namespace rwd::kernel::detail

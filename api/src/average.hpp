// Parents a code describes without arrays get the average of their children, across
// ranks: the file format's coarse levels (docs/file-format.md §9) for codes that keep
// only their leaves. Private to the C API.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rewind/kernel/grids.hpp"

namespace rwd::api {

/// The restriction of one write: buffers for the parents that lack arrays.
class ParentAverages {
 public:
  /// Fills every null fields[slot] (for `slots`) of a grid with children in `grids` with a
  /// buffer of this object holding, in the grids' padded layout (ghosts 0), the average
  /// of its children's cells: parent cell = mean of the child cells it covers, summed in
  /// (k, j, i) order, so the result does not depend on the partition. Children may live
  /// on other ranks of `comm`. `refinement` per axis (r, r, r or r, r, 1 in 2-D). Throws
  /// std::invalid_argument (the same on every rank) for a leaf without an array, cells
  /// not divisible by r, or children that do not tile their parent. Collective.
  void fill(MPI_Comm comm, kernel::LocalGrids& grids, const std::vector<int>& slots, const std::array<int, 3>& refinement);
  /// fill()'s checks alone, without averaging anything (its parents stay without
  /// arrays): throws as fill() would. Collective.
  static void check(MPI_Comm comm, const kernel::LocalGrids& grids, const std::vector<int>& slots,
                    const std::array<int, 3>& refinement);

 private:
  std::vector<std::uint8_t> make_buffers(kernel::LocalGrids& grids, const std::vector<int>& slots,
                                         std::unordered_map<std::uint64_t, std::size_t>& local);
  std::vector<std::vector<double>> buffers_;
};

}  // namespace rwd::api

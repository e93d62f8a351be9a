// Private: the per-grid statistics of a step's fields (docs/file-format.md §3,
// "Statistics"): for each field and grid, the minimum and maximum over the grid's
// non-solid cells and its detail, the L2 norm over its children's cells of the children's
// values minus its own cells prolonged onto them.
//
// Taken in one pass over the grids' arrays after the step's data are written, while a
// helper sends those to the disk (write_statistics, write_data.cpp): a durable write's CPU
// is free there. Each child adds its share of
// its parent's detail through, per block of cells one parent cell covers, the block's mean
// and sum of squared deviations (stable where the values are close, as parents and
// children are); a child whose parent is elsewhere sends them to the parent's rank in one
// exchange (finish()). A parent sums its children's shares in row order, so the file does
// not depend on the partition. The same loop bins each share by the child's octants (the
// shares/<var> rows, format 1.10); a remote child's bins go back to its rank in a reply.
#pragma once
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel::detail {

struct StepRows;

/// The cells a parent's cell covers in a child: 2 along each refined axis, 1 along the
/// others. Axes are refined x first: max_children 2, 4 and 8 refine 1, 2 and 3 axes (a
/// quadtree's grids are sx × sy × 1, an octree's sx × sy × sz). `ok` is false where a
/// detail has no meaning: another max_children, or an odd cell count on a refined axis
/// (a parent's cell would not cover whole child cells); such a step stores no statistics.
/// `shares` is true where, moreover, every refined axis's cell count is divisible by 4:
/// each half of a child along a refined axis is then whole parent cells, and a step stores
/// each child's per-octant shares.
struct Refinement {
  std::array<int, 3> f{1, 1, 1};
  bool ok = false;
  bool shares = false;
  [[nodiscard]] int cells() const { return f[0] * f[1] * f[2]; }
};
Refinement refinement_of(const BlockShape& block, int max_children);

/// One step's statistics: add_all(), then finish(). Used by the writer (write_statistics)
/// and by kernel::grid_statistics (a running code's state, not written).
class StepStatistics {
 public:
  /// Over the ranks of `comm` (the writer's), whose grids have rows `rows`. `specs`: the
  /// step's fields; `fields`: the indices in `specs` of the fields with statistics.
  StepStatistics(MPI_Comm comm, const BlockShape& block, int max_children, const std::vector<FieldSpec>& specs,
                 const LocalGrids& grids, const StepRows& rows, const std::vector<std::size_t>& fields);
  /// Every grid of every field with statistics, from the grids' own (halo'd) arrays, each
  /// value as the file stores it (a float32 field's rounded). Touches only memory.
  void add_all();
  /// Collective: the remote children's shares reach their parents, and (has_shares()) their
  /// per-octant shares come back to them; every detail and shares row is final.
  void finish();
  /// Row k of field i: {min, max, detail}; valid after finish().
  [[nodiscard]] const double* row(std::size_t i, std::size_t k) const { return &out_[i][3 * k]; }
  /// Whether the grids have per-octant shares (Refinement::shares).
  [[nodiscard]] bool has_shares() const { return ref_.shares; }
  /// Row k of field i's shares: max_children values, octant o = ox + 2 oy + 4 oz of the
  /// grid's cells (0 for the root); valid after finish() where has_shares().
  [[nodiscard]] const double* shares_row(std::size_t i, std::size_t k) const { return &octants_[i][nc_ * k]; }

 private:
  struct Layout;  // how a grid's values are addressed in its halo'd array
  /// `values` of type T, each read as the file stores it: as S.
  template <typename S, typename T>
  void add(std::size_t i, std::size_t k, const T* values, const Layout& at);
  [[nodiscard]] double share(std::size_t i, std::size_t parent, const std::array<int, 3>& o, const double* m,
                             double* bins) const;
  template <typename S, typename T>
  void moments(const T* values, const Layout& at, double* m) const;
  [[nodiscard]] std::array<int, 3> octant(const BoxRow& child, const BoxRow& parent) const;
  /// finish()'s exchanges: the remote children's moments to their parents' ranks, ...
  void exchange();
  /// ... and their bins back: the bins of the remote children, back to their ranks.
  void return_bins(const std::vector<int>& scount, const std::vector<int>& rcount, std::size_t per,
                   const std::vector<double>& bins);

  MPI_Comm comm_;
  const std::vector<FieldSpec>& specs_;
  std::vector<std::size_t> fields_;  ///< the fields with statistics
  const LocalGrids& grids_;
  const StepRows& rows_;
  BlockShape blk_;
  int h_ = 0;
  Refinement ref_;
  std::array<int, 3> nb_{};  ///< blocks (parent cells) per child, per axis
  std::size_t nblocks_ = 0;
  std::size_t nc_ = 1;                      ///< max_children: a shares row's values
  std::array<int, 3> half_{};               ///< per axis: a child's blocks from here on are its upper octant
  std::vector<std::int64_t> local_parent_;  ///< by local order: the parent's local index, or -1
  std::vector<int> remote_rank_;            ///< by local order: the remote parent's rank, or -1
  std::vector<std::int64_t> remote_slot_;   ///< by local order: index among the remote children, or -1
  std::size_t n_remote_ = 0;
  std::unordered_map<std::int64_t, std::size_t> local_of_row_;
  std::vector<std::vector<double>> out_;      ///< per field: nloc × {min, max, detail², then detail}
  std::vector<std::vector<double>> moments_;  ///< per field: n_remote × nblocks × {mean, m2}
  std::vector<std::vector<double>> octants_;  ///< per field (has_shares()): nloc × nc_, sums of squares, then shares
  /// A child's share of its parent's detail (summed per parent in child-row order).
  struct Share {
    std::size_t parent;
    std::int64_t child_row;
    double sum;
  };
  std::vector<std::vector<Share>> shares_;  ///< per field
};

}  // namespace rwd::kernel::detail

// Private: the per-grid statistics of a step's fields (docs/file-format.md §3,
// "Statistics"): for each field and grid, the minimum and maximum over the grid's
// non-solid cells and its detail, the L2 norm over its children's cells of the children's
// values minus its own cells prolonged onto them.
//
// Taken grid by grid as the writer reads the step's arrays to hash or pack them (the
// grid's values are then in the cache: no second read from memory), the fields no such
// read visited in one pass after the data are written (write_statistics, write_data.cpp).
// Each child adds its share of its parent's detail through, per block of cells one parent
// cell covers, the block's mean, and the blocks' summed squared deviations (stable where
// the values are close, as parents and children are); a child whose parent is elsewhere
// writes them into its message to the parent's rank, sent in one exchange (finish()). A
// parent sums its children's shares in row order, so the file does not depend on the
// partition. The same loop bins each share by the child's octants (the shares/<var> rows,
// format 1.10); a remote child's bins go back to its rank in a reply.
#pragma once
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
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

/// Memory kept between steps for one role of the statistics' messages (one per process):
/// an eighth of the bytes of every child whose parent sits on another rank (on the kernel
/// benchmark's partition a sixteenth of the step), and fresh memory each step costs its
/// first touch (on some VMs more than the pass; bench/kernel/first_touch.cpp). A second
/// user at once gets its own.
class KeptDoubles {
 public:
  /// At least n values, not zeroed (but for what the kept memory had to grow by).
  std::vector<double> take(std::size_t n);
  void give(std::vector<double> v);
  void release();
  /// take() for a scope.
  class Lease {
   public:
    Lease(KeptDoubles& kept, std::size_t n) : kept_(kept), v_(kept.take(n)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { kept_.give(std::move(v_)); }
    double* data() { return v_.data(); }

   private:
    KeptDoubles& kept_;
    std::vector<double> v_;
  };

 private:
  std::mutex mutex_;
  std::vector<double> kept_;
};

/// Gives back the memory the statistics keep between steps (release_kept_write_buffer).
void release_kept_statistics_memory();

/// One step's statistics: add_grid() of every grid of every field (add_all() or add_rest()),
/// then finish(). Used by the writer (write_data, write_statistics) and by
/// kernel::grid_statistics (a running code's state, not written).
class StepStatistics {
 public:
  /// Over the ranks of `comm` (the writer's), whose grids have rows `rows`. `specs`: the
  /// step's fields; `fields`: the indices in `specs` of the fields with statistics.
  StepStatistics(MPI_Comm comm, const BlockShape& block, int max_children, const std::vector<FieldSpec>& specs,
                 const LocalGrids& grids, const StepRows& rows, const std::vector<std::size_t>& fields);
  StepStatistics(const StepStatistics&) = delete;
  StepStatistics& operator=(const StepStatistics&) = delete;
  ~StepStatistics();
  /// Grid k (local order) of field i (an index in `specs`, one of `fields`), from its own
  /// (halo'd) array, each value as the file stores it (a float32 field's rounded). Touches
  /// only memory. Calls for different fields may run on different threads at once; those
  /// of one field one after the other.
  void add_grid(std::size_t i, std::size_t k);
  /// Every grid of every field with statistics.
  void add_all();
  /// Every grid of the fields whose grids add_grid did not all take (from scratch).
  void add_rest();
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
  /// A child's moments of one field (moments()): nblocks means, their squared deviations'
  /// sum, its nc_ octants' sums.
  [[nodiscard]] std::size_t per_field() const { return nblocks_ + 1 + nc_; }
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
  std::vector<std::int64_t> remote_slot_;   ///< by local order: where its message starts in send_, or -1
  std::size_t n_remote_ = 0;
  std::vector<int> scount_;            ///< by rank: the remote children whose parent it has
  std::vector<std::size_t> field_at_;  ///< by field (index in specs): its place among fields_
  std::size_t per_ = 0;                ///< a remote child's message, values
  std::vector<double> send_;           ///< the remote children's messages (exchange())
  std::unordered_map<std::int64_t, std::size_t> local_of_row_;
  std::vector<std::vector<double>> out_;      ///< per field: nloc × {min, max, detail², then detail}
  std::vector<std::vector<double>> octants_;  ///< per field (has_shares()): nloc × nc_, sums of squares, then shares
  /// A child's share of its parent's detail (summed per parent in child-row order).
  struct Share {
    std::size_t parent;
    std::int64_t child_row;
    double sum;
  };
  std::vector<std::vector<Share>> shares_;  ///< per field
  std::vector<std::size_t> added_;          ///< per field: add_grid calls
};

}  // namespace rwd::kernel::detail

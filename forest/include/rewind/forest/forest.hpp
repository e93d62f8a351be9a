// The distributed d-grids of one compute rank and the three-phase communication.
//
// A Forest holds, for every grid of this rank's spacetree::LocalPlan, `nvars` cell
// arrays of (sx+2)*(sy+2)*(sz+2) doubles: the interior plus a one-cell halo on every side
// (also in z for 2-D runs, where sz = 1 and the z-halo mirrors the interior).
// Storage is x fastest: cell (i, j, k), i in [-1, sx], sits at
//   (i + 1) + (sx + 2) * ((j + 1) + (sy + 2) * (k + 1)).
//
// Communication phase (paper, section II.B), each step collective over `comm`;
// communicate() runs 1 then 2-3 on every level:
//  1. bottom-up   restrict_levels() (restrict_level() for one level): parent interior
//                 = average of its children;
//  2. horizontal  exchange_halos(): halos copied from same-level neighbours, across
//                 ranks with non-blocking point-to-point;
//  3. top-down    (inside exchange_halos): halos with no same-level neighbour are
//                 interpolated from the coarser grid that covers them; level by
//                 level from coarse to fine so the coarse data is complete.
// prolong_level() moves data from parents into their children's interiors (the top-down
// operator of the multigrid-like pressure solver).
//
// Results never depend on the number of ranks: every value is computed from the
// same operands in the same order whatever the partition.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "rewind/spacetree/plan.hpp"

namespace rwd::forest {

/// How prolong_level() combines the interpolated parent value with the child's value.
enum class ProlongMode { assign, add };
/// Interpolation for prolong_level() and for halos filled from a coarser grid. All three are
/// conservative: the mean of the fine cells inside one coarse cell equals its value.
///  - constant: piecewise constant (first order);
///  - linear:   unlimited linear reconstruction with central slopes from the coarse
///              cell's neighbours (one-sided at a non-periodic domain face): exact for
///              linear fields, second order for smooth ones;
///  - limited:  the same with the monotonised-central (MC) limiter and a zero slope at
///              a non-periodic domain face; no new extrema (use for scalars with fronts).
enum class Interp { constant, linear, limited };

/// Called for every halo face of a grid that lies on a domain boundary, after the
/// neighbour halos are filled: (local grid index, direction, variable). "Face" here
/// means every direction whose Topology relation is `boundary`: faces, then edges,
/// then corners (within each group in directions() order), so an edge or corner
/// callback can read the face halos set just before. In 2-D only d.z == 0 occurs;
/// the z-halo mirror runs after the callbacks.
using BoundaryFill = std::function<void(std::size_t grid, const std::array<std::int8_t, 3>& dir, int var)>;

/// What the last exchange_halos() call did on this rank.
struct ExchangeStats {
  std::int64_t bytes_sent = 0;      ///< packed halo data sent to other ranks
  std::int64_t bytes_received = 0;  ///< packed halo data received from other ranks
  std::int64_t messages_sent = 0;   ///< point-to-point messages sent
  std::int64_t halo_bytes = 0;      ///< halo bytes filled from neighbours (local + remote)
};

class Forest {
 public:
  /// Collective over `comm` (the compute ranks; its size must equal plan.ranks and
  /// its rank plan.rank). Allocates zero-filled arrays, duplicates `comm` for its own
  /// messages and exchanges the halo schedules once (requests for remote source
  /// cells go to their owners). Every d-grid size must be a multiple of the
  /// refinement factor on its axis (s[a] % r[a] == 0). Throws std::invalid_argument
  /// on every rank if any rank's plan is inconsistent. Does not take ownership of
  /// `comm`; the destructor is collective too (it frees the duplicate).
  Forest(spacetree::LocalPlan plan, int nvars, MPI_Comm comm);
  Forest(Forest&&) noexcept;
  Forest& operator=(Forest&&) noexcept;
  Forest(const Forest&) = delete;
  Forest& operator=(const Forest&) = delete;
  ~Forest();

  [[nodiscard]] const spacetree::LocalPlan& plan() const { return plan_; }
  [[nodiscard]] const spacetree::TreeShape& shape() const { return plan_.shape; }
  [[nodiscard]] std::size_t size() const { return plan_.grids.size(); }
  [[nodiscard]] const spacetree::GridInfo& grid(std::size_t g) const { return plan_.grids[g]; }
  [[nodiscard]] int nvars() const { return nvars_; }
  [[nodiscard]] MPI_Comm comm() const { return comm_; }
  /// Local index of `uid`, or -1 if this rank does not own it.
  [[nodiscard]] std::ptrdiff_t local_index(spacetree::Uid uid) const;
  /// Local grids on `level`, in UID order.
  [[nodiscard]] std::span<const std::size_t> grids_on_level(int level) const;

  /// Doubles per grid per variable, halo included.
  [[nodiscard]] std::size_t block_size() const { return block_; }
  [[nodiscard]] std::int64_t stride_y() const { return shape().s[0] + 2; }
  [[nodiscard]] std::int64_t stride_z() const { return (shape().s[0] + 2) * std::int64_t{shape().s[1] + 2}; }
  /// Linear index of cell (i, j, k), each from -1 to s (halo included).
  [[nodiscard]] std::int64_t index(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (i + 1) + stride_y() * (j + 1) + stride_z() * (k + 1);
  }
  [[nodiscard]] double* data(std::size_t g, int var) { return storage_.data() + (g * nvars_ + var) * block_; }
  [[nodiscard]] const double* data(std::size_t g, int var) const { return storage_.data() + (g * nvars_ + var) * block_; }
  [[nodiscard]] double& at(std::size_t g, int var, std::int64_t i, std::int64_t j, std::int64_t k) {
    return data(g, var)[index(i, j, k)];
  }

  /// Bottom-up: for every level from the finest-1 up to `to_level`, every parent's
  /// interior becomes the average of its children's interiors (exactly conserving
  /// the integral). Collective.
  void restrict_levels(std::span<const int> vars, int to_level = 0);
  /// Restricts only children on `child_level` into parents on child_level-1. Collective.
  void restrict_level(std::span<const int> vars, int child_level);
  /// Top-down for multigrid: children on `child_level` get their parent's values
  /// interpolated into their interiors (assigned or added). The parents' halos must
  /// be filled for Interp::linear. Collective.
  void prolong_level(std::span<const int> vars, int child_level, ProlongMode mode, Interp interp);
  /// Horizontal + top-down halo fill for the grids on `level` (or all levels when
  /// level < 0, coarse to fine), then `boundary` for domain-boundary halos. Halos
  /// next to a coarser grid are interpolated with `interp`. Collective: every rank
  /// calls it with the same arguments, also ranks without grids on that level.
  /// A single-level call reads coarser levels (interior and halo) as they are, so
  /// fill those first; the all-levels call does so itself. Halos next to a refined
  /// same-level neighbour get that neighbour's (restricted) values.
  void exchange_halos(std::span<const int> vars, int level = -1, Interp interp = Interp::linear,
                      const BoundaryFill& boundary = {});
  /// The full communication phase: restrict_levels, then exchange_halos on all levels.
  /// Collective, with the same arguments on every rank.
  void communicate(std::span<const int> vars, Interp interp = Interp::linear,
                   const BoundaryFill& boundary = {});

  /// Bytes moved between ranks by the last exchange_halos call on this rank
  /// (sent by this rank; equals last_exchange_stats().bytes_sent).
  [[nodiscard]] std::int64_t last_exchange_bytes() const { return last_bytes_; }
  /// Details of the last exchange_halos call on this rank.
  [[nodiscard]] const ExchangeStats& last_exchange_stats() const { return stats_; }

 private:
  struct Impl;
  spacetree::LocalPlan plan_;
  int nvars_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::size_t block_ = 0;
  std::vector<double> storage_;
  std::int64_t last_bytes_ = 0;
  ExchangeStats stats_{};
  std::unique_ptr<Impl> impl_;  // exchange schedules, level lists, UID -> local index
};

}  // namespace rwd::forest

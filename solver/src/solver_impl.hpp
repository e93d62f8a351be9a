// Private: the state of rwd::solver::Solver and its member functions, one file per
// concern (the algorithm and the determinism / checkpoint contracts are in
// rewind/solver/solver.hpp; comments here say why, not what):
//
//   solver.cpp     the variable table and the public Solver methods
//   geometry.cpp   grids, levels, cell types and obstacle forcing stencils
//   boundaries.cpp boundary conditions, halo exchange, level-jump flux matching, reflux
//   time_step.cpp  the time step: dt, predictor, immersed boundary, projection
//   multigrid.cpp  the pressure solver (V-cycles on the tree levels)
//   monitors.cpp   the monitor row, lift zero crossings (Strouhal), divergence, probes
//   initial.cpp    initial conditions
#pragma once
#include <mpi.h>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rewind/solver/operators.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/solver/strouhal.hpp"

namespace rwd::solver {

using forest::Forest;
using forest::Interp;
using forest::ProlongMode;
using spacetree::Relation;

/// One forced cell of the immersed-boundary treatment: the target is
/// body_value + sum_k w_k (q[c + off_k] - body_value) (empty sum for solid cells).
struct Forced {
  std::int64_t c = 0;
  int obstacle = 0;
  int n = 0;
  std::array<std::int64_t, 3> off{};
  std::array<double, 3> w{};
};

/// A face of a grid whose neighbour across it is one level coarser (a level jump).
struct CoarseFace {
  int axis = 0;
  int side = 0;  // 0: the - face, 1: the + face
};

struct GridData {
  BlockGeom geom;
  std::vector<CoarseFace> coarse_faces;  // faces next to a coarser grid
  std::vector<CoarseFace> fine_faces;    // faces next to finer grids (leaves only)
  bool leaf = true;
  int level = 0;
  std::array<double, 3> lo{};       // lower corner of the grid
  std::array<bool, 6> on_face{};    // touches a non-periodic domain face
  std::vector<std::uint8_t> type;   // interior only, x fastest
  std::vector<Forced> forced;       // solid and interface cells (leaves only)
};

// Max-reduce helper; MPI_MAX of doubles is exact and order-free.
inline double allreduce_max(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
  return r;
}


struct Solver::Impl {
  SolverCase cfg;
  Forest forest;
  MPI_Comm comm;
  int rank = 0;
  int dim = 3;
  int lmax = 0;          // deepest level present
  bool full = true;      // every leaf on lmax
  bool matched = true;   // level jumps flux-matched (2:1 balanced tree)
  bool singular = true;  // no Dirichlet face for the pressure
  bool coarse_stale = false;  // parents of a uniform tree behind the leaves (sync_coarse_levels)
  std::vector<GridData> grids;
  std::vector<std::size_t> leaves;
  std::vector<std::vector<std::size_t>> by_level;
  std::ptrdiff_t root = -1;  // local index of the root grid, if owned
  std::array<double, 3> h_finest{};
  std::int64_t global_leaf_cells = 0;

  ScalarState st;
  double event_time = std::numeric_limits<double>::infinity();  // see Solver::set_event_time
  PressureStats last_pressure;
  std::vector<double> cycle_residuals;
  std::vector<ObstacleForce> forces;
  double dt_last = 0.0;
  PhaseTimes times;

  StrouhalEstimator strouhal;  // lift of obstacle 0 (same on every rank)

  forest::BoundaryFill bc;
  std::vector<double> qc_buf;  // scratch of match_coarse_faces

  Impl(SolverCase c, spacetree::LocalPlan plan, MPI_Comm cm)
      : cfg(std::move(c)), forest(std::move(plan), kNumVars, cm), comm(cm) {
    MPI_Comm_rank(comm, &rank);
    const auto& sh = forest.shape();
    dim = sh.dim();
    lmax = forest.plan().levels - 1;
    h_finest = sh.cell_size(lmax);
    for (int f = 0; f < 2 * dim; ++f)
      if (cfg.boundary[static_cast<std::size_t>(f)].type == BcType::outflow) singular = false;
    bc = [this](std::size_t g, const std::array<std::int8_t, 3>& dir, int var) { fill_boundary(g, dir, var); };
    setup_grids();
  }

  // geometry (geometry.cpp)
  void setup_grids();

  [[nodiscard]] std::array<double, 3> centre(const GridData& gd, std::int64_t i, std::int64_t j, std::int64_t k) const;

  // Distance to the nearest obstacle and its index.
  [[nodiscard]] std::pair<double, int> obstacle_distance(const std::array<double, 3>& x) const;

  void classify(std::size_t g);

  // boundaries (boundaries.cpp)
  [[nodiscard]] double profile_factor(const FaceBc& b, int axis, const std::array<double, 3>& x) const;

  // Ghost values that put each boundary condition on the face between the last
  // interior cell and the halo (see the table in docs/validation.md).
  void fill_boundary(std::size_t g, const std::array<std::int8_t, 3>& dir, int var);

  void exchange(std::span<const int> vars);

  // Halo exchange of the grids on one level (multigrid), with flux-matched ghosts
  // at level jumps. Coarser levels are read as they are.
  void exchange_level(std::span<const int> vars, int level);

  // Flux matching at a level jump. The forest has filled the ghosts next to a
  // coarser grid with the coarse cell value q_c (Interp::constant). The coarse side
  // sees, across the same face, the restricted average Q of the r_n layers of fine
  // cells that fill its neighbour cell, so its face flux is (Q - q_c) / h_c. The
  // ghosts of the r_t fine faces in front of one coarse cell are set to
  //   g_k = f_k - (Q - q_c) / r_n          (f_k: first fine layer),
  // so every fine face flux (f_k - g_k) / h_f equals the coarse one: the sum of the
  // fine fluxes is the coarse flux (conservative, as a reflux would make it), the
  // ghosts are exact for linear fields, and the fine grid needs nothing but its own
  // cells and the coarse value (no extra communication, rank-independent).
  void match_coarse_faces(std::size_t g, int var);

  // Reflux. `flux(g, c, a)` is a face flux in the +a direction through the + face of
  // cell c of grid g. Every fine leaf next to a coarser grid writes r_n times its
  // flux through the coarse-fine face into the first cell layer (zero elsewhere) of
  // the scratch variable of that axis (kB, kR, kX); restriction then averages it
  // into the parent cell, which is what the coarse leaf sees in its halo: the mean
  // of the fine fluxes through its face. `apply(g, c, a, side, fine, own)` gets, for
  // every coarse leaf cell at such a face, the fine mean and its own flux. All of
  // it is local arithmetic plus one restriction and halo exchange: rank-independent.
  // The scratch variables are free outside the pressure solve.
  static constexpr int kFluxVars[3] = {kB, kR, kX};
  template <class Flux, class Apply>
  void reflux(Flux&& flux, Apply&& apply) {
    if (full || !matched) return;
    const auto& r = forest.shape().r;
    for (const std::size_t g : leaves) {
      for (int a = 0; a < dim; ++a) std::fill_n(forest.data(g, kFluxVars[a]), forest.block_size(), 0.0);
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      for (const CoarseFace& cf : gd.coarse_faces) {
        const int a = cf.axis;
        const int rn = r[static_cast<std::size_t>(a)];
        double* S = forest.data(g, kFluxVars[a]);
        for_layer(G, a, cf.side, [&](std::int64_t c) {
          S[c] = static_cast<double>(rn) * flux(g, cf.side ? c : c - G.stride(a), a);
        });
      }
    }
    forest.communicate(std::span<const int>(kFluxVars, static_cast<std::size_t>(dim)), Interp::constant, {});
    for (const std::size_t g : leaves) {
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      for (const CoarseFace& ff : gd.fine_faces) {
        const int a = ff.axis;
        const std::int64_t str = G.stride(a);
        const double* S = forest.data(g, kFluxVars[a]);
        for_layer(G, a, ff.side, [&](std::int64_t c) {
          const std::int64_t fc = ff.side ? c : c - str;  // the face is the + face of fc
          apply(g, c, a, ff.side, S[ff.side ? c + str : c - str], flux(g, fc, a));
        });
      }
    }
  }

  // Calls f(c) for the interior cells next to face (a, side) of a block.
  template <class F>
  static void for_layer(const BlockGeom& G, int a, int side, F&& f) {
    const int t1 = (a + 1) % 3, t2 = (a + 2) % 3;
    std::array<std::int64_t, 3> ijk{};
    ijk[static_cast<std::size_t>(a)] = side ? G.s[a] - 1 : 0;
    for (int b2 = 0; b2 < G.s[t2]; ++b2)
      for (int b1 = 0; b1 < G.s[t1]; ++b1) {
        ijk[static_cast<std::size_t>(t1)] = b1, ijk[static_cast<std::size_t>(t2)] = b2;
        f(G.index(ijk[0], ijk[1], ijk[2]));
      }
  }

  // One stage of the predictor: reads the velocity (and temperature) `from` (kU or
  // kUs: the state or Heun's first stage) and writes
  //   into = keep * (u, T)^n + (1 - keep) * (from + dt R(from)),
  // R the advection, diffusion, buoyancy, heat source and the last pressure gradient.
  struct Stage {
    int from = kU;
    int into = kUs;
    double keep = 0.0;
  };
  // The temperature that goes with velocity variable kU or kUs.
  static constexpr int temperature_of(int vel) { return vel == kU ? kT : kTs; }

  // Advective flux of q (Forest variable) through the + face of cell c along a, as
  // the predictor computes it away from domain faces, advected by velocity `vel`.
  double advective_flux(std::size_t g, int q, std::int64_t c, int a, double dt, int vel);

  // Coarse cells next to a level jump take the fine cells' advective fluxes (the
  // diffusive ones already agree: match_coarse_faces), so momentum and heat are
  // conserved across the jump.
  void reflux_predictor(double dt, const Stage& s);

  // time step (time_step.cpp)
  [[nodiscard]] double compute_dt();

  void predictor(double dt, const Stage& s);

  // The predictor stages of the time scheme with their forcing: u* in kUs (halo'd),
  // the forces on the obstacles in `forces`.
  void advance(double dt);

  // Direct forcing on velocity `vel` (kUs or kU); adds `weight` times the force of
  // this forcing to each obstacle's (the weight of this stage in the step).
  void force_obstacles(double dt, int vel, double weight);

  // Sum of per-grid partial vectors (K values per grid) over all ranks, added in UID
  // order so the result is the same for every partition.
  std::vector<double> ordered_sum(const std::vector<std::uint64_t>& uids, const std::vector<double>& parts, std::size_t K);

  void projection_rhs(double dt);

  void correct(double dt);

  void pressure_gradient();

  void finish_state();

  // Parents = average of their children for the current step, if they are behind.
  void sync_coarse_levels();

  StepResult step();

  // multigrid (multigrid.cpp)
  [[nodiscard]] int sweeps(int base, int level) const;

  void smooth(int level, int n);

  // R = B - L X on the grids of `level`.
  void level_residual(int level);

  // Fills the halo of an array laid out like the root grid: periodic wrap or phi's
  // homogeneous condition (Neumann, Dirichlet at an outflow).
  void root_halo(double* q, const BlockGeom& G) const;

  // Conjugate gradients on the single root grid (owned by one rank: local and
  // deterministic). Solves L X = B.
  void coarse_solve();

  // Composite residual B = RHS - L PHI on the leaves; returns its max norm.
  double composite_residual();

  void fill(int var, double v, bool leaves_only);

  // One V-cycle on the composite residual in B (leaves); corrections in X.
  void vcycle();

  PressureStats solve(double tol, double scale);

  // monitors (monitors.cpp)
  void track_lift();

  // Max |div U| over leaf cells for the current face velocities (with the fine
  // face velocities at level jumps, as the projection sees them).
  [[nodiscard]] double max_divergence();

  // Value of `var` at x by (bi/tri)linear interpolation of cell centres in the leaf
  // that contains x (halo included). Exactly one rank contributes.
  double sample(int var, const std::array<double, 3>& x);

  Monitors monitors();
  void obstacle_monitors(Monitors& m);  // monitors()' cd, cl, St, dp (an obstacle)
  double surface_pressure(const Obstacle& ob, int side);  // dp's front (-1) / back (+1) value

  // initial (initial.cpp)
  void initialise();
};

}  // namespace rwd::solver

// Incompressible Navier–Stokes + energy (Boussinesq) on a Forest: Chorin's
// incremental projection, explicit Euler or Heun's RK2 (solver.time_scheme),
// multigrid-like pressure solver that uses the tree's own restriction and
// prolongation (paper, section II).
//
// One time step (all collective over the compute communicator):
//   1. dt from the CFL and diffusion limits (max over ranks: exact, order-free);
//   2. predictor on every leaf cell:  u* = u + dt (-div(U u) + nu L u - Gc p + f_b),
//      T' = T + dt (-div(U T) + alpha L T + q);
//      rk2 (Heun): that stage, forced as in 3., gives u1; then
//      u* = (u + u1 + dt R(u1)) / 2 with R the same right-hand side (Gc p of the last
//      step in both stages: the projection removes the lag, one projection per step);
//   3. obstacles: solid cells forced to rest, interface cells to the value linearly
//      interpolated between the surface and the next fluid cell (direct forcing);
//      the force on each obstacle is minus the sum of the forcing (momentum exchange;
//      rk2: half the first stage's forcing and all of the second's, their weights in u*);
//   4. L phi = div(U*) / dt by the multigrid solver, until dt * max|residual| <= tol,
//      i.e. the max norm of the divergence after projection is below the tolerance;
//   5. u = u* - dt Gc phi, p += phi, gp = Gc p, halos exchanged.
// Only leaf grids carry the solution; parents hold restricted averages (for halos
// across level jumps and for the multigrid coarse levels).
//
// Level jumps (adaptive trees, 2:1 balanced) are conservative: a fine grid's ghosts
// next to a coarser grid are built from the coarse value and its own cells so that
// each fine diffusive face flux equals the coarse cell's flux through that face
// (ghosts exact for linear fields), and the coarse cell takes the mean of the fine
// advective fluxes and of the fine face velocities (reflux, carried to it through
// the restriction into the parent and the halo exchange). Mass, momentum and heat
// are conserved across the jump, the projection is exact there, and the Poisson
// error stays second order (tests/solver/test_flow.cpp).
//
// Determinism: every value of every field is computed from the same operands in the
// same order whatever the number of compute ranks. Global reductions that feed back
// into the fields are max-reductions (exact); sums (monitors) are formed per grid,
// gathered and added in UID order. So 1, 2, 3 or 4 compute ranks give bit-identical
// fields (tests/solver/test_determinism.cpp).
//
// Coarse levels: the leaves carry the solution; a parent grid shows the current step
// when its state variables (u, v, w, p, T) hold the average of its children's cells —
// plain means over the r0*r1*r2 child cells under each parent cell, solid cells
// entering with the values they store. Adaptive trees keep it so at every step (their
// halo exchange restricts); a uniform tree's parents are brought up to date by
// sync_coarse_levels(), which every reader of the state beyond the leaves calls first
// (the output, in-situ hooks: driver::describe_grids; live windows with a piece above
// the leaves: the live link's Host::sync_parents), so only steps that are looked at
// beyond their leaves pay for it (PhaseTimes::restrict).
//
// Checkpoint / restart contract (for the I/O kernel):
//  - per-cell arrays to write for a bit-exact restart: state_fields() — u, v, w, p, T
//    (Forest variables kU.. kT) on every grid (leaves carry the solution, parents
//    their averages: sync_coarse_levels() first); there is no "previous" time level (explicit
//    Euler and Heun are one-step schemes) and no temporary needs saving: gpx/gpy/gpz are derived from p
//    and the scratch variables are overwritten before they are read;
//  - scalar state: ScalarState {time, step, dt_prev};
//  - cell types: cell_types(g), uint8 per interior cell (codes in CellType), derived
//    from the case geometry, written for visualisation, not needed for restart;
//  - restore path: fill the state fields' interiors into forest(), then call
//    restore(ScalarState). It recomputes halos, parents and gp exactly as step() does,
//    so the continued run is bit-identical to the uninterrupted one.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rewind/solver/case.hpp"
#include "rewind/forest/forest.hpp"

namespace rwd::solver {

/// Forest variable indices.
enum Var : int {
  kU = 0, kV = 1, kW = 2, kP = 3, kT = 4,  // state
  kGpx = 5, kGpy = 6, kGpz = 7,            // derived: cell pressure gradient Gc p
  kUs = 8, kVs = 9, kWs = 10, kTs = 11,    // scratch: predictor
  kPhi = 12, kRhs = 13, kB = 14, kR = 15, kX = 16,  // scratch: pressure solver
  kNumVars = 17
};

/// Cell type codes, one uint8 per cell (the kernel writes them as data).
enum class CellType : std::uint8_t {
  fluid = 0,      ///< ordinary fluid cell
  solid = 1,      ///< centre inside an obstacle: velocity forced to the body's (0)
  interface = 2,  ///< fluid cell with a solid face neighbour: velocity forced to the
                  ///< value interpolated between the surface and the fluid beyond
};

enum class FieldRole : std::uint8_t { state, derived, scratch };
/// One Forest variable of the solver: its index, name and role (not kernel::FieldInfo,
/// a dataset of a file).
struct Variable {
  int var;
  const char* name;
  FieldRole role;
};
/// Every Forest variable with its name and role (state = must be checkpointed).
std::span<const Variable> field_table();
/// The state variables (u, v, w, p, T): the solver's arrays a restart fills.
std::vector<Variable> state_fields();
/// The state variables case `c` solves, what `rewind run` writes and lists: u, v, p, w
/// only in 3-D (a 2-D case's w stays 0), T only with the energy equation.
std::vector<Variable> solved_fields(const SolverCase& c);

struct ScalarState {
  double time = 0.0;
  std::int64_t step = 0;
  double dt_prev = 0.0;  ///< dt of the last projection (enters the face velocities)
  /// The Strouhal estimator's state (StrouhalEstimator::state(); empty = none yet).
  std::vector<double> strouhal;
  /// Bit for bit (the estimator's state holds NaN for "none", which == would call unequal).
  bool operator==(const ScalarState& o) const {
    return time == o.time && step == o.step && dt_prev == o.dt_prev && strouhal.size() == o.strouhal.size() &&
           (strouhal.empty() || std::memcmp(strouhal.data(), o.strouhal.data(), strouhal.size() * sizeof(double)) == 0);
  }
};

/// Result of one pressure solve.
struct PressureStats {
  int cycles = 0;
  double residual = 0.0;  ///< max |div u| after the projection (1/s)
  bool converged = false;
};

/// Wall-clock seconds spent in each phase since construction (this rank).
struct PhaseTimes {
  double dt = 0, predictor = 0, obstacles = 0, projection_rhs = 0, pressure = 0, correction = 0, exchange = 0;
  /// sync_coarse_levels(): restricting a uniform tree's state into its parents, at the
  /// steps something beyond the leaves was read (an adaptive tree's exchange restricts
  /// as part of its communication phase, counted in `exchange`).
  double restrict = 0;
  std::int64_t pressure_cycles = 0;
  std::int64_t steps = 0;
};

struct StepResult {
  std::int64_t step = 0;
  double time = 0.0;
  double dt = 0.0;
  PressureStats pressure;
};

/// Force on one obstacle (per unit depth in 2-D), from the direct-forcing terms.
struct ObstacleForce {
  std::array<double, 3> force{0.0, 0.0, 0.0};
};

/// Values written to the monitor CSV. NaN where not applicable.
struct Monitors {
  std::int64_t step = 0;
  double time = 0.0, dt = 0.0;
  double kinetic_energy = 0.0;  ///< 1/2 sum |u|^2 dV over fluid leaf cells
  double max_divergence = 0.0;  ///< max |div U| over leaf cells (face velocities)
  double max_velocity = 0.0;
  int pressure_cycles = 0;
  double pressure_residual = 0.0;
  bool has_obstacle = false;
  double cd = 0.0, cl = 0.0, cl_z = 0.0;  ///< first obstacle, scaled by 1/2 U^2 L (2-D) or L^2 (3-D)
  double dp = 0.0;        ///< p(front) - p(back) of the first circle/sphere
  double strouhal = 0.0;  ///< from the lift's upward zero crossings; NaN until known
  bool has_nusselt = false;
  double nu_xmin = 0.0, nu_xmax = 0.0;  ///< mean Nusselt numbers on the x walls
  bool has_tg = false;
  double tg_error = 0.0;  ///< Taylor–Green: max |u - u_exact| / U0 over leaf cells
};

class Solver {
 public:
  /// Builds the Forest for `plan` (collective over `comm`, whose size must be
  /// plan.ranks), classifies cells, sets the initial state. Throws
  /// config::CaseError for a case the tree cannot carry (obstacle resolution).
  Solver(SolverCase c, spacetree::LocalPlan plan, MPI_Comm comm);
  ~Solver();
  Solver(Solver&&) noexcept;
  Solver& operator=(Solver&&) noexcept;

  [[nodiscard]] const SolverCase& config() const;
  [[nodiscard]] forest::Forest& forest();
  [[nodiscard]] const forest::Forest& forest() const;

  /// One time step. Collective. Throws std::runtime_error if the velocity blows up
  /// (non-finite) — on every rank, after agreeing.
  StepResult step();
  /// True when time >= end or step >= max_steps.
  [[nodiscard]] bool finished() const;
  /// The dt the next step will take. Collective.
  [[nodiscard]] double next_dt();
  /// The next simulated time a step must land on exactly (an output time; +inf for
  /// none). Time steps aim at min(end, event) in equal steps, so a run that stops or
  /// writes at T takes the same steps as one that runs past T. Not collective.
  void set_event_time(double t);

  [[nodiscard]] ScalarState scalar_state() const;
  /// See the checkpoint contract above. Collective.
  void restore(const ScalarState& s);

  /// Cell types of local grid g, interior cells only, x fastest (s[0]*s[1]*s[2]).
  [[nodiscard]] std::span<const std::uint8_t> cell_types(std::size_t g) const;

  /// Computes the monitor values. Collective; results identical on every rank.
  Monitors monitors();
  /// Force on obstacle i accumulated in the last step.
  [[nodiscard]] ObstacleForce obstacle_force(std::size_t i) const;

  /// Pressure-solver access for tests and benchmarks: solve L phi = rhs on the
  /// leaves (rhs in kRhs, solution in kPhi, phi's homogeneous boundary conditions)
  /// until `scale` * max|residual| <= tolerance. Collective.
  PressureStats solve_pressure(double tolerance, double scale = 1.0);
  /// Residual reduction factor of each V-cycle of the last solve.
  [[nodiscard]] std::vector<double> last_cycle_residuals() const;
  /// Changes a face's boundary condition at run time (e.g. the inflow velocity), from
  /// the next step on. Not collective, but must be called identically on every rank
  /// (the same face and value at the same step boundary), or the ranks diverge.
  void set_boundary(int face, const FaceBc& bc);
  /// Changes the fluid constants at run time (steering: nu, alpha, ...). The energy
  /// switch cannot change (throws std::invalid_argument). Not collective: every rank
  /// must make the same change between the same two steps.
  void set_physics(const Physics& p);
  /// Changes the end time / step limit at run time. Not collective (as set_physics).
  void set_time_limits(double end, std::int64_t max_steps);
  /// Makes every parent grid's state the average of its children for the current step
  /// (see "Coarse levels" above): one bottom-up pass when the tree is uniform and a
  /// step, restore() or the initial state left the parents behind, else nothing. Call
  /// it before reading anything but leaves from forest(). Collective (every rank calls
  /// it at the same step boundary).
  void sync_coarse_levels();
  /// Max-norm of (kRhs - L kPhi) over leaf cells. Collective.
  double pressure_residual();
  /// Max |div U| over leaf cells for the current face velocities. Collective.
  double max_divergence();
  /// Exchanges halos (and restricts parents) of `vars` with their boundary
  /// conditions. Collective.
  void exchange(std::span<const int> vars);

  /// Value of Forest variable `var` at point x, (bi/tri)linear between the cell
  /// centres of the leaf that contains x (halos included); NaN outside the domain.
  /// Collective; the same value on every rank.
  double sample(int var, const std::array<double, 3>& x);

  /// Accumulated time per phase (the exchange of the state after the correction is
  /// counted in `exchange`; halo exchanges inside the pressure solver in `pressure`).
  [[nodiscard]] const PhaseTimes& phase_times() const;

  /// Leaf cells over all ranks.
  [[nodiscard]] std::int64_t global_leaf_cells() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::solver

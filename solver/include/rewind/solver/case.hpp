// The solver part of a case file: physics, time, boundary conditions, obstacles,
// pressure solver, monitors, initial state.
//
// Every key, with its type, unit, default and range, is a row of the case-key table
// (config/src/case_keys.cpp; `rewind keys`, docs/case-reference.md): the getters
// take defaults and check ranges there, so this parser checks only what one key
// cannot say alone (alpha or Pr, periodic faces, obstacles inside the domain, a
// stable forced dt, ...). [output] is read by the driver.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "rewind/config/case_file.hpp"

namespace rwd::solver {

enum class BcType : std::uint8_t { wall, moving_wall, inflow, outflow, slip, periodic };
enum class Profile : std::uint8_t { constant, parabolic };

/// One domain face. Faces are numbered 2*axis + side (xmin, xmax, ymin, ...).
struct FaceBc {
  BcType type = BcType::wall;
  std::array<double, 3> velocity{0.0, 0.0, 0.0};
  Profile profile = Profile::constant;
  bool temperature_fixed = false;  ///< Dirichlet (true) or adiabatic
  double temperature = 0.0;
};

enum class ObstacleType : std::uint8_t { circle, sphere, box };
struct Obstacle {
  ObstacleType type = ObstacleType::circle;
  std::array<double, 3> center{};
  double radius = 0.0;
  spacetree::Box box{};
  std::optional<double> temperature;
  /// Signed distance of p to the surface (< 0 inside). `dim` 2: z is ignored.
  [[nodiscard]] double distance(const std::array<double, 3>& p, int dim) const;
  [[nodiscard]] spacetree::Box bounds(int dim) const;
};

struct Physics {
  double nu = 0.0;
  bool energy = false;
  double alpha = 0.0;
  double beta = 0.0;
  std::array<double, 3> gravity{0.0, 0.0, 0.0};
  double T_ref = 0.0;
  double heat_source = 0.0;
};

struct TimeSettings {
  double end = 0.0;
  double dt = 0.0;  ///< 0 = automatic
  double safety = 0.5;
  double dt_max = std::numeric_limits<double>::infinity();
  std::int64_t max_steps = std::numeric_limits<std::int64_t>::max();
};

struct PressureSettings {
  double tolerance = 1e-6;
  int max_cycles = 50;
  int pre_smooth = 2;
  int post_smooth = 2;
  double coarse_factor = 2.0;
  int max_sweeps = 64;
  double omega = 1.0;
};

enum class Immersed : std::uint8_t { interpolate, staircase };
/// euler: u* = u + dt R(u), first order (the upwind blend cancels its anti-diffusion);
/// rk2: Heun's two stages, u1 = u + dt R(u), u* = (u + u1 + dt R(u1)) / 2, one
/// projection per step (the pressure gradient of the last step in both stages: the
/// projection removes its lag), second order, central advection only.
enum class TimeScheme : std::uint8_t { euler, rk2 };
struct Numerics {
  double upwind = 1.0;
  Immersed immersed = Immersed::interpolate;
  TimeScheme time_scheme = TimeScheme::euler;
};

enum class InitialType : std::uint8_t { rest, uniform, taylor_green };
struct Initial {
  InitialType type = InitialType::rest;
  std::array<double, 3> velocity{0.0, 0.0, 0.0};
  std::optional<double> temperature;  ///< default T_ref
};

struct MonitorSettings {
  std::int64_t interval = 10;
  std::string file = "monitor.csv";
  double progress = 2.0;
  double reference_velocity = 0.0;  ///< 0 = derive
  double reference_length = 0.0;    ///< 0 = derive
};

struct SolverCase {
  config::TreeCase tree;
  Physics physics;
  TimeSettings time;
  std::array<FaceBc, 6> boundary{};
  std::vector<Obstacle> obstacles;
  PressureSettings pressure;
  Numerics numerics;
  Initial initial;
  MonitorSettings monitor;

  [[nodiscard]] int dim() const { return tree.shape.dim(); }
  /// Largest speed prescribed anywhere on the boundary or in the initial state.
  [[nodiscard]] double boundary_speed() const;
  /// Reference velocity and length for drag/lift coefficients and Strouhal number.
  [[nodiscard]] double reference_velocity() const;
  [[nodiscard]] double reference_length() const;
  /// The area drag and lift are scaled by: the reference length per unit depth in 2-D; in
  /// 3-D the projected area of a `circle` (a cylinder along z through the domain: the
  /// length times the domain's depth, as Schaefer-Turek's 3D-1Z scales it), else the
  /// length squared.
  [[nodiscard]] double reference_area() const;
};

/// Face name ("xmin", ...) of face index 0..5.
const char* face_name(int face);

/// Reads the tree part (parse_tree_case) and every solver section, marks [output]
/// as read, and checks physical sense (nu > 0, forced dt stable, obstacles inside
/// the domain, periodic faces consistent with [domain].periodic ...). Does not call
/// reject_unknown(): the caller does, after the other modules read their keys.
/// Throws config::CaseError with one line naming file and key.
SolverCase parse_solver_case(config::CaseDocument& doc);

/// The stable time-step limit (before the safety factor) for a maximum cell speed
/// sum_a |u_a|/h_a (`adv`, 1/s), the finest cell size `h` and the largest |u|^2
/// (`u2`): min(1/adv, 1/(2 max(nu, alpha) sum 1/h^2), 2 min(nu, alpha) /
/// ((1 - upwind) u2)). The last term is the explicit-Euler limit of the central part
/// of the advection scheme (absent for upwind >= 1); with rk2 it is
/// cbrt(12 min(nu, alpha) / (adv^4 h_max^2)) instead (see case.cpp).
double stable_dt(const SolverCase& c, double adv, const std::array<double, 3>& h, double u2);

}  // namespace rwd::solver

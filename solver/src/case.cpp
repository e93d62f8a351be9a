#include "rewind/solver/case.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace rwd::solver {

using config::CaseDocument;
using config::CaseError;

namespace {
constexpr const char* kFaceNames[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

// A word the key table allows (CaseDocument checked it) -> its enumerator, in the
// order of the row's choices.
template <typename E>
E choice(const std::string& key, const std::string& v) {
  const auto& c = config::case_key(key).choices;
  return static_cast<E>(std::find(c.begin(), c.end(), v) - c.begin());
}

// A temperature is a number or the word "adiabatic".
void parse_temperature(CaseDocument& doc, const std::string& key, FaceBc& f) {
  if (!doc.has(key)) return;
  f.temperature_fixed = doc.is_number(key);
  if (f.temperature_fixed) f.temperature = doc.get_double(key);
  else (void)doc.get_string(key);  // checked against the row's words ("adiabatic")
}
}  // namespace

const char* face_name(int face) { return kFaceNames[face]; }

double Obstacle::distance(const std::array<double, 3>& p, int dim) const {
  switch (type) {
    case ObstacleType::circle: {
      const double dx = p[0] - center[0], dy = p[1] - center[1];
      return std::sqrt(dx * dx + dy * dy) - radius;
    }
    case ObstacleType::sphere: {
      double r2 = 0;
      for (int a = 0; a < dim; ++a) r2 += (p[a] - center[a]) * (p[a] - center[a]);
      return std::sqrt(r2) - radius;
    }
    case ObstacleType::box: {
      // Exact signed distance to an axis-aligned box.
      double out2 = 0, in = -std::numeric_limits<double>::infinity();
      for (int a = 0; a < dim; ++a) {
        const double c = 0.5 * (box.lo[a] + box.hi[a]), e = 0.5 * (box.hi[a] - box.lo[a]);
        const double q = std::abs(p[a] - c) - e;
        out2 += std::max(q, 0.0) * std::max(q, 0.0);
        in = std::max(in, q);
      }
      return out2 > 0 ? std::sqrt(out2) : in;
    }
  }
  return 1.0;
}

spacetree::Box Obstacle::bounds(int dim) const {
  spacetree::Box b;
  if (type == ObstacleType::box) return box;
  for (int a = 0; a < 3; ++a) {
    const bool extends = a < dim && !(type == ObstacleType::circle && a == 2);
    b.lo[a] = extends ? center[a] - radius : -std::numeric_limits<double>::infinity();
    b.hi[a] = extends ? center[a] + radius : std::numeric_limits<double>::infinity();
  }
  return b;
}

double SolverCase::boundary_speed() const {
  double m = 0;
  for (const auto& f : boundary) {
    if (f.type != BcType::moving_wall && f.type != BcType::inflow) continue;
    double s = 0;
    for (double v : f.velocity) s += v * v;
    m = std::max(m, std::sqrt(s));
  }
  double s = 0;
  for (double v : initial.velocity) s += v * v;
  return std::max(m, std::sqrt(s));
}

double SolverCase::reference_velocity() const {
  if (monitor.reference_velocity > 0) return monitor.reference_velocity;
  for (const auto& f : boundary)
    if (f.type == BcType::inflow) {
      double s = 0;
      for (double v : f.velocity) s += v * v;
      s = std::sqrt(s);
      // Mean of a parabolic profile: 2/3 of the maximum in 2-D; in 3-D (product of
      // two parabolas) 4/9.
      if (f.profile == Profile::parabolic) s *= dim() == 2 ? 2.0 / 3.0 : 4.0 / 9.0;
      return s;
    }
  const double b = boundary_speed();
  return b > 0 ? b : 1.0;
}

double SolverCase::reference_length() const {
  if (monitor.reference_length > 0) return monitor.reference_length;
  if (!obstacles.empty()) {
    const auto& o = obstacles.front();
    if (o.type == ObstacleType::box) return o.box.hi[1] - o.box.lo[1];
    return 2.0 * o.radius;
  }
  return tree.shape.domain.extent(0);
}

double SolverCase::reference_area() const {
  const double L = reference_length();
  if (dim() == 2) return L;
  if (!obstacles.empty() && obstacles.front().type == ObstacleType::circle) return L * tree.shape.domain.extent(2);
  return L * L;
}

double stable_dt(const SolverCase& c, double adv, const std::array<double, 3>& h, double u2) {
  double inv_h2 = 0;
  for (int a = 0; a < c.dim(); ++a) inv_h2 += 1.0 / (h[a] * h[a]);
  const double kmax = std::max(c.physics.nu, c.physics.energy ? c.physics.alpha : 0.0);
  const double kmin = c.physics.energy ? std::min(c.physics.nu, c.physics.alpha) : c.physics.nu;
  double dt = std::numeric_limits<double>::infinity();
  if (adv > 0) dt = 1.0 / adv;
  if (kmax > 0) dt = std::min(dt, 1.0 / (2.0 * kmax * inv_h2));
  // Explicit Euler takes away U^2 dt / 2 of diffusion; the upwind blend gives back
  // `upwind` times that, the physical diffusion must cover the rest.
  const double missing = 1.0 - std::min(1.0, c.numerics.upwind);
  if (c.numerics.time_scheme == TimeScheme::rk2) {
    // Heun with central advection: von Neumann on 1-D advection-diffusion gives
    // CFL^4 <= 13.7 nu dt / h^2 (its amplification 1 + CFL^4 / 4 per step on the
    // imaginary axis must be paid by the diffusion); with the cell speed sum and the
    // finest cells' largest h it is conservative in 2-D and 3-D.
    double hmax = 0;
    for (int a = 0; a < c.dim(); ++a) hmax = std::max(hmax, h[a]);
    if (adv > 0 && kmin > 0) dt = std::min(dt, std::cbrt(12.0 * kmin / (adv * adv * adv * adv * hmax * hmax)));
  } else if (missing > 0 && u2 > 0) {
    dt = std::min(dt, 2.0 * kmin / (missing * u2));
  }
  return dt;
}

namespace {

// The sections of a case file, in the order parse_solver_case reads them (ranges and
// defaults: the key table).

void parse_physics(CaseDocument& doc, Physics& ph) {
  ph.nu = doc.get_double("physics.nu");
  if (doc.has("physics.alpha") && doc.has("physics.Pr"))
    throw doc.error("physics.Pr", "give either alpha or Pr, not both");
  if (doc.has("physics.alpha")) {
    ph.energy = true;
    ph.alpha = doc.get_double("physics.alpha");
  } else if (doc.has("physics.Pr")) {
    ph.energy = true;
    ph.alpha = ph.nu / doc.get_double("physics.Pr");
  }
  ph.beta = doc.get_double("physics.beta");
  ph.gravity = doc.get_double3("physics.gravity");
  ph.T_ref = doc.get_double("physics.T_ref");
  ph.heat_source = doc.get_double("physics.heat_source");
  if (!ph.energy && (ph.beta != 0.0 || ph.heat_source != 0.0))
    throw doc.error("physics.beta", "buoyancy or a heat source needs the energy equation: set physics.alpha or physics.Pr");
}

void parse_time(CaseDocument& doc, TimeSettings& t) {
  t.end = doc.get_double("time.end");
  t.dt = doc.get_double("time.dt");
  t.safety = doc.get_double("time.safety");
  t.dt_max = doc.get_double("time.dt_max");
  t.max_steps = doc.get_int("time.max_steps", std::numeric_limits<std::int64_t>::max());
}

// [boundary.*]
void parse_boundaries(CaseDocument& doc, const spacetree::TreeShape& sh, const Physics& ph,
                      std::array<FaceBc, 6>& boundary) {
  const int dim = sh.dim();
  for (int f = 0; f < 6; ++f) {
    const int axis = f / 2;
    const std::string p = std::string("boundary.") + kFaceNames[f];
    FaceBc& b = boundary[f];
    if (axis >= dim) {
      if (doc.has(p)) throw doc.error(p, "a 2-D case has no z faces");
      b.type = BcType::periodic;
      continue;
    }
    const std::string def = sh.periodic[axis] ? "periodic" : "wall";
    b.type = choice<BcType>(p + ".type", doc.get_string(p + ".type", def));
    if (sh.periodic[axis] != (b.type == BcType::periodic))
      throw doc.error(p + ".type", sh.periodic[axis] ? "domain.periodic is set on this axis: the face must be periodic"
                                                     : "periodic faces need domain.periodic on this axis");
    if (b.type == BcType::moving_wall || b.type == BcType::inflow) {
      b.velocity = doc.get_double3(p + ".velocity");
      b.profile = choice<Profile>(p + ".profile", doc.get_string(p + ".profile"));
      if (b.type == BcType::moving_wall && b.velocity[axis] != 0.0)
        throw doc.error(p + ".velocity", "a moving wall cannot move through itself (normal component must be 0)");
      if (b.type == BcType::inflow && (f % 2 == 0 ? b.velocity[axis] <= 0 : b.velocity[axis] >= 0))
        throw doc.error(p + ".velocity", "inflow velocity must point into the domain");
    }
    b.temperature_fixed = false;
    b.temperature = ph.T_ref;
    if (b.type == BcType::inflow) b.temperature_fixed = true;  // inflow brings T_ref unless told otherwise
    parse_temperature(doc, p + ".temperature", b);
    if (b.type == BcType::inflow && !b.temperature_fixed)
      throw doc.error(p + ".temperature", "an inflow needs a temperature value");
  }
}

// [[obstacle]] number i
Obstacle parse_obstacle(CaseDocument& doc, std::size_t i, const spacetree::TreeShape& sh, const Physics& ph) {
  const int dim = sh.dim();
  const std::string p = "obstacle[" + std::to_string(i) + "]";
  Obstacle o;
  const std::string type = doc.get_string(p + ".type");
  o.type = type == "sphere" ? ObstacleType::sphere : type == "box" ? ObstacleType::box : ObstacleType::circle;
  if (o.type == ObstacleType::box) {
    o.box.lo = doc.get_double3(p + ".lo");
    o.box.hi = doc.get_double3(p + ".hi");
    for (int a = 0; a < dim; ++a)
      if (!(o.box.hi[a] > o.box.lo[a])) throw doc.error(p + ".hi", "must be above lo on every axis");
  } else {
    o.center = doc.get_double3(p + ".center");
    o.radius = doc.get_double(p + ".radius");
    if (o.type == ObstacleType::sphere && dim == 2)
      throw doc.error(p + ".type", "a sphere needs a 3-D domain (use circle in 2-D)");
  }
  if (doc.has(p + ".temperature")) {
    if (!ph.energy) throw doc.error(p + ".temperature", "needs the energy equation (physics.alpha or physics.Pr)");
    o.temperature = doc.get_double(p + ".temperature");
  }
  const auto b = o.bounds(dim);
  for (int a = 0; a < dim; ++a)
    if (!(b.lo[a] > sh.domain.lo[a] && b.hi[a] < sh.domain.hi[a]) && std::isfinite(b.lo[a]))
      throw doc.error(p, fmt::format("obstacle reaches outside the domain on axis {} ([{}, {}] vs domain [{}, {}])",
                                     "xyz"[a], b.lo[a], b.hi[a], sh.domain.lo[a], sh.domain.hi[a]));
  return o;
}

// [solver], the numerics included
void parse_solver(CaseDocument& doc, PressureSettings& ps, Numerics& numerics) {
  ps.tolerance = doc.get_double("solver.tolerance");
  ps.max_cycles = static_cast<int>(doc.get_int("solver.max_cycles"));
  ps.pre_smooth = static_cast<int>(doc.get_int("solver.pre_smooth"));
  ps.post_smooth = static_cast<int>(doc.get_int("solver.post_smooth"));
  if (ps.pre_smooth + ps.post_smooth < 1)
    throw doc.error("solver.pre_smooth", "smoothing sweeps must be >= 0 with at least one in total");
  ps.coarse_factor = doc.get_double("solver.coarse_factor");
  ps.max_sweeps = static_cast<int>(doc.get_int("solver.max_sweeps"));
  ps.omega = doc.get_double("solver.omega");
  numerics.upwind = doc.get_double("solver.upwind");
  numerics.immersed = choice<Immersed>("solver.immersed", doc.get_string("solver.immersed"));
  numerics.time_scheme = choice<TimeScheme>("solver.time_scheme", doc.get_string("solver.time_scheme"));
  // The blend's diffusion U^2 dt / 2 cancels explicit Euler's anti-diffusion; Heun has
  // none to cancel, so with it the blend would only add a dt-dependent diffusion.
  if (numerics.time_scheme == TimeScheme::rk2 && numerics.upwind > 0)
    throw doc.error(doc.has("solver.upwind") ? "solver.upwind" : "solver.time_scheme",
                    fmt::format("solver.time_scheme = \"rk2\" advects centrally: set solver.upwind = 0 (it is {}; "
                                "the upwind blend belongs to explicit Euler)",
                                numerics.upwind));
}

void parse_initial(CaseDocument& doc, const spacetree::TreeShape& sh, const Physics& ph, Initial& initial) {
  initial.type = choice<InitialType>("initial.type", doc.get_string("initial.type"));
  initial.velocity = doc.get_double3("initial.velocity");
  if (initial.type == InitialType::rest && doc.has("initial.velocity"))
    throw doc.error("initial.velocity", "initial.type = \"rest\" takes no velocity (use \"uniform\")");
  if (initial.type == InitialType::taylor_green) {
    if (!sh.periodic[0] || !sh.periodic[1]) throw doc.error("initial.type", "taylor_green needs a domain periodic in x and y");
    if (std::abs(sh.domain.extent(0) - sh.domain.extent(1)) > 1e-12 * sh.domain.extent(0))
      throw doc.error("initial.type", "taylor_green needs a square domain in x and y");
    if (initial.velocity == std::array<double, 3>{0, 0, 0}) initial.velocity = {1.0, 0.0, 0.0};
  }
  if (doc.has("initial.temperature")) {
    if (!ph.energy) throw doc.error("initial.temperature", "needs the energy equation (physics.alpha or physics.Pr)");
    initial.temperature = doc.get_double("initial.temperature");
  }
}

void parse_monitor(CaseDocument& doc, MonitorSettings& m) {
  m.interval = doc.get_int("monitor.interval");
  m.file = doc.get_string("monitor.file");
  m.progress = doc.get_double("monitor.progress");
  m.reference_velocity = doc.get_double("monitor.reference_velocity");
  m.reference_length = doc.get_double("monitor.reference_length");
}

// A forced dt must be stable on the finest cells with the fastest prescribed speed.
void check_forced_dt(CaseDocument& doc, const SolverCase& c) {
  const auto& sh = c.tree.shape;
  const auto& t = c.time;
  const int dim = sh.dim();
  if (t.dt > 0) {
    const int finest = sh.max_depth;
    const auto h = sh.cell_size(finest);
    double adv = 0;
    const double u = c.boundary_speed();
    for (int a = 0; a < dim; ++a) adv += u / h[a];
    const double lim = stable_dt(c, adv, h, u * u);
    if (t.dt > lim)
      throw doc.error("time.dt", fmt::format("{} is unstable: the CFL/diffusion limit on the finest cells (h = {:.3g}) "
                                             "is {:.3g}; lower it or use dt = 0 (automatic)", t.dt, h[0], lim));
  }
}

}  // namespace

SolverCase parse_solver_case(CaseDocument& doc) {
  SolverCase c;
  c.tree = config::parse_tree_case(doc);
  const auto& sh = c.tree.shape;
  parse_physics(doc, c.physics);
  parse_time(doc, c.time);
  parse_boundaries(doc, sh, c.physics, c.boundary);
  const std::size_t nobs = doc.count("obstacle");
  for (std::size_t i = 0; i < nobs; ++i) c.obstacles.push_back(parse_obstacle(doc, i, sh, c.physics));
  parse_solver(doc, c.pressure, c.numerics);
  parse_initial(doc, sh, c.physics, c.initial);
  parse_monitor(doc, c.monitor);
  check_forced_dt(doc, c);
  return c;
}

}  // namespace rwd::solver

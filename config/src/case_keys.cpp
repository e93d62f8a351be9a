#include "rewind/config/case_keys.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rwd::config {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kFaces[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

KeyRange above(double v) { return {v, kInf, true, true}; }
KeyRange at_least(double v) { return {v, kInf, false, true}; }
KeyRange closed(double lo, double hi) { return {lo, hi, false, false}; }
KeyRange open_closed(double lo, double hi) { return {lo, hi, true, false}; }
KeyRange open(double lo, double hi) { return {lo, hi, true, true}; }

using K = KeyType;
using R = OnRestart;

// Ranges of steerable keys are also the steering widgets' ranges, so they are finite.
std::vector<CaseKey> make_table() {
  const KeyRange temperature = closed(-1e6, 1e6);
  const KeyRange speed = closed(-1000.0, 1000.0);
  const KeyRange time = closed(0.0, 1e12);
  // The rules relating a run's times (run_times.hpp), as `rewind keys` shows them.
  const std::string interval_note = "0 or >= time.end / 1e6 and >= time.dt";
  return {
      {.name = "case.name", .type = K::string, .default_toml = "\"\"", .description = "name of the case (plot titles)"},
      {.name = "case.description", .type = K::string, .default_toml = "\"\"", .description = "free text"},

      {.name = "domain.lo", .type = K::number3, .unit = "m", .required = true, .on_restart = R::fixed,
       .description = "lower corner of the domain"},
      {.name = "domain.hi", .type = K::number3, .unit = "m", .required = true, .on_restart = R::fixed,
       .description = "upper corner of the domain (above lo on every axis)"},
      {.name = "domain.periodic", .type = K::boolean3, .default_toml = "[false, false, false]", .on_restart = R::fixed,
       .description = "periodic axes (the faces on them must be periodic)"},

      {.name = "tree.r", .type = K::integer3, .default_toml = "[2, 2, 2]", .on_restart = R::fixed,
       .description = "refinement factor per axis (1 or a common factor; r_z = s_z = 1 makes a 2-D case)"},
      {.name = "tree.s", .type = K::integer3, .default_toml = "[16, 16, 16]", .on_restart = R::fixed,
       .description = "cells per d-grid per axis"},
      {.name = "tree.depth", .type = K::integer, .required = true, .range = at_least(0), .on_restart = R::fixed,
       .description = "every d-grid is refined at least to this level"},
      {.name = "tree.max_depth", .type = K::integer, .default_note = "deepest refine level (or depth)",
       .range = at_least(0), .on_restart = R::fixed, .description = "deepest level the tree may have"},
      {.name = "tree.balance", .type = K::boolean, .default_toml = "true", .on_restart = R::fixed,
       .description = "2:1 balance the tree after refining"},
      {.name = "tree.refine[].level", .type = K::integer, .required = true, .range = at_least(0),
       .on_restart = R::fixed, .description = "[[tree.refine]]: refine the region to at least this level"},
      {.name = "tree.refine[].center", .type = K::number3, .unit = "m", .default_note = "(with radius)",
       .on_restart = R::fixed, .description = "centre of a spherical region"},
      {.name = "tree.refine[].radius", .type = K::number, .unit = "m", .default_note = "(a box without it)",
       .range = above(0), .on_restart = R::fixed, .description = "radius of a spherical region"},
      {.name = "tree.refine[].lo", .type = K::number3, .unit = "m", .default_note = "(box)", .on_restart = R::fixed,
       .description = "lower corner of a box region"},
      {.name = "tree.refine[].hi", .type = K::number3, .unit = "m", .default_note = "(box)", .on_restart = R::fixed,
       .description = "upper corner of a box region (not below lo)"},
      {.name = "run.ranks", .type = K::integer, .default_toml = "1", .range = at_least(1), .on_restart = R::fixed,
       .description = "compute ranks for `rewind tree` statistics"},

      {.name = "physics.nu", .type = K::number, .unit = "m^2/s", .required = true, .range = open_closed(0, 10),
       .steerable = true, .description = "kinematic viscosity"},
      {.name = "physics.alpha", .type = K::number, .unit = "m^2/s", .default_note = "none (no energy equation)",
       .range = open_closed(0, 10), .steerable = true,
       .description = "thermal diffusivity; switches the energy equation on"},
      {.name = "physics.Pr", .type = K::number, .default_note = "none", .range = above(0),
       .description = "Prandtl number, instead of alpha (alpha = nu / Pr)"},
      {.name = "physics.beta", .type = K::number, .unit = "1/K", .default_toml = "0.0",
       .description = "thermal expansion: Boussinesq body force -beta (T - T_ref) g"},
      {.name = "physics.gravity", .type = K::number3, .unit = "m/s^2", .default_toml = "[0.0, 0.0, 0.0]",
       .description = "gravity vector g"},
      {.name = "physics.T_ref", .type = K::number, .unit = "K", .default_toml = "0.0",
       .description = "reference temperature (buoyancy, inflow, initial state)"},
      {.name = "physics.heat_source", .type = K::number, .unit = "K/s", .default_toml = "0.0",
       .description = "internal heat source q / (rho c_p)"},

      {.name = "time.end", .type = K::number, .unit = "s", .required = true, .range = open_closed(0, 1e12),
       .range_note = "steered: after the current time", .on_restart = R::extends, .steerable = true, .description = "simulated end time"},
      {.name = "time.dt", .type = K::number, .unit = "s", .default_toml = "0.0", .range = {0, kInf, false, true},
       .range_note = "0 or >= time.end / 1e9",
       .description = "fixed time step; 0 = automatic (CFL and diffusion limits times safety)"},
      {.name = "time.safety", .type = K::number, .default_toml = "0.5", .range = closed(1e-3, 1),
       .description = "safety factor of the automatic time step (a tinier one would never end the run)"},
      {.name = "time.dt_max", .type = K::number, .unit = "s", .default_toml = "inf", .range = {0, kInf, true, false},
       .range_note = ">= time.end / 1e9",
       .description = "largest automatic time step"},
      {.name = "time.max_steps", .type = K::integer, .default_note = "unlimited", .range = at_least(0),
       .on_restart = R::extends, .description = "stop after this many steps (counted from step 0)"},

      {.name = "boundary.<face>.type", .type = K::string, .default_note = "\"wall\" (\"periodic\" on a periodic axis)",
       .choices = {"wall", "moving_wall", "inflow", "outflow", "slip", "periodic"},
       .description = "boundary condition of the face (xmin xmax ymin ymax zmin zmax)"},
      {.name = "boundary.<face>.velocity", .type = K::number3, .unit = "m/s", .default_note = "required for moving_wall, inflow",
       .range = speed, .steerable = true,
       .description = "wall velocity (moving_wall), or inflow velocity (its centre-line maximum if parabolic)"},
      {.name = "boundary.<face>.profile", .type = K::string, .default_toml = "\"constant\"",
       .choices = {"constant", "parabolic"}, .description = "inflow / moving wall profile"},
      {.name = "boundary.<face>.temperature", .type = K::number_or_string, .unit = "K",
       .default_note = "\"adiabatic\" (inflow: T_ref)", .range = temperature, .choices = {"adiabatic"},
       .steerable = true, .description = "fixed temperature, or \"adiabatic\""},

      {.name = "obstacle[].type", .type = K::string, .required = true, .choices = {"circle", "cylinder", "sphere", "box"},
       .description = "[[obstacle]]: circle (2-D; a cylinder along z in 3-D), sphere or box"},
      {.name = "obstacle[].center", .type = K::number3, .unit = "m", .default_note = "required (circle, sphere)",
       .description = "centre of a circle or sphere"},
      {.name = "obstacle[].radius", .type = K::number, .unit = "m", .default_note = "required (circle, sphere)",
       .range = above(0), .description = "radius of a circle or sphere"},
      {.name = "obstacle[].lo", .type = K::number3, .unit = "m", .default_note = "required (box)",
       .description = "lower corner of a box"},
      {.name = "obstacle[].hi", .type = K::number3, .unit = "m", .default_note = "required (box)",
       .description = "upper corner of a box (above lo)"},
      {.name = "obstacle[].temperature", .type = K::number, .unit = "K", .default_note = "adiabatic",
       .description = "fixed surface temperature (needs the energy equation)"},

      {.name = "solver.tolerance", .type = K::number, .unit = "1/s", .default_toml = "1e-6", .range = above(0),
       .description = "max |div u| after the pressure projection"},
      {.name = "solver.max_cycles", .type = K::integer, .default_toml = "50", .range = at_least(1),
       .description = "multigrid cycles per pressure solve at most"},
      {.name = "solver.pre_smooth", .type = K::integer, .default_toml = "2", .range = at_least(0),
       .description = "smoothing sweeps before restriction (pre + post >= 1)"},
      {.name = "solver.post_smooth", .type = K::integer, .default_toml = "2", .range = at_least(0),
       .description = "smoothing sweeps after prolongation"},
      {.name = "solver.coarse_factor", .type = K::number, .default_toml = "2.0", .range = at_least(1),
       .description = "sweeps multiply by this per coarser level"},
      {.name = "solver.max_sweeps", .type = K::integer, .default_toml = "64", .range = at_least(1),
       .description = "sweeps on one level at most"},
      {.name = "solver.omega", .type = K::number, .default_toml = "1.0", .range = open(0, 2),
       .description = "SOR weight of red-black Gauss-Seidel"},
      {.name = "solver.upwind", .type = K::number, .default_toml = "1.0", .range = closed(0, 10),
       .description = "upwind blend: 1 cancels explicit Euler's anti-diffusion, 0 = central"},
      {.name = "solver.immersed", .type = K::string, .default_toml = "\"interpolate\"",
       .choices = {"interpolate", "staircase"}, .description = "obstacle treatment"},

      {.name = "initial.type", .type = K::string, .default_toml = "\"rest\"", .choices = {"rest", "uniform", "taylor_green"},
       .description = "initial state"},
      {.name = "initial.velocity", .type = K::number3, .unit = "m/s", .default_toml = "[0.0, 0.0, 0.0]",
       .description = "uniform velocity, or the Taylor-Green amplitude (default [1, 0, 0] there)"},
      {.name = "initial.temperature", .type = K::number, .unit = "K", .default_note = "T_ref",
       .description = "initial temperature (needs the energy equation)"},

      {.name = "monitor.interval", .type = K::integer, .unit = "steps", .default_toml = "10", .range = at_least(1),
       .description = "steps between monitor rows"},
      {.name = "monitor.file", .type = K::string, .default_toml = "\"monitor.csv\"",
       .description = "monitor CSV (\"\" = none; beside --output when that is given)"},
      {.name = "monitor.progress", .type = K::number, .unit = "s", .default_toml = "2.0", .range = at_least(0),
       .description = "wall seconds between progress lines (0 = none)"},
      {.name = "monitor.reference_velocity", .type = K::number, .unit = "m/s", .default_toml = "0.0",
       .range = at_least(0), .description = "drag/lift/Strouhal scaling; 0 = the mean inflow velocity"},
      {.name = "monitor.reference_length", .type = K::number, .unit = "m", .default_toml = "0.0", .range = at_least(0),
       .description = "drag/lift/Strouhal scaling; 0 = the obstacle's diameter"},

      {.name = "output.file", .type = K::string, .default_toml = "\"\"",
       .description = "HDF5 output file (\"\" = none; --output overrides)"},
      {.name = "output.checkpoint_interval", .type = K::number, .unit = "s", .default_toml = "0.0", .range = time,
       .range_note = interval_note,
       .steerable = true, .description = "simulated time between checkpoints (0 = off)"},
      {.name = "output.checkpoint_every", .type = K::integer, .unit = "steps", .default_toml = "0", .range = at_least(0),
       .description = "steps between checkpoints (0 = off)"},
      {.name = "output.visualisation_interval", .type = K::number, .unit = "s", .default_toml = "0.0", .range = time,
       .range_note = interval_note,
       .steerable = true, .description = "simulated time between visualisation outputs (0 = off)"},
      {.name = "output.visualisation_every", .type = K::integer, .unit = "steps", .default_toml = "0",
       .range = at_least(0), .description = "steps between visualisation outputs (0 = off)"},
      {.name = "output.float32", .type = K::boolean, .default_toml = "false",
       .description = "visualisation steps in single precision"},
      {.name = "output.initial", .type = K::boolean, .default_toml = "true", .description = "write the initial state"},
      {.name = "output.final", .type = K::boolean, .default_toml = "true", .description = "write the final state"},
      {.name = "output.variables", .type = K::strings, .default_note = "every variable the case solves",
       .description = "variables of visualisation steps (u, v, p; w in 3-D; T with heat)"},
      {.name = "output.io.<option>", .type = K::option, .default_note = "see the option",
       .description = "MPI-IO hints and HDF5 settings (the kernel's options table)"},

      // In-situ analysis changes nothing the file holds: a restart that only changes
      // these keys continues the same file.
      {.name = "insitu.library", .type = K::string, .default_toml = "\"\"", .on_restart = R::extends,
       .description = "in-situ hook: shared library called with every N-th step's grids (\"\" = none; "
                      "docs/insitu.md); a missing library or entry point is refused before the run"},
      {.name = "insitu.every", .type = K::integer, .unit = "steps", .default_toml = "1", .range = at_least(1),
       .on_restart = R::extends, .description = "call the hook at every step that is a multiple of this"},
      {.name = "insitu.args", .type = K::string, .default_toml = "\"\"", .on_restart = R::extends,
       .description = "text passed to the hook's init (the Catalyst adaptor: its Python script; the vorticity "
                      "example: its CSV file)"},
  };
}

// "boundary.xmin.type" -> "boundary.<face>.type", "obstacle[3].lo" -> "obstacle[].lo".
std::string pattern_of(const std::string& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    out += key[i];
    if (key[i] == '[') {
      while (i + 1 < key.size() && key[i + 1] != ']') ++i;
    }
  }
  if (out.rfind("boundary.", 0) == 0) {
    const auto dot = out.find('.', 9);
    const auto face = out.substr(9, dot == std::string::npos ? std::string::npos : dot - 9);
    if (std::find(std::begin(kFaces), std::end(kFaces), face) != std::end(kFaces))
      out = "boundary.<face>" + (dot == std::string::npos ? std::string() : out.substr(dot));
  }
  if (out.rfind("output.io.", 0) == 0 && out.size() > 10 && out.find('.', 10) == std::string::npos)
    out = "output.io.<option>";
  return out;
}

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:g}", v);
}
}  // namespace

bool KeyRange::bounded() const { return std::isfinite(min) || std::isfinite(max); }

bool KeyRange::contains(double v) const {
  if (std::isnan(v)) return false;
  const bool lo_ok = min_open ? v > min : v >= min;
  const bool hi_ok = max_open ? v < max : v <= max;
  return lo_ok && hi_ok;
}

std::string KeyRange::text() const {
  if (!bounded()) return "";
  if (!std::isfinite(max)) return fmt::format("{} {}", min_open ? ">" : ">=", number_text(min));
  if (!std::isfinite(min)) return fmt::format("{} {}", max_open ? "<" : "<=", number_text(max));
  return fmt::format("{}{}, {}{}", min_open ? "(" : "[", number_text(min), number_text(max), max_open ? ")" : "]");
}

std::string KeyRange::requirement() const {
  if (min == 0 && min_open && !std::isfinite(max)) return "must be positive";
  if (min == 0 && !min_open && !std::isfinite(max)) return "must not be negative";
  if (!std::isfinite(max)) return fmt::format("must be at least {}", number_text(min)) + (min_open ? " (exclusive)" : "");
  if (min == 0 && min_open && !max_open) return fmt::format("must be positive and at most {}", number_text(max));
  return "must be in " + text();
}

std::string CaseKey::section() const {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

std::string CaseKey::default_text() const {
  if (required) return "required";
  if (!default_toml.empty()) return default_toml;
  return default_note;
}

std::string CaseKey::type_text() const {
  switch (type) {
    case K::number: return "number";
    case K::integer: return "integer";
    case K::boolean: return "boolean";
    case K::string: return "string";
    case K::number3: return "[number x3]";
    case K::integer3: return "[integer x3]";
    case K::boolean3: return "[boolean x3]";
    case K::strings: return "[string, ...]";
    case K::number_or_string: return "number | string";
    case K::option: return "(per option)";
  }
  return "";
}

// Rows added to make_table()'s after it: a row inside that one initializer makes
// clang-format lay out all of it anew, so newer rows go in here, each after the row it
// follows in `rewind keys`.
std::vector<CaseKey> with_later_rows(std::vector<CaseKey> t) {
  const std::pair<const char*, CaseKey> rows[] = {
      {"solver.upwind",
       {.name = "solver.time_scheme",
        .type = K::string,
        .default_toml = "\"euler\"",
        .choices = {"euler", "rk2"},
        .description = "explicit Euler (first order, with the upwind blend) or Heun's RK2 (second order, upwind = 0)"}},
  };
  for (const auto& r : rows) {
    const std::string after = r.first;
    const auto at = std::find_if(t.begin(), t.end(), [&](const CaseKey& k) { return k.name == after; });
    t.insert(at == t.end() ? at : at + 1, r.second);
  }
  // The depth and the refine regions refine the stored tree on a restart (for the reason
  // above set here, not in the rows).
  for (auto& k : t)
    if (k.name == "tree.depth" || k.name == "tree.max_depth" || k.name.rfind("tree.refine[].", 0) == 0)
      k.on_restart = OnRestart::refines;
  return t;
}

const std::vector<CaseKey>& case_keys() {
  static const std::vector<CaseKey> table = with_later_rows(make_table());
  return table;
}

const CaseKey* find_case_key(const std::string& key) {
  const auto p = pattern_of(key);
  for (const auto& row : case_keys())
    if (row.name == p) return &row;
  return nullptr;
}

namespace {
// True if the row lies inside the table or array `pattern` ("tree.refine" holds tree.refine[].level).
bool inside(const std::string& pattern, const CaseKey& r) {
  const auto& n = r.name;
  return n.size() > pattern.size() && n.rfind(pattern, 0) == 0 &&
         (n[pattern.size()] == '.' || n[pattern.size()] == '[');
}
}  // namespace

bool is_case_section(const std::string& key) {
  const auto p = pattern_of(key);
  return std::any_of(case_keys().begin(), case_keys().end(), [&](const CaseKey& r) { return inside(p, r); });
}

OnRestart on_restart_of(const std::string& key) {
  if (const auto* row = find_case_key(key)) return row->on_restart;
  const auto p = pattern_of(key);
  auto policy = OnRestart::branches;
  bool any = false;
  for (const auto& r : case_keys())
    if (inside(p, r)) {
      // The enumerators run from the strictest (fixed) to the mildest (extends).
      policy = any ? std::min(policy, r.on_restart) : r.on_restart;
      any = true;
    }
  return policy;
}

const CaseKey& case_key(const std::string& key) {
  if (const auto* row = find_case_key(key)) return *row;
  throw std::logic_error(fmt::format("case key '{}' is read but has no row in the key table "
                                     "(config/src/case_keys.cpp): add one",
                                     key));
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool looks_like(const std::string& typo, const std::string& key) {
  const auto d = edit_distance(typo, key);
  return d > 0 && d <= 2 && 2 * d < std::max(typo.size(), key.size());
}

std::string closest_name(const std::string& typo, const std::vector<std::string>& names) {
  std::string best;
  for (const auto& n : names)
    if (looks_like(typo, n) && (best.empty() || edit_distance(typo, n) < edit_distance(typo, best))) best = n;
  return best;
}

std::vector<std::string> case_sections() {
  std::vector<std::string> out;
  for (const auto& row : case_keys()) {
    const auto s = row.name.substr(0, row.name.find_first_of(".["));
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

}  // namespace rwd::config

#include "rewind/driver/steering.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "rewind/config/case_keys.hpp"

namespace rwd::driver {

namespace {
constexpr const char* kFaces[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

// A steerable key of this run: name, unit, range and description from the key table.
collector::ParameterInfo parameter(const std::string& key, const std::vector<double>& value,
                                   const std::string& where = "") {
  const auto& row = config::case_key(key);
  if (!row.steerable) throw std::logic_error(key + " is not steerable in the key table");
  return {key,
          collector::param_value(value),
          row.unit,
          row.range.min,
          row.range.max,
          where.empty() ? row.description : fmt::format("{} at {}", row.description, where),
          row.range.min_open,
          row.range.max_open};
}
}  // namespace

std::vector<collector::ParameterInfo> steerable_parameters(const RunSpec& spec) {
  const auto& c = spec.solver_case;
  const auto& o = spec.output;
  std::vector<collector::ParameterInfo> p;
  p.push_back(parameter("physics.nu", {c.physics.nu}));
  if (c.physics.energy) p.push_back(parameter("physics.alpha", {c.physics.alpha}));
  for (int f = 0; f < 6; ++f) {
    const auto& b = c.boundary[static_cast<std::size_t>(f)];
    const std::string face = kFaces[f];
    if (b.type == solver::BcType::inflow || b.type == solver::BcType::moving_wall)
      p.push_back(parameter("boundary." + face + ".velocity", {b.velocity[0], b.velocity[1], b.velocity[2]},
                            fmt::format("{} ({})", face, b.type == solver::BcType::inflow ? "inflow" : "moving wall")));
    if (c.physics.energy && b.temperature_fixed)
      p.push_back(parameter("boundary." + face + ".temperature", {b.temperature}, face));
  }
  p.push_back(parameter("output.checkpoint_interval", {o.checkpoint_interval}));
  p.push_back(parameter("output.visualisation_interval", {o.visualisation_interval}));
  p.push_back(parameter("time.end", {c.time.end}));
  return p;
}

std::string steering_override(const std::vector<collector::ParameterInfo>& params, const std::string& name,
                              const std::vector<double>& value, const std::optional<config::RunTimes>& at) {
  const auto it =
      std::find_if(params.begin(), params.end(), [&](const collector::ParameterInfo& q) { return q.name == name; });
  if (it == params.end()) {
    std::string known;
    std::vector<std::string> names;
    for (const auto& q : params) known += (known.empty() ? "" : ", ") + q.name, names.push_back(q.name);
    const auto near = config::closest_name(name, names);
    throw std::invalid_argument(fmt::format("{} is not a steerable parameter of this run{} (steerable: {})", name,
                                            near.empty() ? "" : "; did you mean " + near + "?", known));
  }
  const std::size_t n = collector::components(it->value).size();
  if (value.size() != n)
    throw std::invalid_argument(fmt::format("{} takes {}, got {} values", name, n == 3 ? "3 values [x, y, z]" : "one number",
                                            value.size()));
  const auto& range = config::case_key(name).range;
  for (const double v : value)
    if (!std::isfinite(v) || !range.contains(v))
      throw std::invalid_argument(fmt::format("{} = {} is outside {} {}", name, v, range.text(), it->unit));
  if (at) {
    std::string why;
    if (name == "time.end") why = config::end_problem(value[0], at->now);
    else if (name.ends_with("_interval")) why = config::interval_problem(value[0], *at);
    if (!why.empty()) throw std::invalid_argument(fmt::format("{}: {}", name, why));
  }
  if (n == 1) return fmt::format("{}={}", name, value[0]);  // shortest round trip: exact and readable
  return fmt::format("{}=[{}, {}, {}]", name, value[0], value[1], value[2]);
}

}  // namespace rwd::driver

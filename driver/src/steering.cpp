#include "rewind/driver/steering.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rwd::driver {

namespace {
constexpr const char* kFaces[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
}

std::vector<Parameter> steerable_parameters(const RunSpec& spec) {
  const auto& c = spec.solver_case;
  const auto& o = spec.output;
  std::vector<Parameter> p;
  p.push_back({"physics.nu", false, "m^2/s", 1e-9, 10.0, "kinematic viscosity", {c.physics.nu}});
  if (c.physics.energy)
    p.push_back({"physics.alpha", false, "m^2/s", 1e-9, 10.0, "thermal diffusivity", {c.physics.alpha}});
  for (int f = 0; f < 6; ++f) {
    const auto& b = c.boundary[static_cast<std::size_t>(f)];
    const std::string face = kFaces[f];
    if (b.type == solver::BcType::inflow || b.type == solver::BcType::moving_wall)
      p.push_back({"boundary." + face + ".velocity", true, "m/s", -1000.0, 1000.0,
                   fmt::format("velocity of the {} at {}", b.type == solver::BcType::inflow ? "inflow" : "moving wall", face),
                   {b.velocity[0], b.velocity[1], b.velocity[2]}});
    if (c.physics.energy && b.temperature_fixed)
      p.push_back({"boundary." + face + ".temperature", false, "K", -1e6, 1e6,
                   fmt::format("temperature at {}", face), {b.temperature}});
  }
  p.push_back({"output.checkpoint_interval", false, "s", 0.0, 1e12, "simulated time between checkpoints (0 = off)",
               {o.checkpoint_interval}});
  p.push_back({"output.visualisation_interval", false, "s", 0.0, 1e12,
               "simulated time between visualisation outputs (0 = off)", {o.visualisation_interval}});
  p.push_back({"time.end", false, "s", 0.0, 1e12, "simulated end time of the run", {c.time.end}});
  return p;
}

std::string steering_override(const std::vector<Parameter>& params, const std::string& name,
                              const std::vector<double>& value) {
  const auto it = std::find_if(params.begin(), params.end(), [&](const Parameter& q) { return q.name == name; });
  if (it == params.end()) {
    std::string known;
    for (const auto& q : params) known += (known.empty() ? "" : ", ") + q.name;
    throw std::invalid_argument(fmt::format("{} is not a steerable parameter of this run (steerable: {})", name, known));
  }
  const std::size_t n = it->vector ? 3 : 1;
  if (value.size() != n)
    throw std::invalid_argument(fmt::format("{} takes {}, got {} values", name, n == 3 ? "3 values [x, y, z]" : "one number",
                                            value.size()));
  for (const double v : value)
    if (!std::isfinite(v) || v < it->min || v > it->max)
      throw std::invalid_argument(fmt::format("{} = {} is outside [{:g}, {:g}] {}", name, v, it->min, it->max, it->unit));
  if (!it->vector) return fmt::format("{}={}", name, value[0]);  // shortest round trip: exact and readable
  return fmt::format("{}=[{}, {}, {}]", name, value[0], value[1], value[2]);
}

}  // namespace rwd::driver

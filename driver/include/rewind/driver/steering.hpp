// The steerable parameters of a run, declared once, as data.
//
// A parameter is a case key (the same keys as `rewind run --set`), so a change made
// while the run goes is exactly the override a branch would be given: a run steered
// with `set physics.nu=0.002` at step N equals `rewind run --restart FILE@N --set
// physics.nu=0.002`. The list below is what the collector's `parameters` reply
// carries and what the ParaView plugin builds its widgets from.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "rewind/config/run_times.hpp"

#include "rewind/collector/messages.hpp"
#include "rewind/driver/run.hpp"

namespace rwd::driver {

/// The steerable parameters of the run described by `spec`, with their current values:
/// viscosity (and thermal diffusivity with the energy equation), the velocity of every
/// inflow and moving wall, the temperature of every fixed-temperature face, the
/// checkpoint and visualisation intervals, the end time. Pure.
std::vector<collector::ParameterInfo> steerable_parameters(const RunSpec& spec);

/// `name=value` in `--set` syntax for a change, after checking it against `params`:
/// a known name, the right number of components, finite and inside the range; with `at`
/// (the run's times as it is steered: a `set`), also against them: time.end after the
/// current time, an output interval the run can honour from there
/// (config/run_times.hpp; the values together are checked again when the run applies
/// them). A branch's values are checked against its branch point when it is planned.
/// Throws std::invalid_argument with one line naming the parameter. Pure.
std::string steering_override(const std::vector<collector::ParameterInfo>& params, const std::string& name,
                              const std::vector<double>& value, const std::optional<config::RunTimes>& at = {});

}  // namespace rwd::driver

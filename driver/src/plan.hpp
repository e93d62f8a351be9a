// What run.cpp (the plan) shares with run_loop.cpp (the Run): the case re-read with
// steering's overrides. Private to rewind::driver.
#pragma once
#include <string>
#include <vector>

#include "rewind/driver/run.hpp"

namespace rwd::driver {

/// `a` followed by `b`.
std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b);

/// The solver's case and the output settings of `spec`'s case text with `overrides`
/// (Run::apply). Throws CaseError naming the key, the same on every rank.
struct SteeredCase {
  solver::SolverCase solver_case;
  OutputSettings output;
};
SteeredCase reparse(const RunSpec& spec, const std::vector<std::string>& overrides);

}  // namespace rwd::driver

// What the steering dock's Run box says of a run's status (rewind steer status, in
// words): "running at step 12 (t = 0.12), 35 steps/s, 1 rank", the file, its parent, and
// with several futures one line each. Pure text (tested offscreen in
// tests/plugin/test_parameter_form.cpp). Never throws but std::bad_alloc.
#pragma once
#include <QString>

#include "rewind/collector/messages.hpp"

namespace rwd::paraview {

[[nodiscard]] QString describe_run(const collector::RunStatus& s);

}  // namespace rwd::paraview

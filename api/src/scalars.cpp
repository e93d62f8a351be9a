// A step's named scalars through the C API (rewind.h: rewind_file_set_scalar, written
// by rewind_file_write, which agrees on them; rewind_reader_scalar_count / _scalar).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "handles.hpp"

using namespace rwd::api;

namespace {

bool scalar_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The committed step `step` of the reader's file: its scalars.
const std::vector<k::Scalar>& scalars_of(const rewind_reader& r, std::int64_t step) {
  const auto e = std::find_if(r.steps.begin(), r.steps.end(), [&](const k::StepEntry& s) { return s.step == step; });
  if (e == r.steps.end())
    throw Status(REWIND_ERR_NO_SUCH_STEP, fmt::format("{}: no committed step {}", r.reader.path(), step));
  return e->scalars;
}

}  // namespace

extern "C" {

rewind_status rewind_file_set_scalar(rewind_file* file, const char* name, double value) {
  return guarded([&] {
    auto& f = need(file, "file");
    const std::string n = text(name, "name");
    if (!scalar_name(n)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("scalar name \"{}\": letters, digits and '_' only", n));
    if (!std::isfinite(value))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("scalar {} = {}: not a finite number", n, value));
    const auto at = std::find_if(f.scalars.begin(), f.scalars.end(), [&](const k::Scalar& s) { return s.name == n; });
    if (at != f.scalars.end()) at->value = value;
    else f.scalars.push_back({n, value});
  });
}

rewind_status rewind_reader_scalar_count(rewind_reader* reader, int64_t step, int* n) {
  return guarded([&] { need(n, "n") = static_cast<int>(scalars_of(need(reader, "reader"), step).size()); });
}

rewind_status rewind_reader_scalar(rewind_reader* reader, int64_t step, int i, const char** name, double* value) {
  return guarded([&] {
    const auto& s = scalars_of(need(reader, "reader"), step);
    if (i < 0 || static_cast<std::size_t>(i) >= s.size())
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("scalar {} outside 0..{} (step {})", i, static_cast<int>(s.size()) - 1, step));
    if (name != nullptr) *name = s[static_cast<std::size_t>(i)].name.c_str();
    if (value != nullptr) *value = s[static_cast<std::size_t>(i)].value;
  });
}

}  // extern "C"

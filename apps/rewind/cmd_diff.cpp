// `rewind diff A[@STEP] B[@STEP]`: compare the cell data of two steps, grid by grid.
//
// Grids are matched by UID, so files written on different numbers of ranks compare
// correctly. Exit 0 when every common field agrees within --tol (default 0: bit for
// bit), 1 when they differ or the grids do not match, 2 on an error (a missing file or
// step, a bad option), as cmp(1) and diff(1) do. Serial and read-only.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "commands.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

struct DiffOptions {
  std::string a, b;
  double tol = 0.0;
  std::string group = "cell_data";
};

struct Side {
  k::Reader reader;
  k::StepEntry step;
};

Side open_side(const std::string& spec) {
  // FILE@STEP; the step selector is any of Reader::find_step's ("latest", "42", "#-1", "t=0.5").
  const auto [file, sel] = k::split_step_spec(spec);
  auto reader = k::Reader::open(file);
  auto step = reader.find_step(sel);
  if (const auto note = k::time_selector_note(sel, step); !note.empty())
    fmt::print(stderr, "rewind diff: note: {}: {}\n", file, note);
  return Side{std::move(reader), step};
}

int run_diff(const DiffOptions& o) {
  Side a = open_side(o.a), b = open_side(o.b);
  const auto ta = a.reader.read_topology(a.step.step);
  const auto tb = b.reader.read_topology(b.step.step);
  fmt::print("A  {} step {} (t = {:.9g}), {} grids\n", a.reader.path(), a.step.step, a.step.time, ta.n_grids);
  fmt::print("B  {} step {} (t = {:.9g}), {} grids\n", b.reader.path(), b.step.step, b.step.time, tb.n_grids);
  if (a.reader.common().block != b.reader.common().block) {
    fmt::print("differ: d-grid sizes differ\n");
    return 1;
  }
  // Rows of B in the order of A's rows, matched by UID.
  std::unordered_map<std::uint64_t, std::int64_t> row_b;
  for (std::int64_t r = 0; r < tb.n_grids; ++r) row_b.emplace(tb.uid[static_cast<std::size_t>(r)], r);
  std::vector<std::int64_t> rows_a, rows_b;
  std::int64_t only_a = 0;
  for (std::int64_t r = 0; r < ta.n_grids; ++r) {
    const auto it = row_b.find(ta.uid[static_cast<std::size_t>(r)]);
    if (it == row_b.end()) { ++only_a; continue; }
    rows_a.push_back(r);
    rows_b.push_back(it->second);
  }
  const auto only_b = tb.n_grids - static_cast<std::int64_t>(rows_b.size());
  bool same = only_a == 0 && only_b == 0;
  if (!same) fmt::print("grids: {} only in A, {} only in B; comparing the {} in both\n", only_a, only_b, rows_a.size());

  const auto fb = b.reader.fields(b.step.step);
  const std::int64_t cells = a.reader.common().block.cells();
  std::vector<double> va(static_cast<std::size_t>(cells) * rows_a.size()), vb(va.size());
  int compared = 0;
  fmt::print("\n{:<24} {:>14} {:>14} {:>12}\n", "field", "max |A-B|", "max |A|", "cells differ");
  for (const auto& f : a.reader.fields(a.step.step)) {
    if (f.group != o.group) continue;
    if (std::none_of(fb.begin(), fb.end(), [&](const k::FieldInfo& g) { return g.group == f.group && g.name == f.name; })) {
      fmt::print("{:<24} only in A\n", f.name);
      continue;
    }
    a.reader.read_rows(a.step.step, f.group, f.name, rows_a, va.data());
    b.reader.read_rows(b.step.step, f.group, f.name, rows_b, vb.data());
    double dmax = 0.0, amax = 0.0;
    std::int64_t ndiff = 0;
    for (std::size_t i = 0; i < va.size(); ++i) {
      // Bitwise comparison first, so that -0.0 vs 0.0 and NaN payloads count as different.
      const bool bits_equal = std::memcmp(&va[i], &vb[i], sizeof(double)) == 0;
      const double d = std::abs(va[i] - vb[i]);
      if (!bits_equal && !(d <= o.tol)) ++ndiff;
      if (!bits_equal) dmax = std::max(dmax, std::isnan(d) ? HUGE_VAL : d);
      amax = std::max(amax, std::abs(va[i]));
    }
    fmt::print("{:<24} {:>14.6e} {:>14.6e} {:>12}\n", f.name, dmax, amax, ndiff);
    same = same && ndiff == 0;
    ++compared;
  }
  if (compared == 0) {
    fmt::print("differ: no field of group '{}' in both steps\n", o.group);
    return 1;
  }
  fmt::print("\n{}\n", same ? (o.tol == 0.0 ? "identical: every compared value is bit-for-bit equal"
                                            : fmt::format("equal within {:g}", o.tol))
                            : "differ");
  return same ? 0 : 1;
}

const Registration reg{Command{
    "diff", "Compare the cell data of two steps grid by grid (exit 0 equal, 1 differ, 2 error)", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<DiffOptions>();
      sub.add_option("a", o->a, "FILE[@STEP]: step selector latest (default), N, #i or t=T")->required();
      sub.add_option("b", o->b, "FILE[@STEP]")->required();
      sub.add_option("--tol", o->tol, "Largest absolute difference counted as equal (default 0: bit for bit)")
          ->check(non_negative_number());
      sub.add_option("--group", o->group, "Cell-data group to compare (cell_data, previous_cell_data, ...)");
      return [o] { return run_diff(*o); };
    },
    60, 2}};

}  // namespace
}  // namespace rwd::cli

// `rewind diff A[@STEP] B[@STEP] [--time T]`: compare the cell data of two steps, grid by grid.
//
// Grids are matched by UID, so files written on different numbers of ranks compare
// correctly. By default only non-solid cells count (cell_type != 1 in both files: inside
// an obstacle the velocity is whatever the solver left there); --all-cells counts every
// cell. Per variable: max |A-B| and the cells that differ over every grid in both, and
// the L2 norm of the difference and its relative L2 (L2(A-B) / L2(A)) over the leaf
// cells (the parents are their averages), each cell weighted by its volume. `--time T`
// compares the step in force at T in each file (two branches, "futures", of one run).
// Exit 0 when every compared value agrees within --tol (default 0: bit for bit), 1 when
// they differ or the grids do not match, 2 on an error (a missing file or step, a bad
// option), as cmp(1) and diff(1) do. Serial and read-only.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "commands.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

constexpr std::uint8_t kSolid = 1;  // docs/file-format.md §9: 0 fluid, 1 solid, 2 interface

struct DiffOptions {
  std::string a, b;
  std::string time;  ///< --time T: the step in force at T in each file
  double tol = 0.0;
  std::string group = "cell_data";
  bool all_cells = false;
};

struct Side {
  k::Reader reader;
  k::StepEntry step;
  k::StepTopology topo;
};

Side open_side(const std::string& spec) {
  // FILE@STEP; the step selector is any of Reader::find_step's ("latest", "42", "#-1", "t=0.5").
  const auto [file, given] = k::split_step_spec(spec);
  const std::string sel = in_force_selector(file, given, "diff");
  auto reader = k::Reader::open(file);
  auto step = reader.find_step(sel);
  if (const auto note = k::time_selector_note(sel, step); !note.empty())
    fmt::print(stderr, "rewind diff: note: {}: {}\n", file, note);
  auto topo = reader.read_topology(step.step);
  return Side{std::move(reader), step, std::move(topo)};
}

// The rows of A and B that hold the same grid (by UID), in A's row order.
struct Matched {
  std::vector<std::int64_t> a, b;
  std::int64_t only_a = 0, only_b = 0;
};
Matched match_rows(const k::StepTopology& ta, const k::StepTopology& tb) {
  std::unordered_map<std::uint64_t, std::int64_t> row_b;
  for (std::int64_t r = 0; r < tb.n_grids; ++r) row_b.emplace(tb.uid[static_cast<std::size_t>(r)], r);
  Matched m;
  for (std::int64_t r = 0; r < ta.n_grids; ++r) {
    const auto it = row_b.find(ta.uid[static_cast<std::size_t>(r)]);
    if (it == row_b.end()) {
      ++m.only_a;
      continue;
    }
    m.a.push_back(r);
    m.b.push_back(it->second);
  }
  m.only_b = tb.n_grids - static_cast<std::int64_t>(m.b.size());
  return m;
}

bool is_leaf(const k::StepTopology& t, std::int64_t row) {
  const auto* c = t.child_rows.data() + row * t.max_children;
  return std::all_of(c, c + t.max_children, [](std::int64_t x) { return x < 0; });
}

// Per compared cell (matched row i, cell j at i * cells + j): its weight in the L2 norms,
// the volume of a leaf cell in both files, 0 for a parent's; and whether it counts at all.
struct CellSet {
  std::vector<double> weight;
  std::vector<bool> counted;
  std::int64_t n_counted = 0;
  std::string missing_types;  ///< "A", "B", "A and B": steps without cell_type (their cells all count)
};

// The step's cell types of `rows`, or empty when it has none (an optional dataset).
std::vector<std::uint8_t> cell_types(const Side& s, const std::vector<std::int64_t>& rows, std::int64_t cells) {
  std::vector<std::uint8_t> t(static_cast<std::size_t>(cells) * rows.size());
  try {
    s.reader.read_cell_types(s.step.step, rows, t.data());
  } catch (const k::FileError& e) {
    if (e.kind() != k::ErrorKind::missing_object) throw;
    t.clear();
  }
  return t;
}

CellSet cell_set(const Side& a, const Side& b, const Matched& m, bool all_cells) {
  const auto& blk = a.reader.common().block;
  const std::int64_t cells = blk.cells();
  const double n[3] = {double(blk.sx), double(blk.sy), double(blk.sz)};
  CellSet s;
  s.weight.assign(static_cast<std::size_t>(cells) * m.a.size(), 0.0);
  s.counted.assign(s.weight.size(), true);
  std::vector<std::uint8_t> ca, cb;
  if (!all_cells) {
    ca = cell_types(a, m.a, cells);
    cb = cell_types(b, m.b, cells);
    s.missing_types = ca.empty() && cb.empty() ? "A and B" : ca.empty() ? "A" : cb.empty() ? "B" : "";
  }
  for (std::size_t i = 0; i < m.a.size(); ++i) {
    double vol = 0.0;
    if (is_leaf(a.topo, m.a[i]) && is_leaf(b.topo, m.b[i])) {
      const auto& bb = a.topo.bbox[static_cast<std::size_t>(m.a[i])];
      vol = 1.0;
      for (int d = 0; d < 3; ++d) vol *= bb[2 * d + 1] > bb[2 * d] ? (bb[2 * d + 1] - bb[2 * d]) / n[d] : 1.0;
    }
    for (std::int64_t j = 0; j < cells; ++j) {
      const auto c = i * static_cast<std::size_t>(cells) + static_cast<std::size_t>(j);
      const bool solid = (!ca.empty() && ca[c] == kSolid) || (!cb.empty() && cb[c] == kSolid);
      s.counted[c] = !solid;
      s.weight[c] = solid ? 0.0 : vol;
      s.n_counted += solid ? 0 : 1;
    }
  }
  return s;
}

struct Norms {
  double max_diff = 0.0, l2_diff = 0.0, l2_a = 0.0;
  std::int64_t n_differ = 0;
};
Norms norms(const std::vector<double>& va, const std::vector<double>& vb, const CellSet& s, double tol) {
  Norms n;
  for (std::size_t i = 0; i < va.size(); ++i) {
    if (!s.counted[i]) continue;
    // Bitwise comparison first, so that -0.0 vs 0.0 and NaN payloads count as different.
    const bool bits_equal = std::memcmp(&va[i], &vb[i], sizeof(double)) == 0;
    const double d = std::abs(va[i] - vb[i]);
    if (!bits_equal && !(d <= tol)) ++n.n_differ;
    if (!bits_equal) n.max_diff = std::max(n.max_diff, std::isnan(d) ? HUGE_VAL : d);
    n.l2_diff += s.weight[i] * (bits_equal ? 0.0 : d * d);
    n.l2_a += s.weight[i] * va[i] * va[i];
  }
  n.l2_diff = std::sqrt(n.l2_diff);
  n.l2_a = std::sqrt(n.l2_a);
  return n;
}

std::string relative_text(const Norms& n) {
  if (n.l2_a > 0.0) return fmt::format("{:.6e}", n.l2_diff / n.l2_a);
  return n.l2_diff == 0.0 ? "0" : "inf (A is 0)";
}

void print_what_is_compared(const DiffOptions& o, const Matched& m, const CellSet& s, std::int64_t cells) {
  if (!o.time.empty())
    fmt::print("at t={}: the step in force in each file (the last at or before it)\n", o.time);
  const auto all = cells * static_cast<std::int64_t>(m.a.size());
  if (o.all_cells)
    fmt::print("cells       every cell of the {} grids in both, solid ones included ({} cells)\n", m.a.size(), all);
  else
    fmt::print("cells       the non-solid cells (cell_type != 1 in A and in B) of the {} grids in both: {} of {} "
               "cells{}; --all-cells counts every cell\n",
               m.a.size(), s.n_counted, all,
               s.missing_types.empty() ? "" : fmt::format(" (no cell_type in {}: all its cells count)", s.missing_types));
  fmt::print("norms       max |A-B| and cells differ over those cells; L2 = sqrt(sum of V (A-B)^2) over the leaf cells "
             "among them (V: the cell's volume), rel L2 = L2(A-B) / L2(A)\n");
}

int run_diff(const DiffOptions& o) {
  Side a = open_side(o.time.empty() ? o.a : o.a + "@t=" + o.time);
  Side b = open_side(o.time.empty() ? o.b : o.b + "@t=" + o.time);
  fmt::print("A  {} step {} (t = {:.9g}), {} grids\n", a.reader.path(), a.step.step, a.step.time, a.topo.n_grids);
  fmt::print("B  {} step {} (t = {:.9g}), {} grids\n", b.reader.path(), b.step.step, b.step.time, b.topo.n_grids);
  if (a.reader.common().block != b.reader.common().block) {
    fmt::print("differ: d-grid sizes differ\n");
    return 1;
  }
  const Matched m = match_rows(a.topo, b.topo);
  bool same = m.only_a == 0 && m.only_b == 0;
  if (!same)
    fmt::print("grids: {} only in A, {} only in B; comparing the {} in both\n", m.only_a, m.only_b, m.a.size());
  const std::int64_t cells = a.reader.common().block.cells();
  const CellSet set = cell_set(a, b, m, o.all_cells);
  print_what_is_compared(o, m, set, cells);

  const auto fb = b.reader.fields(b.step.step);
  std::vector<double> va(static_cast<std::size_t>(cells) * m.a.size()), vb(va.size());
  int compared = 0;
  fmt::print("\n{:<24} {:>14} {:>14} {:>14} {:>12}\n", "field", "max |A-B|", "L2 |A-B|", "rel L2", "cells differ");
  for (const auto& f : a.reader.fields(a.step.step)) {
    if (f.group != o.group) continue;
    if (std::none_of(fb.begin(), fb.end(), [&](const k::FieldInfo& g) { return g.group == f.group && g.name == f.name; })) {
      fmt::print("{:<24} only in A\n", f.name);
      continue;
    }
    a.reader.read_rows(a.step.step, f.group, f.name, m.a, va.data());
    b.reader.read_rows(b.step.step, f.group, f.name, m.b, vb.data());
    const Norms n = norms(va, vb, set, o.tol);
    fmt::print("{:<24} {:>14.6e} {:>14.6e} {:>14} {:>12}\n", f.name, n.max_diff, n.l2_diff, relative_text(n), n.n_differ);
    same = same && n.n_differ == 0;
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

// --time T or --time t=T (window's form), kept as T.
CLI::Validator time_value() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (v.rfind("t=", 0) == 0) v.erase(0, 2);
        std::size_t used = 0;
        double t = NAN;
        try {
          t = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        return used == v.size() && std::isfinite(t) ? "" : v + " is not a time (T or t=T, e.g. 0.5)";
      },
      "T");
}

const Registration reg{Command{
    "diff", "Compare the cell data of two steps grid by grid (exit 0 equal, 1 differ, 2 error)", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<DiffOptions>();
      sub.add_option("a", o->a, "FILE[@STEP]: step selector latest (default), N, #i or t=T")->required();
      sub.add_option("b", o->b, "FILE[@STEP]")->required();
      sub.add_option("--time", o->time,
                     "Compare the step in force at time T in each file (the last at or before T): two branches "
                     "of one run at a common time; instead of FILE@STEP")
          ->check(time_value());
      sub.add_option("--tol", o->tol, "Largest absolute difference counted as equal (default 0: bit for bit)")
          ->check(non_negative_number());
      sub.add_option("--group", o->group, "Cell-data group to compare (cell_data, previous_cell_data, ...)");
      sub.add_flag("--all-cells", o->all_cells,
                   "Count every cell, solid ones too (default: only cells that are not solid in either file)");
      return [o] {
        if (!o->time.empty() && (o->a.find('@') != std::string::npos || o->b.find('@') != std::string::npos))
          throw UsageError("give the step either as FILE@STEP or as --time, not both");
        return run_diff(*o);
      };
    },
    60, 2}};

}  // namespace
}  // namespace rwd::cli

// `rewind info FILE [--json]`: what a Rewind HDF5 file holds — steps (time, kind, grids,
// cells, bytes, committed), variables, lineage. Serial and read-only; needs no MPI.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "rewind/kernel/kernel.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

struct InfoOptions {
  std::string file;
  bool json = false;
};

std::string human_bytes(std::int64_t b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int i = 0;
  while (v >= 1024 && i < 4) {
    v /= 1024;
    ++i;
  }
  return i == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, u[i]);
}

// Leaf cells per level of a step: recorded since format 1.1, derived from the
// topology for older files.
std::vector<std::int64_t> leaf_cells(const k::Reader& r, const k::StepEntry& s) {
  const auto cells = r.common().block.cells();
  std::vector<std::int64_t> out = s.leaf_grids_per_level;
  if (out.empty() && s.committed) {
    const auto topo = r.read_topology(s.step);
    out.assign(static_cast<std::size_t>(topo.n_levels()), 0);
    for (std::int64_t row = 0; row < topo.n_grids; ++row) {
      bool leaf = true;
      for (int ch = 0; ch < topo.max_children; ++ch)
        leaf = leaf && topo.child_rows[static_cast<std::size_t>(row * topo.max_children + ch)] < 0;
      if (leaf) ++out[static_cast<std::size_t>(topo.level[static_cast<std::size_t>(row)])];
    }
  }
  for (auto& n : out) n *= cells;
  return out;
}

std::string levels_text(const std::vector<std::int64_t>& per_level) {
  std::string t;
  std::int64_t all = 0;
  for (std::size_t l = 0; l < per_level.size(); ++l) {
    if (per_level[l] == 0) continue;
    all += per_level[l];
    t += fmt::format("{}{} on level {}", t.empty() ? "" : ", ", per_level[l], l);
  }
  return fmt::format("{} leaf cells: {}", all, t);
}

// What a step holds: its cell-data variables ("u v p") and its bytes on disk, with the
// compression ratio when filters shrank its cell data ("0.41 MiB (2.9x)"). A step whose
// datasets cannot be read says so (rewind verify tells more).
struct StepData {
  std::vector<std::string> variables;
  std::int64_t on_disk = 0;
  double ratio = 1.0;
  bool readable = true;
};
StepData step_data(const k::Reader& r, const k::StepEntry& s) {
  StepData d;
  d.on_disk = s.bytes;
  try {
    const auto fields = r.fields(s.step);
    for (const auto& v : r.common().variables)  // in the file's order (u, v, w, p, T), not HDF5's
      if (std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return f.group == "cell_data" && f.name == v.name; }))
        d.variables.push_back(v.name);
    const auto st = r.cell_data_storage(s.step);
    d.on_disk = s.bytes - st.data + st.stored;
    if (st.stored > 0 && st.stored < st.data) d.ratio = static_cast<double>(st.data) / static_cast<double>(st.stored);
  } catch (const k::FileError&) {
    d.readable = false;
  }
  return d;
}

// Each variable's range over the step's non-solid cells, from its per-grid statistics
// (format 1.9) without reading a cell: {"u": [min, max], ...}; null for a step that stores
// none. A variable without statistics, or whose statistics do not read (rewind verify
// tells more), is left out; [null, null] where no grid has a non-solid cell.
nlohmann::json ranges_json(const k::Reader& r, const k::StepEntry& s, const std::vector<std::string>& variables) {
  nlohmann::json j = nlohmann::json::object();
  std::vector<std::int64_t> rows(static_cast<std::size_t>(s.n_grids));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);
  for (const auto& v : variables) {
    try {
      if (!r.has_statistics(s.step, v)) continue;
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (const auto& row : r.read_statistics_rows(s.step, v, rows))
        if (!std::isnan(row[0])) {
          lo = std::min(lo, row[0]);
          hi = std::max(hi, row[1]);
        }
      j[v] = lo <= hi ? nlohmann::json::array({lo, hi}) : nlohmann::json::array({nullptr, nullptr});
    } catch (const k::FileError&) {
    }
  }
  return j.empty() ? nlohmann::json() : j;
}

std::string size_text(const StepData& d) {
  return human_bytes(d.on_disk) + (d.ratio > 1.0 ? fmt::format(" ({:.1f}x)", d.ratio) : "");
}

// The file's variables, and those that carry nothing in a file `rewind run` wrote before
// it listed only what a case solves (2-D: w; no heat: T). Another code's T or w (the C
// API's, examples/heat-c) means what that code says.
std::string variables_text(const k::CommonInfo& c) {
  const bool solver = c.creator == "rewind run";
  std::string vars, inert;
  for (const auto& v : c.variables) {
    vars += (vars.empty() ? "" : ", ") + v.name + " [" + v.unit + "]";
    if (solver && v.name == "w" && c.dim == 2) inert += "; w is 0 (2-D)";
    if (solver && v.name == "T" && !c.fluid.contains("alpha")) inert += "; T is unused (no heat)";
  }
  return vars.empty() ? "(none)" : vars + inert + " (each step's own: the steps' table)";
}

// Who writes the file now (its claim, claim.hpp), in words; "" if no job claims it.
std::string writer_text(const std::optional<k::ClaimState>& c) {
  if (!c) return "";
  if (c->live) return "being written by " + c->record.describe();
  if (!c->checkable) return "claimed by " + c->record.describe() + "; that host cannot be checked from here";
  return "a claim left by " + c->record.describe() + ", which has ended (the next run takes it over)";
}

// Settings steered while the file was written (step attribute case_overrides): from
// which step, and what changed there.
void print_steering(const std::string& file, const std::vector<k::StepEntry>& steps) {
  std::vector<k::TimelineEntry> line;
  for (const auto& s : steps)
    if (s.committed || !s.damage.empty()) line.push_back({file, s});
  const char* lead = "steered     ";
  for (const auto& ch : k::steering_changes(line)) {
    fmt::print("{}from step {} (t={:.6g}): {}\n", lead, ch.step.step, ch.step.time, fmt::join(ch.changes, ", "));
    lead = "            ";
  }
}

// A step's named scalars (format 1.8): {"drag": 0.31, ...} in JSON, "drag = 0.31, ..." in
// text, each value as the shortest decimal that reads back to it.
nlohmann::json scalars_json(const std::vector<k::Scalar>& scalars) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& x : scalars) j[x.name] = x.value;
  return j;
}
std::string scalars_text(const std::vector<k::Scalar>& scalars) {
  std::string t;
  for (const auto& x : scalars) t += fmt::format("{}{} = {}", t.empty() ? "" : ", ", x.name, x.value);
  return t;
}

// A step of `info --json`. A damaged step's group cannot say what it holds: null, not 0
// or "visualisation".
nlohmann::json step_json(const k::Reader& r, const k::StepEntry& s, bool index_disagrees) {
  if (!s.damage.empty()) {
    const nlohmann::json unknown;
    return {{"step", s.step},
            {"time", unknown},
            {"dt", unknown},
            {"kind", unknown},
            {"grids", unknown},
            {"cells", unknown},
            {"bytes", unknown},
            {"bytes_on_disk", unknown},
            {"compression_ratio", unknown},
            {"variables", unknown},
            {"ranges", unknown},
            {"levels", unknown},
            {"leaf_cells_per_level", unknown},
            {"committed", false},
            {"case_overrides", unknown},
            {"scalars", unknown},
            {"damaged", true},
            {"damage", s.damage}};
  }
  const auto d = step_data(r, s);
  return {{"step", s.step},
          {"time", s.time},
          {"dt", s.dt},
          {"kind", k::to_string(s.kind)},
          {"grids", s.n_grids},
          {"cells", s.n_cells},
          {"bytes", s.bytes},
          {"bytes_on_disk", d.on_disk},
          {"compression_ratio", d.ratio},
          {"variables", d.variables},
          {"ranges", ranges_json(r, s, d.variables)},
          {"levels", s.n_levels},
          {"leaf_cells_per_level", leaf_cells(r, s)},
          {"committed", s.committed},
          {"case_overrides", s.case_overrides},
          {"scalars", scalars_json(s.scalars)},
          {"damaged", index_disagrees}};
}

// What every part of `info` looks at, read once.
struct Info {
  const InfoOptions& o;
  k::Reader r;
  std::vector<k::StepEntry> steps;
  std::vector<k::LineageNode> chain;
  std::vector<k::Reader::IndexProblem> index_problems;
  std::string writer;
  // A step the index lists but whose group HDF5 cannot read reads as uncommitted: it is damaged.
  [[nodiscard]] bool damaged(std::int64_t step) const {
    return std::any_of(index_problems.begin(), index_problems.end(), [&](const auto& p) { return p.step == step; });
  }
};

void print_json(const Info& in) {
  const auto& c = in.r.common();
  const auto [major, minor] = in.r.format_version();
  nlohmann::json j;
  j["file"] = in.o.file;
  j["format"] = {{"name", k::kFormatName}, {"version", {major, minor}}};
  j["code_version"] = c.code_version;
  j["block_cells"] = {c.block.sx, c.block.sy, c.block.sz};
  j["refinement"] = c.refinement;
  j["dim"] = c.dim;
  j["domain"] = c.domain;
  j["time_stepping"] = c.time_stepping;
  j["fluid"] = c.fluid;
  j["variables"] = nlohmann::json::array();
  for (const auto& v : c.variables) j["variables"].push_back({{"name", v.name}, {"unit", v.unit}});
  j["lineage"] = {{"parent_file", c.lineage.parent_file}, {"parent_file_absolute", c.lineage.parent_file_absolute},
                  {"parent_step", c.lineage.parent_step},
                  {"parent_time", c.lineage.parent_time}, {"changes", c.lineage.changes}};
  j["lineage"]["chain"] = nlohmann::json::array();
  for (const auto& n : in.chain)
    j["lineage"]["chain"].push_back({{"path", n.path}, {"parent_step", n.lineage.parent_step}, {"error", n.error}});
  j["writer"] = in.writer;
  j["bytes_missing"] = in.r.bytes_missing();
  j["steps"] = nlohmann::json::array();
  for (const auto& s : in.steps) j["steps"].push_back(step_json(in.r, s, in.damaged(s.step)));
  fmt::print("{}\n", j.dump(2));
}

// The file's constants and where it comes from.
void print_header(const Info& in) {
  const auto& c = in.r.common();
  const auto [major, minor] = in.r.format_version();
  fmt::print("file        {}\n", in.o.file);
  fmt::print("format      {} {}.{} (written by {})\n", k::kFormatName, major, minor, c.code_version);
  fmt::print("grids       {}x{}x{} cells each, refinement {}, {}-D\n", c.block.sx, c.block.sy, c.block.sz,
             c.refinement, c.dim);
  fmt::print("variables   {}\n", variables_text(c));
  if (!c.lineage.is_branch()) {
    fmt::print("lineage     original run\n");
    return;
  }
  std::string ch;
  for (const auto& x : c.lineage.changes) ch += " " + x;
  fmt::print("lineage     branch of {} at step {} (t={:.6g}); changed:{}\n", c.lineage.parent_file,
             c.lineage.parent_step, c.lineage.parent_time, ch.empty() ? " (nothing)" : ch);
  for (std::size_t i = 1; i < in.chain.size(); ++i)
    fmt::print("            {}<- {}{}\n", std::string(2 * i, ' '), in.chain[i].path,
               in.chain[i].error.empty() ? "" : "  [" + in.chain[i].error + "]");
}

// The tree at a glance: the last committed step's, and whether any step differs.
void print_tree(const Info& in) {
  const k::StepEntry* last = nullptr;
  for (const auto& s : in.steps)
    if (s.committed) last = &s;
  if (!last) return;
  const auto tree = leaf_cells(in.r, *last);
  bool same = true;
  for (const auto& s : in.steps)
    if (s.committed && !s.leaf_grids_per_level.empty() && !last->leaf_grids_per_level.empty())
      same = same && s.leaf_grids_per_level == last->leaf_grids_per_level;
  fmt::print("tree        {}{}\n", levels_text(tree), same ? "" : " (at the last step; the tree changes between steps)");
}

// How many steps, and what a reader may make of them.
void print_step_summary(const Info& in) {
  std::size_t committed = 0, damaged_steps = 0;
  for (const auto& s : in.steps) {
    committed += s.committed ? 1 : 0;
    damaged_steps += s.damage.empty() ? 0 : 1;
  }
  if (const auto missing = in.r.bytes_missing(); missing > 0)
    fmt::print("truncated   {} byte{} short of its end (a copy cut short, or a writer killed as the file grew): the "
               "steps that reach into it are damaged (rewind verify names them), the others read as ever\n",
               missing, missing == 1 ? "" : "s");
  fmt::print("steps       {} committed, {} uncommitted{}\n", committed, in.steps.size() - committed - damaged_steps,
             damaged_steps > 0 ? fmt::format(", {} DAMAGED (committed, but cannot be read)", damaged_steps) : "");
  if (committed == 0 && damaged_steps == 0)
    fmt::print("note        no committed step: {}; nothing to restart from, and a run or branch may write over it\n",
               in.r.common().lineage.is_branch() ? "a branch whose job ended before the branch's first step was written"
                                                 : "a run that ended before its first step was written");
}

// The steps' table: a row per step, and under a step with named scalars, a line of them.
void print_steps_table(const Info& in) {
  if (!in.steps.empty())
    fmt::print("  {:>10}  {:>14}  {:<13}  {:>8}  {:>12}  {:>17}  {:<12}  {}\n", "step", "time", "kind", "grids", "cells",
               "on disk", "variables", "committed");
  for (const auto& s : in.steps) {
    if (!s.damage.empty()) {
      fmt::print("  {:>10}  {:>14}  {:<13}  {:>8}  {:>12}  {:>17}  {:<12}  DAMAGED: {} (see rewind verify)\n", s.step,
                 "?", "?", "?", "?", "?", "?", s.damage);
      continue;
    }
    const auto d = step_data(in.r, s);
    fmt::print("  {:>10}  {:>14.6g}  {:<13}  {:>8}  {:>12}  {:>17}  {:<12}  {}\n", s.step, s.time, k::to_string(s.kind),
               s.n_grids, s.n_cells, size_text(d),
               d.readable ? fmt::format("{}", fmt::join(d.variables, " ")) : "(unreadable)",
               in.damaged(s.step) ? "DAMAGED (see rewind verify)" : s.committed ? "yes" : "NO (ignored by restart)");
    if (!s.scalars.empty()) fmt::print("  {:>10}  scalars: {}\n", "", scalars_text(s.scalars));
  }
  if (!in.index_problems.empty())
    fmt::print("damaged     the step index and the steps disagree ({}): rewind verify {}\n",
               in.index_problems.front().problem, in.o.file);
}

int run_info(const InfoOptions& o) {
  k::Reader r = k::Reader::open(o.file);
  auto steps = r.steps(false);
  auto problems = r.check_index();
  Info in{o, std::move(r), std::move(steps), k::lineage_chain(o.file), std::move(problems),
          writer_text(k::read_claim(o.file))};
  if (o.json) {
    print_json(in);
    return 0;
  }
  print_header(in);
  print_tree(in);
  print_steering(o.file, in.steps);
  if (!in.writer.empty()) fmt::print("writer      {}\n", in.writer);
  print_step_summary(in);
  print_steps_table(in);
  return 0;
}

const Registration reg{Command{
    "info", "List the steps, variables and lineage of a Rewind HDF5 file", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<InfoOptions>();
      sub.add_option("file", o->file, "Rewind HDF5 file")->required();
      sub.add_flag("--json", o->json,
                   "Print machine-readable JSON (per step also \"ranges\": each variable's [min, max] over the "
                   "non-solid cells, from the per-grid statistics without reading a cell; null without them)");
      return [o] { return run_info(*o); };
    },
    40}};

}  // namespace
}  // namespace rwd::cli

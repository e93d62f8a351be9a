#include "rewind/driver/restart.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "restart_rows.hpp"

namespace rwd::driver {

namespace k = rwd::kernel;
namespace st = rwd::spacetree;

RestartPoint find_restart_point(const std::string& spec) { return find_restart_point(spec, std::nullopt); }

RestartPoint find_restart_point(const std::string& spec, const std::optional<PendingCheckpoint>& pending) {
  RestartPoint rp;
  std::string sel;
  std::tie(rp.file, sel) = k::split_step_spec(spec);
  const auto reader = k::Reader::open(rp.file);
  auto steps = reader.selectable_steps();  // damaged ones among them: no choice passes over one
  if (pending && same_file(pending->file, rp.file) && (steps.empty() || pending->step.step > steps.back().step))
    steps.push_back(pending->step);
  if (steps.empty()) {
    const auto& l = reader.common().lineage;
    throw std::runtime_error(
        l.is_branch()
            ? fmt::format("{}: no committed step to restart from: it is a branch of {} at step {} whose job ended "
                          "before the branch's first step was written; branch from {}@{} again (a new branch may "
                          "take this file's name)",
                          rp.file, l.parent_file, l.parent_step, l.parent_file, l.parent_step)
            : fmt::format("{}: no committed step to restart from: its run ended before its first step was written; "
                          "run the case again (the file holds nothing, --force is not needed)",
                          rp.file));
  }
  rp.last_committed = steps.back().step;
  for (const auto& e : steps) {
    if (e.kind == k::StepKind::checkpoint && e.damage.empty()) rp.last_checkpoint = e.step;
    if (!e.damage.empty() && !rp.damaged) rp.damaged = e;
  }
  try {  // the one rule of a restart's checkpoint (kernel/src/read/select.cpp), the C API's too
    rp.step = k::select_checkpoint(steps, sel, rp.file, &rp.note);
  } catch (const k::FileError& e) {
    if (e.kind() == k::ErrorKind::no_such_step && sel != "latest" && sel.rfind("t=", 0) != 0)
      (void)reader.find_step(sel);  // says so if the step is damaged
    throw;
  }
  rp.case_text = reader.common().case_text;
  rp.steered = rp.step.case_overrides;
  if (rp.case_text.empty())
    throw std::runtime_error(fmt::format("{}: the file stores no case; it was not written by `rewind run`", rp.file));
  return rp;
}

st::Tree restart_tree(const RestartPoint& rp, const config::TreeCase& tree_case) {
  const auto reader = k::Reader::open(rp.file);
  const auto topo = reader.read_topology(rp.step.step);
  std::vector<st::Uid> uids;
  uids.reserve(topo.uid.size());
  for (const auto u : topo.uid) uids.push_back(st::Uid::from_raw(u));
  if (rp.refine) {
    auto tree = config::build_tree(tree_case);
    std::int64_t lost = 0;
    int deepest = 0;
    for (const auto u : uids)
      if (!tree.contains(u)) ++lost, deepest = std::max(deepest, u.level());
    if (lost > 0)
      throw std::runtime_error(fmt::format(
          "{}: step {}: the case's tree lacks {} of the stored grids (down to level {}): a restart refines the "
          "stored tree, never coarsens it; keep the stored [[tree.refine]] regions and depths and add to them",
          rp.file, rp.step.step, lost, deepest));
    return tree;
  }
  try {
    return st::Tree::from_uids(tree_case.shape, std::move(uids));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: step {}: {}", rp.file, rp.step.step, e.what()));
  }
}

namespace {
// The grids a refinement added (row -1) from their parents, level by level from the top:
// a parent's halo first, then forest::Interp::linear (conservative, second order) into
// every child of the level, then the stored children's own values back.
void interpolate_added_grids(forest::Forest& forest, const std::vector<std::int64_t>& rows,
                             const std::vector<int>& vars, MPI_Comm comm) {
  int deepest = 0;
  for (std::size_t g = 0; g < forest.size(); ++g) deepest = std::max(deepest, forest.grid(g).level());
  int levels = 0;
  MPI_Allreduce(&deepest, &levels, 1, MPI_INT, MPI_MAX, comm);
  std::vector<double> kept;
  for (int level = 1; level <= levels; ++level) {
    kept.clear();
    for (std::size_t g = 0; g < forest.size(); ++g)
      if (forest.grid(g).level() == level && rows[g] >= 0)
        for (const int v : vars) kept.insert(kept.end(), forest.data(g, v), forest.data(g, v) + forest.block_size());
    forest.exchange_halos(vars, level - 1, forest::Interp::linear);
    forest.prolong_level(vars, level, forest::ProlongMode::assign, forest::Interp::linear);
    std::size_t at = 0;
    for (std::size_t g = 0; g < forest.size(); ++g)
      if (forest.grid(g).level() == level && rows[g] >= 0)
        for (const int v : vars) {
          std::copy_n(kept.begin() + static_cast<std::ptrdiff_t>(at), forest.block_size(), forest.data(g, v));
          at += forest.block_size();
        }
  }
}
}  // namespace

void restore_solver(solver::Solver& s, const RestartPoint& rp, MPI_Comm comm) {
  restore_solver_fields(s, rp, comm);
  s.restore(solver::ScalarState{rp.step.time, rp.step.step, rp.step.dt, rp.step.monitor_state});
}

std::vector<std::int64_t> rows_of_grids(const forest::Forest& forest, const std::vector<solver::Variable>& solved,
                                        const RestartPoint& rp, const k::Reader& reader, const k::StepTopology& topo,
                                        MPI_Comm comm) {
  std::unordered_map<std::uint64_t, std::int64_t> row_of;
  for (std::int64_t r = 0; r < topo.n_grids; ++r) row_of.emplace(topo.uid[static_cast<std::size_t>(r)], r);
  std::vector<std::int64_t> rows;
  std::int64_t missing = 0;
  for (std::size_t g = 0; g < forest.size(); ++g) {
    const auto it = row_of.find(forest.grid(g).uid.raw());
    if (it != row_of.end()) rows.push_back(it->second);
    else if (rp.refine) rows.push_back(-1);  // added by the refinement: interpolated
    else ++missing;
  }
  // Agree before the collective reads, so that no rank is left inside one.
  std::int64_t missing_all = 0;
  MPI_Allreduce(&missing, &missing_all, 1, MPI_INT64_T, MPI_SUM, comm);
  if (missing_all > 0)
    throw std::runtime_error(fmt::format("{}: step {}: {} grids of the rebuilt tree are not in the file", rp.file,
                                         rp.step.step, missing_all));
  const auto& sh = forest.shape();
  const k::BlockShape block{sh.s[0], sh.s[1], sh.s[2]};
  if (reader.common().block != block)
    throw std::runtime_error(fmt::format("{}: d-grid size {}x{}x{} does not match the case's", rp.file,
                                         reader.common().block.sx, reader.common().block.sy, reader.common().block.sz));
  const auto stored = reader.fields(rp.step.step);
  for (const auto& f : solved)
    if (std::none_of(stored.begin(), stored.end(),
                     [&](const auto& x) { return x.group == "cell_data" && x.name == f.name; }))
      throw std::runtime_error(fmt::format("{}: step {} holds no {}: its run did not solve it ({})", rp.file,
                                           rp.step.step, f.name, f.var == solver::kW ? "2-D" : "no heat"));
  return rows;
}

void restore_solver_fields(solver::Solver& s, const RestartPoint& rp, MPI_Comm comm) {
  auto& forest = s.forest();
  const auto reader = k::Reader::open(rp.file, comm);
  const auto topo = reader.read_topology(rp.step.step);
  const auto solved = solver::solved_fields(s.config());
  const auto rows = rows_of_grids(forest, solved, rp, reader, topo, comm);
  // Every field the case solves straight into the grids' halo'd arrays (no buffer, no
  // unpack); the others (w in 2-D, T without heat) stay 0, as in the run that wrote them.
  std::vector<k::Reader::FieldRef> fields;
  std::vector<std::vector<double*>> arrays;
  std::vector<std::int64_t> stored_rows;
  std::vector<int> vars;
  for (std::size_t g = 0; g < forest.size(); ++g)
    if (rows[g] >= 0) stored_rows.push_back(rows[g]);
  for (const auto& f : solved) {
    fields.push_back({"cell_data", f.name});
    vars.push_back(f.var);
    arrays.emplace_back();
    for (std::size_t g = 0; g < forest.size(); ++g)
      if (rows[g] >= 0) arrays.back().push_back(forest.data(g, f.var));
  }
  reader.read_fields_into(rp.step.step, fields, stored_rows, arrays, 1);
  if (rp.refine) interpolate_added_grids(forest, rows, vars, comm);
}

std::string branch_name(const std::string& parent, std::int64_t step) { return branch_name(parent, step, {}); }

std::string branch_name(const std::string& parent, std::int64_t step, const std::vector<std::string>& taken) {
  namespace fs = std::filesystem;
  const fs::path p(parent);
  for (int n = 1;; ++n) {
    const std::string suffix = n == 1 ? "" : fmt::format("-{}", n);
    fs::path candidate = p.parent_path() / fmt::format("{}.branch{}{}.h5", p.stem().string(), step, suffix);
    if (std::find(taken.begin(), taken.end(), candidate.string()) != taken.end()) continue;
    if (!fs::exists(candidate) || empty_leftover(candidate.string())) return candidate.string();
  }
}

bool empty_leftover(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file)) return false;
  try {
    // Zero bytes: made by a claim (FileClaim::take) whose job ended before its writer began.
    // A damaged step is not nothing.
    if (std::filesystem::file_size(file, ec) != 0 && !k::Reader::open(file).selectable_steps().empty()) return false;
  } catch (const k::FileError&) {
    return false;  // unreadable: not known to be empty
  }
  const auto claim = k::read_claim(file);
  return !claim || claim->ours || (claim->checkable && !claim->live);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) ||
         std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}

namespace {
// The key table's restart policy of an override's key (of a whole table or array: the
// strictest of its keys); an unknown key counts as a change (the case parser names it first).
config::OnRestart on_restart(const std::string& kv) { return config::on_restart_of(kv.substr(0, kv.find('='))); }
}  // namespace

void refuse_tree_overrides(const std::vector<std::string>& overrides, bool refine_allowed) {
  for (const auto& kv : overrides) {
    const auto policy = on_restart(kv);
    if (policy == config::OnRestart::fixed)
      throw std::runtime_error(fmt::format(
          "--set {}: a restart continues on the grids stored in the file; the tree cannot change", kv));
    if (policy == config::OnRestart::refines && !refine_allowed)
      throw std::runtime_error(fmt::format(
          "--set {}: a job's branches and steering share its grids; a refined tree needs a restart of its own "
          "(rewind run --restart FILE@STEP --set ...)",
          kv));
  }
}

bool refines_tree(const std::string& override_kv) { return on_restart(override_kv) == config::OnRestart::refines; }

std::vector<std::string> changing_overrides(const std::vector<std::string>& overrides) {
  std::vector<std::string> changes;
  for (const auto& kv : overrides)
    if (on_restart(kv) != config::OnRestart::extends) changes.push_back(kv);
  return changes;
}

}  // namespace rwd::driver

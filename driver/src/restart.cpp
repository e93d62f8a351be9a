#include "rewind/driver/restart.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace rwd::driver {

namespace k = rwd::kernel;
namespace st = rwd::spacetree;

RestartPoint find_restart_point(const std::string& spec) { return find_restart_point(spec, std::nullopt); }

RestartPoint find_restart_point(const std::string& spec, const std::optional<PendingCheckpoint>& pending) {
  RestartPoint rp;
  std::string sel;
  std::tie(rp.file, sel) = k::split_step_spec(spec);
  const auto reader = k::Reader::open(rp.file);
  auto steps = reader.steps(/*committed_only=*/true);
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
  for (const auto& e : steps)
    if (e.kind == k::StepKind::checkpoint) rp.last_checkpoint = e.step;
  if (sel == "latest") {
    const auto it = std::find_if(steps.rbegin(), steps.rend(),
                                 [](const k::StepEntry& e) { return e.kind == k::StepKind::checkpoint; });
    if (it == steps.rend()) throw std::runtime_error(fmt::format("{}: no committed checkpoint to restart from", rp.file));
    rp.step = *it;
  } else if (sel.rfind("t=", 0) == 0) {
    // The step in force at T, then the last checkpoint at or before it.
    const auto in_force = k::select_step(steps, sel, rp.file);
    const auto it = std::find_if(steps.rbegin(), steps.rend(), [&](const k::StepEntry& e) {
      return e.kind == k::StepKind::checkpoint && e.time <= in_force.time;
    });
    if (it == steps.rend())
      throw std::runtime_error(fmt::format("{}: no checkpoint at or before {} to restart from", rp.file, sel));
    rp.step = *it;
    rp.note = k::time_selector_note(sel, rp.step);
    if (rp.step.step != in_force.step)
      rp.note = fmt::format("{}: step {} (t = {:.6g}) is a visualisation output; restarting from the last checkpoint "
                            "at or before it, step {} (t = {:.6g})",
                            sel, in_force.step, in_force.time, rp.step.step, rp.step.time);
  } else {
    try {
      rp.step = k::select_step(steps, sel, rp.file);
    } catch (const k::FileError& e) {
      if (e.kind() == k::ErrorKind::no_such_step) (void)reader.find_step(sel);  // says so if the step is damaged
      throw;
    }
    if (rp.step.kind != k::StepKind::checkpoint) {
      std::vector<std::string> cps;
      for (const auto& e : steps)
        if (e.kind == k::StepKind::checkpoint) cps.push_back(fmt::format("{} (t={:.6g})", e.step, e.time));
      throw std::runtime_error(fmt::format(
          "{}: step {} is a visualisation output; a restart needs a checkpoint (checkpoints: {})", rp.file,
          rp.step.step, cps.empty() ? std::string("none") : fmt::format("{}", fmt::join(cps, ", "))));
    }
  }
  rp.case_text = reader.common().case_text;
  rp.steered = rp.step.case_overrides;
  if (rp.case_text.empty())
    throw std::runtime_error(fmt::format("{}: the file stores no case; it was not written by `rewind run`", rp.file));
  return rp;
}

st::Tree restart_tree(const RestartPoint& rp, const st::TreeShape& shape) {
  const auto reader = k::Reader::open(rp.file);
  const auto topo = reader.read_topology(rp.step.step);
  std::vector<st::Uid> uids;
  uids.reserve(topo.uid.size());
  for (const auto u : topo.uid) uids.push_back(st::Uid::from_raw(u));
  try {
    return st::Tree::from_uids(shape, std::move(uids));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: step {}: {}", rp.file, rp.step.step, e.what()));
  }
}

void restore_solver(solver::Solver& s, const RestartPoint& rp, MPI_Comm comm) {
  auto& forest = s.forest();
  const auto reader = k::Reader::open(rp.file, comm);
  const auto topo = reader.read_topology(rp.step.step);
  std::unordered_map<std::uint64_t, std::int64_t> row_of;
  for (std::int64_t r = 0; r < topo.n_grids; ++r) row_of.emplace(topo.uid[static_cast<std::size_t>(r)], r);
  std::vector<std::int64_t> rows;
  std::int64_t missing = 0;
  for (std::size_t g = 0; g < forest.size(); ++g) {
    const auto it = row_of.find(forest.grid(g).uid.raw());
    if (it == row_of.end()) ++missing;
    else rows.push_back(it->second);
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
  // Every state field straight into the grids' halo'd arrays (no buffer, no unpack).
  std::vector<k::Reader::FieldRef> fields;
  std::vector<std::vector<double*>> arrays;
  for (const auto& f : solver::state_fields()) {
    fields.push_back({"cell_data", f.name});
    arrays.emplace_back();
    for (std::size_t g = 0; g < forest.size(); ++g) arrays.back().push_back(forest.data(g, f.var));
  }
  reader.read_fields_into(rp.step.step, fields, rows, arrays, 1);
  s.restore(solver::ScalarState{rp.step.time, rp.step.step, rp.step.dt, rp.step.monitor_state});
}

std::string branch_name(const std::string& parent, std::int64_t step) {
  namespace fs = std::filesystem;
  const fs::path p(parent);
  for (int n = 1;; ++n) {
    const std::string suffix = n == 1 ? "" : fmt::format("-{}", n);
    fs::path candidate = p.parent_path() / fmt::format("{}.branch{}{}.h5", p.stem().string(), step, suffix);
    if (!fs::exists(candidate) || empty_leftover(candidate.string())) return candidate.string();
  }
}

bool empty_leftover(const std::string& file) {
  if (!std::filesystem::exists(file)) return false;
  try {
    if (!k::Reader::open(file).steps(true).empty()) return false;
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
// The key table's restart policy of an override's key; an unknown key counts as a
// change (the case parser names it first).
config::OnRestart on_restart(const std::string& kv) {
  const auto* row = config::find_case_key(kv.substr(0, kv.find('=')));
  return row ? row->on_restart : config::OnRestart::branches;
}
}  // namespace

void refuse_tree_overrides(const std::vector<std::string>& overrides) {
  for (const auto& kv : overrides)
    if (on_restart(kv) == config::OnRestart::fixed)
      throw std::runtime_error(fmt::format(
          "--set {}: a restart continues on the grids stored in the file; the tree cannot change", kv));
}

std::vector<std::string> changing_overrides(const std::vector<std::string>& overrides) {
  std::vector<std::string> changes;
  for (const auto& kv : overrides)
    if (on_restart(kv) != config::OnRestart::extends) changes.push_back(kv);
  return changes;
}

}  // namespace rwd::driver

#include "rewind/driver/run.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "rewind/config/run_times.hpp"
#include "plan.hpp"

namespace rwd::driver {

namespace {

struct ParsedCase {
  solver::SolverCase solver_case;
  OutputSettings output;
  InsituSettings insitu;
  std::string effective_text;
  std::string case_name;
};

ParsedCase parse_case(const std::string& text, const std::string& source, const std::vector<std::string>& overrides,
                      const std::function<void(config::CaseDocument&)>& check_case) {
  auto doc = config::CaseDocument::parse(text, source, overrides);
  ParsedCase p;
  if (check_case) check_case(doc);
  p.solver_case = solver::parse_solver_case(doc);
  p.output = parse_output_settings(doc, p.solver_case);
  p.insitu = parse_insitu_settings(doc);
  config::check_run_times(doc);  // the times relative to each other, every key read
  p.case_name = doc.get_string("case.name");
  if (check_case) doc.reject_unknown();
  p.effective_text = doc.effective_text();
  return p;
}


// A run from a stored step at t0 (a restart, a branch) must have time left to run.
void refuse_end_before(double end, double t0) {
  if (end <= t0 * (1 + 1e-12))
    throw std::runtime_error(
        fmt::format("time.end = {:g} is not after the restart step's time (t = {:g}): nothing to run; give a later "
                    "--set time.end=...",
                    end, t0));
}

std::string beside(const std::string& file, const char* ext) {
  return std::filesystem::path(file).replace_extension(ext).string();
}

// A branch file: lineage from the parent, never overwriting the parent.
void make_branch(RunSpec& spec, const RestartPoint& rp, const std::vector<std::string>& changes) {
  const auto parent = kernel::Reader::open(rp.file);
  spec.common.lineage = kernel::make_branch_common(parent, rp.step, changes).lineage;
}

// What plan_run (or, `in_job`, plan_branch) requires of the output file; made again
// under the file's claim (claim_output). Adds a note when the run writes over an empty
// leftover (spec.notes).
void check_output(RunSpec& spec, const RunRequest& o, bool in_job) {
  const auto& file = spec.output.file;
  // A file another process claims: its claim decides (claim_output refuses naming the
  // writer; or that process is this job's claiming rank, which checks again under it).
  if (file.empty() || kernel::claimed_elsewhere(file)) return;
  if (spec.mode == RunOutput::Mode::create && std::filesystem::exists(file)) {
    if (spec.restart && same_file(file, spec.restart->file))
      throw std::runtime_error(fmt::format("{}: a branch never overwrites its parent, not even with --force", file));
    if (empty_leftover(file)) {
      spec.notes.push_back(fmt::format("{} has no committed step (its job ended before writing one): writing over it",
                                       file));
    } else if (kernel::claimed_elsewhere(file)) {
      // Claimed since the first look (a rank of this job reading the record while its
      // claiming rank rewrote it): the claim decides, as above.
      return;
    } else if (in_job) {
      throw std::runtime_error(fmt::format("{} exists; a branch never overwrites a file", file));
    } else if (!o.force) {
      throw std::runtime_error(fmt::format("{} exists; use --force to overwrite it (or --output another file)", file));
    } else {
      // Overwriting a parent would leave its branches pointing at steps that are gone.
      const auto dir = std::filesystem::path(file).parent_path().string();
      const auto branches = kernel::find_branches(file, dir.empty() ? "." : dir);
      if (!branches.empty() && !o.orphan_branches)
        throw std::runtime_error(fmt::format(
            "{} has branches ({}); overwriting it would orphan them: choose another file, or add --orphan-branches",
            file, fmt::join(branches, ", ")));
    }
  }
  if (!in_job && !spec.monitor_append && !spec.monitor_file.empty() && std::filesystem::exists(spec.monitor_file) &&
      !o.force && !empty_leftover(file))
    throw std::runtime_error(fmt::format("monitor file {} exists; use --force to overwrite it (or --monitor another file)",
                                         spec.monitor_file));
}

// Where the run's case comes from: the case file, or a restart's file (its stored case,
// the overrides steered into it first); sets spec.restart, case_text, case_source and
// overrides.
void load_case(RunSpec& spec, const RunRequest& o) {
  if (!o.restart.empty()) {
    if (!o.case_file.empty())
      throw std::runtime_error("give a case file or --restart, not both: a restart runs the case stored in the file");
    spec.restart = find_restart_point(o.restart);
    spec.case_text = spec.restart->case_text;
    spec.case_source = spec.restart->file + " (its stored case)";
    spec.overrides = concat(spec.restart->steered, o.overrides);
    return;
  }
  if (o.case_file.empty()) throw std::runtime_error("no case file given (or --restart FILE[@STEP])");
  std::ifstream in(o.case_file);
  if (!in) throw config::CaseError(fmt::format("{}: cannot open case file", o.case_file));
  std::ostringstream ss;
  ss << in.rdbuf();
  spec.case_text = ss.str();
  spec.case_source = o.case_file;
  spec.overrides = o.overrides;
}

}  // namespace

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

SteeredCase reparse(const RunSpec& spec, const std::vector<std::string>& overrides) {
  auto parsed = parse_case(spec.case_text, spec.case_source, overrides, {});
  return {std::move(parsed.solver_case), std::move(parsed.output)};
}

RunSpec plan_run(const RunRequest& o, const std::function<void(config::CaseDocument&)>& check_case) {
  RunSpec spec;
  load_case(spec, o);
  auto parsed = parse_case(spec.case_text, spec.case_source, spec.overrides, check_case);  // unknown keys first
  if (spec.restart) {
    refuse_tree_overrides(o.overrides, true);
    refuse_end_before(parsed.solver_case.time.end, spec.restart->step.time);
  }
  spec.solver_case = std::move(parsed.solver_case);
  spec.output = std::move(parsed.output);
  spec.insitu = std::move(parsed.insitu);
  spec.case_name = std::move(parsed.case_name);
  // The monitor CSV: --monitor; else beside --output (runs into different files keep
  // different monitors); else the case's monitor.file.
  spec.monitor_file = !o.monitor.empty()                     ? o.monitor
                      : !o.output.empty() && !spec.restart ? beside(o.output, ".monitor.csv")
                                                           : spec.solver_case.monitor.file;
  // A restart never takes output.file from the stored case: that names the parent's
  // own file. Its output is --output, or the same file / a branch beside it (below).
  if (!o.output.empty() || spec.restart) spec.output.file = o.output;
  spec.common = make_common(spec.solver_case, parsed.effective_text);
  if (spec.restart) {
    const auto& rp = *spec.restart;
    // Extending a run from its latest step (only the end changed) continues the same
    // file; anything else — an earlier step, changed physics or boundaries — branches.
    // What really changes: not time.end / time.max_steps, not a value equal to the one
    // the step ran with (a restart with --set nu=<the same nu> continues, unrecorded).
    std::vector<std::string> changes;
    {
      const auto before = config::CaseDocument::parse(spec.case_text, spec.case_source, rp.steered);
      const auto after = config::CaseDocument::parse(spec.case_text, spec.case_source, spec.overrides);
      for (const auto& kv : changing_overrides(o.overrides)) {
        const auto key = kv.substr(0, kv.find('='));
        if (before.value_text(key) != after.value_text(key)) changes.push_back(kv);
      }
    }
    // A deeper tree: the run goes on the case's own tree (restart_tree checks that it holds
    // every stored grid, once the memory guard has passed the case's size).
    if (std::any_of(changes.begin(), changes.end(), refines_tree)) spec.restart->refine = true;
    // From the file's last checkpoint, only visualisation steps can follow (a run killed
    // between two checkpoints): the continuation recomputes them bit-identically and
    // leaves the ones already in the file as they are (RunOutput skips them).
    const bool continues = rp.step.step == rp.last_checkpoint && changes.empty();
    const bool in_place = spec.output.file.empty() || same_file(spec.output.file, rp.file);
    // A continue would set a damaged step aside (Writer::append refuses it too): say so first.
    if (in_place && continues && rp.damaged)
      throw std::runtime_error(fmt::format(
          "{}: step {} is damaged ({}); continuing the file would set it aside: `rewind verify {}` says more; branch "
          "from step {} into a new file instead (--output NEW)",
          rp.file, rp.damaged->step, rp.damaged->damage, rp.file, rp.step.step));
    if (in_place) {
      if (!o.output.empty() && same_file(o.output, rp.file) && !continues)
        throw std::runtime_error(fmt::format(
            "--output {}: a branch never writes into its parent; choose another file", o.output));
      if (continues) {
        spec.output.file = rp.file;  // continue the same run in the same file
        spec.mode = RunOutput::Mode::append;
        // The monitor CSV the run wrote: beside its file (it was run with --output),
        // else the case's; continued if it exists, else started with its header.
        if (o.monitor.empty() && std::filesystem::exists(beside(rp.file, ".monitor.csv")))
          spec.monitor_file = beside(rp.file, ".monitor.csv");
        spec.monitor_append = o.monitor.empty() && std::filesystem::exists(spec.monitor_file);
        spec.recorded_overrides = rp.steered;  // the file's case text does not hold them
      } else {
        spec.output.file = branch_name(rp.file, rp.step.step);
      }
    }
    if (spec.mode == RunOutput::Mode::create) {
      make_branch(spec, rp, concat(rp.steered, changes));
      if (o.monitor.empty()) spec.monitor_file = beside(spec.output.file, ".monitor.csv");
    }
  }
  check_output(spec, o, false);
  return spec;
}

RunSpec plan_branch(const RestartPoint& rp, const std::vector<std::string>& changes, const std::string& output,
                    const std::vector<std::string>& taken) {
  refuse_tree_overrides(changes, false);
  RunSpec spec;
  spec.restart = rp;
  spec.case_text = rp.case_text;
  spec.case_source = rp.file + " (its stored case)";
  spec.overrides = concat(rp.steered, changes);
  auto parsed = parse_case(spec.case_text, spec.case_source, spec.overrides, {});
  refuse_end_before(parsed.solver_case.time.end, rp.step.time);
  spec.solver_case = std::move(parsed.solver_case);
  spec.output = std::move(parsed.output);
  spec.insitu = std::move(parsed.insitu);
  spec.case_name = std::move(parsed.case_name);
  spec.output.file = output.empty() ? branch_name(rp.file, rp.step.step, taken) : output;
  if (same_file(spec.output.file, rp.file))
    throw std::runtime_error(fmt::format("{}: a branch never writes into its parent", spec.output.file));
  spec.common = make_common(spec.solver_case, parsed.effective_text);
  make_branch(spec, rp, spec.overrides);
  spec.monitor_file = beside(spec.output.file, ".monitor.csv");
  check_output(spec, RunRequest{}, true);
  return spec;
}

namespace {
// A continued file must still end where the plan saw it end: another job may have
// continued it meanwhile (and ended: its claim is gone).
void check_unchanged(const RestartPoint& planned) {
  const auto now = find_restart_point(planned.file + "@" + std::to_string(planned.step.step));
  if (now.last_committed != planned.last_committed || now.last_checkpoint != planned.last_checkpoint)
    throw std::runtime_error(fmt::format(
        "{}: another job wrote to it since this run looked at it (its last committed step is now {}, was {}): "
        "start the restart again",
        planned.file, now.last_committed, planned.last_committed));
}

void bcast_string(MPI_Comm comm, int root, std::string& s) {
  int n = static_cast<int>(s.size());
  MPI_Bcast(&n, 1, MPI_INT, root, comm);
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(s.data(), n, MPI_CHAR, root, comm);
}
}  // namespace

kernel::FileClaim claim_output(const RunSpec& spec, const RunRequest& request, MPI_Comm comm, int root, bool in_job) {
  if (spec.output.file.empty()) return {};
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  kernel::FileClaim claim;
  std::string error;
  if (rank == root) {
    try {
      claim = kernel::FileClaim::take(spec.output.file, {.break_lock = request.break_lock});
      RunSpec again = spec;  // the checks may add notes; the plan's are printed already
      check_output(again, request, in_job);
      if (spec.mode == RunOutput::Mode::append && spec.restart) check_unchanged(*spec.restart);
    } catch (const std::exception& e) {
      claim.release();
      error = e.what();
      if (error.empty()) error = "could not claim " + spec.output.file;
    }
  }
  bcast_string(comm, root, error);
  if (!error.empty()) throw std::runtime_error(error);
  return claim;
}

}  // namespace rwd::driver

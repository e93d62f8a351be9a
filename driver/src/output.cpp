#include "rewind/driver/output.hpp"

#include <fmt/core.h>
#include <unistd.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <utility>

namespace rwd::driver {

namespace k = rwd::kernel;
namespace st = rwd::spacetree;

namespace {
std::vector<std::string> solved_names(const solver::SolverCase& c) {
  std::vector<std::string> out;
  for (const auto& f : solver::solved_fields(c)) out.emplace_back(f.name);
  return out;
}

const char* unit_of(const std::string& name) {
  if (name == "u" || name == "v" || name == "w") return "m/s";
  if (name == "p") return "m^2/s^2";  // kinematic pressure (p / rho)
  if (name == "T") return "K";
  return "1";
}

// Index of the interval an instant falls in; instants within 1e-6 of an interval
// boundary count as on it, because time steps land on output times only up to
// round-off.
std::int64_t interval_index(double t, double interval) {
  return static_cast<std::int64_t>(std::floor(t / interval + 1e-6));
}
}  // namespace

std::string case_io_refusal(const std::string& name) {
  if (name == "flush_on_commit") return "cannot be set in a case: without it a crash can lose every step of the file";
  if (name == "write_views") return "cannot be set in a case: `rewind run` always writes the ParaView views";
  return "";
}

std::vector<k::OptionDoc> case_io_options() {
  auto rows = k::options_table();
  std::erase_if(rows, [](const k::OptionDoc& r) { return !case_io_refusal(r.name).empty(); });
  return rows;
}

OutputSettings parse_output_settings(config::CaseDocument& doc, const solver::SolverCase& c) {
  OutputSettings o;
  // Defaults and ranges: the key table (rewind keys output).
  o.file = doc.get_string("output.file");
  o.checkpoint_interval = doc.get_double("output.checkpoint_interval");
  o.checkpoint_every = doc.get_int("output.checkpoint_every");
  o.visualisation_interval = doc.get_double("output.visualisation_interval");
  o.visualisation_every = doc.get_int("output.visualisation_every");
  o.float32 = doc.get_bool("output.float32");
  o.initial = doc.get_bool("output.initial");
  o.final = doc.get_bool("output.final");
  const auto names = solved_names(c);
  o.variables = doc.get_strings("output.variables", names);
  for (const auto& v : o.variables)
    if (std::find(names.begin(), names.end(), v) == names.end())
      throw doc.error("output.variables",
                      fmt::format("unknown variable '{}' (this case solves {}{})", v, fmt::join(names, ", "),
                                  v == "w"   ? "; w is 0 in 2-D"
                                  : v == "T" ? "; T needs physics.alpha"
                                             : ""));
  // [output.io]: MPI-IO hints and HDF5 settings by their names in the kernel's table.
  for (const auto& opt : k::options_table()) {
    const std::string key = "output.io." + opt.name;
    if (!doc.has(key)) continue;
    if (const auto why = case_io_refusal(opt.name); !why.empty()) throw doc.error(key, why);
    k::OptionValue v;
    if (opt.type == "bool") v = doc.get_bool(key);
    else if (opt.type == "int") v = doc.get_int(key);
    else if (opt.type == "number") v = doc.get_double(key);
    else v = doc.get_string(key);
    try {
      k::set_option(o.io, opt.name, v);
    } catch (const std::invalid_argument& e) {
      throw doc.error(key, e.what());
    }
  }
  // Options that only fail together (compression needs collective transfers, zfp an
  // error bound, a filter its plugin): refused here, before the run writes anything.
  if (const auto why = k::options_problem(o.io); !why.empty()) {
    const auto quote = why.find('\'');
    const auto name = why.substr(quote + 1, why.find('\'', quote + 1) - quote - 1);
    throw doc.error("output.io." + name, why);
  }
  return o;
}

k::CommonInfo make_common(const solver::SolverCase& c, const std::string& case_text) {
  const auto& sh = c.tree.shape;
  k::CommonInfo info;
  info.dim = sh.dim();
  info.block = {sh.s[0], sh.s[1], sh.s[2]};
  info.refinement = std::max({sh.r[0], sh.r[1], sh.r[2]});
  info.max_children = sh.children_per_grid();
  info.domain = spacetree::interleaved(sh.domain);
  info.time_stepping["end"] = c.time.end;
  info.time_stepping["dt"] = c.time.dt;
  info.time_stepping["safety"] = c.time.safety;
  if (std::isfinite(c.time.dt_max)) info.time_stepping["dt_max"] = c.time.dt_max;
  info.fluid["nu"] = c.physics.nu;
  if (c.physics.energy) {
    info.fluid["alpha"] = c.physics.alpha;
    info.fluid["beta"] = c.physics.beta;
    info.fluid["T_ref"] = c.physics.T_ref;
    info.fluid["heat_source"] = c.physics.heat_source;
  }
  info.fluid["gravity_x"] = c.physics.gravity[0];
  info.fluid["gravity_y"] = c.physics.gravity[1];
  info.fluid["gravity_z"] = c.physics.gravity[2];
  for (const auto& n : solved_names(c)) info.variables.push_back({n, unit_of(n)});
  info.case_text = case_text;
  info.creator = "rewind run";
  info.code_version = "rewind 0.1.0 (" + std::string(k::kKernelVersion) + ")";
  return info;
}

RunOutput::RunOutput(MPI_Comm comm, OutputSettings settings, const k::CommonInfo& common, Mode mode, bool print)
    : comm_(comm), settings_(std::move(settings)), print_(print) {
  if (settings_.file.empty()) return;
  writer_ = std::make_unique<k::Writer>(mode == Mode::create ? k::Writer::create(comm_, settings_.file, common, settings_.io, settings_.env)
                                                             : k::Writer::append(comm_, settings_.file, settings_.io, settings_.env));
  last_written_step_ = writer_->last_step();
}

RunOutput::~RunOutput() = default;

namespace {
// A failed write as the user reads it: the cause, the step, and for a full disk what to
// do (the committed steps are intact; the kernel removed the failed one).
[[noreturn]] void rethrow_write_error(const k::FileError& e, const std::string& file) {
  if (e.kind() != k::ErrorKind::no_space) throw;
  throw NoSpaceError(fmt::format("{}: {}", e.file(), e.problem()),
                     fmt::format("the file keeps its committed steps: when there is room again, "
                                 "`rewind run --restart {}` continues it",
                                 file));
}
}  // namespace

void RunOutput::close() {
  if (!writer_) return;
  const std::int64_t handed = last_written_step_;
  try {
    writer_->close();
  } catch (const k::FileError& e) {
    writer_.reset();
    rethrow_write_error(e, settings_.file);
  }
  writer_.reset();
  if (print_ && handed_off_ && handed > committed_step_) {
    fmt::print("output      step {} committed: every step handed off is in {}\n", handed, settings_.file);
    std::fflush(stdout);
  }
}

Due outputs_due(const OutputSettings& s, std::int64_t step, double time, double dt, bool first, bool last) {
  const double prev = time - dt;
  const auto crossed = [&](double interval) {
    return interval > 0.0 && !first && interval_index(time, interval) > interval_index(prev, interval);
  };
  const auto every = [&](std::int64_t n) { return n > 0 && !first && step % n == 0; };
  Due d;
  d.checkpoint = (first && s.initial) || (last && s.final) || crossed(s.checkpoint_interval) ||
                 every(s.checkpoint_every);
  d.visualisation = !d.checkpoint && (crossed(s.visualisation_interval) || every(s.visualisation_every));
  return d;
}

double next_output_time(const OutputSettings& s, double now) {
  double next = std::numeric_limits<double>::infinity();
  for (const double interval : {s.checkpoint_interval, s.visualisation_interval})
    if (interval > 0.0) next = std::min(next, static_cast<double>(interval_index(now, interval) + 1) * interval);
  return next;
}

double RunOutput::next_event_time(double now) const {
  return writer_ ? next_output_time(settings_, now) : std::numeric_limits<double>::infinity();
}

void RunOutput::after_step(solver::Solver& s, bool first, bool last) {
  const bool hook = std::exchange(hook_next_, false);
  if (!writer_) return;
  if (!prepared_) {
    // Dedicated / aggregated: the hand-off's shared memory sized for a checkpoint (the
    // largest output step; with a hook on the I/O ranks, one that goes to the hook too)
    // and touched now, at the run's setup, as a collective writer creates its file
    // there: not in the first checkpoint's time.
    prepared_ = true;
    const auto [step, grids] = describe_step(s, k::StepKind::checkpoint, hook_expected_);
    const auto consume = hook_step(s.scalar_state()).fields;
    writer_->prepare(step, grids, hook_expected_ ? &consume : nullptr);
  }
  const auto state = s.scalar_state();
  // A step already in the file (the restart point) is not written again; the hook may
  // still be due there.
  const Due due = state.step > last_written_step_
                      ? outputs_due(settings_, state.step, state.time, state.dt_prev, first, last)
                      : Due{};
  if (due.checkpoint) write(s, k::StepKind::checkpoint, hook);
  else if (due.visualisation) write(s, k::StepKind::visualisation, hook);
  else if (hook) hand_to_hook(s);
}

void RunOutput::checkpoint_now(solver::Solver& s) {
  if (writer_ && s.scalar_state().step > last_written_step_) write(s, k::StepKind::checkpoint, false);
}

void RunOutput::hand_to_hook(solver::Solver& s) {
  if (padded_types_.size() != s.forest().size()) padded_types_ = padded_cell_types(s);
  const k::StepInfo step = hook_step(s.scalar_state());
  writer_->hand_off(step, describe_grids(s, solver::state_fields(), padded_types_), false, step.fields);
}

void RunOutput::set_intervals(const OutputSettings& o) {
  settings_.checkpoint_interval = o.checkpoint_interval;
  settings_.checkpoint_every = o.checkpoint_every;
  settings_.visualisation_interval = o.visualisation_interval;
  settings_.visualisation_every = o.visualisation_every;
}

std::vector<std::vector<std::uint8_t>> padded_cell_types(solver::Solver& s) {
  // Cell types are static: callers pad them once, with the fields' one-cell halo.
  const auto& forest = s.forest();
  const auto& sh = forest.shape();
  std::vector<std::vector<std::uint8_t>> out(forest.size(), std::vector<std::uint8_t>(forest.block_size(), 0));
  for (std::size_t g = 0; g < forest.size(); ++g) {
    const auto types = s.cell_types(g);
    std::size_t q = 0;
    for (int kz = 0; kz < sh.s[2]; ++kz)
      for (int j = 0; j < sh.s[1]; ++j)
        for (int i = 0; i < sh.s[0]; ++i) out[g][static_cast<std::size_t>(forest.index(i, j, kz))] = types[q++];
  }
  return out;
}

k::LocalGrids describe_grids(solver::Solver& s, const std::vector<solver::Variable>& fields,
                             const std::vector<std::vector<std::uint8_t>>& padded_types) {
  s.sync_coarse_levels();  // the parents are handed over too: they must show this step
  return describe_grids_as_they_are(s, fields, padded_types);
}

k::LocalGrids describe_grids_as_they_are(solver::Solver& s, const std::vector<solver::Variable>& fields,
                                         const std::vector<std::vector<std::uint8_t>>& padded_types) {
  auto& forest = s.forest();
  const auto& sh = forest.shape();
  k::LocalGrids grids;
  grids.block = {sh.s[0], sh.s[1], sh.s[2]};
  grids.halo = kGridHalo;
  grids.grids.reserve(forest.size());
  for (std::size_t g = 0; g < forest.size(); ++g) {
    const auto& info = forest.grid(g);
    k::GridRecord rec;
    rec.uid = info.uid.raw();
    rec.level = info.level();
    rec.sort_key = info.uid.morton();
    rec.bbox = spacetree::interleaved(info.box);
    rec.parent_uid = info.family.parent.raw();
    for (const auto& c : info.family.children) rec.child_uids.push_back(c.raw());
    for (const auto& f : fields) rec.fields.push_back(forest.data(g, f.var));
    rec.cell_type = padded_types.size() == forest.size() ? padded_types[g].data() : nullptr;
    grids.grids.push_back(std::move(rec));
  }
  return grids;
}

k::StepInfo hook_step(const solver::ScalarState& state) {
  k::StepInfo step;
  step.step = state.step;
  step.time = state.time;
  step.dt = state.dt_prev;
  const auto fields = solver::state_fields();
  for (std::size_t i = 0; i < fields.size(); ++i) step.fields.push_back({"cell_data", fields[i].name, static_cast<int>(i)});
  return step;
}

std::pair<k::StepInfo, k::LocalGrids> RunOutput::describe_step(solver::Solver& s, k::StepKind kind, bool hook) {
  const auto state = s.scalar_state();
  if (padded_types_.size() != s.forest().size()) padded_types_ = padded_cell_types(s);
  std::vector<solver::Variable> fields;
  const auto all = solver::state_fields();
  if (kind == k::StepKind::checkpoint) {
    fields = solver::solved_fields(s.config());
  } else {
    for (const auto& name : settings_.variables)
      fields.push_back(*std::find_if(all.begin(), all.end(), [&](const solver::Variable& f) { return name == f.name; }));
  }
  // With the hook the grids carry every state field (its slots: hook_step), and the
  // written ones are picked from them by slot: one hand-off serves both.
  k::LocalGrids grids = describe_grids(s, hook ? all : fields, padded_types_);
  k::StepInfo step;
  step.step = state.step;
  step.time = state.time;
  step.dt = state.dt_prev;  // the solver needs it back on restart (face velocities)
  step.kind = kind;
  step.case_overrides = overrides_;
  if (kind == k::StepKind::checkpoint) step.monitor_state = state.strouhal;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto in_all = std::find_if(all.begin(), all.end(), [&](const solver::Variable& a) { return a.var == fields[i].var; });
    const int slot = static_cast<int>(hook ? in_all - all.begin() : static_cast<std::ptrdiff_t>(i));
    step.fields.push_back({"cell_data", fields[i].name, slot, kind == k::StepKind::visualisation && settings_.float32});
  }
  return {std::move(step), std::move(grids)};
}

namespace {
// A written step's size: on disk, and with compression what it was before and the cell
// data's ratio ("0.41 MiB on disk (1.20 MiB before compression; cell data 2.9x)").
std::string size_text(const k::WriteStats& w) {
  if (w.stored_bytes <= 0 || w.stored_bytes >= w.bytes) return fmt::format("{:.2f} MiB", w.bytes / 1048576.0);
  return fmt::format("{:.2f} MiB on disk ({:.2f} MiB before compression; cell data {:.2f}x)",
                     w.stored_bytes / 1048576.0, w.bytes / 1048576.0, w.compression_ratio);
}
}  // namespace

k::WriteStats RunOutput::write(solver::Solver& s, k::StepKind kind, bool hook) {
  const auto state = s.scalar_state();
  const auto [step, grids] = describe_step(s, kind, hook);
  k::WriteStats stats;
  try {
    stats = hook ? writer_->hand_off(step, grids, true, hook_step(state).fields) : writer_->write_step(step, grids);
  } catch (const k::FileError& e) {
    rethrow_write_error(e, settings_.file);
  }
  last_written_step_ = state.step;
  handed_off_ = stats.handoff.handed_off;
  if (!stats.handoff.handed_off) committed_step_ = state.step;
  else if (stats.handoff.written_step >= 0) committed_step_ = stats.handoff.written_step;
  if (print_ && stats.handoff.handed_off) {
    // Another rank writes it (strategy aggregated / dedicated): what the compute ranks paid,
    // and the last step the writing ranks committed — a step handed off is in the file
    // only once they have (a killed I/O rank loses the steps it holds).
    fmt::print("output      {} step {} t = {:.6g} -> {}: {:.2f} MiB handed off in {:.4f} s (waited {:.4f} s for a free slot)",
               kind == k::StepKind::checkpoint ? "checkpoint" : "visualisation", state.step, state.time,
               settings_.file, stats.bytes / 1048576.0, stats.seconds, stats.handoff.wait_seconds);
    if (stats.handoff.written_step >= 0)
      fmt::print("; step {} committed, written in {:.3f} s ({:.0f} MiB/s, flush included)", stats.handoff.written_step,
                 stats.handoff.written_seconds, stats.handoff.written_bandwidth / 1048576.0);
    if (stats.handoff.written_step != state.step) fmt::print("; step {} not committed yet", state.step);
    fmt::print("\n");
    std::fflush(stdout);
  } else if (print_) {
    fmt::print(
        "output      {} step {} t = {:.6g} -> {}: {} in {:.4f} s ({:.0f} MiB/s, flush included), "
        "buffer {:.2f} MiB/rank{}\n",
        kind == k::StepKind::checkpoint ? "checkpoint" : "visualisation", state.step, state.time, settings_.file,
        size_text(stats), stats.seconds, stats.bandwidth / 1048576.0, stats.in_place.buffer_bytes / 1048576.0,
        stats.all_collective ? "" : ", cell data by independent transfers");
    // Once until it changes: a run too large for views would say it at every step.
    if (!stats.view_error.empty() && stats.view_error != view_error_)
      fmt::print("output      view not written: {}\n", stats.view_error);
    view_error_ = stats.view_error;
    std::fflush(stdout);
  }
  return stats;
}

void discard_output(MPI_Comm comm, std::unique_ptr<RunOutput> output, const std::string& file) noexcept {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Emptied first: on a full disk HDF5 could not flush the file's metadata at the close,
  // and a file it failed to close would still be open (and crash) at MPI_Finalize.
  if (rank == 0 && !file.empty() && output) (void)::truncate(file.c_str(), 0);
  MPI_Barrier(comm);
  try {
    output.reset();
  } catch (...) {
    // the branch's own error is the one reported
  }
  std::error_code ec;
  if (rank == 0 && !file.empty()) std::filesystem::remove(file, ec);
  MPI_Barrier(comm);  // gone before any rank goes on (a retry may name it again)
}

}  // namespace rwd::driver

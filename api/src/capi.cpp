// The C API (rewind/rewind.h) over the kernel: every entry point catches what the C++
// below throws and turns it into a status and a message (rewind_last_error).
#include "rewind/rewind.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agree.hpp"
#include "handles.hpp"
#include "internal.h"
#include "tree_check.hpp"

using namespace rwd::api;

namespace {

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Every rank learns whether `path` exists (rank 0 looks, under its claim), so all refuse
// alike. The empty file the claim itself made does not count.
void refuse_existing(MPI_Comm comm, const std::string& path, const k::FileClaim& claim) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int exists = rank == 0 && std::filesystem::exists(path) && !claim.created() ? 1 : 0;
  MPI_Bcast(&exists, 1, MPI_INT, 0, comm);
  if (exists) throw Status(REWIND_ERR_EXISTS, fmt::format("{}: exists; a new run never overwrites a file", path));
}

k::IoOptions options_of(const rewind_config* cfg) { return cfg != nullptr ? cfg->io : k::IoOptions{}; }

rewind_step_entry entry_of(const k::StepEntry& e) {
  rewind_step_entry out{};
  out.step = e.step;
  out.time = e.time;
  out.dt = e.dt;
  out.kind = e.kind == k::StepKind::checkpoint ? REWIND_CHECKPOINT : REWIND_VISUALISATION;
  out.committed = e.committed ? 1 : 0;
  out.n_grids = e.n_grids;
  out.n_levels = e.n_levels;
  return out;
}

// The file's claim on rank 0 (one writing job per file; FileError(claimed) names the
// holder on every rank), then the writer `make` opens, then the handle.
template <class Make>
rewind_status open_claimed(rewind_file** file, MPI_Comm comm, const std::string& path, const k::IoOptions& io, Make make) {
  return guarded([&] {
    need(file, "file");
    *file = nullptr;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    k::FileClaim claim;
    std::string problem;
    int kind = -1;
    if (rank == 0) {
      try {
        claim = k::FileClaim::take(path);
      } catch (const k::FileError& e) {
        problem = e.what();
        kind = static_cast<int>(e.kind());
      }
    }
    MPI_Bcast(&kind, 1, MPI_INT, 0, comm);
    if (kind >= 0) {
      int n = static_cast<int>(problem.size());
      MPI_Bcast(&n, 1, MPI_INT, 0, comm);
      problem.resize(static_cast<std::size_t>(n));
      MPI_Bcast(problem.data(), n, MPI_CHAR, 0, comm);
      throw Status(from_kind(static_cast<k::ErrorKind>(kind)), problem);
    }
    auto w = make(claim);
    *file = new rewind_file{rwd::mpi::Comm::dup(comm, "rewind_file"), std::move(w), std::move(claim), {}, {}, io, {}};
  });
}

// The configuration's part of a collective call's arguments: the constants of a new run
// (`constants`), and the options.
void config_args(Call& call, const rewind_config* cfg, bool constants) {
  const rewind_config none;
  const rewind_config& c = cfg != nullptr ? *cfg : none;
  if (constants) {
    const auto& m = c.common;
    std::string vars, domain, fixed;
    for (const auto& v : m.variables) vars += fmt::format("{}{} [{}]", vars.empty() ? "" : ", ", v.name, v.unit);
    for (const double x : m.domain) domain += fmt::format("{}{}", domain.empty() ? "" : ", ", x);
    for (const auto& [n, v] : m.fluid) fixed += fmt::format("fluid.{}={} ", n, v);
    for (const auto& [n, v] : m.time_stepping) fixed += fmt::format("time_stepping.{}={} ", n, v);
    call.arg("dim", std::int64_t{m.dim})
        .arg("cells", std::vector<int>{m.block.sx, m.block.sy, m.block.sz})
        .arg("refinement", std::int64_t{m.refinement})
        .arg("domain", "[" + domain + "]")
        .arg("variables", vars)
        .arg("constants", fixed)
        .arg("creator", m.creator)
        .arg("code_version", m.code_version)
        .arg("case_text", m.case_text);
  }
  std::string options;
  for (const auto& o : k::options_table()) options += fmt::format("{}={} ", o.name, k::option_string(c.io, o.name));
  call.arg("options", options);
}

// Collective: the time of `path`'s last committed step (rank 0 reads the index), -inf if
// it has none or cannot be read here (Writer::append then says why).
double last_committed_time(MPI_Comm comm, const char* path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double t = -std::numeric_limits<double>::infinity();
  if (rank == 0) {
    try {
      std::int64_t last = -1;
      for (const auto& e : k::Reader::open(path).steps(true))
        if (e.step > last) last = e.step, t = e.time;
    } catch (const std::exception&) {
      t = -std::numeric_limits<double>::infinity();
    }
  }
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm);
  return t;
}

// The slots a write takes: every variable for a checkpoint or n_vars 0, else the list.
std::vector<int> slots_of(int kind, int n_vars, const int* vars, int nv) {
  if (kind != REWIND_CHECKPOINT && kind != REWIND_VISUALISATION)
    throw Status(REWIND_ERR_ARGUMENT, fmt::format("kind {}: REWIND_CHECKPOINT or REWIND_VISUALISATION", kind));
  std::vector<int> slots;
  if (kind == REWIND_CHECKPOINT || n_vars == 0) {
    for (int v = 0; v < nv; ++v) slots.push_back(v);
    return slots;
  }
  if (n_vars < 0 || vars == nullptr) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} variables but no list", n_vars));
  for (int i = 0; i < n_vars; ++i) {
    if (vars[i] < 0 || vars[i] >= nv)
      throw Status(REWIND_ERR_ARGUMENT,
                   fmt::format("variable {} outside 0..{} (the file's variables)", vars[i], nv - 1));
    if (std::find(slots.begin(), slots.end(), vars[i]) != slots.end())
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable {} listed twice", vars[i]));
    slots.push_back(vars[i]);
  }
  return slots;
}

// Values no run has: a time or dt that is not a finite number, a step or a time before
// the file's last committed one.
void check_values(const rewind_file& f, std::int64_t step, double time, double dt) {
  if (!std::isfinite(time)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("time = {}: not a finite number", time));
  if (!std::isfinite(dt)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("dt = {}: not a finite number", dt));
  if (step <= f.writer.last_step())
    throw Status(REWIND_ERR_ARGUMENT,
                 fmt::format("step {} is not after the last committed step {}", step, f.writer.last_step()));
  if (time < f.last_time)
    throw Status(REWIND_ERR_ARGUMENT,
                 fmt::format("time {} is before the last committed step's ({}, step {}): time never "
                             "goes back within a file (a branch starts a new one)",
                             time, f.last_time, f.writer.last_step()));
}

// rewind_grids_set_field(_float) cannot know the file's variables: its slots are checked here.
void check_slots(const std::vector<k::GridRecord>& records, int nv) {
  for (const auto& r : records)
    for (std::size_t s = static_cast<std::size_t>(nv); s < r.fields.size(); ++s)
      if (r.fields[s] != nullptr)
        throw Status(REWIND_ERR_ARGUMENT,
                     fmt::format("grid {}: rewind_grids_set_field gave slot {}, but the file has {} "
                                 "variables (slots 0..{})",
                                 r.uid, s, nv, nv - 1));
}

// The write's named scalars (rewind_file_set_scalar) among its agreed arguments: the
// names in their order, the values bit for bit.
void scalar_args(Call& call, const std::vector<k::Scalar>& scalars) {
  std::string names;
  std::vector<double> values;
  for (const auto& x : scalars) {
    names += (names.empty() ? "" : ", ") + x.name;
    values.push_back(x.value);
  }
  call.arg("scalar names", names).arg("scalar values", values);
}

// internal.h, for bench/api: the write without its collective checks, and what the checks
// of this rank's last write took.
bool g_unchecked_writes = false;
double g_check_seconds = 0.0;

// A write's collective checks: its arguments agreed over the file's ranks, and the tree
// the grids describe when any rank's grids changed since this file last found them a tree.
void agree_write(rewind_file& f, const Call& call, const rewind_grids* grids) {
  if (!agree(f.comm, call, grids != nullptr && grids->generation != f.checked_tree)) return;
  agree_problem(f.comm, "rewind_file_write", REWIND_ERR_ARGUMENT,
                tree_problem(f.comm, f.writer.common(), grids->records), false);
  f.checked_tree = grids->generation;
}

// The kernel's description of this rank's grids, parents without arrays averaged
// (collective).
k::LocalGrids local_grids(rewind_file& f, std::vector<k::GridRecord> records, int halo, const std::vector<int>& slots) {
  const auto& common = f.writer.common();
  const auto nv = common.variables.size();
  k::LocalGrids lg;
  lg.block = common.block;
  lg.halo = halo;
  lg.grids = std::move(records);
  for (auto& r : lg.grids) r.fields.resize(nv, nullptr);
  const std::array<int, 3> r{common.refinement, common.refinement, common.dim == 3 ? common.refinement : 1};
  f.averages.fill(f.comm, lg, slots, r);
  return lg;
}

// Cell types: written when any rank gives some; a grid given none is all fluid (0).
// Collective.
bool any_cell_type(rewind_file& f, k::LocalGrids& lg, int halo) {
  int some =
      std::any_of(lg.grids.begin(), lg.grids.end(), [](const k::GridRecord& x) { return x.cell_type != nullptr; });
  int any = 0;
  MPI_Allreduce(&some, &any, 1, MPI_INT, MPI_MAX, f.comm);
  if (any == 0) return false;
  const auto& b = lg.block;
  const auto padded = static_cast<std::size_t>(b.sx + 2 * halo) * static_cast<std::size_t>(b.sy + 2 * halo) *
                      static_cast<std::size_t>(b.sz + 2 * halo);
  f.fluid.assign(1, std::vector<std::uint8_t>(padded, 0));
  for (auto& x : lg.grids)
    if (x.cell_type == nullptr) x.cell_type = f.fluid.front().data();
  return true;
}

// A read's checks, agreed over a collective reader's ranks (step, variable and halo the
// same on every rank; the rows each rank's own); a serial reader just checks.
template <class Checks>
void agree_read(const rewind_reader& r, const char* what, std::int64_t step, const char* name, int halo,
                Checks checks) {
  Call call(what);
  call.check([&] {
    checks();
    text(name, "name");
  });
  call.arg("step", step).arg("name", std::string(name != nullptr ? name : "")).arg("halo", std::int64_t{halo});
  if (r.comm != MPI_COMM_NULL) {
    agree(r.comm, call);
    return;
  }
  checks();
  text(name, "name");
}

}  // namespace

// --- status ---------------------------------------------------------------------------

extern "C" {

const char* rewind_last_error(void) { return g_error.c_str(); }
int rewind_api_version(void) { return REWIND_API_VERSION; }
const char* rewind_library_version(void) { return k::kKernelVersion; }

// --- config ---------------------------------------------------------------------------

rewind_status rewind_config_create_v(rewind_config** cfg, int api_version) {
  return guarded([&] {
    check_version(api_version);
    need(cfg, "cfg");
    *cfg = new rewind_config;
    (*cfg)->common.creator = "a code using Rewind's C API";
    (*cfg)->common.variables.clear();
  });
}

rewind_status rewind_config_free(rewind_config* cfg) {
  delete cfg;
  return REWIND_OK;
}

rewind_status rewind_config_set_geometry(rewind_config* cfg, int dim, const int cells[3], int refinement, const double domain[6]) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    need(cells, "cells");
    need(domain, "domain");
    if (dim != 2 && dim != 3) throw Status(REWIND_ERR_ARGUMENT, fmt::format("dim = {}: 2 or 3", dim));
    if (cells[0] < 1 || cells[1] < 1 || cells[2] < 1 || (dim == 2 && cells[2] != 1))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("cells per grid {} x {} x {}: each >= 1, and 1 along z in 2-D",
                                                    cells[0], cells[1], cells[2]));
    if (refinement < 2) throw Status(REWIND_ERR_ARGUMENT, fmt::format("refinement = {}: at least 2", refinement));
    for (int a = 0; a < dim; ++a)
      if (!(domain[2 * a + 1] > domain[2 * a]))
        throw Status(REWIND_ERR_ARGUMENT, fmt::format("domain axis {}: max {} is not above min {}", a, domain[2 * a + 1], domain[2 * a]));
    c.common.dim = dim;
    c.common.block = {cells[0], cells[1], cells[2]};
    c.common.refinement = refinement;
    c.common.max_children = dim == 3 ? refinement * refinement * refinement : refinement * refinement;
    std::copy(domain, domain + 6, c.common.domain.begin());
    c.geometry = true;
  });
}

rewind_status rewind_config_add_variable(rewind_config* cfg, const char* name, const char* unit) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string n = text(name, "name");
    if (!valid_name(n)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable name \"{}\": letters, digits and '_' only", n));
    for (const auto& v : c.common.variables)
      if (v.name == n) throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable \"{}\" is declared twice", n));
    c.common.variables.push_back({n, unit != nullptr ? unit : ""});
  });
}

rewind_status rewind_config_set_option(rewind_config* cfg, const char* name, const char* value) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string n = text(name, "name");
    k::set_option_text(c.io, n, text(value, "value"));
  });
}

rewind_status rewind_config_set_text(rewind_config* cfg, const char* key, const char* value) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string kname = text(key, "key"), v = text(value, "value");
    if (kname == "creator") c.common.creator = v;
    else if (kname == "code_version") c.common.code_version = v;
    else if (kname == "case_text") c.common.case_text = v;
    else throw Status(REWIND_ERR_ARGUMENT, fmt::format("unknown text \"{}\" (creator, code_version or case_text)", kname));
  });
}

rewind_status rewind_config_set_constant(rewind_config* cfg, const char* group, const char* name, double value) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string g = text(group, "group"), n = text(name, "name");
    if (!valid_name(n)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("constant name \"{}\": letters, digits and '_' only", n));
    if (g == "fluid") c.common.fluid[n] = value;
    else if (g == "time_stepping") c.common.time_stepping[n] = value;
    else throw Status(REWIND_ERR_ARGUMENT, fmt::format("unknown group \"{}\" (fluid or time_stepping)", g));
  });
}

// --- file (written) -----------------------------------------------------------------

rewind_status rewind_file_create(rewind_file** file, MPI_Comm comm, const char* path, const rewind_config* cfg) {
  if (comm == MPI_COMM_NULL) return fail(REWIND_ERR_ARGUMENT, "rewind_file_create: comm is MPI_COMM_NULL");
  Call call("rewind_file_create");
  call.check([&] {
    need(file, "file") = nullptr;
    const auto& c = need(cfg, "cfg");
    if (!c.geometry) throw Status(REWIND_ERR_ARGUMENT, "cfg: no geometry (rewind_config_set_geometry)");
    if (c.common.variables.empty()) throw Status(REWIND_ERR_ARGUMENT, "cfg: no variable (rewind_config_add_variable)");
    text(path, "path");
  });
  call.arg("path", std::string(path != nullptr ? path : ""));
  config_args(call, cfg, true);
  if (const rewind_status rc = guarded([&] { agree(comm, call); }); rc != REWIND_OK) return rc;
  const std::string p = path;
  return open_claimed(file, comm, p, cfg->io, [&](const k::FileClaim& claim) {
    refuse_existing(comm, p, claim);
    return k::Writer::create(comm, p, cfg->common, cfg->io);
  });
}

rewind_status rewind_file_create_branch(rewind_file** file, MPI_Comm comm, const char* path, const char* parent,
                              int64_t parent_step, int n_changes, const char* const* changes, const rewind_config* cfg) {
  if (comm == MPI_COMM_NULL) return fail(REWIND_ERR_ARGUMENT, "rewind_file_create_branch: comm is MPI_COMM_NULL");
  std::vector<std::string> kv;
  k::CommonInfo common;
  Call call("rewind_file_create_branch");
  call.check([&] {
    need(file, "file") = nullptr;
    text(path, "path");
    const std::string par = text(parent, "parent");
    if (n_changes < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("n_changes = {}: at least 0", n_changes));
    for (int i = 0; i < n_changes; ++i) {
      const std::string c = text(changes != nullptr ? changes[i] : nullptr, "changes[i]");
      if (c.find('=') == std::string::npos || c.find('\n') != std::string::npos)
        throw Status(REWIND_ERR_ARGUMENT, fmt::format("change \"{}\": one line \"key=value\"", c));
      kv.push_back(c);
    }
    // The parent's step, before anything is created: a branch continues a checkpoint.
    const auto parent_reader = k::Reader::open(par);
    const auto from = parent_reader.step(parent_step);
    if (from.kind != k::StepKind::checkpoint)
      throw Status(REWIND_ERR_ARGUMENT,
                   fmt::format("{}: step {} is a visualisation output; a branch needs a checkpoint "
                               "(every variable, in double precision)",
                               par, parent_step));
    common = k::make_branch_common(parent_reader, from, kv);
  });
  std::string joined;
  for (const auto& c : kv) joined += c + "\n";
  call.arg("path", std::string(path != nullptr ? path : ""))
      .arg("parent", std::string(parent != nullptr ? parent : ""))
      .arg("parent_step", parent_step)
      .arg("changes", joined);
  config_args(call, cfg, false);
  if (const rewind_status rc = guarded([&] { agree(comm, call); }); rc != REWIND_OK) return rc;
  const std::string p = path, par = parent;
  return open_claimed(file, comm, p, options_of(cfg), [&](const k::FileClaim& claim) {
    refuse_existing(comm, p, claim);
    auto w = k::Writer::create(comm, p, common, options_of(cfg));
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) k::register_branch(p, par);  // best effort: a read-only directory keeps it beside
    return w;
  });
}

rewind_status rewind_file_append(rewind_file** file, MPI_Comm comm, const char* path, const rewind_config* cfg) {
  if (comm == MPI_COMM_NULL) return fail(REWIND_ERR_ARGUMENT, "rewind_file_append: comm is MPI_COMM_NULL");
  Call call("rewind_file_append");
  call.check([&] {
    need(file, "file") = nullptr;
    text(path, "path");
  });
  call.arg("path", std::string(path != nullptr ? path : ""));
  config_args(call, cfg, false);
  double last_time = -std::numeric_limits<double>::infinity();
  if (const rewind_status rc = guarded([&] {
        agree(comm, call);
        last_time = last_committed_time(comm, path);
      });
      rc != REWIND_OK)
    return rc;
  const std::string p = path;
  const rewind_status rc = open_claimed(file, comm, p, options_of(cfg),
                              [&](const k::FileClaim&) { return k::Writer::append(comm, p, options_of(cfg)); });
  if (rc == REWIND_OK) (*file)->last_time = last_time;
  return rc;
}

rewind_status rewind_file_write(rewind_file* file, int64_t step, double time, double dt, int kind, const rewind_grids* grids,
                      int n_vars, const int* vars, int float32) {
  if (file == nullptr) return fail(REWIND_ERR_ARGUMENT, "rewind_file_write: file is NULL");
  std::vector<k::Scalar> scalars = std::exchange(file->scalars, {});  // every write starts a new list
  return guarded([&] {
    auto& f = *file;
    const auto& common = f.writer.common();
    const int nv = static_cast<int>(common.variables.size());
    const bool f32 = kind == REWIND_VISUALISATION && float32 != 0;
    std::vector<int> slots;
    std::vector<k::GridRecord> records;
    auto local_checks = [&] {
      slots = slots_of(kind, n_vars, vars, nv);
      check_values(f, step, time, dt);
      records = records_of(need(grids, "grids"), common.block);
      check_slots(records, nv);
    };
    const double t0 = MPI_Wtime();
    if (g_unchecked_writes) {
      local_checks();
    } else {
      Call call("rewind_file_write");
      call.check(local_checks);
      call.arg("step", step).arg("time", time).arg("dt", dt).arg("kind", std::int64_t{kind}).arg("vars", slots);
      call.arg("float32", std::int64_t{f32});
      scalar_args(call, scalars);
      agree_write(f, call, grids);
    }
    g_check_seconds = MPI_Wtime() - t0;
    k::LocalGrids lg = local_grids(f, std::move(records), grids->halo, slots);
    k::StepInfo info;
    info.step = step;
    info.time = time;
    info.dt = dt;
    info.kind = kind == REWIND_CHECKPOINT ? k::StepKind::checkpoint : k::StepKind::visualisation;
    info.write_cell_type = any_cell_type(f, lg, grids->halo);
    info.case_overrides = f.overrides;  // steered parameters in force (live.cpp)
    info.scalars = std::move(scalars);
    for (const int v : slots) info.fields.push_back({"cell_data", common.variables[static_cast<std::size_t>(v)].name, v, f32});
    f.writer.write_step(info, lg);
    f.last_time = time;
    f.last_dt = dt;
  });
}

void rewind_internal_unchecked_writes(int on) { g_unchecked_writes = on != 0; }
double rewind_internal_check_seconds(void) { return g_check_seconds; }

rewind_status rewind_file_last_step(const rewind_file* file, int64_t* step) {
  return guarded([&] { need(step, "step") = need(file, "file").writer.last_step(); });
}

rewind_status rewind_file_close(rewind_file* file) {
  if (file == nullptr) return REWIND_OK;
  // Ranks in another call (or not closing at all) would be left inside the close: the
  // file stays open, the caller learns it on every rank.
  if (const rewind_status rc = guarded([&] { agree(file->comm, Call("rewind_file_close")); }); rc != REWIND_OK) return rc;
  const rewind_status rc = guarded([&] { file->writer.close(); });
  delete file;
  return rc;
}

// --- reader -------------------------------------------------------------------------

rewind_status rewind_reader_open(rewind_reader** reader, MPI_Comm comm, const char* path) {
  return guarded([&] {
    if (comm != MPI_COMM_NULL) {
      Call call("rewind_reader_open");
      call.check([&] {
        need(reader, "reader") = nullptr;
        text(path, "path");
      });
      agree(comm, call.arg("path", std::string(path != nullptr ? path : "")));
    }
    need(reader, "reader");
    *reader = nullptr;
    const std::string p = text(path, "path");
    auto r = comm == MPI_COMM_NULL ? k::Reader::open(p) : k::Reader::open(p, comm);
    *reader = new rewind_reader{std::move(r), {}, {}, {}, {},
                                comm == MPI_COMM_NULL ? rwd::mpi::Comm() : rwd::mpi::Comm::dup(comm, "rewind_reader")};
    (*reader)->steps = (*reader)->reader.steps(true);
  });
}

rewind_status rewind_reader_close(rewind_reader* reader) {
  if (reader == nullptr) return REWIND_OK;
  if (reader->comm != MPI_COMM_NULL)  // as rewind_file_close: ranks elsewhere keep it open
    if (const rewind_status rc = guarded([&] { agree(reader->comm, Call("rewind_reader_close")); }); rc != REWIND_OK) return rc;
  delete reader;
  return REWIND_OK;
}

rewind_status rewind_reader_step_count(rewind_reader* reader, int64_t* n) {
  return guarded([&] { need(n, "n") = static_cast<int64_t>(need(reader, "reader").steps.size()); });
}

rewind_status rewind_reader_step_at(rewind_reader* reader, int64_t i, rewind_step_entry* entry) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    need(entry, "entry");
    const auto n = static_cast<int64_t>(r.steps.size());
    const int64_t at = i < 0 ? i + n : i;
    if (at < 0 || at >= n)
      throw Status(REWIND_ERR_NO_SUCH_STEP, fmt::format("{}: step index {} outside 0..{}", r.reader.path(), i, n - 1));
    *entry = entry_of(r.steps[static_cast<std::size_t>(at)]);
  });
}

rewind_status rewind_reader_find_step(rewind_reader* reader, const char* selector, rewind_step_entry* entry) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    need(entry, "entry");
    *entry = entry_of(r.reader.find_step(text(selector, "selector")));
  });
}

rewind_status rewind_reader_find_checkpoint(rewind_reader* reader, const char* selector, rewind_step_entry* entry,
                                  const char** note) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    need(entry, "entry");
    *entry = entry_of(k::select_checkpoint(r.reader.selectable_steps(), text(selector, "selector"), r.reader.path(),
                                           &r.note));
    if (note != nullptr) *note = r.note.c_str();
  });
}

rewind_status rewind_reader_topology(rewind_reader* reader, int64_t step, rewind_topology* topo) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    auto& t = need(topo, "topo");
    r.topo = r.reader.read_topology(step);
    static_assert(sizeof(k::BoxRow) == 6 * sizeof(double), "a BoxRow is six packed doubles");
    t.n_grids = r.topo.n_grids;
    t.max_children = r.topo.max_children;
    t.n_levels = r.topo.n_levels();
    t.uid = r.topo.uid.data();
    t.sort_key = r.topo.sort_key.data();
    t.level = r.topo.level.data();
    t.parent_uid = r.topo.parent_uid.data();
    t.parent_row = r.topo.parent_row.data();
    t.child_uids = r.topo.child_uids.data();
    t.child_rows = r.topo.child_rows.data();
    t.bbox = r.topo.bbox.empty() ? nullptr : r.topo.bbox.front().data();
    t.level_offsets = r.topo.level_offsets.data();
  });
}

rewind_status rewind_reader_partition(rewind_reader* reader, int64_t step, int rank, int nranks, int64_t* n_rows,
                            const int64_t** rows) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    need(n_rows, "n_rows");
    need(rows, "rows");
    if (nranks < 1 || rank < 0 || rank >= nranks)
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("rank {} of {}", rank, nranks));
    r.rows = k::partition_rows(r.reader.read_topology(step), rank, nranks);
    *n_rows = static_cast<int64_t>(r.rows.size());
    *rows = r.rows.data();
  });
}

rewind_status rewind_reader_read(rewind_reader* reader, int64_t step, const char* name, int64_t n_rows, const int64_t* rows,
                       double* out) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    agree_read(r, "rewind_reader_read", step, name, 0, [&] {
      if (n_rows < 0 || (n_rows > 0 && (rows == nullptr || out == nullptr)))
        throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} rows but no rows or no out", n_rows));
    });
    const std::vector<std::int64_t> list(rows, rows + n_rows);
    r.reader.read_rows(step, "cell_data", name, list, out);
  });
}

rewind_status rewind_reader_read_into(rewind_reader* reader, int64_t step, const char* name, int64_t n_rows,
                            const int64_t* rows, double* const* dest, int halo) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    agree_read(r, "rewind_reader_read_into", step, name, halo, [&] {
      if (n_rows < 0 || (n_rows > 0 && (rows == nullptr || dest == nullptr)))
        throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} rows but no rows or no dest", n_rows));
      if (halo < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("halo = {}: at least 0", halo));
    });
    const std::vector<std::int64_t> list(rows, rows + n_rows);
    std::vector<std::vector<double*>> d(1, std::vector<double*>(dest, dest + n_rows));
    r.reader.read_fields_into(step, {{"cell_data", name}}, list, d, halo);
  });
}

rewind_status rewind_reader_lineage(rewind_reader* reader, const char** parent_file, int64_t* parent_step, double* parent_time) {
  return guarded([&] {
    const auto& l = need(reader, "reader").reader.common().lineage;
    if (parent_file != nullptr) *parent_file = l.parent_file.c_str();
    if (parent_step != nullptr) *parent_step = l.parent_step;
    if (parent_time != nullptr) *parent_time = l.parent_time;
  });
}

rewind_status rewind_reader_variable_count(rewind_reader* reader, int* n) {
  return guarded([&] { need(n, "n") = static_cast<int>(need(reader, "reader").reader.common().variables.size()); });
}

rewind_status rewind_reader_variable(rewind_reader* reader, int i, const char** name, const char** unit) {
  return guarded([&] {
    const auto& vars = need(reader, "reader").reader.common().variables;
    if (i < 0 || static_cast<std::size_t>(i) >= vars.size())
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable {} outside 0..{}", i, static_cast<int>(vars.size()) - 1));
    if (name != nullptr) *name = vars[static_cast<std::size_t>(i)].name.c_str();
    if (unit != nullptr) *unit = vars[static_cast<std::size_t>(i)].unit.c_str();
  });
}

// --- Fortran: communicators as MPI_Fint ----------------------------------------------

rewind_status rewind_file_create_f(rewind_file** file, MPI_Fint comm, const char* path, const rewind_config* cfg) {
  return rewind_file_create(file, MPI_Comm_f2c(comm), path, cfg);
}
rewind_status rewind_file_create_branch_f(rewind_file** file, MPI_Fint comm, const char* path, const char* parent,
                                int64_t parent_step, int n_changes, const char* const* changes,
                                const rewind_config* cfg) {
  return rewind_file_create_branch(file, MPI_Comm_f2c(comm), path, parent, parent_step, n_changes, changes, cfg);
}
rewind_status rewind_file_append_f(rewind_file** file, MPI_Fint comm, const char* path, const rewind_config* cfg) {
  return rewind_file_append(file, MPI_Comm_f2c(comm), path, cfg);
}
rewind_status rewind_reader_open_f(rewind_reader** reader, MPI_Fint comm, const char* path) {
  return rewind_reader_open(reader, MPI_Comm_f2c(comm), path);
}

}  // extern "C"

// The C API (rewind/rewind.h) over the kernel: every entry point catches what the C++
// below throws and turns it into a status and a message (rewind_last_error).
#include "rewind/rewind.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agree.hpp"
#include "handles.hpp"

using namespace rwd::api;

namespace {

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Every rank learns whether `path` exists (rank 0 looks), so all refuse alike.
void refuse_existing(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int exists = rank == 0 && std::filesystem::exists(path) ? 1 : 0;
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
int open_claimed(rewind_file** file, MPI_Comm comm, const std::string& path, const k::IoOptions& io, Make make) {
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
    auto w = make();
    *file = new rewind_file{comm, std::move(w), std::move(claim), {}, {}, io, {}};
  });
}

}  // namespace

// --- status ---------------------------------------------------------------------------

extern "C" {

const char* rewind_last_error(void) { return g_error.c_str(); }
int rewind_api_version(void) { return REWIND_API_VERSION; }
const char* rewind_library_version(void) { return k::kKernelVersion; }

// --- config ---------------------------------------------------------------------------

int rewind_config_create_v(rewind_config** cfg, int api_version) {
  return guarded([&] {
    check_version(api_version);
    need(cfg, "cfg");
    *cfg = new rewind_config;
    (*cfg)->common.creator = "a code using Rewind's C API";
    (*cfg)->common.variables.clear();
  });
}

int rewind_config_free(rewind_config* cfg) {
  delete cfg;
  return REWIND_OK;
}

int rewind_config_set_geometry(rewind_config* cfg, int dim, const int cells[3], int refinement, const double domain[6]) {
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

int rewind_config_add_variable(rewind_config* cfg, const char* name, const char* unit) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string n = text(name, "name");
    if (!valid_name(n)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable name \"{}\": letters, digits and '_' only", n));
    for (const auto& v : c.common.variables)
      if (v.name == n) throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable \"{}\" is declared twice", n));
    c.common.variables.push_back({n, unit != nullptr ? unit : ""});
  });
}

int rewind_config_set_option(rewind_config* cfg, const char* name, const char* value) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string n = text(name, "name");
    k::set_option_text(c.io, n, text(value, "value"));
  });
}

int rewind_config_set_text(rewind_config* cfg, const char* key, const char* value) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string kname = text(key, "key"), v = text(value, "value");
    if (kname == "creator") c.common.creator = v;
    else if (kname == "code_version") c.common.code_version = v;
    else if (kname == "case_text") c.common.case_text = v;
    else throw Status(REWIND_ERR_ARGUMENT, fmt::format("unknown text \"{}\" (creator, code_version or case_text)", kname));
  });
}

int rewind_config_set_constant(rewind_config* cfg, const char* group, const char* name, double value) {
  return guarded([&] {
    auto& c = need(cfg, "cfg");
    const std::string g = text(group, "group"), n = text(name, "name");
    if (!valid_name(n)) throw Status(REWIND_ERR_ARGUMENT, fmt::format("constant name \"{}\": letters, digits and '_' only", n));
    if (g == "fluid") c.common.fluid[n] = value;
    else if (g == "time_stepping") c.common.time_stepping[n] = value;
    else throw Status(REWIND_ERR_ARGUMENT, fmt::format("unknown group \"{}\" (fluid or time_stepping)", g));
  });
}

// --- grids ----------------------------------------------------------------------------

int rewind_grids_create_v(rewind_grids** grids, int halo, int api_version) {
  return guarded([&] {
    check_version(api_version);
    need(grids, "grids");
    if (halo < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("halo = {}: at least 0", halo));
    *grids = new rewind_grids{halo, {}, 0};
  });
}

int rewind_grids_free(rewind_grids* grids) {
  delete grids;
  return REWIND_OK;
}

int rewind_grids_clear(rewind_grids* grids) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    g.records.clear();
    ++g.generation;
  });
}

int rewind_grids_add(rewind_grids* grids, uint64_t uid, int level, uint64_t sort_key, const double bbox[6],
                     uint64_t parent_uid, int n_children, const uint64_t* child_uids, int64_t* index) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    need(bbox, "bbox");
    if (uid == k::kNoUid) throw Status(REWIND_ERR_ARGUMENT, "uid UINT64_MAX is reserved for \"no grid\"");
    if (level < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid {}: level {} < 0", uid, level));
    if ((level == 0) != (parent_uid == k::kNoUid))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid {}: the root (level 0) and only it has no parent (UINT64_MAX)", uid));
    if (n_children < 0 || (n_children > 0 && child_uids == nullptr))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid {}: {} children but no child_uids", uid, n_children));
    k::GridRecord r;
    r.uid = uid;
    r.level = level;
    r.sort_key = sort_key;
    std::copy(bbox, bbox + 6, r.bbox.begin());
    r.parent_uid = parent_uid;
    r.child_uids.assign(child_uids, child_uids + n_children);
    g.records.push_back(std::move(r));
    ++g.generation;
    if (index != nullptr) *index = static_cast<int64_t>(g.records.size()) - 1;
  });
}

int rewind_grids_set_field(rewind_grids* grids, int64_t index, int slot, const double* data) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    if (index < 0 || static_cast<std::size_t>(index) >= g.records.size())
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid index {} outside 0..{}", index, static_cast<std::int64_t>(g.records.size()) - 1));
    if (slot < 0 || slot > 4096) throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable slot {} < 0", slot));
    auto& f = g.records[static_cast<std::size_t>(index)].fields;
    if (f.size() <= static_cast<std::size_t>(slot)) f.resize(static_cast<std::size_t>(slot) + 1, nullptr);
    f[static_cast<std::size_t>(slot)] = data;
  });
}

int rewind_grids_set_cell_type(rewind_grids* grids, int64_t index, const uint8_t* types) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    if (index < 0 || static_cast<std::size_t>(index) >= g.records.size())
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid index {} outside 0..{}", index, static_cast<std::int64_t>(g.records.size()) - 1));
    g.records[static_cast<std::size_t>(index)].cell_type = types;
  });
}

int64_t rewind_grids_count(const rewind_grids* grids) {
  return grids != nullptr ? static_cast<int64_t>(grids->records.size()) : 0;
}

// --- file (written) -----------------------------------------------------------------

int rewind_file_create(rewind_file** file, MPI_Comm comm, const char* path, const rewind_config* cfg) {
  if (cfg == nullptr) return fail(REWIND_ERR_ARGUMENT, "cfg is NULL");
  if (!cfg->geometry) return fail(REWIND_ERR_ARGUMENT, "cfg: no geometry (rewind_config_set_geometry)");
  if (cfg->common.variables.empty()) return fail(REWIND_ERR_ARGUMENT, "cfg: no variable (rewind_config_add_variable)");
  if (path == nullptr) return fail(REWIND_ERR_ARGUMENT, "path is NULL");
  const std::string p = path;
  return open_claimed(file, comm, p, cfg->io, [&] {
    refuse_existing(comm, p);
    return k::Writer::create(comm, p, cfg->common, cfg->io);
  });
}

int rewind_file_create_branch(rewind_file** file, MPI_Comm comm, const char* path, const char* parent,
                              int64_t parent_step, int n_changes, const char* const* changes, const rewind_config* cfg) {
  std::vector<std::string> kv;
  const int rc = guarded([&] {
    text(path, "path");
    text(parent, "parent");
    for (int i = 0; i < n_changes; ++i) {
      const std::string c = text(changes != nullptr ? changes[i] : nullptr, "changes[i]");
      if (c.find('=') == std::string::npos || c.find('\n') != std::string::npos)
        throw Status(REWIND_ERR_ARGUMENT, fmt::format("change \"{}\": one line \"key=value\"", c));
      kv.push_back(c);
    }
  });
  if (rc != REWIND_OK) return rc;
  const std::string p = path, par = parent;
  return open_claimed(file, comm, p, options_of(cfg), [&] {
    refuse_existing(comm, p);
    const auto parent_reader = k::Reader::open(par);
    auto common = k::make_branch_common(parent_reader, parent_reader.step(parent_step), kv);
    auto w = k::Writer::create(comm, p, common, options_of(cfg));
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) k::register_branch(p, par);  // best effort: a read-only directory keeps it beside
    return w;
  });
}

int rewind_file_append(rewind_file** file, MPI_Comm comm, const char* path, const rewind_config* cfg) {
  if (path == nullptr) return fail(REWIND_ERR_ARGUMENT, "path is NULL");
  const std::string p = path;
  return open_claimed(file, comm, p, options_of(cfg), [&] { return k::Writer::append(comm, p, options_of(cfg)); });
}

int rewind_file_write(rewind_file* file, int64_t step, double time, double dt, int kind, const rewind_grids* grids,
                      int n_vars, const int* vars, int float32) {
  return guarded([&] {
    auto& f = need(file, "file");
    const auto& g = need(grids, "grids");
    const auto& common = f.writer.common();
    const int nv = static_cast<int>(common.variables.size());
    if (kind != REWIND_CHECKPOINT && kind != REWIND_VISUALISATION)
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("kind {}: REWIND_CHECKPOINT or REWIND_VISUALISATION", kind));
    std::vector<int> slots;
    if (kind == REWIND_CHECKPOINT || n_vars == 0) {
      for (int v = 0; v < nv; ++v) slots.push_back(v);
    } else {
      if (n_vars < 0 || vars == nullptr) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} variables but no list", n_vars));
      for (int i = 0; i < n_vars; ++i) {
        if (vars[i] < 0 || vars[i] >= nv)
          throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable {} outside 0..{} (the file's variables)", vars[i], nv - 1));
        if (std::find(slots.begin(), slots.end(), vars[i]) != slots.end())
          throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable {} listed twice", vars[i]));
        slots.push_back(vars[i]);
      }
    }
    k::LocalGrids lg;
    lg.block = common.block;
    lg.halo = g.halo;
    lg.grids = g.records;
    for (auto& r : lg.grids) r.fields.resize(static_cast<std::size_t>(std::max<int>(nv, static_cast<int>(r.fields.size()))), nullptr);
    const int d = common.dim;
    const std::array<int, 3> r{common.refinement, common.refinement, d == 3 ? common.refinement : 1};
    f.averages.fill(f.comm, lg, slots, r);
    // Cell types: written when any rank gives some; a grid given none is all fluid (0).
    int some = std::any_of(lg.grids.begin(), lg.grids.end(), [](const k::GridRecord& x) { return x.cell_type != nullptr; });
    int any = 0;
    MPI_Allreduce(&some, &any, 1, MPI_INT, MPI_MAX, f.comm);
    const auto padded = static_cast<std::size_t>(common.block.sx + 2 * g.halo) * static_cast<std::size_t>(common.block.sy + 2 * g.halo) *
                        static_cast<std::size_t>(common.block.sz + 2 * g.halo);
    if (any) {
      f.fluid.assign(1, std::vector<std::uint8_t>(padded, 0));
      for (auto& x : lg.grids)
        if (x.cell_type == nullptr) x.cell_type = f.fluid.front().data();
    }
    k::StepInfo info;
    info.step = step;
    info.time = time;
    info.dt = dt;
    info.kind = kind == REWIND_CHECKPOINT ? k::StepKind::checkpoint : k::StepKind::visualisation;
    info.write_cell_type = any != 0;
    info.case_overrides = f.overrides;  // steered parameters in force (live.cpp)
    for (const int v : slots)
      info.fields.push_back({"cell_data", common.variables[static_cast<std::size_t>(v)].name, v,
                             kind == REWIND_VISUALISATION && float32 != 0});
    f.writer.write_step(info, lg);
  });
}

int64_t rewind_file_last_step(const rewind_file* file) { return file != nullptr ? file->writer.last_step() : -1; }

int rewind_file_close(rewind_file* file) {
  if (file == nullptr) return REWIND_OK;
  const int rc = guarded([&] { file->writer.close(); });
  delete file;
  return rc;
}

// --- reader -------------------------------------------------------------------------

int rewind_reader_open(rewind_reader** reader, MPI_Comm comm, const char* path) {
  return guarded([&] {
    need(reader, "reader");
    *reader = nullptr;
    const std::string p = text(path, "path");
    auto r = comm == MPI_COMM_NULL ? k::Reader::open(p) : k::Reader::open(p, comm);
    *reader = new rewind_reader{std::move(r), {}, {}, {}};
    (*reader)->steps = (*reader)->reader.steps(true);
  });
}

int rewind_reader_close(rewind_reader* reader) {
  delete reader;
  return REWIND_OK;
}

int rewind_reader_step_count(rewind_reader* reader, int64_t* n) {
  return guarded([&] { need(n, "n") = static_cast<int64_t>(need(reader, "reader").steps.size()); });
}

int rewind_reader_step_at(rewind_reader* reader, int64_t i, rewind_step_entry* entry) {
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

int rewind_reader_find_step(rewind_reader* reader, const char* selector, rewind_step_entry* entry) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    need(entry, "entry");
    *entry = entry_of(r.reader.find_step(text(selector, "selector")));
  });
}

int rewind_reader_topology(rewind_reader* reader, int64_t step, rewind_topology* topo) {
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

int rewind_reader_partition(rewind_reader* reader, int64_t step, int rank, int nranks, int64_t* n_rows,
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

int rewind_reader_read(rewind_reader* reader, int64_t step, const char* name, int64_t n_rows, const int64_t* rows,
                       double* out) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    if (n_rows < 0 || (n_rows > 0 && (rows == nullptr || out == nullptr)))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} rows but no rows or no out", n_rows));
    const std::vector<std::int64_t> list(rows, rows + n_rows);
    r.reader.read_rows(step, "cell_data", text(name, "name"), list, out);
  });
}

int rewind_reader_read_into(rewind_reader* reader, int64_t step, const char* name, int64_t n_rows,
                            const int64_t* rows, double* const* dest, int halo) {
  return guarded([&] {
    auto& r = need(reader, "reader");
    if (n_rows < 0 || (n_rows > 0 && (rows == nullptr || dest == nullptr)))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} rows but no rows or no dest", n_rows));
    if (halo < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("halo = {}: at least 0", halo));
    const std::vector<std::int64_t> list(rows, rows + n_rows);
    std::vector<std::vector<double*>> d(1, std::vector<double*>(dest, dest + n_rows));
    r.reader.read_fields_into(step, {{"cell_data", text(name, "name")}}, list, d, halo);
  });
}

int rewind_reader_lineage(rewind_reader* reader, const char** parent_file, int64_t* parent_step, double* parent_time) {
  return guarded([&] {
    const auto& l = need(reader, "reader").reader.common().lineage;
    if (parent_file != nullptr) *parent_file = l.parent_file.c_str();
    if (parent_step != nullptr) *parent_step = l.parent_step;
    if (parent_time != nullptr) *parent_time = l.parent_time;
  });
}

int rewind_reader_variable_count(rewind_reader* reader, int* n) {
  return guarded([&] { need(n, "n") = static_cast<int>(need(reader, "reader").reader.common().variables.size()); });
}

int rewind_reader_variable(rewind_reader* reader, int i, const char** name, const char** unit) {
  return guarded([&] {
    const auto& vars = need(reader, "reader").reader.common().variables;
    if (i < 0 || static_cast<std::size_t>(i) >= vars.size())
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable {} outside 0..{}", i, static_cast<int>(vars.size()) - 1));
    if (name != nullptr) *name = vars[static_cast<std::size_t>(i)].name.c_str();
    if (unit != nullptr) *unit = vars[static_cast<std::size_t>(i)].unit.c_str();
  });
}

// --- Fortran: communicators as MPI_Fint ----------------------------------------------

int rewind_file_create_f(rewind_file** file, MPI_Fint comm, const char* path, const rewind_config* cfg) {
  return rewind_file_create(file, MPI_Comm_f2c(comm), path, cfg);
}
int rewind_file_create_branch_f(rewind_file** file, MPI_Fint comm, const char* path, const char* parent,
                                int64_t parent_step, int n_changes, const char* const* changes,
                                const rewind_config* cfg) {
  return rewind_file_create_branch(file, MPI_Comm_f2c(comm), path, parent, parent_step, n_changes, changes, cfg);
}
int rewind_file_append_f(rewind_file** file, MPI_Fint comm, const char* path, const rewind_config* cfg) {
  return rewind_file_append(file, MPI_Comm_f2c(comm), path, cfg);
}
int rewind_reader_open_f(rewind_reader** reader, MPI_Fint comm, const char* path) {
  return rewind_reader_open(reader, MPI_Comm_f2c(comm), path);
}

}  // extern "C"

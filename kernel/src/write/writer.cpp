// Writer: the façade that picks one engine per strategy family (engine.hpp) at create /
// append and forwards every call to it; and the in-place engine's file: creating or
// continuing a Rewind file, span, close. The step's phases have a file each (write_step.hpp).
#include "rewind/kernel/writer.hpp"
#include "rewind/kernel/lineage.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include "io/collective.hpp"
#include "format/format.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/step_lock.hpp"
#include "rewind/kernel/views.hpp"
#include "integrity/checksum.hpp"
#include "compression/compression.hpp"
#include "io/direct_io.hpp"
#include "write/engine.hpp"
#include "write/forward/forward.hpp"
#include "write/write_step.hpp"

namespace rwd::kernel {

using h5::Ctx;
namespace names = fmt_names;
using detail::phase;
using detail::readers_out;
using detail::valid_name;

void detail::WriterState::open_common(MPI_Comm c, const std::string& p, const IoOptions& o, const WriterEnv& env) {
  h5::silence_errors();
  comm = mpi::Comm::dup(c, "rewind kernel");
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  path = p;
  opts = o;
  on_phase = env.on_phase;
  if (opts.strategy == Strategy::independent) opts.collective_transfer = false;  // the same rows, independent transfers
  ctx = Ctx{p};
  dxpl_coll = h5::Plist(ctx.check(H5Pcreate(H5P_DATASET_XFER), "create dxpl"));
  if (opts.collective_transfer) ctx.check_status(H5Pset_dxpl_mpio(dxpl_coll, H5FD_MPIO_COLLECTIVE), "set collective");
  dxpl_indep = h5::Plist(ctx.check(H5Pcreate(H5P_DATASET_XFER), "create dxpl"));
  ctx.check_status(H5Pset_dxpl_mpio(dxpl_indep, H5FD_MPIO_INDEPENDENT), "set independent");
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  helper_threads = level >= MPI_THREAD_FUNNELED;
  one_cpu = bound_to_one_cpu();
  // Collective over comm when helpers may exist (the same on every rank: the thread level
  // and the options are the job's).
  if (helper_threads) {
    const CpuPlan cpus = plan_cpus(comm, one_cpu);
    if (one_cpu) hash_cpu = opts.spare_cpus && cpus.spare_cpu >= 0 ? cpus.spare_cpu : kHashInline;
    else hash_cpu = cpus.node_has_spare ? kHashAnyCpu : kHashInline;
  }
}

/// After the file exists: a descriptor only for starting writeback (a file system
/// without sync_file_range, or a failed open, just means no early writeback). One rank
/// per node starts the writeback of all the node's rows, one dataset after the other:
/// the page cache is the node's, and when every rank started its own interleaved
/// ranges at once, 2-rank durable writes got slower than with no early writeback.
void detail::WriterState::open_writeback() {
#ifdef SYNC_FILE_RANGE_WRITE
  if (!(opts.early_writeback && opts.flush_on_commit && helper_threads)) return;
  early_writeback = true;  // the same on every rank: it decides the gather in write_step
  node_comm = mpi::Comm::split_shared(comm, "rewind kernel");
  MPI_Comm_size(node_comm, &node_size);
  int node_rank = 0;
  MPI_Comm_rank(node_comm, &node_rank);
  if (node_rank == 0) writeback_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
#endif
}

void detail::WriterState::flush() const { ctx.check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush file"); }

detail::WriterState::~WriterState() {
  if (writeback_fd >= 0) ::close(writeback_fd);
  try {
    // After a failed step the close may fail too (a full disk): that was reported.
    if (!file.valid()) return;
    if (file.close() < 0 && !failed && rank == 0)
      std::fprintf(stderr, "rewind kernel: %s: closing the file failed (%s)\n", path.c_str(),
                   h5::error_stack().c_str());
    if (rank == 0) close_room(path);
  } catch (...) {
  }
}

namespace {
// The lineage as stored: the parent relative to the branch file's directory (a run and
// its branches move together), its absolute path kept as a hint.
CommonInfo with_relative_parent(CommonInfo common, const std::string& path) {
  auto& l = common.lineage;
  if (l.parent_file.empty()) return common;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::weakly_canonical(fs::absolute(l.parent_file, ec), ec);
  const fs::path dir = fs::weakly_canonical(fs::absolute(path, ec), ec).parent_path();
  if (ec) return common;
  l.parent_file_absolute = parent.string();
  l.parent_file = parent.lexically_relative(dir).string();
  if (l.parent_file.empty()) l.parent_file = parent.string();
  return common;
}
}  // namespace

std::unique_ptr<detail::InPlaceEngine> detail::InPlaceEngine::create(MPI_Comm comm, const std::string& path,
                                                                     const CommonInfo& given, const IoOptions& options,
                                                                     const WriterEnv& env) {
  const CommonInfo common = with_relative_parent(given, path);
  auto im = std::make_unique<WriterState>();
  im->open_common(comm, path, options, env);
  im->common = common;
  WriterState& w = *im;
  phase(w.comm, path, [&] {
    if (const auto why = options_problem(w.opts); !why.empty()) w.ctx.fail(ErrorKind::invalid_argument, why);
    const auto& b = common.block;
    if (b.sx < 1 || b.sy < 1 || b.sz < 1) w.ctx.fail(ErrorKind::invalid_argument, "block shape must be positive");
    if (common.dim != 2 && common.dim != 3) w.ctx.fail(ErrorKind::invalid_argument, "dim must be 2 or 3");
    if (common.max_children < 0) w.ctx.fail(ErrorKind::invalid_argument, "max_children must be >= 0");
    for (const auto& v : common.variables)
      if (!valid_name(v.name)) w.ctx.fail(ErrorKind::invalid_argument, "bad variable name '" + v.name + "'");
  });
  phase(w.comm, path, [&] {
    h5::Plist fapl = detail::make_fapl(w.ctx, w.comm, w.opts);
    w.file = h5::File(w.ctx.check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "cannot create file"));
  });
  phase(w.comm, path, [&] {
    detail::write_header(w.ctx, w.file, common, w.dxpl_coll, w.rank == 0);
    if (w.opts.flush_on_commit) w.flush();  // /common durable before any step
  });
  // A branch is listed beside its parent, so the parent's branches are found wherever
  // they live (best effort: the branch is valid without it).
  if (w.rank == 0 && !common.lineage.parent_file_absolute.empty()) {
    // Best effort: a branch not listed is found beside its parent only. Said, not thrown.
    std::string why;
    try {
      w.hook("registry");
      if (!register_branch(path, common.lineage.parent_file_absolute, &why) && why.empty()) why = "cannot write it";
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why.empty())
      std::fprintf(stderr,
                   "rewind: note: %s is not listed in %s (%s): `rewind lineage` finds it beside its parent only\n",
                   path.c_str(), branch_registry(common.lineage.parent_file_absolute).c_str(), why.c_str());
  }
  w.open_writeback();
  return std::make_unique<InPlaceEngine>(std::move(im));
}

namespace {
/// Whether HDF5 can read everything unlinking `group` frees: every object header under it
/// and every dataset's storage (a chunked one's index). H5Ldelete reads all of it to count
/// the links down, and one that fails halfway leaves HDF5's metadata cache pinned: the file
/// can then neither be written nor closed (HDF5 1.10.8). A step cut short while the dedicated
/// I/O rank wrote it can have its group's header in the file and a dataset's not.
bool frees_cleanly(hid_t file, const std::string& group) {
  const auto readable = [](hid_t loc, const char* name, const H5O_info_t* info, void*) -> herr_t {
    if (info->type != H5O_TYPE_DATASET) return 0;
    const hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return -1;
    const hid_t dcpl = H5Dget_create_plist(d);
    bool ok = dcpl >= 0;
    if (ok && H5Pget_layout(dcpl) == H5D_CHUNKED) {
      hsize_t chunks = 0;  // walks the chunk index
      ok = H5Dget_num_chunks(d, H5S_ALL, &chunks) >= 0;
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    H5Dclose(d);
    return ok ? 0 : -1;
  };
  return H5Ovisit_by_name(file, group.c_str(), H5_INDEX_NAME, H5_ITER_NATIVE, readable, nullptr, H5P_DEFAULT) >= 0;
}
}  // namespace

std::unique_ptr<detail::InPlaceEngine> detail::InPlaceEngine::append(MPI_Comm comm, const std::string& path,
                                                                     const IoOptions& options, const WriterEnv& env) {
  auto im = std::make_unique<WriterState>();
  im->open_common(comm, path, options, env);
  WriterState& w = *im;
  std::vector<std::string> uncommitted, unreadable;
  std::vector<StepEntry> committed;
  detail::IndexRepair repair;
  phase(w.comm, path, [&] {
    if (const auto why = options_problem(w.opts); !why.empty()) w.ctx.fail(ErrorKind::invalid_argument, why);
    // Validate serially first so a bad file gives a clear error, not an MPI-IO failure.
    std::int64_t missing = 0;  // a truncated file continues: its intact steps are as good as ever
    h5::File probe = detail::open_readonly_serial(path, &missing);
    probe.close();
    h5::Plist fapl = detail::make_fapl(w.ctx, w.comm, w.opts);
    if (missing > 0) detail::skip_eof_check(w.ctx, fapl);
    w.file = h5::File(w.ctx.check(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), "cannot open file for appending"));
    int major = 0, minor = 0;
    w.common = detail::read_header(w.ctx, w.file, &major, &minor);
    for (auto& s : detail::list_steps(w.ctx, w.file, w.common.block.cells(), major > 1 || minor >= 7)) {
      // Damage is never taken for a crash: setting the step aside would hide it.
      if (!s.entry.damage.empty())
        w.ctx.fail(ErrorKind::corrupt,
                   fmt::format("step {} is damaged ({}); continuing the file would set it aside: `rewind verify {}` "
                               "says more; branch from a step into a new file instead",
                               s.entry.step, s.entry.damage, path));
      if (s.entry.committed) {
        w.last_step = std::max(w.last_step, s.entry.step);
        committed.push_back(std::move(s.entry));
      } else if (s.unreadable || !frees_cleanly(w.file, s.entry.group)) {
        // Cut short before its attributes, or a dataset's header, reached the file (a
        // crash, a full disk) and not in the index: as a reader sees it, not committed.
        unreadable.push_back(s.entry.group);
      } else {
        uncommitted.push_back(s.entry.group);
      }
    }
    repair = detail::plan_index_repair(w, committed);
  });
  phase(w.comm, path, [&] {
    const bool crashed = !uncommitted.empty() || !unreadable.empty() || repair.needed();
    const StepLock lock = crashed ? readers_out(w) : StepLock{};
    // A crash left these half-written; unlink them so the step numbers can be reused,
    // and bring the index's end in line with the committed steps.
    for (const auto& g : uncommitted)
      w.ctx.check_status(H5Ldelete(w.file, g.c_str(), H5P_DEFAULT), "unlink uncommitted " + g);
    // One with an object header that never reached the file cannot be unlinked (HDF5 reads
    // them to count their links down): its link is moved aside, where readers do not look
    // (docs/file-format.md §5), and the number is free again.
    for (const auto& g : unreadable) {
      const std::string base = std::string(names::kSimulation) + "/uncommitted_" + g.substr(g.rfind('/') + 1);
      std::string aside = base;
      for (int n = 2; h5::exists(w.file, aside); ++n) aside = fmt::format("{}_{}", base, n);
      w.ctx.check_status(H5Lmove(w.file, g.c_str(), w.file, aside.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                         "move the unreadable uncommitted " + g + " aside");
      if (w.rank == 0)
        std::fprintf(stderr,
                     "rewind: note: %s: %s was cut short before all of it reached the file; moved aside as %s\n",
                     path.c_str(), g.c_str(), aside.c_str());
    }
    if (repair.needed()) detail::repair_index(w, repair);
    if (crashed) w.flush();
  });
  w.open_writeback();
  return std::make_unique<InPlaceEngine>(std::move(im));
}

detail::InPlaceEngine::InPlaceEngine(std::unique_ptr<WriterState> w) : w_(std::move(w)) {}
detail::InPlaceEngine::~InPlaceEngine() = default;

detail::WriterState& detail::InPlaceEngine::open_state() const {
  if (!w_->file.valid()) throw FileError(ErrorKind::invalid_argument, w_->path, "writer is closed");
  return *w_;
}
const std::string& detail::InPlaceEngine::path() const { return w_->path; }
const CommonInfo& detail::InPlaceEngine::common() const { return w_->common; }
std::int64_t detail::InPlaceEngine::last_step() const { return w_->last_step; }

WriteStats detail::InPlaceEngine::write_step(const StepInfo& info, const LocalGrids& grids) {
  WriterState& w = open_state();
  agree_step_info(w.comm, info, w.path);  // before the step exists: nothing to abandon
  try {
    return write_in_place(w, info, grids);
  } catch (const FileError& e) {
    throw abandon_step(w, info, e);  // every rank has e: it was agreed
  }
}

LocalGrids detail::InPlaceEngine::span(const StepInfo& info, const LocalGrids& like) {
  WriterState& w = open_state();
  // The writer writes from wherever the arrays are: any memory will do, kept for the next.
  const SlotLayout layout = slot_layout(info, true, nullptr);
  const auto need = static_cast<std::size_t>(slot_bytes(layout, like));
  auto& m = w.span_memory;
  if (m.size() < need) m = std::vector<double>((need + sizeof(double) - 1) / sizeof(double));
  return slot_grids(layout, like, reinterpret_cast<std::byte*>(m.data()));
}

WriteStats detail::InPlaceEngine::hand_off(const StepInfo&, const LocalGrids&, bool, const std::vector<FieldSpec>&) {
  throw no_consumer(w_->path);
}

FileError detail::no_consumer(const std::string& path) {
  return FileError(ErrorKind::invalid_argument, path,
                   "only dedicated I/O ranks take steps for a consumer (output.io.strategy = \"dedicated\")");
}

void detail::InPlaceEngine::close() {
  WriterState& w = open_state();
  phase(w.comm, w.path, [&] {
    w.flush();  // H5Fclose does not sync with the MPI-IO driver; flush does
    w.ctx.check_status(w.file.close(), "close file");
  });
  MPI_Barrier(w.comm);
  if (w.rank == 0) close_room(w.path);
}

// --- Writer: one engine, chosen once -----------------------------------------------------

namespace {
bool forwarded(const IoOptions& o) { return o.strategy == Strategy::aggregated || o.strategy == Strategy::dedicated; }
}  // namespace

Writer Writer::create(MPI_Comm comm, const std::string& path, const CommonInfo& common, const IoOptions& options,
                      const WriterEnv& env) {
  if (forwarded(options)) return Writer(std::make_unique<detail::Forwarder>(comm, false, path, &common, options, env));
  return Writer(detail::InPlaceEngine::create(comm, path, common, options, env));
}

Writer Writer::append(MPI_Comm comm, const std::string& path, const IoOptions& options, const WriterEnv& env) {
  if (forwarded(options)) return Writer(std::make_unique<detail::Forwarder>(comm, true, path, nullptr, options, env));
  return Writer(detail::InPlaceEngine::append(comm, path, options, env));
}

Writer::Writer(std::unique_ptr<detail::Engine> engine) : engine_(std::move(engine)) {}
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;
Writer::~Writer() = default;

detail::Engine& Writer::engine() const {
  if (!engine_) throw FileError(ErrorKind::invalid_argument, "?", "writer is closed");  // moved from
  return *engine_;
}

const std::string& Writer::path() const { return engine().path(); }
const CommonInfo& Writer::common() const { return engine().common(); }
std::int64_t Writer::last_step() const { return engine().last_step(); }
bool Writer::consumer_declined() const { return engine().consumer_declined(); }
WriteStats Writer::write_step(const StepInfo& info, const LocalGrids& grids) {
  return engine().write_step(info, grids);
}
LocalGrids Writer::span(const StepInfo& info, const LocalGrids& like) { return engine().span(info, like); }
void Writer::prepare(const StepInfo& info, const LocalGrids& grids, const std::vector<FieldSpec>* consume) {
  engine().prepare(info, grids, consume);
}
WriteStats Writer::hand_off(const StepInfo& info, const LocalGrids& grids, bool write,
                            const std::vector<FieldSpec>& consume) {
  return engine().hand_off(info, grids, write, consume);
}
void Writer::settle() { engine().settle(); }
void Writer::close() { engine().close(); }

}  // namespace rwd::kernel

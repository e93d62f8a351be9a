// Phase 6 of Writer::write_step: the crash protocol (docs/file-format.md §5).
// A step is committed once its group's `committed` attribute is 1, and that attribute is
// written only after the step's data reached the file; its index row follows in a flush
// of its own. One flush is not atomic: with collective metadata writes each rank writes
// part of the metadata, and a node lost in the middle of a flush that held both the
// attribute and the index row left the index listing a step its group did not commit
// (tests/multinode/multinode_faults.sh). In this order a crash at any point leaves the
// old state, or the complete step with the index lagging behind it by that step, which
// Writer::append completes.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "collective.hpp"
#include "write_step.hpp"

namespace rwd::kernel::detail {

namespace {
// Below this, a file system counts as full: a write that failed there failed for room.
constexpr std::int64_t kNearlyFull = 1 << 20;

/// Bytes the writing user may still write on the file system of `path`, or -1.
std::int64_t free_bytes(const std::string& path) {
  struct statvfs s {};
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &s) != 0) return -1;
  const auto blocks = ::geteuid() == 0 ? s.f_bfree : s.f_bavail;  // root may use the reserve
  return static_cast<std::int64_t>(blocks) * static_cast<std::int64_t>(s.f_frsize);
}

/// Gives the bytes of an abandoned step's datasets back to the file system (their pages
/// may be all that is left for the flushes that follow). Best effort: where hole punching
/// is not supported, the space comes back when the file is truncated or reused.
void punch_holes(const std::string& path, const std::vector<std::pair<std::int64_t, std::int64_t>>& extents) {
#ifdef FALLOC_FL_PUNCH_HOLE
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  for (const auto& [at, n] : extents)
    if (n > 0) (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, n);
  ::close(fd);
#else
  (void)path;
  (void)extents;
#endif
}
}  // namespace

FileError abandon_step(WriterState& w, const StepInfo& step, const FileError& e) {
  w.failed = true;
  // MPI-IO does not always pass the errno on (OMPIO reports MPI_ERR_OTHER): a write that
  // failed on a file system with no room left failed for room. Rank 0 judges for all.
  int full = 0;
  if (w.rank == 0 && e.kind() == ErrorKind::io) {
    const std::int64_t left = free_bytes(w.path);
    full = left >= 0 && left < kNearlyFull ? 1 : 0;
  }
  MPI_Bcast(&full, 1, MPI_INT, 0, w.comm);
  const bool failed_write = e.kind() == ErrorKind::io || e.kind() == ErrorKind::no_space || full;
  const std::string problem = (failed_write ? fmt::format("step {} (t = {:.6g}) not written: ", step.step, step.time) : "") +
                              e.problem() + (full ? ": No space left on device" : "");
  const FileError err(full ? ErrorKind::no_space : e.kind(), e.file(), problem, e.detail());
  if (w.open_step.empty()) return err;
  const std::string group = std::exchange(w.open_step, std::string());
  if (w.rank == 0) punch_holes(w.path, w.open_extents);
  w.open_extents.clear();
  try {
    phase(w.comm, w.path, [&] {
      w.ctx.check_status(H5Ldelete(w.file, group.c_str(), H5P_DEFAULT), "unlink " + group);
      if (w.opts.flush_on_commit) w.flush();
    });
  } catch (const FileError&) {
    // The group stays, uncommitted: readers ignore it, Writer::append unlinks it.
  }
  return err;
}

void commit_step(WriterState& w, const IndexRow& row, h5::Group& step_group, std::vector<h5::Dataset>& dsets) {
  const h5::Ctx& c = w.ctx;
  phase(w.comm, w.path, [&] {
    w.hook("commit");  // inside the phase: a fault injected here is a failed flush
    if (w.opts.flush_on_commit) w.flush();
  });
  w.hook("flushed");
  phase(w.comm, w.path, [&] {
    w.hook("index");
    h5::rewrite_attr_u8(c, step_group, "committed", 1);
    if (w.opts.flush_on_commit) w.flush();
  });
  w.hook("marked");
  phase(w.comm, w.path, [&] {
    h5::Dataset idx(c.check(H5Dopen2(w.file, fmt_names::kIndex, H5P_DEFAULT), "open index"));
    auto d = h5::dims(c, idx, "index");
    const hsize_t n = d.empty() ? 0 : d[0];
    const hsize_t n1 = n + 1;
    c.check_status(H5Dset_extent(idx, &n1), "extend index");
    h5::Dataspace fs(c.check(H5Dget_space(idx), "index space"));
    const hsize_t one = w.rank == 0 ? 1 : 0;
    h5::Dataspace ms(c.check(H5Screate_simple(1, &one, nullptr), "space"));
    if (w.rank == 0) {
      const hsize_t start = n, cnt = 1;
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &cnt, nullptr);
    } else {
      H5Sselect_none(fs);
      H5Sselect_none(ms);
    }
    h5::Datatype t = index_type_of(c, idx);
    c.check_status(H5Dwrite(idx, t, ms, fs, w.dxpl_coll, &row), "append index row");
  });
  w.hook("indexed");
  phase(w.comm, w.path, [&] {
    dsets.clear();
    step_group.reset();
    if (w.opts.flush_on_commit) w.flush();
  });
}

IndexRepair plan_index_repair(const WriterState& w, const std::vector<StepEntry>& committed) {
  const h5::Ctx& c = w.ctx;
  h5::Dataset idx(c.check(H5Dopen2(w.file, fmt_names::kIndex, H5P_DEFAULT), "open index"));
  const auto d = h5::dims(c, idx, "index");
  std::vector<IndexRow> rows(d.empty() ? 0 : d[0]);
  const h5::Datatype t = index_type_of(c, idx);
  if (!rows.empty()) c.check_status(H5Dread(idx, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), "read index");
  std::map<std::int64_t, const StepEntry*> by_step;
  for (const auto& e : committed) by_step[e.step] = &e;
  IndexRepair r;
  r.rows = r.keep = rows.size();
  while (r.keep > 0 && by_step.count(rows[r.keep - 1].step) == 0) --r.keep;
  std::int64_t last = -1;
  for (std::size_t i = 0; i < r.keep; ++i) last = std::max(last, rows[i].step);
  for (auto it = by_step.upper_bound(last); it != by_step.end(); ++it) {
    const StepEntry& e = *it->second;
    r.added.push_back({e.step, e.time, e.dt, static_cast<std::uint8_t>(e.kind), 1, e.n_grids, e.n_levels, e.bytes});
  }
  return r;
}

void repair_index(WriterState& w, const IndexRepair& r) {
  const h5::Ctx& c = w.ctx;
  h5::Dataset idx(c.check(H5Dopen2(w.file, fmt_names::kIndex, H5P_DEFAULT), "open index"));
  hsize_t n = r.keep + r.added.size();
  c.check_status(H5Dset_extent(idx, &n), "resize index");
  if (r.added.empty()) return;
  h5::Dataspace fs(c.check(H5Dget_space(idx), "index space"));
  hsize_t count = w.rank == 0 ? r.added.size() : 0;
  h5::Dataspace ms(c.check(H5Screate_simple(1, &count, nullptr), "space"));
  if (count > 0) {
    const hsize_t start = r.keep;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
  } else {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  const h5::Datatype t = index_type_of(c, idx);
  c.check_status(H5Dwrite(idx, t, ms, fs, w.dxpl_coll, r.added.data()), "complete index");
}

}  // namespace rwd::kernel::detail

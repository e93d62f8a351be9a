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
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <system_error>

#include "io/collective.hpp"
#include "write/write_step.hpp"

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

/// Where the datasets `paths` keep their bytes (offset, length): a contiguous dataset's
/// one extent, each stored chunk of a chunked (compressed) one. Collective: the same calls
/// on every rank (they read metadata); one that cannot be opened is skipped, alike on all.
std::vector<std::pair<std::int64_t, std::int64_t>> storage_extents(const WriterState& w,
                                                                   const std::vector<std::string>& paths) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& p : paths) {
    const hid_t id = H5Dopen2(w.file, p.c_str(), H5P_DEFAULT);
    if (id < 0) continue;
    const h5::Dataset ds(id);
    if (const haddr_t at = H5Dget_offset(ds); at != HADDR_UNDEF) {
      out.emplace_back(static_cast<std::int64_t>(at), static_cast<std::int64_t>(H5Dget_storage_size(ds)));
      continue;
    }
    const h5::Dataspace space(H5Dget_space(ds));  // H5S_ALL is not understood here (HDF5 1.10)
    hsize_t n = 0;
    if (!space.valid() || H5Dget_num_chunks(ds, space, &n) < 0) continue;
    for (hsize_t i = 0; i < n; ++i) {
      haddr_t at = HADDR_UNDEF;
      hsize_t bytes = 0;
      if (H5Dget_chunk_info(ds, space, i, nullptr, nullptr, &at, &bytes) >= 0 && at != HADDR_UNDEF)
        out.emplace_back(static_cast<std::int64_t>(at), static_cast<std::int64_t>(bytes));
    }
  }
  return out;
}
}  // namespace

#ifdef FALLOC_FL_PUNCH_HOLE
namespace {
/// The file's free space as HDF5 tracks it (offset, length): where it puts new chunks
/// first. The same on every rank; called on all (it may start HDF5's free-space managers).
std::vector<std::pair<std::int64_t, std::int64_t>> free_sections(const WriterState& w) {
  const ssize_t n = H5Fget_free_sections(w.file, H5FD_MEM_DEFAULT, 0, nullptr);
  std::vector<H5F_sect_info_t> sect(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (n > 0 && H5Fget_free_sections(w.file, H5FD_MEM_DEFAULT, sect.size(), sect.data()) < 0) sect.clear();
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& x : sect) out.emplace_back(static_cast<std::int64_t>(x.addr), static_cast<std::int64_t>(x.size));
  return out;
}
}  // namespace

void reserve_room(WriterState& w, const DataPlan& data) {
  const bool filtered =
      std::any_of(data.storage.begin(), data.storage.end(), [](Storage s) { return s != Storage::contiguous; });
  if (!filtered) return;  // the same on every rank: the plan is
  auto where = free_sections(w);
  int err = 0;
  if (w.rank == 0) {
    // The step's bytes as they are, a little more for a codec that cannot shrink them, its
    // chunk index and headers: in the free space HDF5 fills first, and past the file's
    // end (HDF5's own end is not public with this driver: past its free space, too).
    const std::int64_t bytes = data.bytes + data.bytes / 16 + (64 << 10);
    const int fd = ::open(w.path.c_str(), O_WRONLY | O_CLOEXEC);
    struct stat st {};
    err = fd >= 0 && ::fstat(fd, &st) == 0 ? 0 : -1;
    std::int64_t end = st.st_size;
    for (const auto& [at, n] : where) end = std::max(end, at + n);
    where.emplace_back(st.st_size, end + bytes - st.st_size);
    for (const auto& [at, n] : where)
      if (err == 0 && ::fallocate(fd, FALLOC_FL_KEEP_SIZE, at, n) != 0)
        err = errno == ENOSPC || errno == EDQUOT ? errno : -1;  // else not supported: as without
    if (fd >= 0) ::close(fd);
    w.reserved = {st.st_size, end + bytes};  // also what a failed fallocate may have taken
  }
  MPI_Bcast(&err, 1, MPI_INT, 0, w.comm);
  if (w.rank != 0) w.reserved = {0, 1};  // release_room calls free_sections on every rank
  phase(w.comm, w.path, [&] {
    w.hook("room");
    if (err > 0) throw std::system_error(err, std::generic_category(), "reserve room for a compressed step");
  });
}

void release_room(WriterState& w) {
  const auto [from, to] = std::exchange(w.reserved, {});
  if (to <= from) return;
  const auto unused = free_sections(w);
  if (w.rank != 0) return;
  punch_holes(w.path, unused);  // HDF5's free space holds nothing
  struct stat st {};
  // Past the file's end nothing is written yet. (ext4 gives blocks there back only when
  // the size is set: close_room, once the file is closed.)
  if (::stat(w.path.c_str(), &st) == 0 && st.st_size < to)
    punch_holes(w.path, {{std::max<std::int64_t>(from, st.st_size), to - std::max<std::int64_t>(from, st.st_size)}});
}

void close_room(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0) (void)::ftruncate(fd, st.st_size);
  if (fd >= 0) ::close(fd);
}
#else  // no fallocate: as before, a compressed step may meet a full disk inside HDF5
void reserve_room(WriterState&, const DataPlan&) {}
void release_room(WriterState& w) { w.reserved = {}; }
void close_room(const std::string&) {}
#endif

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
  const std::string problem =
      (failed_write ? fmt::format("step {} (t = {:.6g}) not written: ", step.step, step.time) : "") + e.problem() +
      (full ? ": No space left on device" : "");
  const FileError err(full ? ErrorKind::no_space : e.kind(), e.file(), problem, e.detail());
  release_room(w);
  if (w.open_step.empty()) return err;
  const std::string group = std::exchange(w.open_step, std::string());
  // Every dataset's bytes, whatever its storage: the flush below may need their room.
  const auto extents = storage_extents(w, std::exchange(w.open_datasets, {}));
  if (w.rank == 0) punch_holes(w.path, extents);
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
  const std::vector<IndexRow> rows = read_index(w.ctx, w.file);
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

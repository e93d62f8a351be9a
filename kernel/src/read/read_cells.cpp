// Reader's reads of cell data: rows of a dataset, several fields' rows at once, fields
// straight into padded arrays (the restart read), cell types. Every read path shares the
// ranks' agreement on the transfer mode and checks each row against the step's checksums.
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>

#include "integrity/checksum.hpp"
#include "io/collective.hpp"
#include "io/direct_io.hpp"
#include "read/reader_state.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::kernel {

using h5::Ctx;

namespace {
std::size_t element_size(hid_t dataset) {
  const h5::Datatype t(H5Dget_type(dataset));
  return t.valid() ? H5Tget_size(t) : 0;
}

/// One dataset of a multi-dataset read and where its rows go.
template <typename T>
struct ReadTarget {
  std::string dpath;
  T* out = nullptr;
};

/// Opens the cell datasets `dpaths` of step `e` and checks them (shape (grids, sz, sy, sx),
/// type class) and `rows` (in range). Throws FileError.
std::vector<h5::Dataset> open_cell_datasets(const detail::ReaderState& r, const StepEntry& e,
                                            const std::vector<std::string>& dpaths, H5T_class_t cls,
                                            const std::vector<std::int64_t>& rows) {
  const Ctx& c = r.ctx;
  const BlockShape b = r.common.block;
  h5::Group g = h5::open_group(c, r.file, e.group);
  const std::vector<hsize_t> want{static_cast<hsize_t>(e.n_grids), static_cast<hsize_t>(b.sz),
                                  static_cast<hsize_t>(b.sy), static_cast<hsize_t>(b.sx)};
  std::vector<h5::Dataset> ds;
  for (const auto& dpath : dpaths) {
    h5::Dataset d = h5::open_dataset(c, g, dpath);
    if (h5::dims(c, d, e.group + "/" + dpath) != want)
      c.fail(ErrorKind::bad_shape, fmt::format("{}/{} is not shaped (grids, sz, sy, sx) = ({},{},{},{})", e.group,
                                               dpath, e.n_grids, b.sz, b.sy, b.sx));
    h5::Datatype t(H5Dget_type(d));
    if (H5Tget_class(t) != cls) c.fail(ErrorKind::bad_shape, fmt::format("{}/{} has the wrong type", e.group, dpath));
    ds.push_back(std::move(d));
  }
  for (auto row : rows)
    if (row < 0 || row >= e.n_grids)
      c.fail(ErrorKind::invalid_argument, fmt::format("row {} out of range (step has {} grids)", row, e.n_grids));
  return ds;
}

/// Reads the same rows of every target dataset. Ranks agree three times in all (after
/// opening and checking every dataset, on the transfer mode, after every read), not per
/// dataset: with independent transfers a rank that finishes one dataset early goes on to
/// the next instead of waiting for the slowest rank.
template <typename T>
void read_rows_impl(const detail::ReaderState& r, const StepEntry& e, const std::vector<ReadTarget<T>>& targets,
                    hid_t memtype, H5T_class_t cls, const std::vector<std::int64_t>& rows) {
  const Ctx& c = r.ctx;
  const BlockShape b = r.common.block;
  const std::size_t cells = static_cast<std::size_t>(b.cells());
  std::vector<h5::Dataset> ds;
  std::vector<std::int64_t> sorted;
  bool direct = true;
  detail::StepChecksums sums;
  std::vector<char> stored_f32(targets.size(), 0);  // float32 on disk, read as double
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i] <= rows[i - 1]) direct = false;
  // HDF5 returns a union of hyperslabs in file order: read sorted rows, then scatter.
  std::vector<T> tmp;
  if (!direct) {
    sorted = rows;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    tmp.resize(sorted.size() * cells);
  }
  const auto& use = direct ? rows : sorted;
  detail::phase(r.comm, r.path, [&] {
    std::vector<std::string> dpaths;
    dpaths.reserve(targets.size());
    for (const auto& tg : targets) dpaths.push_back(tg.dpath);
    ds = open_cell_datasets(r, e, dpaths, cls, rows);  // checks the rows are in range
    for (std::size_t k = 0; k < ds.size(); ++k) stored_f32[k] = element_size(ds[k]) == 4;
    // Only the rows' checksums: a window of a few rows of a big step reads a few.
    sums = detail::StepChecksums::read(c, h5::open_group(c, r.file, e.group), e.n_grids, use);
  });
  const std::vector<h5::RowRun> runs = h5::runs_of(use);
  long long mine[2] = {static_cast<long long>(use.size()), static_cast<long long>(runs.size())};
  long long all[2] = {mine[0], mine[1]};
  if (r.comm != MPI_COMM_NULL) MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, r.comm);
  const long long total = all[0];
  // Transfer mode, the same on every rank (from the allreduce): when the ranks' row runs
  // are large on average (detail::kIndependentRunBytes), each rank reads its runs with
  // independent MPI-IO calls. Small runs keep the collective transfer.
  const bool independent = r.comm != MPI_COMM_NULL && all[1] > 0 &&
                           total * static_cast<long long>(cells * sizeof(T)) / all[1] >= detail::kIndependentRunBytes;
  detail::phase(r.comm, r.path, [&] {
    if (total == 0) return;                  // every rank empty: skip the collective (addr overflow on 1.10.8)
    if (independent && use.empty()) return;  // nothing to read, and no collective to join
    hsize_t n = static_cast<hsize_t>(use.size() * cells);
    h5::Dataspace ms(c.check(H5Screate_simple(1, &n, nullptr), "memory space"));
    if (n == 0) H5Sselect_none(ms);
    std::string failed;  // collective reads: every rank still joins every dataset's read
    for (std::size_t k = 0; k < targets.size(); ++k) {
      h5::Dataspace fs(c.check(H5Dget_space(ds[k]), "space"));
      h5::select_rows(c, fs, runs);
      T* dst = direct ? targets[k].out : tmp.data();
      if (H5Dread(ds[k], memtype, ms, fs, independent ? r.dxpl_indep : r.dxpl, dst) < 0 && failed.empty()) {
        failed = targets[k].dpath;
        if (independent) break;
      }
      if (!direct && failed.empty())
        for (std::size_t i = 0; i < rows.size(); ++i) {
          auto it = std::lower_bound(sorted.begin(), sorted.end(), rows[i]);
          std::memcpy(targets[k].out + i * cells, tmp.data() + static_cast<std::size_t>(it - sorted.begin()) * cells,
                      cells * sizeof(T));
        }
    }
    if (!failed.empty()) c.fail(ErrorKind::corrupt, "cannot read " + e.group + "/" + failed);
    if (sums.empty()) return;
    for (std::size_t k = 0; k < targets.size(); ++k) {
      const int col = sums.column(targets[k].dpath);
      if (col < 0) continue;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const T* row = targets[k].out + i * cells;
        std::uint64_t h = 0;
        if constexpr (std::is_same_v<T, double>)
          h = stored_f32[k] ? detail::hash_interior<float>(row, b, 0) : detail::hash_bytes(row, cells * sizeof(T));
        else h = detail::hash_bytes(row, cells * sizeof(T));
        if (h != sums.at(rows[i], col))
          c.fail(ErrorKind::corrupt, detail::checksum_mismatch(e.group, targets[k].dpath, rows[i]));
      }
    }
  });
}
}  // namespace

void Reader::read_rows(std::int64_t step_number, const std::string& group, const std::string& name,
                       const std::vector<std::int64_t>& rows, double* out) const {
  StepEntry e;
  detail::phase(impl_->comm, impl_->path, [&] { e = step(step_number, true); });
  read_rows_impl<double>(*impl_, e, {{group + "/" + name, out}}, H5T_NATIVE_DOUBLE, H5T_FLOAT, rows);
}

void Reader::read_fields(std::int64_t step_number, const std::vector<FieldRef>& fields,
                         const std::vector<std::int64_t>& rows, const std::vector<double*>& outs) const {
  if (fields.size() != outs.size())
    throw FileError(ErrorKind::invalid_argument, impl_->path, "read_fields: one output per field");
  StepEntry e;
  detail::phase(impl_->comm, impl_->path, [&] { e = step(step_number, true); });
  std::vector<ReadTarget<double>> targets;
  for (std::size_t i = 0; i < fields.size(); ++i) targets.push_back({fields[i].group + "/" + fields[i].name, outs[i]});
  read_rows_impl<double>(*impl_, e, targets, H5T_NATIVE_DOUBLE, H5T_FLOAT, rows);
}

namespace {
/// Checks read_fields_into's arguments (one array per row for every field, halo >= 0).
void check_destinations(const std::string& path, std::size_t n_fields, std::size_t n_rows,
                        const std::vector<std::vector<double*>>& dest, int halo) {
  if (dest.size() != n_fields || halo < 0)
    throw FileError(ErrorKind::invalid_argument, path, "read_fields_into: one list of arrays per field, halo >= 0");
  for (const auto& d : dest)
    if (d.size() != n_rows)
      throw FileError(ErrorKind::invalid_argument, path, "read_fields_into: one array per row for every field");
}

/// The file offsets of `fields`' datasets when every one can be read straight into the
/// arrays (open with MPI-IO, contiguous float64 little-endian: what the kernel writes
/// uncompressed), else empty (e.g. chunked and filtered: no file offset); and the step's
/// checksums into `sums`. Decided from the file's metadata, so every rank decides the same.
std::vector<std::int64_t> direct_offsets(const detail::ReaderState& r, const StepEntry& e,
                                         const std::vector<Reader::FieldRef>& fields,
                                         const std::vector<std::int64_t>& rows, detail::StepChecksums& sums) {
  const Ctx& c = r.ctx;
  std::vector<std::int64_t> at(fields.size(), -1);
  bool direct = r.comm != MPI_COMM_NULL && H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0;
  detail::phase(r.comm, r.path, [&] {
    sums = detail::StepChecksums::read(c, h5::open_group(c, r.file, e.group), e.n_grids);
    std::vector<std::string> dpaths;
    dpaths.reserve(fields.size());
    for (const auto& f : fields) dpaths.push_back(f.group + "/" + f.name);
    const auto ds = open_cell_datasets(r, e, dpaths, H5T_FLOAT, rows);
    for (std::size_t f = 0; f < ds.size(); ++f) {
      h5::Datatype t(H5Dget_type(ds[f]));
      const haddr_t off = H5Dget_offset(ds[f]);
      if (H5Tequal(t, H5T_IEEE_F64LE) <= 0 || off == HADDR_UNDEF) direct = false;
      else at[f] = static_cast<std::int64_t>(off);
    }
  });
  return direct ? at : std::vector<std::int64_t>{};
}

/// One field of read_fields_into: its rows (file order) with where each goes, how it is
/// placed, and each row's check against the step's checksums.
struct FieldRead {
  std::string dpath;
  std::int64_t row_bytes = 0;
  std::vector<detail::ReadRow> want;
  std::function<void(const unsigned char*, void*)> place;
  detail::RowCheck check;
  std::int64_t bad_row = -1;  ///< the first row whose hash differs from its checksum
};

/// The read of one field's rows (file order `order`) at byte `base` of the file into
/// `dest`, each row checked against column `dpath` of `sums` (if it has one).
std::unique_ptr<FieldRead> field_read(const BlockShape& b, std::int64_t base, const std::vector<std::int64_t>& rows,
                                      const std::vector<std::size_t>& order, const std::vector<double*>& dest, int halo,
                                      const detail::StepChecksums& sums, std::string dpath) {
  auto fr = std::make_unique<FieldRead>();
  fr->dpath = std::move(dpath);
  fr->row_bytes = b.cells() * 8;
  for (std::size_t i : order) fr->want.push_back({dest[i], base + rows[i] * fr->row_bytes});
  if (halo > 0)
    fr->place = [b, halo](const unsigned char* row, void* dst) {
      unpack_interior(reinterpret_cast<const double*>(row), b, halo, static_cast<double*>(dst));
    };
  const int col = sums.empty() ? -1 : sums.column(fr->dpath);
  if (col >= 0)
    fr->check = [&rows, &order, &sums, col, f = fr.get()](std::size_t i, std::uint64_t hash) {
      const std::int64_t row = rows[order[i]];
      if (f->bad_row < 0 && hash != sums.at(row, col)) f->bad_row = row;
    };
  return fr;
}
}  // namespace

void Reader::read_fields_into(std::int64_t step_number, const std::vector<FieldRef>& fields,
                              const std::vector<std::int64_t>& rows, const std::vector<std::vector<double*>>& dest,
                              int halo) const {
  const Impl& r = *impl_;
  check_destinations(r.path, fields.size(), rows.size(), dest, halo);
  StepEntry e;
  detail::phase(r.comm, r.path, [&] { e = step(step_number, true); });
  const BlockShape b = r.common.block;
  detail::StepChecksums sums;
  auto& breakdown = detail::read_breakdown();
  breakdown = {};
  const double setup_from = MPI_Wtime();
  const std::vector<std::int64_t> at = direct_offsets(r, e, fields, rows, sums);
  breakdown.setup = MPI_Wtime() - setup_from;
  if (at.empty()) {  // through a buffer and HDF5
    std::vector<double> buf(rows.size() * static_cast<std::size_t>(b.cells()));
    for (std::size_t f = 0; f < fields.size(); ++f) {
      read_rows(step_number, fields[f].group, fields[f].name, rows, buf.data());
      for (std::size_t i = 0; i < rows.size(); ++i)
        unpack_interior(buf.data() + i * static_cast<std::size_t>(b.cells()), b, halo, dest[f][i]);
    }
    return;
  }
  // Contiguous memory only: halo-free rows go straight into the arrays (one read per run
  // adjacent in file and memory), halo'd rows through bounce buffers. With noncontiguous
  // MPI memory types ROMIO 3.2.1 read 5x slower (bench/kernel/HISTORY.md, "Restart reads: the access pattern").
  detail::phase(r.comm, r.path, [&] {
    const MPI_File fh = detail::mpi_file_of(r.ctx, r.file);
    std::vector<std::size_t> order(rows.size());  // file order
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return rows[x] < rows[y]; });
    std::string err;
    const char* env = std::getenv("REWIND_READ_DIRECT");
    std::optional<detail::DirectReads> direct;
    if (!env || std::string(env) != "0") direct.emplace(r.path);
    // Each chunk of 4 MiB is checked (and placed) on this thread right after it lands. Past
    // the page cache (O_DIRECT, 8 chunks in flight, every field's rows one stream of reads)
    // the disk keeps streaming while the CPU hashes, and the CPU no longer fills and copies
    // out of the cache: the checksums then cost (almost) nothing (bench/kernel/HISTORY.md,
    // §8 "Restart reads past the page cache", §16, §17, §19). Rows mostly in the cache
    // already (a step written moments ago) are copied from it, as everywhere O_DIRECT
    // cannot be used. A helper thread hashing beside the reads was slower on shared CPUs
    // ("Restart reads: rows checked as they land").
    std::vector<std::unique_ptr<FieldRead>> reads;
    std::vector<detail::DirectReads::Job> jobs;
    std::vector<std::size_t> job_field;
    for (std::size_t f = 0; f < fields.size() && err.empty(); ++f) {
      reads.push_back(field_read(b, at[f], rows, order, dest[f], halo, sums, fields[f].group + "/" + fields[f].name));
      FieldRead& fr = *reads.back();
      const bool past_cache =
          direct && direct->usable() && at[f] % 8 == 0 && !direct->mostly_cached(fr.want, fr.row_bytes);
      if (past_cache) {
        jobs.push_back({&fr.want, fr.row_bytes, fr.place, fr.check});
        job_field.push_back(f);
      } else {
        err = detail::read_rows(fh, fr.want, fr.row_bytes, fr.place, fr.check, std::int64_t{4} << 20);
        if (!err.empty()) err.insert(0, fr.dpath + ": ");
      }
    }
    if (err.empty() && !jobs.empty()) {
      std::size_t failed = 0;
      err = direct->read(jobs, &failed);
      if (!err.empty()) err = reads[job_field[failed]]->dpath + ": " + err;
    }
    // A row that differs from its checksum, the first in field order (rows after a failed
    // read were not checked).
    for (const auto& fr : reads)
      if (fr->bad_row >= 0) r.ctx.fail(ErrorKind::corrupt, detail::checksum_mismatch(e.group, fr->dpath, fr->bad_row));
    if (!err.empty()) r.ctx.fail(ErrorKind::corrupt, "cannot read " + e.group + "/" + err);
  });
}

void Reader::read_cell_types(std::int64_t step_number, const std::vector<std::int64_t>& rows, std::uint8_t* out) const {
  StepEntry e;
  detail::phase(impl_->comm, impl_->path, [&] { e = step(step_number, true); });
  read_rows_impl<std::uint8_t>(*impl_, e, {{"cell_type", out}}, H5T_NATIVE_UINT8, H5T_INTEGER, rows);
}

ReadBreakdown last_read_breakdown() { return detail::read_breakdown(); }

}  // namespace rwd::kernel

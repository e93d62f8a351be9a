// Phase 5 of Writer::write_step: the step's data (docs/file-format.md §4, step 4).
//
// Every dataset is written from one linear buffer the rank's rows are packed into, or
// straight from the grids' arrays (zero copy). With `pipelined`, a helper packs dataset
// d+1 into the other half of the buffer while the main thread's H5Dwrite writes d; with
// `writeback_fd`, another helper starts the disk writeback of d's bytes meanwhile.
// Helpers touch only memory and the descriptor; every MPI and HDF5 call stays on this
// thread.
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <type_traits>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/collective.hpp"
#include "io/direct_io.hpp"
#include "integrity/checksum.hpp"
#include "write/statistics.hpp"
#include "write/write_step.hpp"

namespace rwd::kernel {
namespace detail {
namespace {

/// The linear write buffer: anonymous memory, not zero-filled by us (every byte that is
/// written is packed first), on transparent huge pages where the kernel allows it. A
/// std::vector memset the whole buffer and then took one 4 KiB page fault per page on
/// the first touch: for a 150 MB buffer that was a visible share of a page-cache write.
class LinearBuffer {
 public:
  explicit LinearBuffer(std::size_t n) : size_(n) {
    if (n == 0) return;
    constexpr std::size_t huge = std::size_t{2} << 20;
    len_ = n + huge;
    void* p = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<unsigned char*>(p);
    const auto a = reinterpret_cast<std::uintptr_t>(base_);
    data_ = base_ + ((huge - a % huge) % huge);  // 2 MiB aligned start
#ifdef MADV_HUGEPAGE
    ::madvise(data_, n, MADV_HUGEPAGE);  // advisory; failure just means 4 KiB pages
#endif
  }
  LinearBuffer(const LinearBuffer&) = delete;
  LinearBuffer& operator=(const LinearBuffer&) = delete;
  ~LinearBuffer() {
    if (base_) ::munmap(base_, len_);
  }
  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
  std::size_t len_ = 0, size_ = 0;
};

/// The buffer kept between steps (IoOptions::keep_buffer): one per process, handed to
/// whichever writer needs one next. Memory first touched is expensive on some systems
/// (a VM whose host reclaims freed pages: bench/kernel/first_touch.cpp) and a solver
/// writes many steps, so by default the buffer is mapped once and reused, like the solver's arrays.
std::mutex kept_mutex;
std::unique_ptr<LinearBuffer> kept_buffer;

std::unique_ptr<LinearBuffer> acquire_buffer(std::size_t n, bool& reused) {
  reused = false;
  if (n == 0) return std::make_unique<LinearBuffer>(0);
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    if (kept_buffer && kept_buffer->size() >= n) {
      reused = true;
      return std::move(kept_buffer);
    }
    kept_buffer.reset();  // too small (or none): unmap before mapping a larger one
  }
  return std::make_unique<LinearBuffer>(n);
}

void return_buffer(std::unique_ptr<LinearBuffer> b, bool keep) {
  if (!keep || !b || b->size() == 0) return;
  std::lock_guard<std::mutex> lock(kept_mutex);
  if (!kept_buffer || kept_buffer->size() < b->size()) kept_buffer = std::move(b);
}

/// Independent zero-copy write of `extents` (one per local grid, in local order), hashing
/// every extent with `hash(k0, k1)` while its rows are in the cache (bench/kernel/HISTORY.md,
/// "Steady memory"). The rows go in chunks of about an L2. With a helper (`hash_cpu` a
/// CPU number to pin it to, or kHashAnyCpu), the helper hashes each chunk while this
/// thread writes the same chunk, never ahead of it: both read the rows at the same time,
/// and the hash costs the write nothing (measured 1.09x the plain write on a rank bound to
/// one core with a spare core for the helper: its reads warm the shared cache for the
/// write's copy). With kHashInline (no CPU to spare: a bound rank without a spare CPU,
/// more ranks than CPUs, or no helper threads), each chunk is hashed on this thread just
/// before it is written, so the write's copy finds it cache-hot (0.94x on one core; faster
/// than a separate helper pass, which reads the rows from DRAM a second time). Every chunk
/// is hashed even after a failed write (the caller reports the error).
template <typename Hash>
std::string write_hashing(MPI_File fh, std::int64_t base, const std::vector<WriteExtent>& extents, int hash_cpu,
                          Hash&& hash) {
  constexpr std::int64_t kChunkBytes = std::int64_t{1} << 20;  // about one core's L2
  const std::size_t n = extents.size();
  if (n == 0) return "";
  const auto per =
      static_cast<std::size_t>(std::max<std::int64_t>(1, kChunkBytes / std::max<std::int64_t>(1, extents[0].bytes)));
  std::atomic<std::size_t> started{0};  // extents whose write has begun (the helper follows)
  std::thread helper;
  if (hash_cpu != kHashInline) {
    helper = std::thread([&] {
      pin_this_thread(hash_cpu);  // checked at setup (kHashAnyCpu: not pinned)
      for (std::size_t k0 = 0; k0 < n; k0 += per) {
        while (started.load(std::memory_order_acquire) <= k0) std::this_thread::yield();
        hash(k0, std::min(n, k0 + per));
      }
    });
  }
  std::string err;
  try {
    for (std::size_t k0 = 0; k0 < n; k0 += per) {
      const std::size_t k1 = std::min(n, k0 + per);
      if (!helper.joinable()) hash(k0, k1);
      started.store(k1, std::memory_order_release);
      if (err.empty()) {
        const std::vector<WriteExtent> chunk(extents.begin() + static_cast<std::ptrdiff_t>(k0),
                                             extents.begin() + static_cast<std::ptrdiff_t>(k1));
        err = write_extents(fh, MPI_COMM_NULL, base, chunk, false);
      }
    }
  } catch (...) {  // let the helper finish before the exception leaves (no thread left joinable)
    started.store(n, std::memory_order_release);
    if (helper.joinable()) helper.join();
    throw;
  }
  if (helper.joinable()) helper.join();
  return err;
}

}  // namespace

namespace {

/// Phase 5 for one step: the buffer, the helpers and the running figures shared by the
/// datasets' writes (write_data below runs it).
class DataWriter {
 public:
  DataWriter(WriterState& w, const StepInfo& info, const LocalGrids& grids, const StepRows& rows, const DataPlan& data,
             const std::vector<h5::Dataset>& dsets, const std::string& gpath, StepStatistics* stats)
      : w_(w),
        c_(w.ctx),
        info_(info),
        grids_(grids),
        rows_(rows),
        data_(data),
        plan_(data.datasets),
        dsets_(dsets),
        gpath_(gpath),
        blk_(w.common.block),
        h_(grids.halo),
        nloc_(rows.perm.size()),
        stats_(stats),
        stat_field_(plan_.size(), kNoField),
        sums_(data.checksums ? nloc_ * plan_.size() : 0) {
    if (stats_)
      for (const std::size_t i : data.statistics_of) stat_field_[data.first_field + i] = i;
  }
  DataStats run();

 private:
  WriterState& w_;
  const h5::Ctx& c_;
  const StepInfo& info_;
  const LocalGrids& grids_;
  const StepRows& rows_;
  const DataPlan& data_;
  const std::vector<DatasetPlan>& plan_;
  const std::vector<h5::Dataset>& dsets_;
  const std::string& gpath_;
  const BlockShape blk_;
  const int h_;
  const std::size_t nloc_;
  std::size_t half_bytes_ = 0;  ///< the largest packed dataset's share of this rank
  bool pipelined_ = false;
  std::unique_ptr<LinearBuffer> buffer_;
  MPI_File direct_fh_ = MPI_FILE_NULL;
  static constexpr std::size_t kNoField = static_cast<std::size_t>(-1);
  /// The step's statistics, taken grid by grid as the rows are visited (null: none), and
  /// by dataset the field it takes them of (kNoField: none).
  StepStatistics* stats_;
  std::vector<std::size_t> stat_field_;
  std::vector<RowRun> node_runs_;       ///< the node's row runs, merged (node leader, early writeback)
  std::shared_future<void> writeback_;  ///< the last started; each waits for the one before
  /// Row checksums (local order x dataset), each taken while its row is cache-hot: right
  /// after packing it; for a zero-copy dataset written independently, as its chunk is
  /// written (write_hashing); for one written collectively, on the helper thread while
  /// the dataset before it is written. Helpers write disjoint entries.
  std::vector<std::uint64_t> sums_;
  DataStats st_;

  std::uint64_t& sum(std::size_t k, std::size_t d) { return sums_[k * plan_.size() + d]; }
  const GridRecord& grid(std::size_t k) const { return grids_.grids[rows_.perm[k]]; }
  const double* field_of(const GridRecord& g, std::size_t d) const {
    return g.fields[static_cast<std::size_t>(info_.fields[d - data_.first_field].slot)];
  }
  void size_buffer();
  void gather_node_runs();
  /// Grid k's statistics of dataset d's field, while its values are in the cache. It may
  /// run on a helper thread, which must not throw: a grid that fails (memory) leaves its
  /// field short, and add_rest takes the field again after the data, where a failure is
  /// agreed on over the ranks.
  void take_statistics(std::size_t d, std::size_t k) noexcept {
    if (stat_field_[d] == kNoField) return;
    try {
      stats_->add_grid(stat_field_[d], k);
    } catch (...) {  // retried by add_rest, which reports
    }
  }
  bool collective_at(std::size_t d) const { return w_.opts.collective_transfer && !data_.independent[d]; }
  /// Its rows are read once before or while they are written: to hash them.
  bool visited(std::size_t d) const { return data_.hashed[d] != 0; }
  /// A zero-copy dataset written by independent transfers is visited a chunk at a time as
  /// the chunk is written (write_hashing): a separate helper pass while the dataset
  /// before it is written reads the rows from DRAM a second time, and where there is no
  /// CPU to spare it takes turns with the writers.
  bool visited_while_written(std::size_t d) const { return data_.direct[d] && visited(d) && !collective_at(d); }
  unsigned char* half(std::size_t d) const { return buffer_->data() + (pipelined_ ? (d % 2) * half_bytes_ : 0); }
  template <typename T, typename Get>
  void pack_cells(std::size_t d, T* out, Get get);
  void visit_direct(std::size_t d, std::size_t k0, std::size_t k1);
  void pack(std::size_t d, unsigned char* b);
  bool pack_rows(std::size_t d, unsigned char* b);
  void write_direct(std::size_t d, std::future<void>& next);
  void write_packed(std::size_t d, std::future<void>& next);
  void start_writeback(std::size_t d);
  void write_all();
};

/// The linear buffer: the largest packed dataset's share, twice when pipelined (pack d+1
/// while d is written) — only while it stays within one copy of the packed data: a step of
/// one big packed variable packs and writes in turn.
void DataWriter::size_buffer() {
  std::int64_t packed_bytes = 0;
  bool any_direct = false;
  for (std::size_t d = 0; d < plan_.size(); ++d) {
    if (data_.direct[d]) {
      any_direct = true;
      continue;
    }
    const std::size_t b = nloc_ * static_cast<std::size_t>(plan_[d].per_row) * plan_[d].elem_bytes;
    half_bytes_ = std::max(half_bytes_, b);
    packed_bytes += static_cast<std::int64_t>(b);
  }
  pipelined_ = w_.opts.pipeline && w_.helper_threads && plan_.size() > 1 &&
               2 * half_bytes_ <= static_cast<std::size_t>(packed_bytes);
  const std::size_t buffer_bytes = pipelined_ ? 2 * half_bytes_ : half_bytes_;
  if (any_direct) phase(w_.comm, w_.path, [&] { direct_fh_ = mpi_file_of(c_, w_.file); });
  buffer_ = acquire_buffer(buffer_bytes, st_.buffer_reused);
  st_.buffer_bytes = static_cast<std::int64_t>(buffer_bytes);
}

/// Early writeback: the node leader gets the node's row runs, merged. Collective over the node.
void DataWriter::gather_node_runs() {
  int nn = 0;
  const int node_size = w_.node_size;
  std::vector<std::int64_t> mine_runs;
  for (const auto& r : rows_.layout.runs) {
    mine_runs.push_back(r.start);
    mine_runs.push_back(r.count);
  }
  int nm = static_cast<int>(mine_runs.size());
  std::vector<int> cnt(static_cast<std::size_t>(node_size)), dsp(static_cast<std::size_t>(node_size));
  MPI_Gather(&nm, 1, MPI_INT, cnt.data(), 1, MPI_INT, 0, w_.node_comm);
  for (int r = 0; r < node_size; ++r) {
    dsp[static_cast<std::size_t>(r)] = nn;
    nn += cnt[static_cast<std::size_t>(r)];
  }
  std::vector<std::int64_t> all_runs(static_cast<std::size_t>(w_.writeback_fd >= 0 ? nn : 0));
  MPI_Gatherv(mine_runs.data(), nm, MPI_INT64_T, all_runs.data(), cnt.data(), dsp.data(), MPI_INT64_T, 0, w_.node_comm);
  for (std::size_t i = 0; i + 1 < all_runs.size(); i += 2) node_runs_.push_back({all_runs[i], all_runs[i + 1]});
  node_runs_ = merge_runs(std::move(node_runs_));
}

/// Packs a cell dataset's interiors (converted to T) and hashes each packed row.
template <typename T, typename Get>
void DataWriter::pack_cells(std::size_t d, T* out, Get get) {
  const std::int64_t cells = blk_.cells();
  const int px = blk_.sx + 2 * h_, py = blk_.sy + 2 * h_;
  for (std::size_t k = 0; k < nloc_; ++k) {
    const auto* src = get(grid(k));
    T* const start = out + k * static_cast<std::size_t>(cells);
    T* dst = start;
    bool copied = false;
    if constexpr (std::is_same_v<T, std::remove_cv_t<std::remove_pointer_t<decltype(src)>>>) {
      if (h_ == 0) {  // no halo, same type: the interior is one contiguous block
        std::memcpy(dst, src, static_cast<std::size_t>(cells) * sizeof(T));
        copied = true;
      }
    }
    if (!copied)
      for (int z = 0; z < blk_.sz; ++z)
        for (int y = 0; y < blk_.sy; ++y) {
          const auto* row = src + ((static_cast<std::size_t>(z + h_) * py + (y + h_)) * px + h_);
          for (int x = 0; x < blk_.sx; ++x) *dst++ = static_cast<T>(row[x]);
        }
    if (data_.hashed[d]) sum(k, d) = hash_bytes(start, static_cast<std::size_t>(cells) * sizeof(T));
    take_statistics(d, k);
  }
}

/// Zero-copy datasets are hashed from the grids' arrays (a halo'd array row by row).
void DataWriter::visit_direct(std::size_t d, std::size_t k0, std::size_t k1) {
  for (std::size_t k = k0; k < k1; ++k) {
    const GridRecord& g = grid(k);
    sum(k, d) = plan_[d].path == "cell_type" ? hash_interior<std::uint8_t>(g.cell_type, blk_, h_)
                                             : hash_interior<double>(field_of(g, d), blk_, h_);
    take_statistics(d, k);
  }
}

/// Packs a row dataset (the topology) into `b`; false for a cell dataset.
bool DataWriter::pack_rows(std::size_t d, unsigned char* b) {
  const std::string& n = plan_[d].path;
  auto fill_rows = [&](auto* out, auto get) {
    for (std::size_t k = 0; k < nloc_; ++k) out[k] = get(k, grid(k));
  };
  const int nc = w_.common.max_children;
  if (n == "uid")
    fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.uid; });
  else if (n == "sort_key")
    fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.sort_key; });
  else if (n == "level")
    fill_rows(reinterpret_cast<std::int32_t*>(b),
              [](std::size_t, const GridRecord& g) { return static_cast<std::int32_t>(g.level); });
  else if (n == "rank")
    fill_rows(reinterpret_cast<std::int32_t*>(b), [&](std::size_t, const GridRecord& g) {
      return static_cast<std::int32_t>(g.rank >= 0 ? g.rank : w_.rank);
    });
  else if (n == "parent_uid")
    fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.parent_uid; });
  else if (n == "parent_row")
    fill_rows(reinterpret_cast<std::int64_t*>(b),
              [&](std::size_t k, const GridRecord&) { return rows_.parent_row[k]; });
  else if (n == "child_uids") {
    auto* o = reinterpret_cast<std::uint64_t*>(b);
    for (std::size_t k = 0; k < nloc_; ++k) {
      const auto& g = grid(k);
      for (int j = 0; j < nc; ++j) o[k * nc + j] = j < static_cast<int>(g.child_uids.size()) ? g.child_uids[j] : kNoUid;
    }
  } else if (n == "child_rows") {
    if (!rows_.child_rows.empty()) std::memcpy(b, rows_.child_rows.data(), rows_.child_rows.size() * 8);
  } else if (n == "bounding_box") {
    auto* o = reinterpret_cast<double*>(b);
    for (std::size_t k = 0; k < nloc_; ++k) std::copy_n(grid(k).bbox.begin(), 6, o + 6 * k);
  } else {
    return false;
  }
  return true;
}

/// Packs dataset d into `b` (a zero-copy one is only visited, unless its write visits it).
void DataWriter::pack(std::size_t d, unsigned char* b) {
  if (data_.direct[d]) {  // written straight from the arrays
    if (visited(d) && !visited_while_written(d)) visit_direct(d, 0, nloc_);
    return;
  }
  if (pack_rows(d, b)) {
    if (data_.hashed[d]) {  // a row dataset: its rows are small and were just written
      const std::size_t row_bytes = static_cast<std::size_t>(plan_[d].per_row) * plan_[d].elem_bytes;
      for (std::size_t k = 0; k < nloc_; ++k) sum(k, d) = hash_bytes(b + k * row_bytes, row_bytes);
    }
  } else if (plan_[d].path == "cell_type") {
    pack_cells(d, reinterpret_cast<std::uint8_t*>(b), [](const GridRecord& g) { return g.cell_type; });
  } else {
    auto get = [&](const GridRecord& g) { return field_of(g, d); };
    if (info_.fields[d - data_.first_field].float32) pack_cells(d, reinterpret_cast<float*>(b), get);
    else pack_cells(d, reinterpret_cast<double*>(b), get);
  }
}

/// A zero-copy dataset: each grid's array written at its row's file offset (a halo'd
/// array's interior gathered by MPI), hashed as it goes where it is written independently.
void DataWriter::write_direct(std::size_t d, std::future<void>& next) {
  const auto& p = plan_[d];
  const auto row_bytes = static_cast<std::int64_t>(p.per_row) * static_cast<std::int64_t>(p.elem_bytes);
  std::vector<WriteExtent> extents(nloc_);
  for (std::size_t k = 0; k < nloc_; ++k) {
    const GridRecord& g = grid(k);
    const void* src =
        p.path == "cell_type" ? static_cast<const void*>(g.cell_type) : static_cast<const void*>(field_of(g, d));
    extents[k] = {src, rows_.layout.row_of[k] * row_bytes, row_bytes};
  }
  const InteriorType interior(blk_.sx, blk_.sy, blk_.sz, h_, p.elem_bytes == 1 ? MPI_UINT8_T : MPI_DOUBLE);
  for (auto& pc : extents) pc.layout = interior.get();
  const bool collective = collective_at(d);
  const std::string err = visited_while_written(d)
                              ? write_hashing(direct_fh_, data_.direct_at[d], extents, w_.hash_cpu,
                                              [&](std::size_t k0, std::size_t k1) { visit_direct(d, k0, k1); })
                              : write_extents(direct_fh_, w_.comm, data_.direct_at[d], extents, collective);
  if (next.valid()) next.get();
  if (!err.empty()) c_.fail(ErrorKind::io, "write " + gpath_ + "/" + p.path + ": " + err);
  if (!collective) st_.all_collective = false;
}

/// A packed dataset: one H5Dwrite of this rank's rows from the buffer's half.
void DataWriter::write_packed(std::size_t d, std::future<void>& next) {
  const auto& p = plan_[d];
  h5::Dataspace fs(c_.check(H5Dget_space(dsets_[d]), "space"));
  h5::select_rows(c_, fs, rows_.layout.runs);
  hsize_t nelem = static_cast<hsize_t>(nloc_) * static_cast<hsize_t>(p.per_row);
  h5::Dataspace ms(c_.check(H5Screate_simple(1, &nelem, nullptr), "memory space"));
  if (nelem == 0) H5Sselect_none(ms);
  const hid_t dxpl = data_.independent[d] ? w_.dxpl_indep : w_.dxpl_coll;
  const herr_t status = H5Dwrite(dsets_[d], p.mem_type, ms, fs, dxpl, half(d));
  if (next.valid()) next.get();  // the helper must be done before any throw
  c_.check_status(status, "write " + gpath_ + "/" + p.path);
  H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
  H5Pget_mpio_actual_io_mode(dxpl, &mode);
  if (mode == H5D_MPIO_NO_COLLECTIVE) st_.all_collective = false;
}

/// The node leader starts the writeback of the node's rows of dataset d on a helper.
void DataWriter::start_writeback([[maybe_unused]] std::size_t d) {
#ifdef SYNC_FILE_RANGE_WRITE
  const haddr_t at = w_.writeback_fd >= 0 && !node_runs_.empty() ? H5Dget_offset(dsets_[d]) : HADDR_UNDEF;
  if (at == HADDR_UNDEF) return;
  ++st_.writeback_datasets;
  const auto row_bytes = static_cast<off_t>(plan_[d].per_row) * static_cast<off_t>(plan_[d].elem_bytes);
  std::vector<std::pair<off_t, off_t>> ranges;
  for (const auto& r : node_runs_)
    ranges.emplace_back(static_cast<off_t>(at) + static_cast<off_t>(r.start) * row_bytes,
                        static_cast<off_t>(r.count) * row_bytes);
  writeback_ = std::async(std::launch::async, [before = writeback_, fd = w_.writeback_fd, ranges = std::move(ranges)] {
                 if (before.valid()) before.wait();
                 for (const auto& [off, len] : ranges) ::sync_file_range(fd, off, len, SYNC_FILE_RANGE_WRITE);
               }).share();
#endif
}

/// Every dataset in plan order up to the statistics, dataset d+1 packed on a helper
/// meanwhile when pipelined.
void DataWriter::write_all() {
  const std::size_t end = std::min(plan_.size(), data_.first_statistics);
  if (nloc_ > 0) pack(0, half(0));
  for (std::size_t d = 0; d < end; ++d) {
    std::future<void> next;
    if (pipelined_ && nloc_ > 0 && d + 1 < end)
      next = std::async(std::launch::async, [this, d] { pack(d + 1, half(d + 1)); });
    if (data_.direct[d]) write_direct(d, next);
    else write_packed(d, next);
    start_writeback(d);
    if (!pipelined_ && d + 1 < end && nloc_ > 0) pack(d + 1, half(d + 1));
  }
}

DataStats DataWriter::run() {
  size_buffer();
  if (w_.early_writeback) gather_node_runs();
  phase(w_.comm, w_.path, [&] {
    if (rows_.layout.n_grids == 0) return;  // all ranks empty: skip (HDF5 1.10.8 "addr overflow")
    write_all();
    w_.hook("data");  // inside the phase: a fault injected here is a failed data write
  });
  if (writeback_.valid()) writeback_.wait();  // advisory: a failed start is caught by the commit flush
  return_buffer(std::move(buffer_), w_.opts.keep_buffer);
  w_.hook("data_written");
  st_.checksums = std::move(sums_);
  return st_;
}

}  // namespace

DataStats write_data(WriterState& w, const StepInfo& info, const LocalGrids& grids, const StepRows& rows,
                     const DataPlan& data, const std::vector<h5::Dataset>& dsets, const std::string& gpath,
                     StepStatistics* stats) {
  return DataWriter(w, info, grids, rows, data, dsets, gpath, stats).run();
}

void write_statistics(WriterState& w, const DataPlan& data, const StepRows& rows, StepStatistics& stats,
                      const std::vector<h5::Dataset>& dsets, const std::string& gpath, DataStats& written) {
  const h5::Ctx& c = w.ctx;
  const std::size_t nloc = rows.perm.size(), n_sets = data.datasets.size();
  // What the data's visits did not take (fields neither hashed nor packed) is taken here,
  // locally: a failure of it (memory) is agreed on before any rank enters the exchange,
  // which the others would otherwise wait in.
  phase(w.comm, w.path, [&] { stats.add_rest(); });
  w.hook("statistics_taken");
  phase(w.comm, w.path, [&] {
    if (rows.layout.n_grids == 0) return;  // all ranks empty: no collective write (see DataWriter::run)
    stats.finish();                        // collective: the remote children's shares
    std::vector<double> packed;
    for (std::size_t d = data.first_statistics; d < n_sets; ++d) {
      // statistics/<var> rows {min, max, detail}, then shares/<var> rows of max_children
      const bool shares = d >= data.first_shares;
      const std::size_t i = data.statistics_of[d - (shares ? data.first_shares : data.first_statistics)];
      const auto per = static_cast<std::size_t>(data.datasets[d].per_row);
      packed.resize(per * nloc);
      for (std::size_t k = 0; k < nloc; ++k) {
        std::copy_n(shares ? stats.shares_row(i, k) : stats.row(i, k), per, &packed[per * k]);
        if (data.hashed[d]) written.checksums[k * n_sets + d] = hash_bytes(&packed[per * k], per * sizeof(double));
      }
      h5::Dataspace fs(c.check(H5Dget_space(dsets[d]), "space"));
      h5::select_rows(c, fs, rows.layout.runs);
      hsize_t nelem = per * static_cast<hsize_t>(nloc);
      h5::Dataspace ms(c.check(H5Screate_simple(1, &nelem, nullptr), "memory space"));
      if (nelem == 0) H5Sselect_none(ms);
      const hid_t dxpl = data.independent[d] ? w.dxpl_indep : w.dxpl_coll;
      c.check_status(H5Dwrite(dsets[d], H5T_NATIVE_DOUBLE, ms, fs, dxpl, packed.data()),
                     "write " + gpath + "/" + data.datasets[d].path);
    }
    w.hook("statistics");  // inside the phase: a fault injected here is a failed write
  });
}

}  // namespace detail

void release_kept_write_buffer() {
  std::lock_guard<std::mutex> lock(detail::kept_mutex);
  detail::kept_buffer.reset();
  detail::release_kept_statistics_memory();
}

}  // namespace rwd::kernel

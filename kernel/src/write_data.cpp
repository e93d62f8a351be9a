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
#include <thread>
#include <type_traits>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collective.hpp"
#include "direct_io.hpp"
#include "checksum.hpp"
#include "write_step.hpp"

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

/// Independent zero-copy write of `pieces` (one per local grid, in local order), hashing
/// every piece with `hash(k0, k1)` while its rows are in the cache (docs/benchmarks.md,
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
std::string write_hashing(MPI_File fh, std::int64_t base, const std::vector<Piece>& pieces, int hash_cpu, Hash&& hash) {
  constexpr std::int64_t kChunkBytes = std::int64_t{1} << 20;  // about one core's L2
  const std::size_t n = pieces.size();
  if (n == 0) return "";
  const auto per = static_cast<std::size_t>(std::max<std::int64_t>(1, kChunkBytes / std::max<std::int64_t>(1, pieces[0].bytes)));
  std::atomic<std::size_t> started{0};  // pieces whose write has begun (the helper follows)
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
        const std::vector<Piece> chunk(pieces.begin() + static_cast<std::ptrdiff_t>(k0), pieces.begin() + static_cast<std::ptrdiff_t>(k1));
        err = write_pieces(fh, MPI_COMM_NULL, base, chunk, false);
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

DataStats write_data(WriterState& w, const StepInfo& info, const LocalGrids& grids, const StepRows& rows,
                     const DataPlan& data, const std::vector<h5::Dataset>& dsets, const std::string& gpath) {
  const h5::Ctx& c = w.ctx;
  const BlockShape blk = w.common.block;
  const std::int64_t cells = blk.cells();
  const int nc = w.common.max_children;
  const int h = grids.halo;
  const std::size_t nloc = rows.perm.size();
  const std::int64_t n_grids = rows.layout.n_grids;
  const auto& perm = rows.perm;
  const auto& row_of = rows.layout.row_of;
  const auto& runs = rows.layout.runs;
  const auto& parent_row = rows.parent_row;
  const auto& child_rows = rows.child_rows;
  const auto& plan = data.datasets;
  const auto& direct = data.direct;
  const std::size_t first_field = data.first_field;

  std::size_t half_bytes = 0;  // the largest packed dataset's share of this rank
  std::int64_t packed_bytes = 0;
  bool any_direct = false;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    if (direct[d]) {
      any_direct = true;
      continue;
    }
    const std::size_t b = nloc * static_cast<std::size_t>(plan[d].per_row) * plan[d].elem_bytes;
    half_bytes = std::max(half_bytes, b);
    packed_bytes += static_cast<std::int64_t>(b);
  }
  // Two halves (pack d+1 while d is written) only while the buffer stays within one
  // copy of the packed data; a step of one big packed variable packs and writes in turn.
  const bool pipelined = w.opts.pipeline && w.helper_threads && plan.size() > 1 &&
                         2 * half_bytes <= static_cast<std::size_t>(packed_bytes);
  const std::size_t buffer_bytes = pipelined ? 2 * half_bytes : half_bytes;
  MPI_File direct_fh = MPI_FILE_NULL;
  if (any_direct) phase(w.comm, w.path, [&] { direct_fh = mpi_file_of(c, w.file); });

  bool buffer_reused = false;
  std::int64_t writeback_datasets = 0;
  std::unique_ptr<LinearBuffer> held = acquire_buffer(buffer_bytes, buffer_reused);
  const LinearBuffer& buffer = *held;
  bool all_collective = true;
  // The node's row runs, merged, on the node leader (early writeback only).
  std::vector<RowRun> node_runs;
  if (w.early_writeback) {
    int nn = 0;
    const int node_size = w.node_size;
    std::vector<std::int64_t> mine_runs;
    for (const auto& r : runs) {
      mine_runs.push_back(r.start);
      mine_runs.push_back(r.count);
    }
    int nm = static_cast<int>(mine_runs.size());
    std::vector<int> cnt(static_cast<std::size_t>(node_size)), dsp(static_cast<std::size_t>(node_size));
    MPI_Gather(&nm, 1, MPI_INT, cnt.data(), 1, MPI_INT, 0, w.node_comm);
    for (int r = 0; r < node_size; ++r) {
      dsp[static_cast<std::size_t>(r)] = nn;
      nn += cnt[static_cast<std::size_t>(r)];
    }
    std::vector<std::int64_t> all_runs(static_cast<std::size_t>(w.writeback_fd >= 0 ? nn : 0));
    MPI_Gatherv(mine_runs.data(), nm, MPI_INT64_T, all_runs.data(), cnt.data(), dsp.data(), MPI_INT64_T, 0, w.node_comm);
    for (std::size_t i = 0; i + 1 < all_runs.size(); i += 2) node_runs.push_back({all_runs[i], all_runs[i + 1]});
    node_runs = merge_runs(std::move(node_runs));
  }
  std::shared_future<void> writeback;  // the last started; each waits for the one before
  // Row checksums (local order x dataset), each taken while its row is cache-hot: right
  // after packing it; for a zero-copy dataset written independently, as its chunk is
  // written (write_hashing); for one written collectively, on the helper thread while
  // the dataset before it is written. Helpers write disjoint entries.
  const std::size_t nd = plan.size();
  std::vector<std::uint64_t> sums(data.checksums ? nloc * nd : 0);
  auto sum = [&](std::size_t k, std::size_t d) -> std::uint64_t& { return sums[k * nd + d]; };
  phase(w.comm, w.path, [&] {
    if (n_grids == 0) return;  // all ranks empty: skip (HDF5 1.10.8 "addr overflow")
    const int px = blk.sx + 2 * h, py = blk.sy + 2 * h;
    auto pack_cells = [&](std::size_t d, auto* out, auto get) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (std::size_t k = 0; k < nloc; ++k) {
        const auto* src = get(grids.grids[perm[k]]);
        T* const start = out + k * static_cast<std::size_t>(cells);
        T* dst = start;
        bool copied = false;
        if constexpr (std::is_same_v<T, std::remove_cv_t<std::remove_pointer_t<decltype(src)>>>) {
          if (h == 0) {  // no halo, same type: the interior is one contiguous block
            std::memcpy(dst, src, static_cast<std::size_t>(cells) * sizeof(T));
            copied = true;
          }
        }
        if (!copied)
          for (int z = 0; z < blk.sz; ++z)
            for (int y = 0; y < blk.sy; ++y) {
              const auto* row = src + ((static_cast<std::size_t>(z + h) * py + (y + h)) * px + h);
              for (int x = 0; x < blk.sx; ++x) *dst++ = static_cast<T>(row[x]);
            }
        if (data.hashed[d]) sum(k, d) = hash_bytes(start, static_cast<std::size_t>(cells) * sizeof(T));
      }
    };
    // Zero-copy datasets are hashed from the grids' arrays (a halo'd array row by row).
    auto hash_direct = [&](std::size_t d, std::size_t k0, std::size_t k1) {
      for (std::size_t k = k0; k < k1; ++k) {
        const GridRecord& g = grids.grids[perm[k]];
        sum(k, d) = plan[d].path == "cell_type"
                        ? hash_interior<std::uint8_t>(g.cell_type, blk, h)
                        : hash_interior<double>(g.fields[static_cast<std::size_t>(info.fields[d - first_field].slot)], blk, h);
      }
    };
    // A zero-copy dataset written by independent transfers is hashed a chunk at a time as
    // the chunk is written (write_hashing): a separate helper pass while the dataset
    // before it is written reads the rows from DRAM a second time, and where there is no
    // CPU to spare it takes turns with the writers.
    auto collective_at = [&](std::size_t d) { return w.opts.collective_transfer && !data.independent[d]; };
    auto hashed_while_written = [&](std::size_t d) { return direct[d] && data.hashed[d] && !collective_at(d); };
    auto pack = [&](std::size_t d, unsigned char* b) {
      if (direct[d]) {  // written straight from the arrays
        if (data.hashed[d] && !hashed_while_written(d)) hash_direct(d, 0, nloc);
        return;
      }
      const std::string& n = plan[d].path;
      auto fill_rows = [&](auto* out, auto get) {
        for (std::size_t k = 0; k < nloc; ++k) out[k] = get(k, grids.grids[perm[k]]);
      };
      if (n == "uid") fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.uid; });
      else if (n == "sort_key") fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.sort_key; });
      else if (n == "level") fill_rows(reinterpret_cast<std::int32_t*>(b), [](std::size_t, const GridRecord& g) { return static_cast<std::int32_t>(g.level); });
      else if (n == "rank") fill_rows(reinterpret_cast<std::int32_t*>(b), [&](std::size_t, const GridRecord& g) { return static_cast<std::int32_t>(g.rank >= 0 ? g.rank : w.rank); });
      else if (n == "parent_uid") fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.parent_uid; });
      else if (n == "parent_row") fill_rows(reinterpret_cast<std::int64_t*>(b), [&](std::size_t k, const GridRecord&) { return parent_row[k]; });
      else if (n == "child_uids") {
        auto* o = reinterpret_cast<std::uint64_t*>(b);
        for (std::size_t k = 0; k < nloc; ++k) {
          const auto& g = grids.grids[perm[k]];
          for (int j = 0; j < nc; ++j) o[k * nc + j] = j < static_cast<int>(g.child_uids.size()) ? g.child_uids[j] : kNoUid;
        }
      } else if (n == "child_rows") {
        if (!child_rows.empty()) std::memcpy(b, child_rows.data(), child_rows.size() * 8);
      } else if (n == "bounding_box") {
        auto* o = reinterpret_cast<double*>(b);
        for (std::size_t k = 0; k < nloc; ++k) std::copy_n(grids.grids[perm[k]].bbox.begin(), 6, o + 6 * k);
      } else if (n == "cell_type") {
        pack_cells(d, reinterpret_cast<std::uint8_t*>(b), [](const GridRecord& g) { return g.cell_type; });
        return;
      } else {
        const auto& f = info.fields[d - first_field];
        auto get = [&](const GridRecord& g) { return g.fields[static_cast<std::size_t>(f.slot)]; };
        if (f.float32) pack_cells(d, reinterpret_cast<float*>(b), get);
        else pack_cells(d, reinterpret_cast<double*>(b), get);
        return;
      }
      if (data.hashed[d]) {  // a row dataset: its rows are small and were just written
        const std::size_t row_bytes = static_cast<std::size_t>(plan[d].per_row) * plan[d].elem_bytes;
        for (std::size_t k = 0; k < nloc; ++k) sum(k, d) = hash_bytes(b + k * row_bytes, row_bytes);
      }
    };
    auto half = [&](std::size_t d) { return buffer.data() + (pipelined ? (d % 2) * half_bytes : 0); };
    if (nloc > 0) pack(0, half(0));
    for (std::size_t d = 0; d < plan.size(); ++d) {
      const auto& p = plan[d];
      std::future<void> next;
      if (pipelined && nloc > 0 && d + 1 < plan.size())
        next = std::async(std::launch::async, pack, d + 1, half(d + 1));
      if (direct[d]) {
        const auto row_bytes = static_cast<std::int64_t>(p.per_row) * static_cast<std::int64_t>(p.elem_bytes);
        std::vector<Piece> pieces(nloc);
        for (std::size_t k = 0; k < nloc; ++k) {
          const GridRecord& g = grids.grids[perm[k]];
          const void* src = p.path == "cell_type" ? static_cast<const void*>(g.cell_type)
                                                  : static_cast<const void*>(g.fields[static_cast<std::size_t>(info.fields[d - first_field].slot)]);
          pieces[k] = {src, row_of[k] * row_bytes, row_bytes};
        }
        // A halo'd array: its interior, gathered by MPI.
        const InteriorType interior(blk.sx, blk.sy, blk.sz, h, p.elem_bytes == 1 ? MPI_UINT8_T : MPI_DOUBLE);
        for (auto& pc : pieces) pc.layout = interior.get();
        const bool collective = collective_at(d);
        const std::string err =
            hashed_while_written(d)
                ? write_hashing(direct_fh, data.direct_at[d], pieces, w.hash_cpu,
                                [&](std::size_t k0, std::size_t k1) { hash_direct(d, k0, k1); })
                : write_pieces(direct_fh, w.comm, data.direct_at[d], pieces, collective);
        if (next.valid()) next.get();
        if (!err.empty()) c.fail(ErrorKind::io, "write " + gpath + "/" + p.path + ": " + err);
        if (!collective) all_collective = false;
      } else {
        h5::Dataspace fs(c.check(H5Dget_space(dsets[d]), "space"));
        h5::select_rows(c, fs, runs);
        hsize_t nelem = static_cast<hsize_t>(nloc) * static_cast<hsize_t>(p.per_row);
        h5::Dataspace ms(c.check(H5Screate_simple(1, &nelem, nullptr), "memory space"));
        if (nelem == 0) H5Sselect_none(ms);
        const hid_t dxpl = data.independent[d] ? w.dxpl_indep : w.dxpl_coll;
        const herr_t status = H5Dwrite(dsets[d], p.mem_type, ms, fs, dxpl, half(d));
        if (next.valid()) next.get();  // the helper must be done before any throw
        c.check_status(status, "write " + gpath + "/" + p.path);
        H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
        H5Pget_mpio_actual_io_mode(dxpl, &mode);
        if (mode == H5D_MPIO_NO_COLLECTIVE) all_collective = false;
      }
#ifdef SYNC_FILE_RANGE_WRITE
      const haddr_t at = w.writeback_fd >= 0 && !node_runs.empty() ? H5Dget_offset(dsets[d]) : HADDR_UNDEF;
      if (at != HADDR_UNDEF) {
        ++writeback_datasets;
        const auto row_bytes = static_cast<off_t>(p.per_row) * static_cast<off_t>(p.elem_bytes);
        std::vector<std::pair<off_t, off_t>> ranges;
        for (const auto& r : node_runs)
          ranges.emplace_back(static_cast<off_t>(at) + static_cast<off_t>(r.start) * row_bytes,
                              static_cast<off_t>(r.count) * row_bytes);
        writeback = std::async(std::launch::async, [before = writeback, fd = w.writeback_fd, ranges = std::move(ranges)] {
                      if (before.valid()) before.wait();
                      for (const auto& [off, len] : ranges) ::sync_file_range(fd, off, len, SYNC_FILE_RANGE_WRITE);
                    }).share();
      }
#endif
      if (!pipelined && d + 1 < plan.size() && nloc > 0) pack(d + 1, half(d + 1));
    }
    w.hook("data");  // inside the phase: a fault injected here is a failed data write
  });
  if (writeback.valid()) writeback.wait();  // advisory: a failed start is caught by the commit flush
  return_buffer(std::move(held), w.opts.keep_buffer);
  w.hook("data_written");

  DataStats st;
  st.buffer_bytes = static_cast<std::int64_t>(buffer_bytes);
  st.buffer_reused = buffer_reused;
  st.writeback_datasets = writeback_datasets;
  st.all_collective = all_collective;
  st.checksums = std::move(sums);
  return st;
}

}  // namespace detail

void release_kept_write_buffer() {
  std::lock_guard<std::mutex> lock(detail::kept_mutex);
  detail::kept_buffer.reset();
}

}  // namespace rwd::kernel

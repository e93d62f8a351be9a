#include "io/direct_io.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "integrity/checksum.hpp"
#include "rewind/mpi/comm.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rwd::kernel::detail {

namespace {

std::string mpi_error(int code, const char* what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, msg, &len);
  return std::string(what) + ": " + std::string(msg, static_cast<std::size_t>(len));
}

/// Splits `extents` into calls of at most `max` bytes (a extent larger than `max` is cut,
/// unless it has a layout: then it starts a call of its own).
std::vector<std::vector<WriteExtent>> split_calls(const std::vector<WriteExtent>& extents, std::int64_t max) {
  std::vector<std::vector<WriteExtent>> calls;
  std::int64_t in_call = max;  // forces a new call first
  for (WriteExtent p : extents) {
    while (p.bytes > 0) {
      if (in_call >= max || (p.layout != MPI_DATATYPE_NULL && in_call + p.bytes > max && in_call > 0)) {
        calls.emplace_back();
        in_call = 0;
      }
      // A extent with a layout is never cut (it is one grid: far below `max`).
      const std::int64_t take = p.layout != MPI_DATATYPE_NULL ? p.bytes : std::min(p.bytes, max - in_call);
      calls.back().push_back({p.src, p.offset, take, p.layout});
      in_call += take;
      p.src = static_cast<const unsigned char*>(p.src) + take;
      p.offset += take;
      p.bytes -= take;
    }
  }
  return calls;
}

/// Memory type: every extent's bytes, in order, at absolute addresses (use with MPI_BOTTOM).
int memory_type(const std::vector<WriteExtent>& ps, MPI_Datatype* t) {
  std::vector<int> len(ps.size());
  std::vector<MPI_Aint> at(ps.size());
  std::vector<MPI_Datatype> types(ps.size(), MPI_BYTE);
  bool laid_out = false;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    MPI_Get_address(ps[i].src, &at[i]);
    if (ps[i].layout != MPI_DATATYPE_NULL) {
      laid_out = true;
      types[i] = ps[i].layout;
      len[i] = 1;
    } else {
      len[i] = static_cast<int>(ps[i].bytes);
    }
  }
  int rc = laid_out ? MPI_Type_create_struct(static_cast<int>(ps.size()), len.data(), at.data(), types.data(), t)
                    : MPI_Type_create_hindexed(static_cast<int>(ps.size()), len.data(), at.data(), MPI_BYTE, t);
  return rc == MPI_SUCCESS ? MPI_Type_commit(t) : rc;
}

/// One independent write per run of extents that are contiguous in the file.
std::string independent(MPI_File fh, std::int64_t base, const std::vector<WriteExtent>& extents, std::int64_t max) {
  std::string err;
  for (const auto& call : split_calls(extents, max)) {
    for (std::size_t a = 0; a < call.size() && err.empty();) {
      std::size_t b = a + 1;
      while (b < call.size() && call[b].offset == call[b - 1].offset + call[b - 1].bytes) ++b;
      const std::vector<WriteExtent> run(call.begin() + static_cast<std::ptrdiff_t>(a),
                                         call.begin() + static_cast<std::ptrdiff_t>(b));
      MPI_Datatype mt = MPI_DATATYPE_NULL;
      int rc = memory_type(run, &mt);
      const auto at = static_cast<MPI_Offset>(base + run.front().offset);
      if (rc == MPI_SUCCESS) rc = MPI_File_write_at(fh, at, MPI_BOTTOM, 1, mt, MPI_STATUS_IGNORE);
      if (mt != MPI_DATATYPE_NULL) MPI_Type_free(&mt);
      if (rc != MPI_SUCCESS) err = mpi_error(rc, "MPI_File_write_at");
      a = b;
    }
    if (!err.empty()) break;
  }
  return err;
}

}  // namespace

bool bound_to_one_cpu() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1;
}

bool pin_this_thread(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

CpuPlan plan_cpus(MPI_Comm comm, bool bound) {
  const mpi::Comm node = mpi::Comm::split_shared(comm, "rewind kernel");
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
  std::vector<cpu_set_t> all(static_cast<std::size_t>(node_size));
  std::vector<int> bound_all(static_cast<std::size_t>(node_size));
  int b = bound ? 1 : 0;
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
  MPI_Allgather(&b, 1, MPI_INT, bound_all.data(), 1, MPI_INT, node);
  cpu_set_t taken;
  CPU_ZERO(&taken);
  for (const auto& s : all) CPU_OR(&taken, &taken, &s);
  CpuPlan plan;
  plan.node_has_spare = CPU_COUNT(&taken) > node_size;
  if (!bound) return plan;
  std::vector<int> spare;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu = 0; cpu < online && cpu < CPU_SETSIZE; ++cpu)
    if (!CPU_ISSET(cpu, &taken)) spare.push_back(cpu);
  plan.node_has_spare = plan.node_has_spare || !spare.empty();
  int nth = 0;  // this rank's place among the node's bound ranks
  for (int r = 0; r < node_rank; ++r) nth += bound_all[static_cast<std::size_t>(r)];
  if (nth >= static_cast<int>(spare.size())) return plan;
  const int cpu = spare[static_cast<std::size_t>(nth)];
  bool usable = false;  // try it once: a cpuset may forbid it
  std::thread([&] { usable = pin_this_thread(cpu); }).join();
  if (usable) plan.spare_cpu = cpu;
  return plan;
}

MPI_File mpi_file_of(const h5::Ctx& c, hid_t file) {
  void* handle = nullptr;
  c.check_status(H5Fget_vfd_handle(file, H5P_DEFAULT, &handle), "get the MPI-IO file handle");
  return *static_cast<MPI_File*>(handle);
}

InteriorType::InteriorType(int sx, int sy, int sz, int halo, MPI_Datatype elem) {
  if (halo <= 0) return;
  const int full[3] = {sz + 2 * halo, sy + 2 * halo, sx + 2 * halo}, sub[3] = {sz, sy, sx},
            from[3] = {halo, halo, halo};
  MPI_Type_create_subarray(3, full, sub, from, MPI_ORDER_C, elem, &type_);
  MPI_Type_commit(&type_);
}

InteriorType::~InteriorType() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

namespace {

thread_local ReadBreakdown last_read;  // this thread's last read (threads may read at once)

/// Seconds `f()` takes, added to `into`.
template <class F>
void timed(double& into, F&& f) {
  const double t0 = MPI_Wtime();
  f();
  into += MPI_Wtime() - t0;
}

/// Reads `n` bytes at byte `at` of the file into contiguous `buf` (calls of <= 1 GiB);
/// a short read is an error. Appends nothing once `err` is set.
void read_contiguous(MPI_File fh, void* buf, std::int64_t at, std::int64_t n, std::string& err) {
  const double t0 = MPI_Wtime();
  last_read.bytes += n;
  for (std::int64_t done = 0; done < n && err.empty(); ++last_read.calls) {
    const int count = static_cast<int>(std::min<std::int64_t>(n - done, std::int64_t{1} << 30));
    MPI_Status st;
    const int rc = MPI_File_read_at(fh, at + done, static_cast<unsigned char*>(buf) + done, count, MPI_BYTE, &st);
    int got = 0;
    if (rc == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &got);
    if (rc != MPI_SUCCESS) err = mpi_error(rc, "MPI_File_read_at");
    else if (got != count)
      err = "MPI_File_read_at: " + std::to_string(got) + " of " + std::to_string(count) + " bytes at byte " +
            std::to_string(at + done) + " (file shorter than its datasets)";
    done += count;
  }
  last_read.read += MPI_Wtime() - t0;
}

/// Row i follows row i - 1 in the file (and, with `in_memory`, in memory too).
bool adjacent(const std::vector<ReadRow>& rows, std::size_t i, std::int64_t row_bytes, bool in_memory) {
  return rows[i].offset == rows[i - 1].offset + row_bytes &&
         (!in_memory ||
          static_cast<unsigned char*>(rows[i].dst) == static_cast<unsigned char*>(rows[i - 1].dst) + row_bytes);
}

}  // namespace

std::string read_rows(MPI_File fh, const std::vector<ReadRow>& rows, std::int64_t row_bytes,
                      const std::function<void(const unsigned char*, void*)>& place, const RowCheck& check,
                      std::int64_t chunk_bytes) {
  std::string err;
  const std::size_t per_chunk = static_cast<std::size_t>(std::max<std::int64_t>(1, chunk_bytes / row_bytes));
  if (!place) {  // straight into the arrays
    // With checksums, runs of at most `chunk_bytes` (the reader's 4 MiB), checked while
    // still in the cache (whole runs, up to all of a rank's rows of a variable, were
    // hashed from memory). Without checksums, one call per run.
    const std::size_t per_run = check ? per_chunk : rows.size();
    for (std::size_t a = 0; a < rows.size() && err.empty();) {
      std::size_t b = a + 1;
      while (b < rows.size() && b - a < per_run && adjacent(rows, b, row_bytes, true)) ++b;
      read_contiguous(fh, rows[a].dst, rows[a].offset, static_cast<std::int64_t>(b - a) * row_bytes, err);
      if (check && err.empty())
        timed(last_read.hash, [&] {
          for (std::size_t i = a; i < b; ++i) check(i, hash_bytes(rows[i].dst, static_cast<std::size_t>(row_bytes)));
        });
      a = b;
    }
    return err;
  }
  std::vector<unsigned char> buf;
  for (std::size_t a = 0; a < rows.size() && err.empty();) {
    std::size_t b = a + 1;
    while (b < rows.size() && b - a < per_chunk && adjacent(rows, b, row_bytes, false)) ++b;
    const auto need = static_cast<std::size_t>(row_bytes) * (b - a);
    if (buf.size() < need) buf.resize(need);
    read_contiguous(fh, buf.data(), rows[a].offset, static_cast<std::int64_t>(need), err);
    for (std::size_t i = a; i < b && err.empty(); ++i) {
      const unsigned char* row = buf.data() + static_cast<std::size_t>(row_bytes) * (i - a);
      if (check)  // the row's file bytes, cache-hot, before placing them
        timed(last_read.hash, [&] { check(i, hash_bytes(row, static_cast<std::size_t>(row_bytes))); });
      timed(last_read.place, [&] { place(row, rows[i].dst); });
    }
    a = b;
  }
  return err;
}

ReadBreakdown& read_breakdown() { return last_read; }

namespace {
constexpr std::int64_t kAlign = 4096;  // O_DIRECT: offsets, lengths and buffers (any block size up to 4 KiB)
constexpr long kPending = LONG_MIN;    // a slot's read still in flight
std::int64_t align_down(std::int64_t x) { return x / kAlign * kAlign; }
std::int64_t align_up(std::int64_t x) { return align_down(x + kAlign - 1); }

/// Completes a read of `bytes` at byte `at` into `buf` of which `got` bytes landed (a
/// short read, or 0 if it was never submitted) with plain preads. Returns the bytes in
/// `buf` (fewer than `bytes` at the end of the file) or -errno.
long complete(int fd, unsigned char* buf, std::int64_t at, std::int64_t bytes, long got) {
  while (got >= 0 && got < bytes && got % kAlign == 0) {
    const ssize_t n = ::pread(fd, buf + got, static_cast<std::size_t>(bytes - got), at + got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? -errno : got;
    got += n;
  }
  return got;
}
}  // namespace

void stream_copy(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  if (bytes % 8 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 8 == 0 &&
      reinterpret_cast<std::uintptr_t>(src) % 8 == 0) {
    auto* d = static_cast<double*>(dst);
    const auto* s = static_cast<const double*>(src);
    const std::size_t n = bytes / 8;
    std::size_t i = 0;
    if (reinterpret_cast<std::uintptr_t>(d) % 16 != 0 && n > 0) {  // to a 16-byte boundary
      d[0] = s[0];
      i = 1;
    }
    for (; i + 8 <= n; i += 8) {  // a cache line per iteration
      _mm_stream_pd(d + i, _mm_loadu_pd(s + i));
      _mm_stream_pd(d + i + 2, _mm_loadu_pd(s + i + 2));
      _mm_stream_pd(d + i + 4, _mm_loadu_pd(s + i + 4));
      _mm_stream_pd(d + i + 6, _mm_loadu_pd(s + i + 6));
    }
    for (; i < n; ++i) d[i] = s[i];
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

struct DirectReads::Span {
  std::size_t job = 0;             // of read's jobs
  std::size_t a = 0, b = 0;        // rows [a, b) of the job's list
  std::int64_t at = 0, bytes = 0;  // the file bytes read, 4 KiB aligned
};

namespace {
/// Reads a DirectReads may have in flight at once: the depth of this thread's context.
constexpr int kMaxDepth = 64;

/// This thread's Linux AIO context, set up at its first O_DIRECT read and kept until the
/// thread ends. io_destroy waits for an RCU grace period: 29-66 ms on this project's VM,
/// which a context per read paid at the end of every restart read (5-12 % of a 1.14 GiB
/// read at 2 ranks; bench/kernel/HISTORY.md, §18 "30-70 ms lost in `io_destroy`"). DirectReads on one thread take
/// turns (each read() returns with none of its reads in flight), so they share it.
class ThreadAio {
 public:
  ThreadAio() = default;
  ThreadAio(const ThreadAio&) = delete;
  ThreadAio& operator=(const ThreadAio&) = delete;
  ~ThreadAio() {
    if (ctx_ != 0) ::syscall(SYS_io_destroy, ctx_);
  }
  /// The context, or 0 where the system refuses one. A forked child sets up its own.
  aio_context_t get() {
    if (ctx_ != 0 && pid_ == ::getpid()) return ctx_;
    aio_context_t ctx = 0;
    ctx_ = ::syscall(SYS_io_setup, kMaxDepth, &ctx) == 0 ? ctx : 0;
    pid_ = ::getpid();
    return ctx_;
  }

 private:
  aio_context_t ctx_ = 0;
  pid_t pid_ = 0;
};
thread_local ThreadAio thread_aio;
}  // namespace

DirectReads::DirectReads(const std::string& path, std::int64_t chunk_bytes, int depth)
    : chunk_bytes_(chunk_bytes),
      depth_(std::clamp(depth, 1, kMaxDepth)),
      result_(static_cast<std::size_t>(depth_) + 1, 0) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd_ >= 0) ctx_ = thread_aio.get();
}

DirectReads::~DirectReads() {
  // read() returns with none in flight; should it ever not, the buffers wait for them
  // (and stay allocated if the system will not say when they landed).
  drain();
  if (in_flight_ <= 0) std::free(buffers_);
  if (fd_ >= 0) ::close(fd_);
}

bool DirectReads::mostly_cached(const std::vector<ReadRow>& rows, std::int64_t row_bytes) const {
  if (rows.empty() || fd_ < 0) return false;
  const std::int64_t page = ::sysconf(_SC_PAGESIZE);
  const std::int64_t from = rows.front().offset / page * page, to = rows.back().offset + row_bytes;
  const auto len = static_cast<std::size_t>(to - from);
  void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd_, from);
  if (m == MAP_FAILED) return true;  // cannot tell: the buffered read is right either way
  std::vector<unsigned char> in((len + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page));
  const bool known = ::mincore(m, len, in.data()) == 0;
  ::munmap(m, len);
  if (!known) return true;
  std::int64_t cached = 0, all = 0;
  for (const auto& r : rows)
    for (std::int64_t p = (r.offset - from) / page; p <= (r.offset + row_bytes - 1 - from) / page; ++p, ++all)
      cached += in[static_cast<std::size_t>(p)] & 1;
  return 2 * cached >= all;
}

void DirectReads::plan(const Job& job, std::size_t index, std::vector<Span>& spans) const {
  const auto& rows = *job.rows;
  const std::int64_t row_bytes = job.row_bytes;
  const std::size_t per_span = static_cast<std::size_t>(std::max<std::int64_t>(1, chunk_bytes_ / row_bytes));
  for (std::size_t a = 0; a < rows.size();) {
    std::size_t b = a + 1;
    while (b < rows.size() && b - a < per_span && adjacent(rows, b, row_bytes, false)) ++b;
    const std::int64_t at = align_down(rows[a].offset);
    spans.push_back({index, a, b, at, align_up(rows[b - 1].offset + row_bytes) - at});
    a = b;
  }
}

bool DirectReads::submit(const Span& s, int slot) {
  iocb cb{};  // the kernel copies it in io_submit
  cb.aio_fildes = static_cast<std::uint32_t>(fd_);
  cb.aio_lio_opcode = IOCB_CMD_PREAD;
  cb.aio_buf = reinterpret_cast<std::uint64_t>(buffers_ + static_cast<std::size_t>(slot) * slot_bytes_);
  cb.aio_nbytes = static_cast<std::uint64_t>(s.bytes);
  cb.aio_offset = s.at;
  cb.aio_data = static_cast<std::uint64_t>(slot);
  iocb* list[1] = {&cb};
  if (::syscall(SYS_io_submit, static_cast<aio_context_t>(ctx_), 1, list) != 1) return false;
  result_[static_cast<std::size_t>(slot)] = kPending;
  ++in_flight_;
  return true;
}

int DirectReads::reap() {
  io_event ev[8];
  long n = 0;
  do n = ::syscall(SYS_io_getevents, static_cast<aio_context_t>(ctx_), 1, 8, ev, nullptr);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  for (long i = 0; i < n; ++i, --in_flight_)
    result_[static_cast<std::size_t>(ev[i].data)] = static_cast<long>(ev[i].res);
  return 0;
}

long DirectReads::wait_for(int slot) {
  while (result_[static_cast<std::size_t>(slot)] == kPending)
    if (const int e = reap(); e < 0) return e;
  return result_[static_cast<std::size_t>(slot)];
}

void DirectReads::drain() {
  while (in_flight_ > 0 && reap() == 0) {
  }
}

std::string DirectReads::read(const std::vector<ReadRow>& rows, std::int64_t row_bytes,
                              const std::function<void(const unsigned char*, void*)>& place, const RowCheck& check) {
  return read({Job{&rows, row_bytes, place, check}});
}

std::string DirectReads::read(const std::vector<Job>& jobs, std::size_t* failed_job) {
  std::vector<Span> spans;
  for (std::size_t j = 0; j < jobs.size(); ++j) plan(jobs[j], j, spans);
  std::size_t need = 1;
  for (const auto& s : spans) need = std::max(need, static_cast<std::size_t>(s.bytes));
  if (need > slot_bytes_) {  // none in flight between calls
    std::free(buffers_);
    // In 2 MiB pages where the system allows (transparent huge pages, "madvise"): a read
    // into 4 KiB pages is cut into requests of max_segments (254 on the VM's disk) pages,
    // about 1 MiB, where the page cache's large folios make 4 MiB requests.
    const std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = (need * result_.size() + huge - 1) / huge * huge;
    buffers_ = static_cast<unsigned char*>(std::aligned_alloc(huge, bytes));
    slot_bytes_ = buffers_ ? need : 0;
    if (!buffers_) return "cannot allocate " + std::to_string(bytes) + " bytes of read buffers";
    ::madvise(buffers_, bytes, MADV_HUGEPAGE);
  }
  // One slot more than reads in flight: the next read goes out as soon as one lands, into
  // the slot checked before, so the disk has `depth_` reads queued while this one is checked.
  std::vector<char> submitted(result_.size(), 0);
  const auto start = [&](std::size_t k) {
    if (k < spans.size()) submitted[k % submitted.size()] = submit(spans[k], static_cast<int>(k % submitted.size()));
  };
  for (std::size_t k = 0; k < static_cast<std::size_t>(depth_); ++k) start(k);
  std::string err;
  bool streamed = false;  // rows copied with non-temporal stores
  for (std::size_t k = 0; k < spans.size() && err.empty(); ++k) {
    const int slot = static_cast<int>(k % submitted.size());
    const Span& s = spans[k];
    const Job& job = jobs[s.job];
    const auto& rows = *job.rows;
    const std::int64_t row_bytes = job.row_bytes;
    unsigned char* buf = buffers_ + static_cast<std::size_t>(slot) * slot_bytes_;
    long got = 0;
    const bool in_flight = submitted[static_cast<std::size_t>(slot)] != 0;
    timed(last_read.read, [&] { got = complete(fd_, buf, s.at, s.bytes, in_flight ? wait_for(slot) : 0); });
    const std::int64_t want = rows[s.b - 1].offset + row_bytes - s.at;
    ++last_read.calls;
    if (got < 0) err = std::string("O_DIRECT read: ") + std::strerror(static_cast<int>(-got));
    else if (got < want)
      err = "O_DIRECT read: " + std::to_string(got) + " of " + std::to_string(want) + " bytes at byte " +
            std::to_string(s.at) + " (file shorter than its datasets)";
    if (!err.empty()) {
      if (failed_job) *failed_job = s.job;
      break;
    }
    start(k + static_cast<std::size_t>(depth_));
    const auto n = static_cast<std::size_t>(row_bytes);
    streamed = streamed || !job.place;
    for (std::size_t i = s.a; i < s.b; ++i) {
      const unsigned char* row = buf + (rows[i].offset - s.at);
      if (job.place) {
        if (job.check)
          timed(last_read.hash, [&] { job.check(i, hash_bytes(row, n)); });  // from the buffer, before placing
        timed(last_read.place, [&] { job.place(row, rows[i].dst); });
      } else if (job.check) {  // hashed as it is copied: the buffer read once (bench/kernel/HISTORY.md, §16)
        timed(last_read.place, [&] { job.check(i, hash_and_copy(rows[i].dst, row, n)); });
      } else {  // half the CPU time of memcpy at 1, 2 and 4 ranks (bench/kernel/HISTORY.md, §15 "the copy with
                // non-temporal stores")
        timed(last_read.place, [&] { stream_copy(rows[i].dst, row, n); });
      }
      last_read.bytes += row_bytes;
      last_read.direct_bytes += row_bytes;
    }
  }
  if (streamed) stream_fence();  // the rows' non-temporal stores, visible to every thread
  drain();                       // after an error: none left behind
  return err;
}

std::string write_extents(MPI_File fh, MPI_Comm comm, std::int64_t base, const std::vector<WriteExtent>& extents,
                          bool collective, std::int64_t max_call_bytes) {
  if (!collective) return independent(fh, base, extents, max_call_bytes);
  const auto calls = split_calls(extents, max_call_bytes);
  std::string err;
  // Collective: every rank makes as many calls as the rank with the most.
  long long mine = static_cast<long long>(calls.size()), n_calls = 0;
  MPI_Allreduce(&mine, &n_calls, 1, MPI_LONG_LONG, MPI_MAX, comm);
  for (long long i = 0; i < n_calls; ++i) {
    int rc = MPI_SUCCESS;
    MPI_Datatype mt = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
    MPI_Offset disp = 0;
    if (i < mine && err.empty()) {
      const auto& call = calls[static_cast<std::size_t>(i)];
      rc = memory_type(call, &mt);
      // File type: the call's byte runs relative to its first byte (merged when adjacent).
      std::vector<int> len;
      std::vector<MPI_Aint> at;
      for (const auto& p : call) {
        const MPI_Aint rel = static_cast<MPI_Aint>(p.offset - call.front().offset);
        if (!at.empty() && at.back() + len.back() == rel) len.back() += static_cast<int>(p.bytes);
        else {
          at.push_back(rel);
          len.push_back(static_cast<int>(p.bytes));
        }
      }
      if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_hindexed(static_cast<int>(at.size()), len.data(), at.data(), MPI_BYTE, &ft);
      if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&ft);
      disp = static_cast<MPI_Offset>(base + call.front().offset);
      if (rc != MPI_SUCCESS) err = mpi_error(rc, "building MPI datatypes");
    }
    // Every rank joins both collectives, with nothing to write if it has no data.
    const bool has = mt != MPI_DATATYPE_NULL && ft != MPI_DATATYPE_NULL && err.empty();
    rc = MPI_File_set_view(fh, has ? disp : 0, MPI_BYTE, has ? ft : MPI_BYTE, "native", MPI_INFO_NULL);
    if (rc != MPI_SUCCESS && err.empty()) err = mpi_error(rc, "MPI_File_set_view");
    rc = has ? MPI_File_write_at_all(fh, 0, MPI_BOTTOM, 1, mt, MPI_STATUS_IGNORE)
             : MPI_File_write_at_all(fh, 0, nullptr, 0, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS && err.empty()) err = mpi_error(rc, "MPI_File_write_at_all");
    if (mt != MPI_DATATYPE_NULL) MPI_Type_free(&mt);
    if (ft != MPI_DATATYPE_NULL) MPI_Type_free(&ft);
  }
  // Back to HDF5's view: it writes contiguous blocks with MPI_BYTE at absolute offsets.
  int rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  if (rc != MPI_SUCCESS && err.empty()) err = mpi_error(rc, "MPI_File_set_view (reset)");
  return err;
}

}  // namespace rwd::kernel::detail

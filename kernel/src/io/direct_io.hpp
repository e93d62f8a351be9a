// Private: zero-copy writes (and reads) of a dataset's rows straight from (into) the
// caller's arrays.
//
// When a grid's cell array holds exactly its row of a dataset (no halo, the file's
// element type), packing it into the linear buffer is a copy for nothing: the kernel
// then writes the rank's rows of that (contiguous, early-allocated) dataset through
// HDF5's own MPI-IO file handle, with an MPI memory type that points at every grid's
// array (MPI_BOTTOM + absolute addresses) and a file view of the rank's rows. The bytes
// in the file are exactly those H5Dwrite would have written; the format is unchanged.
#pragma once
#include "rewind/kernel/read_breakdown.hpp"
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/h5util.hpp"

namespace rwd::kernel::detail {

/// The MPI file handle under an HDF5 file open with the MPI-IO driver (H5Fget_vfd_handle).
MPI_File mpi_file_of(const h5::Ctx& c, hid_t file);

/// The interior sz*sy*sx cells of a padded array with `halo` ghost layers of `elem` on
/// every side (C order), as a committed MPI subarray type; none (MPI_DATATYPE_NULL) for
/// halo 0, where the interior is the whole, contiguous array. Frees the type at the end.
class InteriorType {
 public:
  InteriorType(int sx, int sy, int sz, int halo, MPI_Datatype elem);
  InteriorType(const InteriorType&) = delete;
  InteriorType& operator=(const InteriorType&) = delete;
  ~InteriorType();
  [[nodiscard]] MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// `bytes` bytes at `src` belong at byte `offset` of the dataset's data. With a `layout`
/// (an MPI datatype of exactly `bytes` bytes, e.g. the interior of a halo'd array), those
/// bytes are gathered from `src` as the type describes; without, they are contiguous.
struct WriteExtent {
  const void* src = nullptr;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
  MPI_Datatype layout = MPI_DATATYPE_NULL;
};

/// Writes this rank's `extents` (increasing, non-overlapping offsets) of a dataset whose
/// data starts at byte `base` of the file. `collective`: one file view + one
/// MPI_File_write_at_all per call on every rank of `comm` (ranks with fewer or no extents
/// still take part); otherwise one MPI_File_write_at per contiguous file run. Calls hold
/// at most `max_call_bytes` per rank (MPI counts are int). The file view is reset to
/// HDF5's (displacement 0, MPI_BYTE) before returning. Returns an empty string or this
/// rank's first MPI error (callers agree on errors across ranks).
std::string write_extents(MPI_File fh, MPI_Comm comm, std::int64_t base, const std::vector<WriteExtent>& extents,
                          bool collective, std::int64_t max_call_bytes = std::int64_t{1} << 30);

/// This thread may run only on one CPU (mpirun binds a rank to a core when there are no
/// more ranks than cores): a helper thread would then take this thread's own CPU time.
bool bound_to_one_cpu();

/// Moves the calling thread to `cpu` (no-op for cpu < 0); false if the system refuses.
bool pin_this_thread(int cpu);

/// Where a rank's row hashes can run beside its writes (collective over `comm`).
struct CpuPlan {
  int spare_cpu = -1;           ///< a bound rank's: an online CPU that no rank of `comm` on this
                                ///< node is bound to, one per bound rank in node order, that a
                                ///< thread may really run on (a batch system's cpuset can forbid
                                ///< it); -1 if none, and always -1 for an unbound rank
  bool node_has_spare = false;  ///< the node's ranks of `comm` may use more CPUs than they
                                ///< are ranks (an unbound rank's helper then finds a CPU)
};
/// Ranks outside `comm` (another job, an I/O or server rank) are not seen: a CPU they are
/// bound to may be handed out.
CpuPlan plan_cpus(MPI_Comm comm, bool bound);

/// One row to read: the `row_bytes` bytes at byte `offset` of the file go to `dst`.
struct ReadRow {
  void* dst = nullptr;
  std::int64_t offset = 0;
};

/// Reads `rows` (sorted by offset) with contiguous memory only, independent calls, on
/// the calling thread. Without `place`: straight into each `dst`, one MPI_File_read_at per
/// run of rows that are adjacent both in the file and in memory (per `chunk_bytes` of
/// such a run when `check` is given, so the rows are checked while cache-hot). With
/// `place`: runs of rows adjacent in the file are read in chunks of about `chunk_bytes`
/// into one bounce buffer, and `place(row, dst)` puts each row where it belongs (e.g. the
/// interior of a halo'd array). `check(i, hash)`, if given, gets the hash_bytes
/// (checksum.hpp) of every row's bytes as read (row i of `rows`, in order) right after
/// its chunk lands, before it is placed.
/// Returns an empty string or this rank's first MPI error (rows after it are neither
/// checked nor placed). Adds to the process's read breakdown
/// (rewind/kernel/read_breakdown.hpp). A helper thread hashing or placing the previous
/// chunk while the next is read was slower on shared CPUs (bench/kernel/HISTORY.md, §4 "Restart reads: rows checked as
/// they land").
using RowCheck = std::function<void(std::size_t, std::uint64_t)>;
std::string read_rows(MPI_File fh, const std::vector<ReadRow>& rows, std::int64_t row_bytes,
                      const std::function<void(const unsigned char*, void*)>& place, const RowCheck& check = {},
                      std::int64_t chunk_bytes = std::int64_t{16} << 20);

/// memcpy with non-temporal stores where it can (x86-64, 8-byte aligned rows of whole
/// doubles): the copy neither reads the destination's lines first (no read-for-ownership)
/// nor evicts the cache with them. Call stream_fence before anyone else reads `dst`.
void stream_copy(void* dst, const void* src, std::size_t bytes);
/// Orders the non-temporal stores of stream_copy and hash_and_copy before what follows.
void stream_fence();

/// Rows of one file read with O_DIRECT and Linux native AIO, past the page cache: up to
/// `depth` chunks of about `chunk_bytes` (runs of rows adjacent in the file, widened to
/// 4 KiB boundaries) in flight at once, also while one is checked (depth + 1 buffers),
/// into aligned buffers that the object keeps (2 MiB pages where the system allows:
/// 4 KiB pages cut a read into ~1 MiB requests), while the calling thread checks and
/// places the chunk that landed first (without `place`: copies with stream_copy, hashing
/// in the same pass when checked). The disk streams while the CPU hashes, and no CPU time
/// goes into filling and copying out of the page cache. (Reading straight into aligned
/// arrays was slower on this VM: bench/kernel/HISTORY.md, §8 "Restart reads past the page cache".) Where the file
/// system refuses O_DIRECT or AIO, usable() is false: use read_rows. The AIO context is
/// the calling thread's, kept for the thread's life (bench/kernel/HISTORY.md, §18):
/// use an object on the thread that made it. Eight chunks in flight and a restart's fields
/// read as one stream (read(jobs)): 2-rank restart reads 0.88 -> 0.95 x IOR's read
/// pattern on this project's VM (bench/kernel/HISTORY.md, §19 "one stream across fields, eight reads in flight").
class DirectReads {
 public:
  explicit DirectReads(const std::string& path, std::int64_t chunk_bytes = std::int64_t{4} << 20, int depth = 8);
  DirectReads(const DirectReads&) = delete;
  DirectReads& operator=(const DirectReads&) = delete;
  ~DirectReads();
  [[nodiscard]] bool usable() const { return fd_ >= 0 && ctx_ != 0; }
  /// At least half of the pages under `rows` are in the page cache (e.g. a step written
  /// moments ago): a buffered read (read_rows) copies them without touching the disk.
  [[nodiscard]] bool mostly_cached(const std::vector<ReadRow>& rows, std::int64_t row_bytes) const;
  /// read_rows' contract with `place` and `check` (rows sorted by offset; without
  /// `place`, each row is copied to its `dst`); the same errors (a short read: "shorter").
  std::string read(const std::vector<ReadRow>& rows, std::int64_t row_bytes,
                   const std::function<void(const unsigned char*, void*)>& place, const RowCheck& check);
  /// One list of rows for read(jobs), with read()'s contract (e.g. one field of a restart).
  struct Job {
    const std::vector<ReadRow>* rows = nullptr;
    std::int64_t row_bytes = 0;
    std::function<void(const unsigned char*, void*)> place;
    RowCheck check;
  };
  /// The jobs in order as one stream of reads: the next job's first chunks are read while
  /// this one's last are checked and placed, so the disk's queue does not drain between
  /// them (between the fields of a restart; bench/kernel/HISTORY.md, §17, §19). On an
  /// error, `failed_job` (if given) is the job it belongs to; later rows are left alone.
  std::string read(const std::vector<Job>& jobs, std::size_t* failed_job = nullptr);

 private:
  struct Span;  // one read: rows [a, b) of job `job`'s list, file bytes [at, at + bytes)
  void plan(const Job& job, std::size_t index, std::vector<Span>& spans) const;
  bool submit(const Span& s, int slot);
  int reap();               // one io_getevents: results into result_; 0 or -errno
  long wait_for(int slot);  // the slot's result (bytes or -errno)
  void drain();             // until none in flight (or the system will not say)

  int fd_ = -1;
  unsigned long ctx_ = 0;  // aio_context_t: this thread's (ThreadAio in direct_io.cpp)
  std::int64_t chunk_bytes_;
  int depth_;
  std::size_t slot_bytes_ = 0;
  unsigned char* buffers_ = nullptr;  // depth_ + 1 slots of slot_bytes_, 4 KiB aligned
  std::vector<long> result_;          // per slot: bytes read, -errno, or LONG_MIN while in flight
  int in_flight_ = 0;
};

/// The breakdown read_rows adds to (reset by Reader::read_fields_into).
ReadBreakdown& read_breakdown();

}  // namespace rwd::kernel::detail

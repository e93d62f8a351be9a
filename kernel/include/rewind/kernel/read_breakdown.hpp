// Where a restart read spends its time, for benchmarks (bench/kernel: the read's time
// breakdown next to the write's). C++17, like every public kernel header.
#pragma once

namespace rwd::kernel {

/// This thread's last Reader::read_fields_into on its direct path (a collective reader,
/// contiguous float64 datasets), all datasets together, in seconds of this process's
/// wall clock. Rows are hashed and placed on the reading thread as each chunk lands
/// (`hash` and `place` add to the time); `wait` is 0 unless a helper thread does it.
struct ReadBreakdown {
  double setup = 0;      ///< checksums table + opening and checking the datasets (one agreement)
  double read = 0;       ///< waiting for reads: inside MPI_File_read_at (this rank's
                         ///< independent calls), or for the disk past the page cache
  double wait = 0;       ///< the reading thread waiting for a helper (none since rows are checked on the reading thread: 0)
  double hash = 0;       ///< hashing rows against their checksums
  double place = 0;      ///< putting rows into halo'd arrays (from a bounce buffer)
  long long calls = 0;   ///< read calls (MPI_File_read_at, or O_DIRECT chunks)
  long long bytes = 0;   ///< bytes read
  long long direct_bytes = 0;  ///< of which read with O_DIRECT past the page cache (then `read`
                               ///< is waiting for the disk, `place` includes copying
                               ///< halo-free rows into their arrays and, with checksums,
                               ///< hashing them in the same pass: `hash` is then 0)
};

/// The breakdown of the calling thread's last read_fields_into (zeros before the first,
/// or if it did not take the direct path); threads reading at once each keep their own.
ReadBreakdown last_read_breakdown();

}  // namespace rwd::kernel

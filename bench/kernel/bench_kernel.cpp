// Kernel checkpoint write / restart read vs. IOR's and h5bench VPIC-IO's access patterns,
// raw MPI-IO and dd: same bytes, same file system, measured side by side in interleaved rounds (docs/benchmarks.md,
// "Kernel write/read"). One file on purpose: every contender, the round rotation and the report sit side by side, so a
// reader checks in one place that all of them move the same bytes.
//
//   mpiexec -n P rewind_bench_kernel DIR [--rounds R] [--vars V] [--halo H] [--quick]
//                                        [--zero-copy-halo] [--one-file] [--only durable|cache|read]
//                                        [--contenders K,KA,KB,KN,KT,KC,KI,KS,R,P,I,Ii,V,D]
//                                        [--io KEY=VALUE ...]   (more IoOptions for K)
//
// Tree: full octree to level 3 (585 grids), 32^3 cells per grid, V float64 variables
// (default 8: 1.14 GiB of cell data, 1.23 GB with topology). --quick = 3 rounds, 2 vars.
// Each grid's variables are separate arrays with H ghost layers (default 0: the kernel
// writes them zero-copy; --halo 1 is the solver's layout, which the kernel packs unless
// --zero-copy-halo).
//
// One round = three groups, each in the order of row r of a Williams Latin square (every
// contender follows every other one equally often over the rounds):
//   write, durable (fsync included):  K  kernel, views off   Writer::create + write_step
//                                                            (flush -> marker -> flush) + close,
//                                                            default options (strategy "auto")
//                                                            but statistics off (as before 1.9)
//                                     KA kernel via the C API  K's bytes through rewind.h, as a C
//                                                            or Fortran code writes: config +
//                                                            grids described once (untimed),
//                                                            rewind_file_create + _write
//                                                            (REWIND_CHECKPOINT) + _close; views
//                                                            off, other options default. K / KA
//                                                            is what the C layer costs
//                                     KN kernel, no checksums  K with IoOptions::checksums
//                                                            off: K / KN is what the per-row
//                                                            hashes cost (format 1.4)
//                                     KT kernel, statistics    K with IoOptions::statistics on
//                                                            (the default since 2026-12-03): KT / K
//                                                            is what the per-grid statistics
//                                                            cost (1.9)
//                                     KC kernel, collective  K with strategy "collective" (the
//                                                            default before "auto": two-phase
//                                                            for every dataset)
//                                     KI kernel, independent K with strategy "independent"
//                                                            (the same rows, independent
//                                                            MPI-IO transfers)
//                                     KS kernel, paper path  same, with IoOptions::zero_copy,
//                                                            pipeline and early_writeback off
//                                                            (pack into the linear buffer,
//                                                            collective H5Dwrite, pack, write,
//                                                            ..., fsync at commit)
//                                     P  POSIX, DRAM         R's bytes with pwrite() in 1 MiB
//                                                            pieces of the rank's buffer
//                                                            (page_cache_limit's dram-1MiB)
//                                                            + fsync + close
//                                     R  raw MPI-IO          open(create) + one contiguous
//                                                            MPI_File_write_at_all per rank
//                                                            + MPI_File_sync + close
//                                     I  IOR's pattern       R's blocks in 16 MiB collective
//                                                            MPI_File_write_at_all + sync
//                                                            (ior -a MPIIO -c -t 16m -e)
//                                     Ii IOR, independent    the same, MPI_File_write_at
//                                     V  VPIC-IO's pattern   h5bench_write 1-D: 8 datasets of
//                                                            4-byte values, a contiguous
//                                                            hyperslab per rank, collective
//                                                            H5Dwrite, H5Fflush (sync), close
//                                     D  dd                  dd bs=1M conv=fdatasync (rank 0)
//   write, page cache (no fsync):     K, KN, KT, KC, KI (flush_on_commit=false; create + write_step,
//                                     the close() that syncs is outside the timer), R, P, I,
//                                     V (no sync), D (plain dd)
//   read (restart):                   K  Reader::open + read_topology + every variable of
//                                        the rank's rows (partition_rows), one read_fields_into
//                                        straight into per-grid arrays (halo'd with --halo)
//                                     KB K through the page cache (REWIND_READ_DIRECT=0:
//                                        buffered MPI_File_read_at, no O_DIRECT)
//                                     KN the same from KN's file (nothing to verify)
//                                     R  one contiguous MPI_File_read_at_all per rank
//                                     I  IOR's read pattern: 16 MiB MPI_File_read_at_all
//                                     Ii the same, MPI_File_read_at (ior -a MPIIO without -c)
//                                     D  dd if=FILE of=/dev/null bs=1M (rank 0)
// --one-file (with --only durable or cache): every contender writes the same file name,
// so that nothing but the access pattern differs (on this VM a durable write was seen to
// depend on which name it wrote; bench/kernel/HISTORY.md, "Restated 2026-11-26").
// --fresh-files: every round, before its reads, the file of every read contender is written
// anew (untimed), in the round's read order: a file's place on the disk, and being the
// file written last, can favour or slow all reads of it for a whole run
// (bench/kernel/HISTORY.md, §15 "a bench that draws the files anew").
// Every write target is unlinked before its write (untimed; then sync, 1 s for the disk's
// discards, sync), page-cache writes are
// fsynced after the timer stops, and before every read the file is fsynced and evicted
// with posix_fadvise(DONTNEED) (untimed). Times are wall time from a barrier to the
// slowest rank's end. Ranks that wait for rank 0's dd sleep (no busy polling).
//
// Output: one "op" line per measurement (after each read a "disk" line: the requests the
// disk under DIR completed meanwhile, their mean size and time from submission to
// completion, the disk's busy time and mean queue depth, from its /sys/dev/block counters;
// the machine's other I/O included), then a summary per contender (median, min, max in
// GiB/s), the median (min-max) of the per-round ratios kernel/raw and kernel/dd, and the
// kernel's time breakdown (median over rounds, durable K writes).
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_step.hpp"
#include "rewind/kernel/kernel.hpp"
#include "rewind/kernel/read_breakdown.hpp"
#include "rewind/rewind.h"

extern char** environ;

namespace k = rwd::kernel;

namespace {
constexpr int S = 32;
int rank_ = 0, size_ = 1;

/// A barrier that sleeps instead of spinning (ranks waiting for rank 0's dd must not
/// steal one of the two cores from it).
void quiet_barrier() {
  MPI_Request rq;
  MPI_Ibarrier(MPI_COMM_WORLD, &rq);
  int done = 0;
  while (true) {
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (done) break;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

/// The counters of the disk under `path` (/sys/dev/block/MAJ:MIN/stat, the fields of
/// the kernel's Documentation/block/stat.rst): what a read asked of the disk, and how
/// long the disk took per request. Empty where the file system has no block device.
struct DiskStat {
  bool ok = false;
  long long reads = 0, sectors = 0, read_ms = 0, busy_ms = 0, queue_ms = 0;
};
DiskStat disk_stat(const std::string& path) {
  DiskStat d;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return d;
  const std::string sys =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)) + "/stat";
  if (FILE* f = std::fopen(sys.c_str(), "r")) {
    long long v[11] = {};
    int n = 0;
    while (n < 11 && std::fscanf(f, "%lld", &v[n]) == 1) ++n;
    std::fclose(f);
    if (n == 11) d = {true, v[0], v[2], v[3], v[9], v[10]};
  }
  return d;
}
DiskStat disk_before_;  // rank 0: the counters right before the read being timed

void fsync_evict(const std::string& p, bool evict) {
  if (rank_ == 0) {
    int fd = ::open(p.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      if (evict) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
    disk_before_ = disk_stat(p);
  }
  quiet_barrier();
}

std::array<double, 3> read_parts_{};  // last kernel read: open, topology, cell data (s)

/// The last read_fields_into's breakdown (kernel/read_breakdown.hpp), max over ranks, into
/// `bd` under `who`: where a restart read's cell-data time goes.
void read_breakdown(std::map<std::string, std::vector<double>>& bd, const std::string& who) {
  const auto b = rwd::kernel::last_read_breakdown();
  double mine[7] = {b.setup,
                    b.read,
                    b.hash,
                    b.place,
                    static_cast<double>(b.calls),
                    static_cast<double>(b.bytes) / std::max(1LL, b.calls) / (1 << 20),
                    100.0 * static_cast<double>(b.direct_bytes) / static_cast<double>(std::max(1LL, b.bytes))},
         all[7];
  MPI_Allreduce(mine, all, 7, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // Rows are hashed (and placed) on the reading thread as each chunk lands: the read's
  // cell-data time is setup + waiting for the read + hashing + placing. Past the page
  // cache (O_DIRECT) the wait is for the disk, with the next chunks already in flight,
  // and placing includes copying halo-free rows out of the aligned buffers (and hashing
  // them in the same pass: hashing then reads 0).
  bd[who + " cell data: setup (checksums table + datasets)"].push_back(all[0]);
  bd[who + " cell data: waiting for reads (MPI_File_read_at or O_DIRECT)"].push_back(all[1]);
  bd[who + " cell data: hashing, as each chunk lands"].push_back(all[2]);
  bd[who + " cell data: placing into the arrays (+ hashing if fused)"].push_back(all[3]);
  bd[who + " cell data: read calls per rank"].push_back(all[4]);
  bd[who + " cell data: MiB per read call"].push_back(all[5]);
  bd[who + " cell data: % of bytes read past the page cache"].push_back(all[6]);
}

void remove_target(const std::string& p) {
  if (rank_ == 0) rwd::bench::remove_and_settle(p, k::views_directory(p));
  quiet_barrier();
}

double max_over_ranks(double t) { return rwd::bench::max_over(MPI_COMM_WORLD, t); }

/// Runs dd on rank 0 (others sleep); returns the wall time on every rank.
double run_dd(const std::vector<std::string>& args) {
  double t = 0;
  if (rank_ == 0) {
    std::vector<char*> av;
    for (const auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    const double t0 = MPI_Wtime();
    pid_t pid = 0;
    int st = 0;
    if (posix_spawnp(&pid, "dd", &fa, nullptr, av.data(), environ) != 0 || waitpid(pid, &st, 0) < 0 ||
        !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::fprintf(stderr, "dd failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    t = MPI_Wtime() - t0;
    posix_spawn_file_actions_destroy(&fa);
  }
  quiet_barrier();
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t;
}

/// Row `r` of a Williams design for n treatments: over n rows (2n when n is odd, the
/// second n reversed) every contender follows every other one equally often.
std::vector<int> williams_row(int n, int r) {
  std::vector<int> row;
  for (int j = 0; j < n; ++j) row.push_back(j % 2 == 0 ? j / 2 : n - (j + 1) / 2);
  if (n % 2 == 1 && (r / n) % 2 == 1) std::reverse(row.begin(), row.end());
  for (int& c : row) c = (c + r) % n;
  return row;
}

using rwd::bench::median;

/// Applies "KEY=VALUE" strings with kernel::set_option ("true"/"false" are bools, digits
/// sizes, other numbers numbers (zfp_accuracy=1e-4), anything else a string). Throws
/// std::invalid_argument naming the option.
void apply_io_sets(k::IoOptions& o, const std::vector<std::string>& sets) {
  for (const auto& kv : sets) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq), val = eq == std::string::npos ? "" : kv.substr(eq + 1);
    k::OptionValue v = val;
    if (val == "true" || val == "false") v = val == "true";
    else if (!val.empty() && val.find_first_not_of("0123456789") == std::string::npos) v = std::int64_t{std::stoll(val)};
    else if (char* end = nullptr; !val.empty() && (std::strtod(val.c_str(), &end), *end == '\0')) v = std::strtod(val.c_str(), nullptr);
    k::set_option(o, key, v);
  }
}

struct Series {
  std::vector<double> gibs;   // per round, GiB/s
  std::vector<double> secs;
};
}  // namespace

int main(int argc, char** argv) {
  int provided = 0;  // FUNNELED: the kernel's pipeline helpers need it (IoOptions::pipeline)
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  std::string dir = ".";
  int nvars = 8, rounds = 5, halo = 0;
  bool zero_copy_halo = false;  // --zero-copy-halo: K sets IoOptions::zero_copy_halo
  bool one_file = false;        // --one-file: every contender writes the same file name (writes only)
  bool fresh_files = false;     // --fresh-files: the read contenders' files written anew every round
  std::vector<std::string> io_sets;  // --io KEY=VALUE: more IoOptions for K (set_option)
  std::string only;  // "durable", "cache" or "read": run just that group (quicker experiments)
  std::string contenders;  // --contenders K,I,...: run just these (default all)
  // Bad arguments: one line on rank 0, exit status 2, before any file is touched.
  std::string bad_arg;
  bool help = false, have_dir = false;
  auto number = [&](const char* opt, const char* v, int lo) {
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || x < lo || x > 100000) {
      bad_arg = std::string(opt) + " must be a whole number >= " + std::to_string(lo) + ", got '" + v + "'";
      return lo;
    }
    return static_cast<int>(x);
  };
  for (int i = 1; i < argc && bad_arg.empty(); ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") {
      help = true;
    } else if (a == "--quick") {
      rounds = 3;
      nvars = 2;
    } else if (a == "--zero-copy-halo") {
      zero_copy_halo = true;
    } else if (a == "--one-file") {
      one_file = true;
    } else if (a == "--fresh-files") {
      fresh_files = true;
    } else if ((a == "--rounds" || a == "--only" || a == "--contenders" || a == "--io" || a == "--halo" ||
                a == "--vars") &&
               !has_value) {
      bad_arg = a + " needs a value";
    } else if (a == "--rounds") {
      rounds = number("--rounds", argv[++i], 1);
    } else if (a == "--only") {
      only = argv[++i];
      if (only != "durable" && only != "cache" && only != "read")
        bad_arg = "--only must be durable, cache or read, got '" + only + "'";
    } else if (a == "--contenders") {
      contenders = argv[++i];
      std::string item;
      for (std::size_t at = 0; at <= contenders.size() && bad_arg.empty(); ++at) {
        if (at < contenders.size() && contenders[at] != ',') {
          item += contenders[at];
          continue;
        }
        static const std::set<std::string> known{"K",  "KA", "KB", "KN", "KT", "KC", "KI",
                                                 "KS", "R",  "P",  "I",  "Ii", "V",  "D"};
        if (!known.count(item))
          bad_arg = "--contenders: unknown contender '" + item + "' (known: K,KA,KB,KN,KT,KC,KI,KS,R,P,I,Ii,V,D)";
        item.clear();
      }
    } else if (a == "--io") {
      io_sets.emplace_back(argv[++i]);
    } else if (a == "--halo") {
      halo = number("--halo", argv[++i], 0);
    } else if (a == "--vars") {
      nvars = number("--vars", argv[++i], 1);
    } else if (!a.empty() && a[0] == '-') {
      bad_arg = "unknown option '" + a + "'";
    } else if (have_dir) {
      bad_arg = "one directory only, got '" + dir + "' and '" + a + "'";
    } else {
      dir = a;
      have_dir = true;
    }
  }
  if (help) {
    if (rank_ == 0)
      std::puts(
          "usage: mpiexec -n P rewind_bench_kernel DIR [--rounds R] [--vars V] [--halo H] [--quick]\n"
          "         [--zero-copy-halo] [--one-file] [--fresh-files] [--only durable|cache|read] [--contenders "
          "K,KA,KB,KN,KT,KC,KI,KS,R,P,I,Ii,V,D]\n"
          "         [--io KEY=VALUE ...]\n"
          "Writes and reads a 1.14 GiB step in DIR (an existing directory) with each contender in\n"
          "interleaved rounds; see the comment at the top of bench/kernel/bench_kernel.cpp and\n"
          "docs/benchmarks.md and bench/kernel/HISTORY.md.");
    MPI_Finalize();
    return 0;
  }
  struct stat dir_st {};
  if (bad_arg.empty() && one_file && only != "durable" && only != "cache")
    bad_arg = "--one-file needs --only durable or --only cache (a read needs its contender's own file)";
  if (bad_arg.empty() && !have_dir) bad_arg = "no directory given (usage: rewind_bench_kernel DIR [options]; --help)";
  if (bad_arg.empty() && (::stat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)))
    bad_arg = "'" + dir + "' is not an existing directory";
  if (!bad_arg.empty()) {
    if (rank_ == 0) std::fprintf(stderr, "rewind_bench_kernel: %s\n", bad_arg.c_str());
    MPI_Finalize();
    return 2;
  }

  try {  // bad --io values: one line, before any file is touched
    k::IoOptions probe;
    apply_io_sets(probe, io_sets);
  } catch (const std::exception& e) {
    if (rank_ == 0) std::fprintf(stderr, "rewind_bench_kernel: --io: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }

  // ---- the tree and this rank's data (each grid: nvars separate arrays, as a solver has) ----
  rwd::bench::BenchStep bs(rank_, size_, nvars, halo);
  const k::CommonInfo& cm = bs.common;
  const k::LocalGrids& lg = bs.grids;
  const k::StepInfo& si = bs.info;
  const auto& index_of = bs.index_of;
  const std::size_t n = bs.total_grids, cells = S * S * S;
  const auto side = static_cast<std::size_t>(S + 2 * halo);
  const std::size_t padded = side * side * side;

  // Each contender's own file, or with --one-file one name for all: on this VM a
  // contender's durable write was seen to depend on its file's name (bench/kernel/HISTORY.md,
  // "Restated 2026-11-26"), so --one-file takes the name out of the comparison.
  auto file_for = [&](const char* own) { return dir + (one_file ? "/bench_target.bin" : own); };
  const std::string kfile = file_for("/bench_kernel.h5"), rfile = file_for("/bench_raw.bin"),
                    dfile = file_for("/bench_dd.bin");
  const std::string ksfile = file_for("/bench_kernel_serial.h5"), knfile = file_for("/bench_kernel_nosum.h5");
  const std::string ktfile = file_for("/bench_kernel_stats.h5");
  const std::string kifile = file_for("/bench_kernel_indep.h5"), kcfile = file_for("/bench_kernel_coll.h5");

  // ---- kernel contenders ----
  std::map<std::string, double> phase_t;  // rank-local timestamps of the last K write
  std::int64_t step_bytes = 0, buffer_bytes = 0, local_bytes = 0, direct_datasets = 0;
  auto kernel_write = [&](bool durable, bool serial, const std::string& path, bool checksums = true,
                          const char* strategy = nullptr, bool statistics = false) {
    k::IoOptions o;
    o.write_views = false;
    o.zero_copy = o.pipeline = o.early_writeback = !serial;
    o.zero_copy_halo = !serial && zero_copy_halo;
    if (!serial) apply_io_sets(o, io_sets);
    if (!checksums) o.checksums = false;
    o.statistics = statistics;
    if (strategy) k::set_option(o, "strategy", std::string(strategy));
    o.flush_on_commit = durable;
    k::WriterEnv env;
    env.on_phase = [&](const char* ph) { phase_t[ph] = MPI_Wtime(); };
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    phase_t.clear();
    phase_t["begin"] = t0;
    k::Writer w = k::Writer::create(MPI_COMM_WORLD, path, cm, o, env);
    phase_t["file_created"] = MPI_Wtime();
    k::WriteStats st = w.write_step(si, lg);
    phase_t["step_returned"] = MPI_Wtime();
    double t = 0;
    if (durable) {
      w.close();  // final flush (MPI_File_sync) + close
      phase_t["closed"] = MPI_Wtime();
      t = max_over_ranks(MPI_Wtime() - t0);
    } else {
      t = max_over_ranks(MPI_Wtime() - t0);
      w.close();  // syncs: outside the page-cache timer
    }
    step_bytes = st.bytes;
    buffer_bytes = st.in_place.buffer_bytes;
    if (!serial) direct_datasets = st.in_place.direct_datasets;
    local_bytes = st.bytes_local;
    return t;
  };

  // ---- the kernel through the C API (rewind.h): what a C or Fortran code calls ----
  // K's own file (each removes it first): on this VM the same kernel call writing into a
  // second file measured 0.45-0.95 of K in 4-round runs, so KA writes where K writes and
  // the ratio is the C API's alone.
  const std::string kafile = kfile;
  rewind_config* ka_cfg = nullptr;
  rewind_grids* ka_grids = nullptr;
  auto capi_check = [](int rc, const char* what) {
    if (rc != REWIND_OK) {
      std::fprintf(stderr, "rewind_bench_kernel: %s: %s\n", what, rewind_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  };
  auto capi_setup = [&] {  // once, untimed: a code describes its run and its grids once
    capi_check(rewind_config_create(&ka_cfg), "rewind_config_create");
    const int cells3[3] = {S, S, S};
    const double dom[6] = {0, 1, 0, 1, 0, 1};
    capi_check(rewind_config_set_geometry(ka_cfg, 3, cells3, 2, dom), "rewind_config_set_geometry");
    for (const auto& v : cm.variables) capi_check(rewind_config_add_variable(ka_cfg, v.name.c_str(), v.unit.c_str()), "add_variable");
    capi_check(rewind_config_set_option(ka_cfg, "write_views", "false"), "set_option write_views");
    capi_check(rewind_config_set_option(ka_cfg, "statistics", "false"), "set_option statistics");  // as K
    capi_check(rewind_grids_create(&ka_grids, halo), "rewind_grids_create");
    for (const auto& g : lg.grids) {
      std::int64_t at = 0;
      capi_check(rewind_grids_add(ka_grids, g.uid, g.level, g.sort_key, g.bbox.data(), g.parent_uid,
                                  static_cast<int>(g.child_uids.size()), g.child_uids.data(), &at),
                 "rewind_grids_add");
      for (std::size_t v = 0; v < g.fields.size(); ++v)
        capi_check(rewind_grids_set_field(ka_grids, at, static_cast<int>(v), g.fields[v]), "rewind_grids_set_field");
    }
  };
  std::array<double, 3> capi_parts{};  // create, write, close (max over ranks)
  auto capi_write = [&](const std::string& path) {  // durable: committed when write returns, close syncs
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    rewind_file* f = nullptr;
    capi_check(rewind_file_create(&f, MPI_COMM_WORLD, path.c_str(), ka_cfg), "rewind_file_create");
    const double t1 = MPI_Wtime();
    capi_check(rewind_file_write(f, si.step, si.time, si.dt, REWIND_CHECKPOINT, ka_grids, 0, nullptr, 0), "rewind_file_write");
    const double t2 = MPI_Wtime();
    capi_check(rewind_file_close(f), "rewind_file_close");
    const double t3 = MPI_Wtime();
    capi_parts = {max_over_ranks(t1 - t0), max_over_ranks(t2 - t1), max_over_ranks(t3 - t2)};
    return max_over_ranks(t3 - t0);
  };

  // ---- raw MPI-IO: the same total bytes, one contiguous block per rank, same hints ----
  k::IoOptions defaults;
  auto raw_info = [&] {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", defaults.romio_cb_write.c_str());
    MPI_Info_set(info, "romio_cb_read", defaults.romio_cb_read.c_str());
    MPI_Info_set(info, "romio_ds_write", defaults.romio_ds_write.c_str());
    MPI_Info_set(info, "cb_buffer_size", std::to_string(defaults.cb_buffer_size).c_str());
    return info;
  };
  std::vector<char> rbuf;
  MPI_Offset r_mine = 0, r_off = 0;
  auto raw_layout = [&] {
    const MPI_Offset total = step_bytes;
    r_off = total * rank_ / size_;
    r_mine = total * (rank_ + 1) / size_ - r_off;
    rbuf.assign(static_cast<std::size_t>(r_mine), 1);
  };
  auto raw_write = [&](bool durable) {
    MPI_Info info = raw_info();
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_File_open(MPI_COMM_WORLD, rfile.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    MPI_Offset done = 0;
    do {  // pieces < 2 GiB (int counts); every rank takes part at least once
      int chunk = static_cast<int>(std::min<MPI_Offset>(r_mine - done, 1 << 30));
      MPI_File_write_at_all(fh, r_off + done, rbuf.data() + done, chunk, MPI_BYTE, MPI_STATUS_IGNORE);
      done += chunk;
    } while (done < r_mine);
    if (durable) MPI_File_sync(fh);
    MPI_File_close(&fh);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    MPI_Info_free(&info);
    return t;
  };
  auto raw_read = [&] {
    MPI_Info info = raw_info();
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_File_open(MPI_COMM_WORLD, rfile.c_str(), MPI_MODE_RDONLY, info, &fh);
    MPI_Offset done = 0;
    do {
      int chunk = static_cast<int>(std::min<MPI_Offset>(r_mine - done, 1 << 30));
      MPI_File_read_at_all(fh, r_off + done, rbuf.data() + done, chunk, MPI_BYTE, MPI_STATUS_IGNORE);
      done += chunk;
    } while (done < r_mine);
    MPI_File_close(&fh);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    MPI_Info_free(&info);
    return t;
  };
  // ---- IOR's access pattern (ior -a MPIIO [-c] -t 16m -b BLOCK -e): each rank's block
  // (the same bytes and offsets as R) in 16 MiB transfers, collective (-c) or independent,
  // fsync at the end of the write phase (-e) when durable. Collective calls need the same
  // count on every rank: ranks with fewer pieces join with empty transfers.
  constexpr MPI_Offset kXfer = 16 << 20;
  const std::string ifile = file_for("/bench_ior.bin");
  auto ior_pieces = [&] {
    long long mine = (r_mine + kXfer - 1) / kXfer, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return most;
  };
  auto ior_io = [&](bool write, bool durable, bool collective) {
    MPI_Info info = raw_info();
    MPI_File fh;
    const long long pieces = ior_pieces();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_File_open(MPI_COMM_WORLD, ifile.c_str(), write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY, info, &fh);
    for (long long i = 0; i < pieces; ++i) {
      const MPI_Offset at = std::min<MPI_Offset>(i * kXfer, r_mine);
      const int len = static_cast<int>(std::min<MPI_Offset>(kXfer, r_mine - at));
      char* p = rbuf.data() + at;
      if (write && collective) MPI_File_write_at_all(fh, r_off + at, p, len, MPI_BYTE, MPI_STATUS_IGNORE);
      else if (write) MPI_File_write_at(fh, r_off + at, p, len, MPI_BYTE, MPI_STATUS_IGNORE);
      else if (collective) MPI_File_read_at_all(fh, r_off + at, p, len, MPI_BYTE, MPI_STATUS_IGNORE);
      else MPI_File_read_at(fh, r_off + at, p, len, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    if (write && durable) MPI_File_sync(fh);
    MPI_File_close(&fh);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    MPI_Info_free(&info);
    return t;
  };

  // ---- The plainest writer of DRAM-resident data (page_cache_limit.cpp's dram-1MiB, on
  // every rank): R's bytes and offsets with POSIX pwrite() in consecutive 1 MiB pieces of
  // the rank's buffer, no MPI-IO, no HDF5; fsync at the end when durable. The page-cache
  // target is K >= 95 % of it, measured side by side.
  const std::string pfile = file_for("/bench_posix.bin");
  auto posix_write = [&](bool durable) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const int fd = ::open(pfile.c_str(), O_WRONLY | O_CREAT, 0644);
    bool ok = fd >= 0;
    for (MPI_Offset done = 0; ok && done < r_mine;) {
      const auto len = static_cast<std::size_t>(std::min<MPI_Offset>(r_mine - done, 1 << 20));
      const ssize_t wrote = ::pwrite(fd, rbuf.data() + done, len, static_cast<off_t>(r_off + done));
      ok = wrote > 0;
      done += wrote;
    }
    if (ok && durable) ok = ::fsync(fd) == 0;
    if (fd >= 0) ok = ::close(fd) == 0 && ok;
    if (!ok) {
      std::fprintf(stderr, "rank %d: pwrite to %s failed\n", rank_, pfile.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return max_over_ranks(MPI_Wtime() - t0);
  };

  // ---- h5bench VPIC-IO's pattern (h5bench_write, 1-D, CONTIG/CONTIG, COLLECTIVE_DATA=YES,
  // COLLECTIVE_METADATA=YES): 8 one-dimensional datasets of 4-byte values (x, y, z, px,
  // py, pz as float, id1, id2 as int), each rank one contiguous hyperslab of every dataset,
  // the same total bytes as K; H5Fflush (= MPI_File_sync) before the close when durable.
  const std::string vfile = file_for("/bench_vpic.h5");
  std::vector<float> vbuf;
  auto vpic_write = [&](bool durable) {
    const auto v_total = static_cast<hsize_t>(step_bytes / 32);  // elements per dataset
    const hsize_t lo_e = v_total * static_cast<hsize_t>(rank_) / static_cast<hsize_t>(size_);
    const hsize_t n_e = v_total * static_cast<hsize_t>(rank_ + 1) / static_cast<hsize_t>(size_) - lo_e;
    if (vbuf.size() != n_e) vbuf.assign(n_e, 1.0f);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    hid_t f = H5Fcreate(vfile.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    hid_t fspace = H5Screate_simple(1, &v_total, nullptr), mspace = H5Screate_simple(1, &n_e, nullptr);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &lo_e, nullptr, &n_e, nullptr);
    for (const char* name : {"x", "y", "z", "px", "py", "pz", "id1", "id2"}) {
      const bool is_id = name[0] == 'i';
      hid_t t = is_id ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
      hid_t d = H5Dcreate2(f, name, t, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, t, mspace, fspace, dxpl, vbuf.data());  // 4-byte values either way
      H5Dclose(d);
    }
    if (durable) H5Fflush(f, H5F_SCOPE_GLOBAL);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Pclose(dxpl);
    H5Fclose(f);
    H5Pclose(fapl);
    return max_over_ranks(MPI_Wtime() - t0);
  };

  // The restart's destination, allocated and touched before any timer: partition_rows
  // gives a rank at most n / size_ rows plus one per level (4 levels).
  std::vector<double> in(static_cast<std::size_t>(nvars) * (n / static_cast<std::size_t>(size_) + 4) * padded, 0.0);
  auto kernel_read = [&](const std::string& path) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    k::Reader r = k::Reader::open(path, MPI_COMM_WORLD);
    const double t1 = MPI_Wtime();
    k::StepTopology t = r.read_topology(1);
    const double t2 = MPI_Wtime();
    auto rows = k::partition_rows(t, rank_, size_);
    // Restart into arrays laid out like the written ones (halo'd with --halo): one array
    // per variable and grid, inside one allocation kept (and touched) across rounds.
    if (in.size() < static_cast<std::size_t>(nvars) * rows.size() * padded) std::abort();  // sized above
    std::vector<k::Reader::FieldRef> fields;
    std::vector<std::vector<double*>> arrays(static_cast<std::size_t>(nvars));
    for (int v = 0; v < nvars; ++v) {
      fields.push_back({"cell_data", std::string(1, 'v').append(std::to_string(v))});
      for (std::size_t j = 0; j < rows.size(); ++j)
        arrays[static_cast<std::size_t>(v)].push_back(in.data() + (static_cast<std::size_t>(v) * rows.size() + j) * padded);
    }
    r.read_fields_into(1, fields, rows, arrays, halo);
    const double t3 = MPI_Wtime();
    const double sec = max_over_ranks(t3 - t0);
    read_parts_ = {max_over_ranks(t1 - t0), max_over_ranks(t2 - t1), max_over_ranks(t3 - t2)};
    // Check (untimed) what came back: variable v of grid i holds i + v, first and last
    // interior cell.
    int bad = 0;
    const std::size_t h = static_cast<std::size_t>(halo), e = h + static_cast<std::size_t>(S) - 1;
    for (int v = 0; v < nvars; ++v)
      for (std::size_t j = 0; j < rows.size(); ++j) {
        const double want = static_cast<double>(index_of.at(t.uid[static_cast<std::size_t>(rows[j])])) + v;
        const double* got = arrays[static_cast<std::size_t>(v)][j];
        if (got[(h * side + h) * side + h] != want || got[(e * side + e) * side + e] != want) bad = 1;
      }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      if (rank_ == 0) std::fprintf(stderr, "kernel read returned wrong data\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return sec;
  };
  long long dd_mib = 0;
  auto dd_write = [&](bool durable) {
    std::vector<std::string> a{"dd", "if=/dev/zero", "of=" + dfile, "bs=1M", "count=" + std::to_string(dd_mib)};
    if (durable) a.push_back("conv=fdatasync");
    return run_dd(a);
  };
  auto dd_read = [&] { return run_dd({"dd", "if=" + dfile, "of=/dev/null", "bs=1M"}); };

  // The copy into the linear buffer, replayed outside the kernel with the kernel's loop
  // (one variable of the rank's grids at a time into one buffer of that size).
  auto copy_time = [&] {
    std::vector<double> buf(lg.grids.size() * cells);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const auto s = static_cast<std::size_t>(S), hh = static_cast<std::size_t>(halo), p = s + 2 * hh;
    for (int v = 0; v < nvars; ++v)
      for (std::size_t g = 0; g < lg.grids.size(); ++g) {
        const double* src = lg.grids[g].fields[static_cast<std::size_t>(v)];
        double* dst = buf.data() + g * cells;
        for (std::size_t z = 0; z < s; ++z)
          for (std::size_t y = 0; y < s; ++y, dst += s)
            std::memcpy(dst, src + ((z + hh) * p + y + hh) * p + hh, s * sizeof(double));
      }
    volatile double sink = buf.empty() ? 0.0 : buf[buf.size() / 2];
    (void)sink;
    return max_over_ranks(MPI_Wtime() - t0);
  };
  // The checksums' work alone: an XXH3-64 of every grid's interior per variable, as the
  // writer computes them (docs/file-format.md §5), on one thread, with the system's
  // libxxhash (its x86-64 baseline build; the kernel uses its own AVX2 build where the CPU
  // has it, about three times faster on cache-hot rows). Against K's time it bounds what
  // the hashes can cost a write when nothing of them overlaps the I/O.
  auto hash_time = [&] {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const auto s = static_cast<std::size_t>(S), hh = static_cast<std::size_t>(halo), p = s + 2 * hh;
    std::uint64_t mix = 0;
    XXH3_state_t* st = XXH3_createState();
    for (int v = 0; v < nvars; ++v)
      for (const auto& g : lg.grids) {
        const double* src = g.fields[static_cast<std::size_t>(v)];
        if (hh == 0) {
          mix ^= XXH3_64bits(src, cells * sizeof(double));
          continue;
        }
        XXH3_64bits_reset(st);
        for (std::size_t z = 0; z < s; ++z)
          for (std::size_t y = 0; y < s; ++y)
            XXH3_64bits_update(st, src + ((z + hh) * p + y + hh) * p + hh, s * sizeof(double));
        mix ^= XXH3_64bits_digest(st);
      }
    XXH3_freeState(st);
    volatile std::uint64_t sink = mix;
    (void)sink;
    return max_over_ranks(MPI_Wtime() - t0);
  };

  // The file read contender `c` reads, removed and written anew (durable, untimed).
  const auto write_read_file = [&](const std::string& c) {
    if (c == "K" || c == "KB") {
      remove_target(kfile);
      kernel_write(true, false, kfile);
    } else if (c == "KN") {
      remove_target(knfile);
      kernel_write(true, false, knfile, false);
    } else if (c == "R") {
      remove_target(rfile);
      raw_write(true);
    } else if (c == "I" || c == "Ii") {  // one file, read by both
      remove_target(ifile);
      ior_io(true, true, true);
    } else if (c == "D") {
      remove_target(dfile);
      dd_write(true);
    }
  };

  // ---- warm-up: one kernel write gives the step size; raw/dd files exist for reads ----
  write_read_file("K");
  raw_layout();
  dd_mib = (step_bytes + (1 << 20) - 1) >> 20;
  if (only == "read")  // the read group needs the raw and dd files the write groups leave
    for (const char* c : {"R", "D", "I", "KN"}) write_read_file(c);
  const double dd_bytes = static_cast<double>(dd_mib) * (1 << 20);
  {
    long long bb = buffer_bytes, bbmax = 0, lb = local_bytes, lbmax = 0;
    MPI_Reduce(&bb, &bbmax, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&lb, &lbmax, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    const char* io = std::getenv("OMPI_MCA_io");
    if (rank_ == 0)
      std::printf("# ranks %d, rounds %d, vars %d, halo %d, step bytes %lld (%.3f GiB), dd bytes %.0f, io component %s\n"
                  "# K: %lld of %d cell datasets written zero-copy; linear write buffer per rank: max %lld bytes"
                  " = %.1f %% of that rank's %lld step bytes\n",
                  size_, rounds, nvars, halo, static_cast<long long>(step_bytes), step_bytes / double(1 << 30), dd_bytes,
                  io ? io : "(OpenMPI default)", static_cast<long long>(direct_datasets), nvars, bbmax,
                  100.0 * bbmax / std::max(1LL, lbmax), lbmax);
  }

  std::map<std::string, Series> res;
  std::map<std::string, std::vector<double>> bd;  // breakdown, seconds per round (rank 0's clock, max over ranks)
  auto rec = [&](int round, const std::string& what, double bytes, double sec) {
    res[what].secs.push_back(sec);
    res[what].gibs.push_back(bytes / sec / (1 << 30));
    if (rank_ == 0)
      std::printf("op %d %-22s %d %.0f %.3f %.3f\n", round, what.c_str(), size_, bytes, sec, bytes / sec / (1 << 30));
    // A read's requests as the disk saw them (the machine's other I/O included): how many,
    // how large, how long each took from submission to completion, and the queue depth.
    if (rank_ == 0 && what.find("_read") != std::string::npos && disk_before_.ok) {
      const DiskStat now = disk_stat(dir);  // the device every contender's file is on
      const double reqs = static_cast<double>(std::max(1LL, now.reads - disk_before_.reads));
      const double kib = static_cast<double>(now.sectors - disk_before_.sectors) / 2 / reqs;
      const double ms = static_cast<double>(now.read_ms - disk_before_.read_ms) / reqs;
      const auto busy = static_cast<double>(now.busy_ms - disk_before_.busy_ms);
      const double queue = busy > 0 ? static_cast<double>(now.queue_ms - disk_before_.queue_ms) / busy : 0.0;
      std::printf("disk %d %-22s requests %.0f  KiB/request %.0f  ms/request %.2f  busy %.0f ms  queue %.2f\n", round,
                  what.c_str(), reqs, kib, ms, busy, queue);
      bd["disk: " + what + ": KiB per request"].push_back(kib);
      bd["disk: " + what + ": ms per request"].push_back(ms);
      bd["disk: " + what + ": busy (s)"].push_back(busy / 1000);
      disk_before_ = {};
    }
    std::fflush(stdout);
  };
  const double kb = static_cast<double>(step_bytes);
  // Orders: rows of Williams designs, so that over the rounds every contender follows
  // every other one (a plain rotation ABC, BCA, CAB always puts the same contender before
  // K; on this VM the op after dd was measurably slower, which biased K). --contenders
  // keeps a subset (the letters below, comma-separated).
  auto wanted = [&](const std::string& c) {
    if (contenders.empty()) return true;
    const std::string list = "," + contenders + ",";
    return list.find("," + c + ",") != std::string::npos;
  };
  auto keep = [&](std::vector<std::string> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](const std::string& c) { return !wanted(c); }), v.end());
    return v;
  };
  const auto durable_set = keep({"K", "KA", "KN", "KT", "KC", "KI", "KS", "R", "P", "I", "Ii", "V", "D"});
  if (wanted("KA") && (only.empty() || only == "durable")) {
    capi_setup();
    remove_target(kafile);  // warm-up, as K's above: the first write of a process pays its first touches
    (void)capi_write(kafile);
  }
  const auto cache_set = keep({"K", "KN", "KT", "KC", "KI", "R", "P", "I", "V", "D"});
  const auto read_set = keep({"K", "KB", "KN", "R", "I", "Ii", "D"});
  auto kernel_breakdown = [&] {
    auto d = [&](const char* a, const char* b) { return max_over_ranks(phase_t[b] - phase_t[a]); };
    bd["create (file + /common + flush)"].push_back(d("begin", "file_created"));
    bd["plan + dataset creation"].push_back(d("file_created", "created"));
    bd["copy + H5Dwrite (all datasets)"].push_back(d("created", "data_written"));
    bd["flush 1 (metadata + MPI_File_sync)"].push_back(d("data_written", "flushed"));
    bd["committed marker + flush 2 (metadata + MPI_File_sync)"].push_back(d("flushed", "marked"));
    bd["index row + flush 3 (metadata + MPI_File_sync)"].push_back(d("marked", "committed"));
    bd["close (flush + close)"].push_back(d("step_returned", "closed"));
  };
  // One write (durable or page cache): unlink the target, time the write, and after a
  // page-cache write sync it outside the timer.
  auto write_one = [&](int r, const std::string& c, bool durable) {
    const char* sfx = durable ? "_durable" : "_cache";
    auto run = [&](const std::string& target, const std::string& name, double bytes, auto&& fn) {
      remove_target(target);
      rec(r, name + sfx, bytes, fn());
      if (!durable) fsync_evict(target, false);
    };
    if (c == "K") {
      run(kfile, "kernel_write", kb, [&] { return kernel_write(durable, false, kfile); });
      if (durable) kernel_breakdown();
    } else if (c == "KA") {
      run(kafile, "kernel_capi_write", kb, [&] { return capi_write(kafile); });
      bd["KA: rewind_file_create"].push_back(capi_parts[0]);
      bd["KA: rewind_file_write (durable)"].push_back(capi_parts[1]);
      bd["KA: rewind_file_close"].push_back(capi_parts[2]);
    } else if (c == "KN") {
      run(knfile, "kernel_nosum_write", kb, [&] { return kernel_write(durable, false, knfile, false); });
    } else if (c == "KT") {
      run(ktfile, "kernel_stats_write", kb, [&] { return kernel_write(durable, false, ktfile, true, nullptr, true); });
      if (durable) {
        auto d = [&](const char* a, const char* b) { return max_over_ranks(phase_t[b] - phase_t[a]); };
        bd["KT: copy + H5Dwrite (all datasets)"].push_back(d("created", "data_written"));
        bd["KT: statistics no visit took, ranks agreed"].push_back(d("data_written", "statistics_taken"));
        bd["KT: statistics exchanged and written"].push_back(d("statistics_taken", "statistics"));
        bd["KT: checksums + flush 1 (metadata + MPI_File_sync)"].push_back(d("statistics", "flushed"));
        bd["KT: committed marker, index row, their flushes"].push_back(d("flushed", "committed"));
      }
    } else if (c == "KC") {
      run(kcfile, "kernel_coll_write", kb, [&] { return kernel_write(durable, false, kcfile, true, "collective"); });
    } else if (c == "KI") {
      run(kifile, "kernel_indep_write", kb, [&] { return kernel_write(durable, false, kifile, true, "independent"); });
    } else if (c == "KS") {
      run(ksfile, "kernel_serial_write", kb, [&] { return kernel_write(durable, true, ksfile); });
    } else if (c == "R") {
      run(rfile, "mpiio_write", kb, [&] { return raw_write(durable); });
    } else if (c == "I" || c == "Ii") {
      run(ifile, c == "I" ? "ior_write" : "ior_indep_write", kb, [&] { return ior_io(true, durable, c == "I"); });
    } else if (c == "V") {
      run(vfile, "vpic_write", kb, [&] { return vpic_write(durable); });
    } else if (c == "P") {
      run(pfile, "posix_1mib_write", kb, [&] { return posix_write(durable); });
    } else {
      run(dfile, "dd_write", dd_bytes, [&] { return dd_write(durable); });
    }
  };
  for (int r = 0; r < rounds; ++r) {
    if (only.empty() || only == "durable")
      for (int j : williams_row(static_cast<int>(durable_set.size()), r)) write_one(r, durable_set[static_cast<std::size_t>(j)], true);
    if (only.empty() || only == "cache")
      for (int j : williams_row(static_cast<int>(cache_set.size()), r)) write_one(r, cache_set[static_cast<std::size_t>(j)], false);
    // reads: each file evicted first
    if (fresh_files && (only.empty() || only == "read")) {
      // In the round's read order: the file read first is written first, so each
      // contender's file is the freshest written as often as the others' (the host's
      // cache and the disk's background work favour the file written last).
      bool k_written = false, i_written = false;  // K and KB read one file, I and Ii another
      for (int j : williams_row(static_cast<int>(read_set.size()), r)) {
        const std::string& c = read_set[static_cast<std::size_t>(j)];
        if ((c == "K" || c == "KB") && std::exchange(k_written, true)) continue;
        if ((c == "I" || c == "Ii") && std::exchange(i_written, true)) continue;
        write_read_file(c);
      }
    }
    for (int j : (only.empty() || only == "read") ? williams_row(static_cast<int>(read_set.size()), r) : std::vector<int>{}) {
      const std::string& c = read_set[static_cast<std::size_t>(j)];
      if (c == "K") {
        fsync_evict(kfile, true);
        rec(r, "kernel_read", kb, kernel_read(kfile));
        bd["read: Reader::open (probe + collective open + /common)"].push_back(read_parts_[0]);
        bd["read: read_topology"].push_back(read_parts_[1]);
        bd["read: cell data (read_fields_into, 8 datasets)"].push_back(read_parts_[2]);
        read_breakdown(bd, "read: K");
      } else if (c == "KB") {  // K's file through the page cache, as before O_DIRECT reads
        fsync_evict(kfile, true);
        ::setenv("REWIND_READ_DIRECT", "0", 1);
        rec(r, "kernel_buffered_read", kb, kernel_read(kfile));
        ::unsetenv("REWIND_READ_DIRECT");
        read_breakdown(bd, "read: KB");
      } else if (c == "KN") {
        fsync_evict(knfile, true);
        rec(r, "kernel_nosum_read", kb, kernel_read(knfile));
        read_breakdown(bd, "read: KN");
      } else if (c == "R") {
        fsync_evict(rfile, true);
        rec(r, "mpiio_read", kb, raw_read());
      } else if (c == "I") {
        fsync_evict(ifile, true);
        rec(r, "ior_read", kb, ior_io(false, false, true));
      } else if (c == "Ii") {
        fsync_evict(ifile, true);
        rec(r, "ior_indep_read", kb, ior_io(false, false, false));
      } else {
        fsync_evict(dfile, true);
        rec(r, "dd_read", dd_bytes, dd_read());
      }
    }
    bd["[bench replay] buffer copy alone"].push_back(copy_time());
    bd["[bench replay] checksums alone (libxxhash XXH3, 1 thread)"].push_back(hash_time());
  }
  remove_target(kfile);
  remove_target(kafile);
  rewind_grids_free(ka_grids);
  rewind_config_free(ka_cfg);
  remove_target(ksfile);
  remove_target(knfile);
  remove_target(kifile);
  remove_target(kcfile);
  remove_target(rfile);
  remove_target(dfile);
  remove_target(ifile);
  remove_target(vfile);
  remove_target(pfile);

  if (rank_ == 0) {
    std::printf("\n# summary: %d ranks, %d rounds, GiB/s (GiB = 2^30 bytes)\n", size_, rounds);
    std::printf("sum %-28s %5s %7s %7s %7s\n", "contender", "ranks", "median", "min", "max");
    for (const char* w : {"kernel_write_durable",
                          "kernel_capi_write_durable",
                          "kernel_nosum_write_durable",
                          "kernel_coll_write_durable",
                          "kernel_indep_write_durable",
                          "kernel_serial_write_durable",
                          "mpiio_write_durable",
                          "posix_1mib_write_durable",
                          "ior_write_durable",
                          "ior_indep_write_durable",
                          "vpic_write_durable",
                          "dd_write_durable",
                          "kernel_write_cache",
                          "kernel_nosum_write_cache",
                          "kernel_coll_write_cache",
                          "kernel_indep_write_cache",
                          "mpiio_write_cache",
                          "posix_1mib_write_cache",
                          "ior_write_cache",
                          "vpic_write_cache",
                          "dd_write_cache",
                          "kernel_read",
                          "kernel_buffered_read",
                          "kernel_nosum_read",
                          "mpiio_read",
                          "ior_read",
                          "ior_indep_read",
                          "dd_read"}) {
      const auto& s = res[w];
      if (s.gibs.empty()) continue;  // not run (--only)
      std::printf("sum %-28s %5d %7.3f %7.3f %7.3f\n", w, size_, median(s.gibs),
                  *std::min_element(s.gibs.begin(), s.gibs.end()), *std::max_element(s.gibs.begin(), s.gibs.end()));
    }
    auto ratio = [&](const char* a, const char* b) {
      std::vector<double> q;
      if (res[a].gibs.empty() || res[b].gibs.empty()) return;
      for (std::size_t i = 0; i < res[a].gibs.size(); ++i) q.push_back(res[a].gibs[i] / res[b].gibs[i]);
      std::printf("ratio %-28s / %-22s %d  median %5.1f %%  min %5.1f %%  max %5.1f %%\n", a, b, size_,
                  100 * median(q), 100 * *std::min_element(q.begin(), q.end()), 100 * *std::max_element(q.begin(), q.end()));
    };
    ratio("kernel_write_durable", "ior_write_durable");
    ratio("kernel_capi_write_durable", "kernel_write_durable");  // the C layer's cost: >= 97 %
    ratio("kernel_capi_write_durable", "ior_write_durable");
    ratio("kernel_write_durable", "ior_indep_write_durable");
    ratio("kernel_write_durable", "vpic_write_durable");
    ratio("kernel_write_durable", "mpiio_write_durable");
    ratio("kernel_write_durable", "dd_write_durable");
    ratio("kernel_serial_write_durable", "mpiio_write_durable");
    ratio("kernel_write_durable", "kernel_serial_write_durable");
    ratio("ior_write_durable", "mpiio_write_durable");
    ratio("kernel_write_cache", "ior_write_cache");
    ratio("kernel_write_cache", "vpic_write_cache");
    ratio("kernel_write_cache", "mpiio_write_cache");
    ratio("kernel_write_cache", "dd_write_cache");
    ratio("kernel_write_cache", "posix_1mib_write_cache");  // the page-cache target: >= 95 %
    ratio("kernel_write_durable", "posix_1mib_write_durable");
    ratio("kernel_read", "ior_read");
    ratio("kernel_read", "ior_indep_read");
    ratio("kernel_read", "mpiio_read");
    ratio("kernel_read", "dd_read");
    // What the checksums cost (K hashes every row, KN does not): the ≤ 3 % target.
    ratio("kernel_write_durable", "kernel_nosum_write_durable");
    ratio("kernel_write_cache", "kernel_nosum_write_cache");
    ratio("kernel_read", "kernel_nosum_read");
    // What the per-grid statistics cost (KT takes them, K does not): the ≤ 1 % target.
    ratio("kernel_stats_write_durable", "kernel_write_durable");
    ratio("kernel_stats_write_cache", "kernel_write_cache");
    ratio("kernel_read", "kernel_buffered_read");  // past the page cache against through it
    ratio("kernel_buffered_read", "ior_read");
    ratio("kernel_buffered_read", "kernel_nosum_read");
    // strategies against the default (auto): collective (the default before) and independent
    ratio("kernel_coll_write_durable", "kernel_write_durable");
    ratio("kernel_coll_write_cache", "kernel_write_cache");
    ratio("kernel_coll_write_durable", "vpic_write_durable");
    ratio("kernel_coll_write_cache", "posix_1mib_write_cache");
    ratio("kernel_indep_write_durable", "kernel_write_durable");
    ratio("kernel_indep_write_cache", "kernel_write_cache");
    std::printf("# kernel durable write (K) and read, time breakdown, median over rounds, s (max over ranks):\n");
    if (!res["kernel_write_durable"].secs.empty())
      std::printf("brk %-46s %d %7.3f\n", "total K", size_, median(res["kernel_write_durable"].secs));
    for (const auto& [name, v] : bd)
      if (!v.empty()) std::printf("brk %-46s %d %7.3f\n", name.c_str(), size_, median(v));
  }
  MPI_Finalize();
  return 0;
}

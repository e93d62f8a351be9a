// Kernel checkpoint write/restart read vs. raw MPI-IO, same bytes, same file system.
//   mpiexec -n P rewind_bench_kernel DIR [VARS]
// Tree: full octree to level 3 (585 grids), 32^3 cells per grid, VARS float64 variables
// (default 8: 1.14 GiB of cell data). Prints one line per measurement:
//   <what> <ranks> <bytes> <seconds> <GiB/s>
// "durable" includes fsync (H5Fflush -> MPI_File_sync); "cache" does not. Before reads the
// file's pages are dropped with posix_fadvise(DONTNEED) after an fsync, so reads come from
// disk as far as the (virtual) disk and the host allow.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "rewind/kernel/kernel.hpp"

namespace k = rwd::kernel;

namespace {
constexpr int S = 32;
int rank_ = 0, size_ = 1;

struct G {
  std::uint64_t uid;
  int level;
  std::array<int, 3> c;
  std::uint64_t parent;
  std::vector<std::uint64_t> children;
};

std::uint64_t uid_of(int l, std::array<int, 3> c) {
  std::uint64_t m = 0;
  for (int b = 0; b < 19; ++b)
    for (int a = 0; a < 3; ++a) m |= static_cast<std::uint64_t>((c[a] >> b) & 1) << (3 * b + a);
  return (static_cast<std::uint64_t>(l) << 58) | m;
}

void drop_cache(const std::string& p) {
  if (rank_ == 0) {
    int fd = ::open(p.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void report(const char* what, double bytes, double sec) {
  if (rank_ == 0) std::printf("%-28s %d %.0f %.3f %.3f\n", what, size_, bytes, sec, bytes / sec / (1 << 30));
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const std::string dir = argc > 1 ? argv[1] : ".";
  const int nvars = argc > 2 ? std::atoi(argv[2]) : 8;

  std::vector<G> all;
  std::vector<std::size_t> level_start{0};
  all.push_back({uid_of(0, {0, 0, 0}), 0, {0, 0, 0}, k::kNoUid, {}});
  for (int l = 0; l < 3; ++l) {
    std::size_t a = level_start.back(), b = all.size();
    level_start.push_back(b);
    for (std::size_t i = a; i < b; ++i)
      for (int ch = 0; ch < 8; ++ch) {
        std::array<int, 3> c{2 * all[i].c[0] + (ch & 1), 2 * all[i].c[1] + ((ch >> 1) & 1), 2 * all[i].c[2] + ((ch >> 2) & 1)};
        all.push_back({uid_of(l + 1, c), l + 1, c, all[i].uid, {}});
        all[i].children.push_back(all.back().uid);
      }
  }
  const std::size_t n = all.size(), lo = n * rank_ / size_, hi = n * (rank_ + 1) / size_;
  const std::size_t cells = S * S * S;
  std::vector<std::vector<double>> data(hi - lo);
  for (std::size_t i = lo; i < hi; ++i) data[i - lo].assign(cells * nvars, static_cast<double>(i));

  k::CommonInfo cm;
  cm.block = {S, S, S};
  cm.domain = {0, 1, 0, 1, 0, 1};
  for (int v = 0; v < nvars; ++v) cm.variables.push_back({"v" + std::to_string(v), "1"});
  k::LocalGrids lg;
  lg.block = cm.block;
  for (std::size_t i = lo; i < hi; ++i) {
    k::GridRecord r;
    r.uid = all[i].uid;
    r.level = all[i].level;
    r.sort_key = all[i].uid;
    const double w = 1.0 / (1 << all[i].level);
    r.bbox = {all[i].c[0] * w, (all[i].c[0] + 1) * w, all[i].c[1] * w, (all[i].c[1] + 1) * w, all[i].c[2] * w, (all[i].c[2] + 1) * w};
    r.parent_uid = all[i].parent;
    r.child_uids = all[i].children;
    for (int v = 0; v < nvars; ++v) r.fields.push_back(data[i - lo].data() + v * cells);
    lg.grids.push_back(r);
  }
  k::StepInfo si{1, 0.0, 0.1, k::StepKind::checkpoint, {}, false};
  for (int v = 0; v < nvars; ++v) si.fields.push_back({"cell_data", "v" + std::to_string(v), v});

  const std::string kfile = dir + "/bench_kernel.h5", rfile = dir + "/bench_raw.bin";
  double cell_bytes = 0;
  for (bool durable : {true, false}) {
    k::IoOptions o;
    o.write_views = false;
    o.flush_on_commit = durable;
    k::Writer w = k::Writer::create(MPI_COMM_WORLD, kfile, cm, o);
    k::WriteStats st = w.write_step(si, lg);
    cell_bytes = static_cast<double>(n * cells * nvars * 8);
    report(durable ? "kernel_write_durable" : "kernel_write_cache", static_cast<double>(st.bytes), st.seconds);
    if (rank_ == 0 && durable)
      std::printf("# linear buffer per rank (rank 0): %lld bytes; step bytes %lld; cell bytes %.0f\n",
                  static_cast<long long>(st.buffer_bytes), static_cast<long long>(st.bytes), cell_bytes);
    w.close();
  }
  // Raw MPI-IO: the same bytes (the step's total), one contiguous block per rank.
  {
    k::Reader r0 = k::Reader::open(kfile, MPI_COMM_WORLD);
    const double total = static_cast<double>(r0.step(1).bytes);
    const MPI_Offset mine = static_cast<MPI_Offset>(total) * (rank_ + 1) / size_ - static_cast<MPI_Offset>(total) * rank_ / size_;
    const MPI_Offset off = static_cast<MPI_Offset>(total) * rank_ / size_;
    std::vector<char> buf(static_cast<std::size_t>(mine), 1);
    for (bool durable : {true, false}) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "romio_cb_write", "enable");
      MPI_Info_set(info, "cb_buffer_size", "16777216");
      MPI_File fh;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_File_open(MPI_COMM_WORLD, rfile.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
      MPI_File_set_size(fh, 0);
      // large counts: write in <2 GiB pieces
      MPI_Offset done = 0;
      while (done < mine || done == 0) {
        int chunk = static_cast<int>(std::min<MPI_Offset>(mine - done, 1 << 30));
        MPI_File_write_at_all(fh, off + done, buf.data() + done, chunk, MPI_BYTE, MPI_STATUS_IGNORE);
        done += chunk;
        if (chunk == 0) break;
      }
      if (durable) MPI_File_sync(fh);
      MPI_File_close(&fh);
      double t = MPI_Wtime() - t0, tm = 0;
      MPI_Allreduce(&t, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      report(durable ? "mpiio_write_durable" : "mpiio_write_cache", total, tm);
      MPI_Info_free(&info);
    }
    // Reads (restart): kernel reads every row of every variable; raw reads its block.
    drop_cache(kfile);
    {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      k::Reader r = k::Reader::open(kfile, MPI_COMM_WORLD);
      k::Topology t = r.read_topology(1);
      auto rows = k::partition_rows(t, rank_, size_);
      std::vector<double> in(rows.size() * cells);
      for (int v = 0; v < nvars; ++v) r.read_rows(1, "cell_data", "v" + std::to_string(v), rows, in.data());
      double tt = MPI_Wtime() - t0, tm = 0;
      MPI_Allreduce(&tt, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      report("kernel_read_restart", cell_bytes, tm);
    }
    drop_cache(rfile);
    {
      MPI_File fh;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_File_open(MPI_COMM_WORLD, rfile.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
      MPI_Offset done = 0;
      while (done < mine) {
        int chunk = static_cast<int>(std::min<MPI_Offset>(mine - done, 1 << 30));
        MPI_File_read_at_all(fh, off + done, buf.data() + done, chunk, MPI_BYTE, MPI_STATUS_IGNORE);
        done += chunk;
      }
      MPI_File_close(&fh);
      double tt = MPI_Wtime() - t0, tm = 0;
      MPI_Allreduce(&tt, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      report("mpiio_read", total, tm);
    }
    if (rank_ == 0) std::printf("# bytes_for_dd %.0f\n", total);
  }
  MPI_Finalize();
  return 0;
}

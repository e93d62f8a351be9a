// The kernel benchmarks' step: a full octree to level 3 (585 grids of 32^3 cells), each
// grid's V float64 variables in separate arrays with H ghost layers (as a solver holds
// them), grid i's variable v filled with i + v. Grids are split over the ranks of the
// communicator in Morton (row) order.
#pragma once
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "rewind/kernel/kernel.hpp"

namespace rwd::bench {

/// Median of `v` (0 for none).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The largest `t` over the ranks of `comm` (a time: the slowest rank's).
inline double max_over(MPI_Comm comm, double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

/// Removes `path` (and `also`, a directory, if given), then lets the disk settle: the
/// work disk is mounted with `discard`, so freeing a 1 GiB file sends discards to the
/// virtual disk at the next journal commit. Commit now and let them drain, so they do not
/// land inside the next contender's timer. One rank.
inline void remove_and_settle(const std::string& path, const std::string& also = "") {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!also.empty()) std::filesystem::remove_all(also, ec);
  ::sync();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ::sync();
}

struct BenchStep {
  static constexpr int S = 32;
  kernel::CommonInfo common;
  kernel::LocalGrids grids;
  kernel::StepInfo info;
  std::size_t total_grids = 0;
  std::map<std::uint64_t, std::size_t> index_of;  ///< uid -> grid number (its fill value)
  std::vector<std::vector<std::vector<double>>> data;  ///< [local grid][variable] padded arrays

  /// "v0", "v1", ... (appended, not "v" + to_string(v): GCC 12 -Wrestrict false positive).
  static std::string var_name(int v) {
    std::string name = "v";
    name += std::to_string(v);
    return name;
  }

  BenchStep(int rank, int size, int nvars, int halo) {
    struct G {
      std::uint64_t uid;
      int level;
      std::array<int, 3> c;
      std::uint64_t parent;
      std::vector<std::uint64_t> children;
    };
    auto uid_of = [](int l, std::array<int, 3> c) {
      std::uint64_t m = 0;
      for (int b = 0; b < 19; ++b)
        for (int a = 0; a < 3; ++a) m |= static_cast<std::uint64_t>((c[a] >> b) & 1) << (3 * b + a);
      return (static_cast<std::uint64_t>(l) << 58) | m;
    };
    std::vector<G> all;
    all.push_back({uid_of(0, {0, 0, 0}), 0, {0, 0, 0}, kernel::kNoUid, {}});
    for (int l = 0; l < 3; ++l) {
      std::size_t a = 0, b = all.size();
      while (a < b && all[a].level < l) ++a;
      for (std::size_t i = a; i < b; ++i)
        for (int ch = 0; ch < 8; ++ch) {
          std::array<int, 3> c{2 * all[i].c[0] + (ch & 1), 2 * all[i].c[1] + ((ch >> 1) & 1), 2 * all[i].c[2] + ((ch >> 2) & 1)};
          all.push_back({uid_of(l + 1, c), l + 1, c, all[i].uid, {}});
          all[i].children.push_back(all.back().uid);
        }
    }
    for (std::size_t i = 0; i < all.size(); ++i) index_of[all[i].uid] = i;
    total_grids = all.size();
    const std::size_t n = all.size(), lo = n * static_cast<std::size_t>(rank) / static_cast<std::size_t>(size),
                      hi = n * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(size);
    const auto side = static_cast<std::size_t>(S + 2 * halo);
    data.resize(hi - lo);
    for (std::size_t i = lo; i < hi; ++i) {
      data[i - lo].resize(static_cast<std::size_t>(nvars));
      for (int v = 0; v < nvars; ++v) data[i - lo][static_cast<std::size_t>(v)].assign(side * side * side, static_cast<double>(i) + v);
    }
    common.block = {S, S, S};
    common.domain = {0, 1, 0, 1, 0, 1};
    for (int v = 0; v < nvars; ++v) common.variables.push_back({var_name(v), "1"});
    grids.block = common.block;
    grids.halo = halo;
    for (std::size_t i = lo; i < hi; ++i) {
      kernel::GridRecord r;
      r.uid = all[i].uid;
      r.level = all[i].level;
      r.sort_key = all[i].uid;
      const double w = 1.0 / (1 << all[i].level);
      r.bbox = {all[i].c[0] * w, (all[i].c[0] + 1) * w, all[i].c[1] * w, (all[i].c[1] + 1) * w, all[i].c[2] * w, (all[i].c[2] + 1) * w};
      r.parent_uid = all[i].parent;
      r.child_uids = all[i].children;
      for (int v = 0; v < nvars; ++v) r.fields.push_back(data[i - lo][static_cast<std::size_t>(v)].data());
      grids.grids.push_back(r);
    }
    info = {1, 0.0, 0.1, kernel::StepKind::checkpoint, {}, false, {}, {}};
    for (int v = 0; v < nvars; ++v) info.fields.push_back({"cell_data", var_name(v), v});
  }
};

}  // namespace rwd::bench

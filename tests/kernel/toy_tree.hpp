// A small hand-made octree with field data and a deterministic toy time stepper, used
// by the kernel tests in place of the real solver. Swapping the stepper for the solver
// is a change of ToyModel::advance only (kStepper below).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rewind/kernel/kernel.hpp"

namespace rwd::kernel::test {

/// The whole file as bytes (to prove a reader or a branch left a file untouched).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}


namespace k = rwd::kernel;

inline std::uint64_t morton3(std::array<int, 3> c) {
  std::uint64_t m = 0;
  for (int b = 0; b < 19; ++b)
    for (int a = 0; a < 3; ++a) m |= static_cast<std::uint64_t>((c[a] >> b) & 1) << (3 * b + a);
  return m;
}
inline std::uint64_t make_uid(int level, std::array<int, 3> c) {
  return (static_cast<std::uint64_t>(level) << 58) | morton3(c);
}

struct ToyGrid {
  std::uint64_t uid = 0;
  int level = 0;
  std::array<int, 3> coord{};
  std::uint64_t parent = k::kNoUid;
  std::vector<std::uint64_t> children;
  k::BoxRow bbox{};
  // slots: 0 u, 1 v (current), 2 u, 3 v (previous), 4 u, 5 v (temp)
  std::array<std::vector<double>, 6> f;
  std::vector<std::uint8_t> cell_type;
};

/// The global tree: root, 8 children, and children of the listed level-1 grids
/// (and optionally deeper). Deterministic, same on every rank.
inline std::vector<ToyGrid> make_tree(int block, int halo, std::vector<int> refine_l1 = {0, 7},
                                      bool refine_l2_first = true) {
  std::vector<ToyGrid> all;
  const std::size_t padded = static_cast<std::size_t>((block + 2 * halo) * (block + 2 * halo) * (block + 2 * halo));
  auto add = [&](int level, std::array<int, 3> c, std::uint64_t parent) {
    ToyGrid g;
    g.level = level;
    g.coord = c;
    g.uid = make_uid(level, c);
    g.parent = parent;
    const double w = 1.0 / (1 << level);
    g.bbox = {c[0] * w, (c[0] + 1) * w, c[1] * w, (c[1] + 1) * w, c[2] * w, (c[2] + 1) * w};
    for (auto& a : g.f) a.assign(padded, 0.0);
    g.cell_type.assign(padded, 0);
    all.push_back(g);
    return all.size() - 1;
  };
  auto refine = [&](std::size_t i) {
    auto c = all[i].coord;
    int l = all[i].level;
    for (int ch = 0; ch < 8; ++ch) {
      std::array<int, 3> cc{2 * c[0] + (ch & 1), 2 * c[1] + ((ch >> 1) & 1), 2 * c[2] + ((ch >> 2) & 1)};
      std::size_t j = add(l + 1, cc, all[i].uid);
      all[i].children.push_back(all[j].uid);
    }
  };
  add(0, {0, 0, 0}, k::kNoUid);
  refine(0);
  for (int i : refine_l1) refine(static_cast<std::size_t>(1 + i));
  if (refine_l2_first && !refine_l1.empty()) {
    // refine the first level-2 grid once more: 4 levels in total
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].level == 2) {
        refine(i);
        break;
      }
  }
  std::sort(all.begin(), all.end(), [](const ToyGrid& a, const ToyGrid& b) { return a.uid < b.uid; });
  return all;
}

struct ToyModel {
  int block = 4;
  int halo = 1;
  std::vector<ToyGrid> grids;  ///< the grids this rank owns

  [[nodiscard]] std::size_t idx(int x, int y, int z) const {
    const int p = block + 2 * halo;
    return (static_cast<std::size_t>(z + halo) * p + (y + halo)) * p + (x + halo);
  }

  /// Owns the UID-sorted grids [n*rank/size, n*(rank+1)/size) (a curve partition).
  static ToyModel build(MPI_Comm comm, int block = 4, int halo = 1, std::vector<int> refine_l1 = {0, 7}) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ToyModel m;
    m.block = block;
    m.halo = halo;
    auto all = make_tree(block, halo, refine_l1);
    const std::size_t n = all.size();
    for (std::size_t i = n * rank / size; i < n * (rank + 1) / size; ++i) m.grids.push_back(all[i]);
    m.init();
    return m;
  }

  void init() {
    for (auto& g : grids)
      for (int z = 0; z < block; ++z)
        for (int y = 0; y < block; ++y)
          for (int x = 0; x < block; ++x) {
            const double seed = static_cast<double>(g.uid % 1000003) * 1e-6;
            g.f[0][idx(x, y, z)] = seed + 0.1 * x + 0.01 * y + 0.001 * z;
            g.f[1][idx(x, y, z)] = 1.0 - seed * (x + 1) / (y + z + 1.0);
            g.cell_type[idx(x, y, z)] = static_cast<std::uint8_t>((x + y + z + g.level) % 3);
          }
  }

  /// Toy explicit diffusion with zero-gradient walls, per grid: deterministic and
  /// partition-independent. previous <- current; temp <- laplacian; current += dt * ...
  void toy_step(double dt) {
    for (auto& g : grids)
      for (int v = 0; v < 2; ++v) {
        auto& cur = g.f[static_cast<std::size_t>(v)];
        auto& prev = g.f[static_cast<std::size_t>(2 + v)];
        auto& tmp = g.f[static_cast<std::size_t>(4 + v)];
        prev = cur;
        auto at = [&](int x, int y, int z) {
          x = std::clamp(x, 0, block - 1);
          y = std::clamp(y, 0, block - 1);
          z = std::clamp(z, 0, block - 1);
          return prev[idx(x, y, z)];
        };
        for (int z = 0; z < block; ++z)
          for (int y = 0; y < block; ++y)
            for (int x = 0; x < block; ++x)
              tmp[idx(x, y, z)] = at(x + 1, y, z) + at(x - 1, y, z) + at(x, y + 1, z) + at(x, y - 1, z) +
                                  at(x, y, z + 1) + at(x, y, z - 1) - 6 * at(x, y, z);
        const auto& other = g.f[static_cast<std::size_t>(1 - v)];
        for (int z = 0; z < block; ++z)
          for (int y = 0; y < block; ++y)
            for (int x = 0; x < block; ++x)
              cur[idx(x, y, z)] = prev[idx(x, y, z)] + dt * (0.1 * tmp[idx(x, y, z)] + 0.01 * other[idx(x, y, z)]);
      }
  }

  /// THE stepper used by the restart tests; replace with the solver when it lands.
  void advance(double dt) { toy_step(dt); }

  [[nodiscard]] k::LocalGrids describe() const {
    k::LocalGrids lg;
    lg.block = {block, block, block};
    lg.halo = halo;
    for (const auto& g : grids) {
      k::GridRecord r;
      r.uid = g.uid;
      r.level = g.level;
      r.sort_key = g.uid & ((std::uint64_t{1} << 57) - 1);
      r.bbox = g.bbox;
      r.parent_uid = g.parent;
      r.child_uids = g.children;
      for (const auto& a : g.f) r.fields.push_back(a.data());
      r.cell_type = g.cell_type.data();
      lg.grids.push_back(std::move(r));
    }
    return lg;
  }

  static k::CommonInfo common(int block = 4) {
    k::CommonInfo c;
    c.dim = 3;
    c.block = {block, block, block};
    c.refinement = 2;
    c.max_children = 8;
    c.domain = {0, 1, 0, 1, 0, 1};
    c.time_stepping = {{"dt", 0.01}, {"t_end", 1.0}};
    c.fluid = {{"nu", 1e-3}, {"rho", 1.0}};
    c.variables = {{"u", "m/s"}, {"v", "m/s"}};
    c.case_text = "[case]\nname = \"toy\"\n";
    return c;
  }

  static std::vector<k::FieldSpec> checkpoint_fields() {
    return {{"cell_data", "u", 0},          {"cell_data", "v", 1},          {"previous_cell_data", "u", 2},
            {"previous_cell_data", "v", 3}, {"temp_cell_data", "u", 4},     {"temp_cell_data", "v", 5}};
  }
  static std::vector<k::FieldSpec> visual_fields(bool f32) {
    return {{"cell_data", "u", 0, f32}, {"cell_data", "v", 1, f32}};
  }
  /// The steps the tests write: every checkpoint field with cell types, or the visual
  /// fields (float32 or not); no overrides, no monitor state.
  static k::StepInfo checkpoint_step(std::int64_t step, double time, double dt) {
    return step_info(step, time, dt, k::StepKind::checkpoint, checkpoint_fields(), true);
  }
  static k::StepInfo visual_step(std::int64_t step, double time, double dt, bool f32, bool cell_type) {
    return step_info(step, time, dt, k::StepKind::visualisation, visual_fields(f32), cell_type);
  }
  static k::StepInfo step_info(std::int64_t step, double time, double dt, k::StepKind kind,
                               std::vector<k::FieldSpec> fields, bool cell_type) {
    k::StepInfo s;
    s.step = step;
    s.time = time;
    s.dt = dt;
    s.kind = kind;
    s.fields = std::move(fields);
    s.write_cell_type = cell_type;
    return s;
  }

  /// Restart: this rank reads the rows partition_rows gives it (any rank count).
  static ToyModel restart(const k::Reader& r, std::int64_t step, MPI_Comm comm, int halo = 1) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ToyModel m;
    m.block = r.common().block.sx;
    m.halo = halo;
    k::StepTopology t = r.read_topology(step);
    auto rows = k::partition_rows(t, rank, size);
    const std::size_t cells = static_cast<std::size_t>(r.common().block.cells());
    const std::size_t padded = static_cast<std::size_t>((m.block + 2 * halo) * (m.block + 2 * halo) * (m.block + 2 * halo));
    std::vector<double> buf(rows.size() * cells);
    std::vector<std::uint8_t> ct(rows.size() * cells);
    m.grids.resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto& g = m.grids[i];
      const auto row = static_cast<std::size_t>(rows[i]);
      g.uid = t.uid[row];
      g.level = t.level[row];
      g.parent = t.parent_uid[row];
      for (int j = 0; j < t.max_children; ++j) {
        auto c = t.child_uids[row * static_cast<std::size_t>(t.max_children) + static_cast<std::size_t>(j)];
        if (c != k::kNoUid) g.children.push_back(c);
      }
      g.bbox = t.bbox[row];
      for (auto& a : g.f) a.assign(padded, 0.0);
      g.cell_type.assign(padded, 0);
    }
    const auto fields = checkpoint_fields();
    for (const auto& f : fields) {
      r.read_rows(step, f.group, f.name, rows, buf.data());
      for (std::size_t i = 0; i < rows.size(); ++i)
        k::unpack_interior(buf.data() + i * cells, r.common().block, halo, m.grids[i].f[static_cast<std::size_t>(f.slot)].data());
    }
    r.read_cell_types(step, rows, ct.data());
    for (std::size_t i = 0; i < rows.size(); ++i)
      k::unpack_interior(ct.data() + i * cells, r.common().block, halo, m.grids[i].cell_type.data());
    return m;
  }

  /// Interior values of slot `s` by uid (for comparisons across partitions).
  [[nodiscard]] std::map<std::uint64_t, std::vector<double>> interior(int s) const {
    std::map<std::uint64_t, std::vector<double>> out;
    for (const auto& g : grids) {
      std::vector<double> v;
      for (int z = 0; z < block; ++z)
        for (int y = 0; y < block; ++y)
          for (int x = 0; x < block; ++x) v.push_back(g.f[static_cast<std::size_t>(s)][idx(x, y, z)]);
      out[g.uid] = v;
    }
    return out;
  }
};

/// Bitwise equality of doubles (NaN-safe, -0 != +0).
inline bool bit_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

/// A fresh per-test path under the build's test directory (same on all ranks).
/// Dedicated I/O ranks on one node, as the launcher lays them out: compute ranks are all
/// but the last world rank (world size >= 2); the I/O group is everybody, the I/O rank last.
struct DedicatedLayout {
  MPI_Comm compute = MPI_COMM_NULL, io = MPI_COMM_NULL, group = MPI_COMM_NULL;
  bool is_io = false;
  DedicatedLayout() {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    is_io = rank == size - 1;
    MPI_Comm_split(MPI_COMM_WORLD, is_io ? MPI_UNDEFINED : 0, rank, &compute);
    MPI_Comm_split(MPI_COMM_WORLD, is_io ? 0 : MPI_UNDEFINED, rank, &io);
    MPI_Comm_dup(MPI_COMM_WORLD, &group);  // the I/O rank is last, as the launcher makes it
  }
  ~DedicatedLayout() {
    for (MPI_Comm* c : {&compute, &io, &group})
      if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  }
  DedicatedLayout(const DedicatedLayout&) = delete;
  DedicatedLayout& operator=(const DedicatedLayout&) = delete;
};

inline std::string test_path(const std::string& name, MPI_Comm comm = MPI_COMM_WORLD) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const char* io = std::getenv("OMPI_MCA_io");
  return "kernel_test_" + name + "_np" + std::to_string(size) + "_" + (io ? io : "default") + ".h5";
}

/// One process has no I/O rank: what a dedicated writer's creation says ("" if it was
/// created, which it must not be). Tests of the dedicated strategy check it at one rank.
inline std::string dedicated_alone_error(const std::string& name) {
  IoOptions opt;
  opt.strategy = Strategy::dedicated;
  try {
    (void)Writer::create(MPI_COMM_WORLD, test_path(name), ToyModel::common(), opt);
  } catch (const FileError& e) {
    return e.kind() == ErrorKind::invalid_argument ? e.what() : std::string("a FileError of another kind: ") + e.what();
  }
  return "";
}

}  // namespace rwd::kernel::test

// Writes one step of a full octree in the Rewind format for the sliding-window benchmark
// (bench/window/HISTORY.md, "Sliding windows (offline)").
//
//   rewind_bench_window_gen OUT.h5 --depth D [--block 32,32,24] [--vars p,u]
//
// Domain [0,1] x [0,1] x [0, sz/sx]: cubic cells. Every grid of levels 0..D is stored,
// as `rewind run` stores a checkpoint: the leaves (level D) hold an analytic field at
// their cell centres, every coarser grid the average of its 8 children's cells (the
// solver's restriction), so a window at level L < D returns true level-L averages.
// With block 32x32x24: D = 2, 3, 4 give 1.57 M, 12.6 M, 101 M leaf cells (1.8 M,
// 14.4 M, 115 M cells in the step). float64, cell_type all fluid (0), checkpoint step 1,
// views for stock ParaView written. One process (MPI singleton).
#include <mpi.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "rewind/kernel/kernel.hpp"

namespace k = rwd::kernel;

namespace {

struct Grid {
  std::uint64_t uid;
  int level;
  std::array<int, 3> c;  // integer position on its level
  std::uint64_t parent;
  std::vector<std::uint64_t> children;
  std::vector<std::size_t> child_index;  // into the grid list, child slot order
};

std::uint64_t uid_of(int l, std::array<int, 3> c) {
  std::uint64_t m = 0;
  for (int b = 0; b < 19; ++b)
    for (int a = 0; a < 3; ++a) m |= static_cast<std::uint64_t>((c[a] >> b) & 1) << (3 * b + a);
  return (static_cast<std::uint64_t>(l) << 58) | m;
}

// Smooth but multi-scale: Gaussian vortex tubes of several core sizes along the three
// axes (pressure minima in the cores, swirl velocity around them) plus a weak
// small-scale wave, so finer levels keep adding detail.
struct Tube {
  int axis;          // tube along this axis
  double c1, c2;     // centre in the other two coordinates (cyclic order)
  double sigma, gamma;
};
const std::array<Tube, 6> kTubes{{{2, 0.30, 0.40, 0.060, 1.0},
                                  {2, 0.70, 0.62, 0.025, -0.8},
                                  {0, 0.50, 0.35, 0.040, 0.6},
                                  {1, 0.25, 0.55, 0.015, 0.9},
                                  {0, 0.20, 0.20, 0.080, -0.5},
                                  {1, 0.62, 0.30, 0.030, 0.7}}};

void field_at(double x, double y, double z, double& p, double& u) {
  const std::array<double, 3> r{x, y, z};
  p = 0.02 * std::sin(2 * M_PI * 24 * x) * std::sin(2 * M_PI * 20 * y) * std::cos(2 * M_PI * 16 * z);
  u = 0.1 * std::sin(2 * M_PI * 3 * z);
  for (const auto& t : kTubes) {
    const double a = r[static_cast<std::size_t>((t.axis + 1) % 3)] - t.c1;
    const double b = r[static_cast<std::size_t>((t.axis + 2) % 3)] - t.c2;
    const double e = std::exp(-(a * a + b * b) / (t.sigma * t.sigma));
    p -= t.gamma * t.gamma * e;
    // swirl s * (-b, a) along axes (axis+1, axis+2); u is its x component
    const double sw = t.gamma * e / t.sigma;
    if (t.axis == 2) u -= sw * b;  // x = axis + 1
    if (t.axis == 1) u += sw * a;  // x = axis + 2
  }
}

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) out.push_back(std::atoi(t.c_str()));
  return out;
}

std::vector<std::string> parse_names(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');)
    if (!t.empty()) out.push_back(t);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string out;
  int depth = 2;
  std::vector<int> blk{32, 32, 24};
  std::vector<std::string> vars{"p", "u"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--depth" && i + 1 < argc) depth = std::atoi(argv[++i]);
    else if (a == "--block" && i + 1 < argc) blk = parse_ints(argv[++i]);
    else if (a == "--vars" && i + 1 < argc) vars = parse_names(argv[++i]);
    else out = a;
  }
  if (out.empty() || blk.size() != 3 || depth < 0 || depth > 6 || vars.empty() || vars.size() > 2 ||
      blk[0] % 2 || blk[1] % 2 || blk[2] % 2) {
    std::fprintf(stderr, "usage: rewind_bench_window_gen OUT.h5 --depth D [--block SX,SY,SZ (even)] [--vars p,u (1 or 2)]\n");
    MPI_Finalize();
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::array<int, 3> s{blk[0], blk[1], blk[2]};
  const std::size_t cells = static_cast<std::size_t>(s[0]) * s[1] * s[2];
  const std::array<double, 3> ext{1.0, static_cast<double>(s[1]) / s[0], static_cast<double>(s[2]) / s[0]};

  // Full tree, level by level (children in Morton slot order, x fastest).
  std::vector<Grid> g;
  g.push_back({uid_of(0, {0, 0, 0}), 0, {0, 0, 0}, k::kNoUid, {}, {}});
  std::size_t level_begin = 0;
  for (int l = 0; l < depth; ++l) {
    const std::size_t level_end = g.size();
    for (std::size_t i = level_begin; i < level_end; ++i)
      for (int ch = 0; ch < 8; ++ch) {
        const std::array<int, 3> c{2 * g[i].c[0] + (ch & 1), 2 * g[i].c[1] + ((ch >> 1) & 1), 2 * g[i].c[2] + ((ch >> 2) & 1)};
        g.push_back({uid_of(l + 1, c), l + 1, c, g[i].uid, {}, {}});
        g[i].children.push_back(g.back().uid);
        g[i].child_index.push_back(g.size() - 1);
      }
    level_begin = level_end;
  }

  // Leaves: the analytic field; parents: averages of their children (deepest first).
  const std::size_t nv = vars.size();
  std::vector<std::vector<double>> data(g.size() * nv, std::vector<double>());
  std::vector<std::vector<std::uint8_t>> types(g.size(), std::vector<std::uint8_t>(cells, 0));
  for (std::size_t i = g.size(); i-- > 0;) {
    for (std::size_t v = 0; v < nv; ++v) data[i * nv + v].resize(cells);
    const double w = 1.0 / (1 << g[i].level);
    if (g[i].children.empty()) {
      const std::array<double, 3> h{ext[0] * w / s[0], ext[1] * w / s[1], ext[2] * w / s[2]};
      std::size_t n = 0;
      for (int kz = 0; kz < s[2]; ++kz)
        for (int jy = 0; jy < s[1]; ++jy)
          for (int ix = 0; ix < s[0]; ++ix, ++n) {
            double p = 0, u = 0;
            field_at(ext[0] * w * g[i].c[0] + (ix + 0.5) * h[0], ext[1] * w * g[i].c[1] + (jy + 0.5) * h[1],
                     ext[2] * w * g[i].c[2] + (kz + 0.5) * h[2], p, u);
            data[i * nv][n] = p;
            if (nv > 1) data[i * nv + 1][n] = u;
          }
      continue;
    }
    const std::array<int, 3> half{s[0] / 2, s[1] / 2, s[2] / 2};
    for (std::size_t v = 0; v < nv; ++v) {
      auto& dst = data[i * nv + v];
      std::size_t n = 0;
      for (int kz = 0; kz < s[2]; ++kz)
        for (int jy = 0; jy < s[1]; ++jy)
          for (int ix = 0; ix < s[0]; ++ix, ++n) {
            const int slot = (ix / half[0]) | ((jy / half[1]) << 1) | ((kz / half[2]) << 2);
            const auto& src = data[g[i].child_index[static_cast<std::size_t>(slot)] * nv + v];
            const int x0 = 2 * (ix % half[0]), y0 = 2 * (jy % half[1]), z0 = 2 * (kz % half[2]);
            double sum = 0;
            for (int dz = 0; dz < 2; ++dz)
              for (int dy = 0; dy < 2; ++dy)
                for (int dx = 0; dx < 2; ++dx)
                  sum += src[static_cast<std::size_t>(x0 + dx) +
                             static_cast<std::size_t>(s[0]) * (static_cast<std::size_t>(y0 + dy) + static_cast<std::size_t>(s[1]) * static_cast<std::size_t>(z0 + dz))];
            dst[n] = sum / 8;
          }
    }
  }
  const auto t1 = std::chrono::steady_clock::now();

  k::CommonInfo cm;
  cm.block = {s[0], s[1], s[2]};
  cm.domain = {0, ext[0], 0, ext[1], 0, ext[2]};
  cm.creator = "rewind_bench_window_gen";
  for (const auto& v : vars) cm.variables.push_back({v, v == "p" ? "m2/s2" : "m/s"});
  k::LocalGrids lg;
  lg.block = cm.block;
  lg.halo = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    k::GridRecord r;
    r.uid = g[i].uid;
    r.level = g[i].level;
    r.sort_key = g[i].uid;
    const double w = 1.0 / (1 << g[i].level);
    for (int a = 0; a < 3; ++a) {
      r.bbox[static_cast<std::size_t>(2 * a)] = ext[static_cast<std::size_t>(a)] * w * g[i].c[static_cast<std::size_t>(a)];
      r.bbox[static_cast<std::size_t>(2 * a + 1)] = ext[static_cast<std::size_t>(a)] * w * (g[i].c[static_cast<std::size_t>(a)] + 1);
    }
    r.parent_uid = g[i].parent;
    r.child_uids = g[i].children;
    for (std::size_t v = 0; v < nv; ++v) r.fields.push_back(data[i * nv + v].data());
    r.cell_type = types[i].data();
    lg.grids.push_back(std::move(r));
  }
  k::StepInfo si{1, 1.0, 0.01, k::StepKind::checkpoint, {}, true, {}, {}};
  for (std::size_t v = 0; v < nv; ++v) si.fields.push_back({"cell_data", vars[v], static_cast<int>(v)});
  k::WriteStats st;
  {  // closed before MPI_Finalize, which shuts HDF5 down
    auto w = k::Writer::create(MPI_COMM_SELF, out, cm);
    st = w.write_step(si, lg);
    w.close();
  }
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("%s: depth %d, %lld grids, %lld cells (%lld leaf cells), %.2f GB, field %.1f s, write %.1f s\n", out.c_str(),
              depth, static_cast<long long>(st.n_grids), static_cast<long long>(st.n_grids * static_cast<std::int64_t>(cells)),
              static_cast<long long>((std::int64_t{1} << (3 * depth)) * static_cast<std::int64_t>(cells)), st.bytes / 1e9,
              std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  MPI_Finalize();
  return 0;
}

// The three-phase ghost-layer exchange of rwd::forest::Forest.
//
// Everything that can be decided from the plan is decided once, in the constructor:
// which halo region is filled from which source cells, which of those live on other
// ranks, and in which order the cells travel. A call then only packs, sends,
// receives and unpacks along those schedules.
//
// Determinism: every value written by this file is a function of source cells that
// are the same whatever the partition (a restricted parent cell is computed by the
// owner of the child that covers it, an interpolated halo cell by the owner of the
// fine grid from the same coarse cells), evaluated by the same code in the same
// order. Whether those operands arrive from local memory or from a message does not
// change a bit of the result.
#include "rewind/forest/forest.hpp"

#include "forest_impl.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace rwd::forest {

using detail::AxisMap;
using detail::AxisTable;
using detail::Region;
using enum detail::SlopeSides;

namespace {

// Message tags: operation in the high bits, level in the low bits. The Forest talks
// on its own duplicate of the user's communicator, so these never meet user traffic.
constexpr int kTagHalo = 1 << 8;
constexpr int kTagRestrict = 2 << 8;
constexpr int kTagProlong = 3 << 8;


/// Read-only view of cells stored x fastest with its first cell at `lo`: either a
/// whole d-grid array (lo = -1,-1,-1) or a packed region in a receive buffer.
struct View {
  const double* p = nullptr;
  std::int64_t sy = 0, sz = 0;
  Int3 lo{0, 0, 0};
  [[nodiscard]] double operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return p[(i - lo[0]) + sy * (j - lo[1]) + sz * (k - lo[2])];
  }
};

View packed_view(const double* p, const Region& r) { return {p, r.extent(0), r.extent(0) * r.extent(1), r.lo}; }

double slope(double um, double u0, double up, std::uint8_t sides, Interp mode) {
  if (mode == Interp::linear) {
    switch (sides) {
      case kBoth: return 0.5 * (up - um);
      case kHi: return up - u0;
      case kLo: return u0 - um;
      default: return 0.0;
    }
  }
  if (sides != kBoth) return 0.0;  // limited: no one-sided extrapolation at a wall
  const double dl = u0 - um, dr = up - u0;
  if (dl * dr <= 0.0) return 0.0;
  const double mag = std::min({2.0 * std::abs(dl), 2.0 * std::abs(dr), 0.5 * std::abs(dl + dr)});
  return dl > 0.0 ? mag : -mag;
}

/// Fills `dst` (a region of the grid array `out` with strides sy, sz) from the coarse
/// cells in `src`, piecewise constant or linear; assigns or adds.
void interpolate(const View& src, double* out, std::int64_t sy, std::int64_t sz, const Region& dst,
                 const std::array<AxisMap, 3>& map, Interp mode, bool add, std::array<AxisTable, 3>& tab) {
  for (int a = 0; a < 3; ++a) tab[a].build(map[a], dst.lo[a], dst.hi[a]);
  const bool lin = mode != Interp::constant;
  for (std::int64_t k = dst.lo[2]; k < dst.hi[2]; ++k) {
    const auto tk = static_cast<std::size_t>(k - dst.lo[2]);
    const std::int64_t ck = tab[2].ci[tk];
    for (std::int64_t j = dst.lo[1]; j < dst.hi[1]; ++j) {
      const auto tj = static_cast<std::size_t>(j - dst.lo[1]);
      const std::int64_t cj = tab[1].ci[tj];
      double* row = out + (j + 1) * sy + (k + 1) * sz + 1;
      for (std::int64_t i = dst.lo[0]; i < dst.hi[0]; ++i) {
        const auto ti = static_cast<std::size_t>(i - dst.lo[0]);
        const std::int64_t ci = tab[0].ci[ti];
        const double u0 = src(ci, cj, ck);
        double v = u0;
        if (lin) {
          // Fixed order x, y, z: the same operands give the same bits on any rank.
          if (map[0].q > 1)
            v += slope(src(ci - 1, cj, ck), u0, src(ci + 1, cj, ck), tab[0].sides[ti], mode) * tab[0].off[ti];
          if (map[1].q > 1)
            v += slope(src(ci, cj - 1, ck), u0, src(ci, cj + 1, ck), tab[1].sides[tj], mode) * tab[1].off[tj];
          if (map[2].q > 1)
            v += slope(src(ci, cj, ck - 1), u0, src(ci, cj, ck + 1), tab[2].sides[tk], mode) * tab[2].off[tk];
        }
        if (add) row[i] += v;
        else row[i] = v;
      }
    }
  }
}

/// Copies the cells of `src` starting at `from` into region `dst` of a grid array.
void copy_region(const View& src, const Int3& from, double* out, std::int64_t sy, std::int64_t sz, const Region& dst) {
  for (std::int64_t k = dst.lo[2]; k < dst.hi[2]; ++k)
    for (std::int64_t j = dst.lo[1]; j < dst.hi[1]; ++j) {
      double* row = out + (j + 1) * sy + (k + 1) * sz + 1;
      const std::int64_t sj = from[1] + (j - dst.lo[1]), sk = from[2] + (k - dst.lo[2]);
      for (std::int64_t i = dst.lo[0]; i < dst.hi[0]; ++i) row[i] = src(from[0] + (i - dst.lo[0]), sj, sk);
    }
}

/// Appends region `r` of a grid array to `buf` (x fastest).
void pack_region(const double* grid, std::int64_t sy, std::int64_t sz, const Region& r, double*& buf) {
  for (std::int64_t k = r.lo[2]; k < r.hi[2]; ++k)
    for (std::int64_t j = r.lo[1]; j < r.hi[1]; ++j) {
      const double* row = grid + (j + 1) * sy + (k + 1) * sz + 1;
      buf = std::copy(row + r.lo[0], row + r.hi[0], buf);
    }
}


}  // namespace

// ---------------------------------------------------------------------------------

Forest::Forest(LocalPlan plan, int nvars, MPI_Comm comm)
    : plan_(std::move(plan)), nvars_(nvars), comm_(comm), impl_(std::make_unique<Impl>()) {
  const TreeShape& sh = plan_.shape;
  // Local consistency checks first; then every rank learns whether all passed, so
  // that nobody throws while the others wait in the schedule exchange below.
  std::string problem;
  int csize = 0, crank = 0;
  MPI_Comm_size(comm, &csize);
  MPI_Comm_rank(comm, &crank);
  if (nvars < 1) problem = "nvars must be >= 1";
  else if (csize != plan_.ranks) problem = "communicator size " + std::to_string(csize) + " != plan.ranks " + std::to_string(plan_.ranks);
  else if (crank != plan_.rank) problem = "communicator rank " + std::to_string(crank) + " != plan.rank " + std::to_string(plan_.rank);
  for (int a = 0; a < 3 && problem.empty(); ++a)
    if (sh.r[a] < 1 || sh.s[a] % sh.r[a] != 0)
      problem = "d-grid size s[" + std::to_string(a) + "] = " + std::to_string(sh.s[a]) +
                " is not a multiple of the refinement factor " + std::to_string(sh.r[a]);
  for (std::size_t g = 0; g < plan_.grids.size() && problem.empty(); ++g)
    if (plan_.grids[g].level() >= plan_.levels) problem = "plan has a grid deeper than plan.levels";
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (!all_ok)
    throw std::invalid_argument("forest: " + (problem.empty() ? std::string("another rank's plan is inconsistent") : problem));

  Impl& im = *impl_;
  im.comm = mpi::Comm::dup(comm, "forest");
  im.rank = crank;
  for (int a = 0; a < 3; ++a) im.m[a] = sh.s[a] / sh.r[a];
  block_ = static_cast<std::size_t>((sh.s[0] + 2) * std::int64_t{sh.s[1] + 2} * (sh.s[2] + 2));
  storage_.assign(block_ * static_cast<std::size_t>(nvars_) * plan_.grids.size(), 0.0);

  const auto levels = static_cast<std::size_t>(std::max(plan_.levels, 1));
  im.by_level.assign(levels, {});
  for (std::size_t g = 0; g < plan_.grids.size(); ++g) {
    im.index.emplace(plan_.grids[g].uid, g);
    im.by_level[static_cast<std::size_t>(plan_.grids[g].level())].push_back(g);
  }
  im.halo.assign(levels, {});
  im.family.assign(levels, {});

  im.build_schedules(plan_, csize, crank);
}

Forest::Forest(Forest&&) noexcept = default;
Forest& Forest::operator=(Forest&&) noexcept = default;
Forest::~Forest() = default;

std::ptrdiff_t Forest::local_index(Uid uid) const {
  const auto it = impl_->index.find(uid);
  return it == impl_->index.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
}

std::span<const std::size_t> Forest::grids_on_level(int level) const {
  if (level < 0 || static_cast<std::size_t>(level) >= impl_->by_level.size()) return {};
  return impl_->by_level[static_cast<std::size_t>(level)];
}

namespace {
void check_vars(std::span<const int> vars, int nvars) {
  for (const int v : vars)
    if (v < 0 || v >= nvars)
      throw std::invalid_argument("forest: variable " + std::to_string(v) + " outside 0.." + std::to_string(nvars - 1));
}

/// For the bottom-up and top-down phases: checks `vars`; true if grids on `child_level`
/// have parents in a plan of `levels` levels (level 0 and levels beyond have none).
bool has_parents(std::span<const int> vars, int nvars, int child_level, int levels) {
  check_vars(vars, nvars);
  return child_level >= 1 && child_level < levels;
}
}  // namespace

// ---------------------------------------------------------------------------------
// Bottom-up

void Forest::restrict_levels(std::span<const int> vars, int to_level) {
  for (int l = plan_.levels - 1; l > std::max(to_level, 0); --l) restrict_level(vars, l);
}

void Forest::restrict_level(std::span<const int> vars, int child_level) {
  if (!has_parents(vars, nvars_, child_level, plan_.levels)) return;
  Impl& im = *impl_;
  const auto& fs = im.family[static_cast<std::size_t>(child_level)];
  const TreeShape& sh = shape();
  const auto nv = static_cast<std::int64_t>(vars.size());
  const Int3 m = im.m;
  const std::int64_t per_child = m[0] * m[1] * m[2];
  const double inv = 1.0 / static_cast<double>(sh.r[0] * sh.r[1] * sh.r[2]);  // a power of two: exact
  const std::int64_t sy = stride_y(), sz = stride_z();

  // The average of the r0*r1*r2 child cells under each parent cell, summed in fixed
  // (k, j, i) order, written to `out` with strides (1, oy, oz). Uniform trees run this
  // at every step (Solver: the parents show the current step), so a parent row's
  // r1*r2 child rows are found once and walked with unit stride.
  // r1*r2 child rows are summed into a row of accumulators, one per parent cell: each
  // parent cell still adds its values in (k, j, i) order, and the pass over a row is
  // unit-stride and vectorisable.
  const std::int64_t r0 = sh.r[0];
  std::vector<double> acc(static_cast<std::size_t>(m[0]));
  auto average = [&](const double* child, double* out, std::int64_t oy, std::int64_t oz) {
    for (std::int64_t pk = 0; pk < m[2]; ++pk)
      for (std::int64_t pj = 0; pj < m[1]; ++pj) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::int64_t k = pk * sh.r[2]; k < (pk + 1) * sh.r[2]; ++k)
          for (std::int64_t j = pj * sh.r[1]; j < (pj + 1) * sh.r[1]; ++j) {
            const double* row = child + index(0, j, k);
            double* a = acc.data();
            for (std::int64_t pi = 0; pi < m[0]; ++pi, row += r0)
              for (std::int64_t i = 0; i < r0; ++i) a[pi] += row[i];
          }
        double* o = out + oy * pj + oz * pk;
        for (std::int64_t pi = 0; pi < m[0]; ++pi) o[pi] = acc[static_cast<std::size_t>(pi)] * inv;
      }
  };
  auto parent_block = [&](std::size_t parent, int var, const Int3& pos) {
    return data(parent, var) + index(pos[0] * m[0], pos[1] * m[1], pos[2] * m[2]);
  };

  std::vector<int> rr, sr;
  std::vector<std::int64_t> rd, sd;
  for (const auto& p : fs.from_child) rr.push_back(p.rank), rd.push_back(p.cells * nv);
  for (const auto& p : fs.to_parent) sr.push_back(p.rank), sd.push_back(per_child * nv * static_cast<std::int64_t>(p.links.size()));
  im.round(
      kTagRestrict + child_level, rr, rd, sr, sd,
      [&](std::size_t p, double* buf) {
        for (const auto& l : fs.to_parent[p].links)
          for (const int v : vars) {
            average(data(l.child, v), buf, m[0], m[0] * m[1]);
            buf += per_child;
          }
      },
      [&] {
        for (const auto& l : fs.local)
          for (const int v : vars) average(data(l.child, v), parent_block(l.parent, v, l.pos), sy, sz);
      },
      [&](std::size_t p, const double* buf) {
        for (const auto& l : fs.from_child[p].links)
          for (const int v : vars) {
            double* out = parent_block(l.parent, v, l.pos);
            for (std::int64_t k = 0; k < m[2]; ++k)
              for (std::int64_t j = 0; j < m[1]; ++j)
                for (std::int64_t i = 0; i < m[0]; ++i) out[i + sy * j + sz * k] = *buf++;
          }
      },
      nullptr);
}

// ---------------------------------------------------------------------------------
// Top-down for multigrid

void Forest::prolong_level(std::span<const int> vars, int child_level, ProlongMode mode, Interp interp) {
  if (!has_parents(vars, nvars_, child_level, plan_.levels)) return;
  Impl& im = *impl_;
  const auto& fs = im.family[static_cast<std::size_t>(child_level)];
  const TreeShape& sh = shape();
  const auto nv = static_cast<std::int64_t>(vars.size());
  const std::int64_t sy = stride_y(), sz = stride_z();
  const bool add = mode == ProlongMode::add;
  const Int3 gpp = sh.grids_per_axis(child_level - 1);

  // The parent cells (ring included on refined axes) under child position `pos`,
  // and the index maps from child cells to them.
  auto source = [&](const Int3& pos) {
    Region r;
    for (int a = 0; a < 3; ++a) {
      const std::int64_t ring = sh.r[a] > 1 ? 1 : 0;
      r.lo[a] = pos[a] * im.m[a] - ring;
      r.hi[a] = (pos[a] + 1) * im.m[a] + ring;
    }
    return r;
  };
  Region interior;
  for (int a = 0; a < 3; ++a) interior.lo[a] = 0, interior.hi[a] = sh.s[a];
  auto maps = [&](std::size_t child, const Int3& pos) {
    std::array<AxisMap, 3> mp{};
    const Int3 cc = plan_.grids[child].uid.coord();
    for (int a = 0; a < 3; ++a) {
      mp[a].fine_base = cc[a] * sh.s[a];
      mp[a].q = sh.r[a];
      mp[a].coarse_base = (cc[a] - pos[a]) / sh.r[a] * sh.s[a];
      mp[a].coarse_n = gpp[a] * sh.s[a];
      mp[a].periodic = sh.periodic[a];
    }
    return mp;
  };

  std::vector<int> rr, sr;
  std::vector<std::int64_t> rd, sd;
  for (const auto& p : fs.from_parent) {
    std::int64_t cells = 0;
    for (const auto& l : p.links) cells += source(l.pos).cells();
    rr.push_back(p.rank), rd.push_back(cells * nv);
  }
  for (const auto& p : fs.to_child) {
    std::int64_t cells = 0;
    for (const auto& l : p.links) cells += source(l.pos).cells();
    sr.push_back(p.rank), sd.push_back(cells * nv);
  }
  im.round(
      kTagProlong + child_level, rr, rd, sr, sd,
      [&](std::size_t p, double* buf) {
        for (const auto& l : fs.to_child[p].links)
          for (const int v : vars) pack_region(data(l.parent, v), sy, sz, source(l.pos), buf);
      },
      [&] {
        for (const auto& l : fs.local)
          for (const int v : vars)
            interpolate(View{data(l.parent, v), sy, sz, {-1, -1, -1}}, data(l.child, v), sy, sz, interior,
                        maps(l.child, l.pos), interp, add, im.tab);
      },
      [&](std::size_t p, const double* buf) {
        for (const auto& l : fs.from_parent[p].links) {
          const Region src = source(l.pos);
          for (const int v : vars) {
            interpolate(packed_view(buf, src), data(l.child, v), sy, sz, interior, maps(l.child, l.pos), interp, add,
                        im.tab);
            buf += src.cells();
          }
        }
      },
      nullptr);
}

// ---------------------------------------------------------------------------------
// Horizontal + top-down halo fill

void Forest::exchange_halos(std::span<const int> vars, int level, Interp interp, const BoundaryFill& boundary) {
  check_vars(vars, nvars_);
  Impl& im = *impl_;
  stats_ = {};
  const int first = level < 0 ? 0 : level;
  const int last = level < 0 ? plan_.levels - 1 : std::min(level, plan_.levels - 1);
  const auto nv = static_cast<std::int64_t>(vars.size());
  const std::int64_t sy = stride_y(), sz = stride_z();
  const bool flat_z = shape().dim() == 2;

  auto run = [&](const Impl::HaloTask& t, const View& src, int var) {
    double* out = data(t.grid, var);
    if (t.interp) interpolate(src, out, sy, sz, t.dst, t.map, interp, false, im.tab);
    else copy_region(src, t.src.lo, out, sy, sz, t.dst);
  };

  for (int L = first; L <= last; ++L) {
    const auto& ls = im.halo[static_cast<std::size_t>(L)];
    std::vector<int> rr, sr;
    std::vector<std::int64_t> rd, sd;
    for (const auto& p : ls.recv) rr.push_back(p.rank), rd.push_back(p.cells * nv);
    for (const auto& p : ls.send) sr.push_back(p.rank), sd.push_back(p.cells * nv);
    im.round(
        kTagHalo + L, rr, rd, sr, sd,
        [&](std::size_t p, double* buf) {
          // Layout: per request, per variable, the region x fastest.
          for (const auto& it : ls.send[p].items)
            for (const int v : vars) pack_region(data(it.grid, v), sy, sz, it.region, buf);
        },
        [&] {
          for (const auto& t : ls.local)
            for (const int v : vars) run(t, View{data(t.src_grid, v), sy, sz, {-1, -1, -1}}, v);
        },
        [&](std::size_t p, const double* buf) {
          for (const auto& t : ls.remote[p]) {
            const double* base = buf + t.offset * nv;
            const std::int64_t cells = t.src.cells();
            for (std::size_t vi = 0; vi < vars.size(); ++vi)
              run(t, packed_view(base + static_cast<std::int64_t>(vi) * cells, t.src), vars[vi]);
          }
        },
        &stats_);
    stats_.halo_bytes += ls.halo_cells * nv * static_cast<std::int64_t>(sizeof(double));

    if (boundary)
      for (const auto& [g, d] : ls.boundary)
        for (const int v : vars) boundary(g, d, v);

    if (flat_z) {
      // 2-D: the z-halo layers mirror the single interior layer, halo rows included.
      const std::int64_t plane = sz;
      for (const std::size_t g : im.by_level[static_cast<std::size_t>(L)])
        for (const int v : vars) {
          double* p = data(g, v);
          std::copy(p + plane, p + 2 * plane, p);
          std::copy(p + plane, p + 2 * plane, p + 2 * plane);
        }
    }
  }
  last_bytes_ = stats_.bytes_sent;
}

void Forest::communicate(std::span<const int> vars, Interp interp, const BoundaryFill& boundary) {
  restrict_levels(vars, 0);
  exchange_halos(vars, -1, interp, boundary);
}

}  // namespace rwd::forest

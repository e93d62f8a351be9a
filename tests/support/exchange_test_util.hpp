// Helpers for the Forest / exchange tests: trees, fields and halo checks.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rewind/forest/forest.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"
#include "rewind/spacetree/tree.hpp"

namespace rwd::test {

namespace st = rwd::spacetree;

inline int comm_size(MPI_Comm c) { int s = 0; MPI_Comm_size(c, &s); return s; }
inline int comm_rank(MPI_Comm c) { int r = 0; MPI_Comm_rank(c, &r); return r; }

/// Unit domain, r = 2 on refined axes; 2-D has rz = sz = 1 and a thin z extent.
inline st::TreeShape shape_of(int dim, int s, int max_depth, std::array<bool, 3> periodic = {false, false, false}) {
  st::TreeShape sh;
  sh.domain.lo = {0.0, 0.0, 0.0};
  sh.domain.hi = {1.0, 1.0, dim == 2 ? 0.125 : 1.0};
  sh.r = {2, 2, dim == 2 ? 1 : 2};
  sh.s = {s, s, dim == 2 ? 1 : s};
  sh.max_depth = max_depth;
  sh.periodic = periodic;
  return sh;
}

/// Deterministic pseudo-random adaptive tree: every process that calls this with the
/// same arguments gets the same tree (the decision is a hash of UID and seed).
inline st::Tree random_adaptive(const st::TreeShape& sh, std::uint64_t seed, int base_depth = 1, double p = 0.35) {
  st::Tree t = st::Tree::full(sh, base_depth);
  auto hash = [seed](std::uint64_t x) {
    x ^= seed * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return static_cast<double>(x >> 11) / static_cast<double>(std::uint64_t{1} << 53);
  };
  t.adapt_until_stable([&](st::Uid u, const st::Box&) { return hash(u.raw()) < p ? st::Mark::refine : st::Mark::keep; },
                       sh.max_depth);
  t.balance();
  return t;
}

/// Tree refined to max_depth wherever a grid touches the sphere |x - c| = rad, balanced.
inline st::Tree sphere_tree(const st::TreeShape& sh, int base_depth, std::array<double, 3> c, double rad) {
  st::Tree t = st::Tree::full(sh, base_depth);
  t.adapt_until_stable([&](st::Uid, const st::Box& b) {
    double dmin = 0.0, dmax = 0.0;
    for (int a = 0; a < 3; ++a) {
      if (sh.s[a] == 1 && sh.r[a] == 1) continue;  // flat axis in 2-D
      const double lo = b.lo[a] - c[a], hi = b.hi[a] - c[a];
      const double near = (lo > 0) ? lo : (hi < 0 ? -hi : 0.0);
      const double far = std::max(std::abs(lo), std::abs(hi));
      dmin += near * near;
      dmax += far * far;
    }
    return (std::sqrt(dmin) <= rad && rad <= std::sqrt(dmax)) ? st::Mark::refine : st::Mark::keep;
  }, sh.max_depth);
  t.balance();
  return t;
}

/// Plan of this rank of `comm` for `tree` partitioned over comm's size.
inline st::LocalPlan plan_for(const st::Tree& tree, MPI_Comm comm) {
  st::Topology topo(tree, st::partition_morton(tree, comm_size(comm)));
  return st::make_local_plan(topo, comm_rank(comm));
}

using Field = std::function<double(double, double, double)>;

/// Global cell index -> physical centre along axis a at `level`; periodic axes wrap.
/// Returns false if the cell lies outside a non-periodic domain face.
inline bool centre(const st::TreeShape& sh, int level, int a, std::int64_t g, double& x) {
  const std::int64_t n = sh.grids_per_axis(level)[a] * sh.s[a];
  if (g < 0 || g >= n) {
    if (!sh.periodic[a]) return false;
    g = ((g % n) + n) % n;
  }
  x = sh.domain.lo[a] + (static_cast<double>(g) + 0.5) * (sh.domain.extent(a) / static_cast<double>(n));
  return true;
}

/// Value of f at the centre of cell (i, j, k) of grid `uid` (halo indices allowed;
/// in 2-D the z-halo takes the interior layer). False outside the domain.
inline bool expected(const st::TreeShape& sh, st::Uid uid, std::int64_t i, std::int64_t j, std::int64_t k,
                     const Field& f, double& v) {
  const auto c = uid.coord();
  const std::array<std::int64_t, 3> loc{i, j, sh.dim() == 2 ? 0 : k};
  std::array<double, 3> x{};
  for (int a = 0; a < 3; ++a)
    if (!centre(sh, uid.level(), a, c[a] * sh.s[a] + loc[a], x[a])) return false;
  v = f(x[0], x[1], x[2]);
  return true;
}

/// Sets the interior of every grid (every level) of `var` to f at the cell centres.
inline void fill_all_levels(forest::Forest& fo, int var, const Field& f) {
  const auto& sh = fo.shape();
  for (std::size_t g = 0; g < fo.size(); ++g)
    for (int k = 0; k < sh.s[2]; ++k)
      for (int j = 0; j < sh.s[1]; ++j)
        for (int i = 0; i < sh.s[0]; ++i) {
          double v = 0;
          expected(sh, fo.grid(g).uid, i, j, k, f, v);
          fo.at(g, var, i, j, k) = v;
        }
}

/// Sets leaf interiors to f and every other cell (parents, halos) to a poison value.
inline void fill_leaves(forest::Forest& fo, int var, const Field& f, double poison = 1e30) {
  const auto& sh = fo.shape();
  for (std::size_t g = 0; g < fo.size(); ++g) {
    std::fill(fo.data(g, var), fo.data(g, var) + fo.block_size(), poison);
    if (!fo.grid(g).is_leaf()) continue;
    for (int k = 0; k < sh.s[2]; ++k)
      for (int j = 0; j < sh.s[1]; ++j)
        for (int i = 0; i < sh.s[0]; ++i) {
          double v = 0;
          expected(sh, fo.grid(g).uid, i, j, k, f, v);
          fo.at(g, var, i, j, k) = v;
        }
  }
}

struct HaloErrors {
  double same = 0.0;      ///< max |halo - f| over halos filled from same-level grids
  double coarser = 0.0;   ///< ... filled by interpolation from a coarser grid
  std::int64_t same_cells = 0, coarser_cells = 0;
};

/// Compares every non-boundary halo cell of every grid with f; reduced over `comm`.
inline HaloErrors halo_errors(const forest::Forest& fo, int var, const Field& f, MPI_Comm comm, bool leaves_only = false) {
  const auto& sh = fo.shape();
  HaloErrors e;
  for (std::size_t g = 0; g < fo.size(); ++g) {
    const auto& gi = fo.grid(g);
    if (leaves_only && !gi.is_leaf()) continue;
    for (const auto& n : gi.neighbours) {
      if (n.relation == st::Relation::finer || n.relation == st::Relation::boundary) continue;
      std::array<std::int64_t, 3> lo{}, hi{};
      for (int a = 0; a < 3; ++a) {
        if (n.dir[a] < 0) lo[a] = -1, hi[a] = 0;
        else if (n.dir[a] > 0) lo[a] = sh.s[a], hi[a] = sh.s[a] + 1;
        else lo[a] = 0, hi[a] = sh.s[a];
      }
      if (sh.dim() == 2) lo[2] = -1, hi[2] = 2;  // the mirrored z-halo too
      for (auto k = lo[2]; k < hi[2]; ++k)
        for (auto j = lo[1]; j < hi[1]; ++j)
          for (auto i = lo[0]; i < hi[0]; ++i) {
            double want = 0;
            if (!expected(sh, gi.uid, i, j, k, f, want)) continue;
            const double got = fo.data(g, var)[fo.index(i, j, k)];
            const double err = std::isfinite(got) ? std::abs(got - want) : std::numeric_limits<double>::infinity();
            if (n.relation == st::Relation::same) e.same = std::max(e.same, err), ++e.same_cells;
            else e.coarser = std::max(e.coarser, err), ++e.coarser_cells;
          }
    }
  }
  double loc[2] = {e.same, e.coarser}, glob[2] = {0, 0};
  MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, comm);
  std::int64_t lc[2] = {e.same_cells, e.coarser_cells}, gc[2] = {0, 0};
  MPI_Allreduce(lc, gc, 2, MPI_INT64_T, MPI_SUM, comm);
  return {glob[0], glob[1], gc[0], gc[1]};
}

}  // namespace rwd::test

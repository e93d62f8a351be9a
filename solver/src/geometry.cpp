// The grids of a rank: levels, neighbours, coarse and fine faces, cell types, and the
// immersed-boundary forcing stencils of the obstacles.
#include "solver_impl.hpp"

namespace rwd::solver {

void Solver::Impl::setup_grids() {
  const auto& sh = forest.shape();
  grids.resize(forest.size());
  by_level.assign(static_cast<std::size_t>(lmax + 1), {});
  std::int64_t local_leaf = 0;
  int local_full = 1, local_balanced = 1;
  for (std::size_t g = 0; g < forest.size(); ++g) {
    const auto& info = forest.grid(g);
    GridData& gd = grids[g];
    gd.level = info.level();
    gd.leaf = info.is_leaf();
    gd.geom.s = sh.s;
    gd.geom.h = sh.cell_size(gd.level);
    gd.geom.dim = dim;
    gd.lo = info.box.lo;
    for (const auto& n : info.neighbours) {
      int nz = 0, axis = 0;
      for (int a = 0; a < 3; ++a)
        if (n.dir[a] != 0) ++nz, axis = a;
      if (nz == 1 && n.relation == Relation::boundary) gd.on_face[static_cast<std::size_t>(2 * axis + (n.dir[axis] > 0))] = true;
      if (nz == 1 && n.relation == Relation::coarser) {
        if (n.uid.level() != gd.level - 1) local_balanced = 0;
        gd.coarse_faces.push_back(CoarseFace{axis, n.dir[axis] > 0 ? 1 : 0});
      }
      if (nz == 1 && n.relation == Relation::finer) {
        const CoarseFace f{axis, n.dir[axis] > 0 ? 1 : 0};
        if (std::none_of(gd.fine_faces.begin(), gd.fine_faces.end(),
                         [&](const CoarseFace& o) { return o.axis == f.axis && o.side == f.side; }))
          gd.fine_faces.push_back(f);
      }
    }
    by_level[static_cast<std::size_t>(gd.level)].push_back(g);
    if (gd.leaf) {
      leaves.push_back(g);
      local_leaf += sh.cells_per_grid();
      if (gd.level != lmax) local_full = 0;
    }
    if (gd.level == 0) root = static_cast<std::ptrdiff_t>(g);
    classify(g);
  }
  MPI_Allreduce(&local_leaf, &global_leaf_cells, 1, MPI_INT64_T, MPI_SUM, comm);
  int all_full = 0;
  MPI_Allreduce(&local_full, &all_full, 1, MPI_INT, MPI_MIN, comm);
  full = all_full == 1;
  // Flux matching needs level jumps of one across faces (the default 2:1 balance);
  // an unbalanced tree keeps the forest's linearly interpolated halos.
  int all_balanced = 0;
  MPI_Allreduce(&local_balanced, &all_balanced, 1, MPI_INT, MPI_MIN, comm);
  matched = all_balanced == 1;
  if (!matched)
    for (auto& gd : grids) gd.coarse_faces.clear(), gd.fine_faces.clear();
  forces.assign(cfg.obstacles.size(), {});
}

std::array<double, 3> Solver::Impl::centre(const GridData& gd, std::int64_t i, std::int64_t j, std::int64_t k) const {
  std::array<double, 3> x{};
  const std::array<std::int64_t, 3> ijk{i, j, k};
  for (int a = 0; a < 3; ++a) x[a] = gd.lo[a] + (static_cast<double>(ijk[a]) + 0.5) * gd.geom.h[a];
  if (dim == 2) x[2] = 0.5 * (forest.shape().domain.lo[2] + forest.shape().domain.hi[2]);
  return x;
}

std::pair<double, int> Solver::Impl::obstacle_distance(const std::array<double, 3>& x) const {
  double d = std::numeric_limits<double>::infinity();
  int which = -1;
  for (std::size_t o = 0; o < cfg.obstacles.size(); ++o) {
    const double v = cfg.obstacles[o].distance(x, dim);
    if (v < d) d = v, which = static_cast<int>(o);
  }
  return {d, which};
}

void Solver::Impl::classify(std::size_t g) {
  GridData& gd = grids[g];
  const auto& G = gd.geom;
  gd.type.assign(static_cast<std::size_t>(forest.shape().cells_per_grid()), 0);
  if (cfg.obstacles.empty()) return;
  auto solid_at = [&](const std::array<double, 3>& x) { return obstacle_distance(x).first < 0.0; };
  std::size_t n = 0;
  for (int k = 0; k < G.s[2]; ++k)
    for (int j = 0; j < G.s[1]; ++j)
      for (int i = 0; i < G.s[0]; ++i, ++n) {
        const auto x = centre(gd, i, j, k);
        const auto [d, ob] = obstacle_distance(x);
        if (d < 0.0) {
          gd.type[n] = static_cast<std::uint8_t>(CellType::solid);
          if (gd.leaf) gd.forced.push_back(Forced{G.index(i, j, k), ob, 0, {}, {}});
          continue;
        }
        bool near = false;
        for (int a = 0; a < dim && !near; ++a)
          for (int sgn = -1; sgn <= 1; sgn += 2) {
            auto y = x;
            y[a] += sgn * G.h[a];
            if (solid_at(y)) near = true;
          }
        if (!near) continue;
        gd.type[n] = static_cast<std::uint8_t>(CellType::interface);
        if (!gd.leaf || cfg.numerics.immersed == Immersed::staircase) continue;
        // Interpolation along each axis towards the fluid, weighted by the squared
        // normal components: the velocity is taken linear in the wall distance, zero
        // on the surface (second-order direct forcing, Fadlun et al. 2000 style).
        Forced f{G.index(i, j, k), ob, 0, {}, {}};
        const auto& obs = cfg.obstacles[static_cast<std::size_t>(ob)];
        std::array<double, 3> nrm{};
        double nn = 0;
        for (int a = 0; a < dim; ++a) {
          auto yp = x, ym = x;
          const double e = 1e-4 * G.h[a];
          yp[a] += e, ym[a] -= e;
          nrm[a] = (obs.distance(yp, dim) - obs.distance(ym, dim)) / (2 * e);
          nn += nrm[a] * nrm[a];
        }
        double wsum = 0;
        for (int a = 0; a < dim; ++a) {
          const double w = nrm[a] * nrm[a] / (nn > 0 ? nn : 1.0);
          if (w < 1e-12) continue;
          const int sgn = nrm[a] > 0 ? 1 : -1;
          auto y = x;
          y[a] += sgn * G.h[a];
          const double dout = obstacle_distance(y).first;
          if (!(dout > d)) continue;
          f.off[static_cast<std::size_t>(f.n)] = sgn * G.stride(a);
          f.w[static_cast<std::size_t>(f.n)] = w * d / dout;
          wsum += w;
          ++f.n;
        }
        for (int q = 0; q < f.n; ++q) f.w[static_cast<std::size_t>(q)] /= wsum;
        gd.forced.push_back(f);
      }
}

}  // namespace rwd::solver

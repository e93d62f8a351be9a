// The projection solver. See rewind/solver/solver.hpp for the algorithm and the
// determinism / checkpoint contracts; comments here say why, not what.
#include "rewind/solver/solver.hpp"
#include "rewind/solver/strouhal.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "rewind/solver/operators.hpp"

namespace rwd::solver {

using spacetree::Forest;
using spacetree::Interp;
using spacetree::ProlongMode;
using spacetree::Relation;

namespace {

constexpr FieldInfo kFields[] = {
    {kU, "u", FieldRole::state},         {kV, "v", FieldRole::state},        {kW, "w", FieldRole::state},
    {kP, "p", FieldRole::state},         {kT, "T", FieldRole::state},        {kGpx, "gpx", FieldRole::derived},
    {kGpy, "gpy", FieldRole::derived},   {kGpz, "gpz", FieldRole::derived},  {kUs, "u_star", FieldRole::scratch},
    {kVs, "v_star", FieldRole::scratch}, {kWs, "w_star", FieldRole::scratch}, {kTs, "T_star", FieldRole::scratch},
    {kPhi, "phi", FieldRole::scratch},   {kRhs, "rhs", FieldRole::scratch},  {kB, "mg_rhs", FieldRole::scratch},
    {kR, "mg_residual", FieldRole::scratch}, {kX, "mg_correction", FieldRole::scratch},
};

/// One forced cell of the immersed-boundary treatment: the target is
/// body_value + sum_k w_k (q[c + off_k] - body_value) (empty sum for solid cells).
struct Forced {
  std::int64_t c = 0;
  int obstacle = 0;
  int n = 0;
  std::array<std::int64_t, 3> off{};
  std::array<double, 3> w{};
};

/// A face of a grid whose neighbour across it is one level coarser (a level jump).
struct CoarseFace {
  int axis = 0;
  int side = 0;  // 0: the - face, 1: the + face
};

struct GridData {
  BlockGeom geom;
  std::vector<CoarseFace> coarse_faces;  // faces next to a coarser grid
  std::vector<CoarseFace> fine_faces;    // faces next to finer grids (leaves only)
  bool leaf = true;
  int level = 0;
  std::array<double, 3> lo{};       // lower corner of the grid
  std::array<bool, 6> on_face{};    // touches a non-periodic domain face
  std::vector<std::uint8_t> type;   // interior only, x fastest
  std::vector<Forced> forced;       // solid and interface cells (leaves only)
};

// Max-reduce helper; MPI_MAX of doubles is exact and order-free.
double allreduce_max(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
  return r;
}

}  // namespace

std::span<const FieldInfo> field_table() { return kFields; }
std::vector<FieldInfo> state_fields() {
  std::vector<FieldInfo> out;
  for (const auto& f : kFields)
    if (f.role == FieldRole::state) out.push_back(f);
  return out;
}

struct Solver::Impl {
  SolverCase cfg;
  Forest forest;
  MPI_Comm comm;
  int rank = 0;
  int dim = 3;
  int lmax = 0;          // deepest level present
  bool full = true;      // every leaf on lmax
  bool matched = true;   // level jumps flux-matched (2:1 balanced tree)
  bool singular = true;  // no Dirichlet face for the pressure
  std::vector<GridData> grids;
  std::vector<std::size_t> leaves;
  std::vector<std::vector<std::size_t>> by_level;
  std::ptrdiff_t root = -1;  // local index of the root grid, if owned
  std::array<double, 3> h_finest{};
  std::int64_t global_leaf_cells = 0;

  ScalarState st;
  double event_time = std::numeric_limits<double>::infinity();  // see Solver::set_event_time
  PressureStats last_pressure;
  std::vector<double> cycle_residuals;
  std::vector<ObstacleForce> forces;
  double dt_last = 0.0;
  PhaseTimes times;

  StrouhalEstimator strouhal;  // lift of obstacle 0 (same on every rank)

  spacetree::BoundaryFill bc;
  std::vector<double> qc_buf;  // scratch of match_coarse_faces

  Impl(SolverCase c, spacetree::LocalPlan plan, MPI_Comm cm)
      : cfg(std::move(c)), forest(std::move(plan), kNumVars, cm), comm(cm) {
    MPI_Comm_rank(comm, &rank);
    const auto& sh = forest.shape();
    dim = sh.dim();
    lmax = forest.plan().levels - 1;
    h_finest = sh.cell_size(lmax);
    for (int f = 0; f < 2 * dim; ++f)
      if (cfg.boundary[static_cast<std::size_t>(f)].type == BcType::outflow) singular = false;
    bc = [this](std::size_t g, const std::array<std::int8_t, 3>& dir, int var) { fill_boundary(g, dir, var); };
    setup_grids();
  }

  // ---------------------------------------------------------------- geometry
  void setup_grids() {
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

  [[nodiscard]] std::array<double, 3> centre(const GridData& gd, std::int64_t i, std::int64_t j, std::int64_t k) const {
    std::array<double, 3> x{};
    const std::array<std::int64_t, 3> ijk{i, j, k};
    for (int a = 0; a < 3; ++a) x[a] = gd.lo[a] + (static_cast<double>(ijk[a]) + 0.5) * gd.geom.h[a];
    if (dim == 2) x[2] = 0.5 * (forest.shape().domain.lo[2] + forest.shape().domain.hi[2]);
    return x;
  }

  // Distance to the nearest obstacle and its index.
  [[nodiscard]] std::pair<double, int> obstacle_distance(const std::array<double, 3>& x) const {
    double d = std::numeric_limits<double>::infinity();
    int which = -1;
    for (std::size_t o = 0; o < cfg.obstacles.size(); ++o) {
      const double v = cfg.obstacles[o].distance(x, dim);
      if (v < d) d = v, which = static_cast<int>(o);
    }
    return {d, which};
  }

  void classify(std::size_t g) {
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

  // ---------------------------------------------------------- boundaries
  [[nodiscard]] double profile_factor(const FaceBc& b, int axis, const std::array<double, 3>& x) const {
    if (b.profile != Profile::parabolic) return 1.0;
    const auto& dom = forest.shape().domain;
    double f = 1.0;
    for (int t = 0; t < dim; ++t) {
      if (t == axis) continue;
      const double L = dom.extent(t);
      f *= 4.0 * (x[t] - dom.lo[t]) * (dom.hi[t] - x[t]) / (L * L);
    }
    return f;
  }

  // Ghost values that put each boundary condition on the face between the last
  // interior cell and the halo (see the table in docs/validation.md).
  void fill_boundary(std::size_t g, const std::array<std::int8_t, 3>& dir, int var) {
    GridData& gd = grids[g];
    // The face condition that applies: the first axis of `dir` that leaves the
    // domain. Edge and corner halos (called after the faces) apply it to the halo
    // cell one step back along that axis, which is already filled.
    int axis = -1;
    for (int a = 0; a < 3 && axis < 0; ++a)
      if (dir[a] != 0 && gd.on_face[static_cast<std::size_t>(2 * a + (dir[a] > 0))]) axis = a;
    if (axis < 0) return;
    const int side = dir[axis] > 0 ? 1 : 0;
    const FaceBc& b = cfg.boundary[static_cast<std::size_t>(2 * axis + side)];
    const BlockGeom& G = gd.geom;
    double* q = forest.data(g, var);
    std::array<std::int64_t, 3> lo{}, hi{};
    for (int a = 0; a < 3; ++a) {
      const auto A = static_cast<std::size_t>(a);
      if (dir[a] == 0) lo[A] = 0, hi[A] = G.s[a];
      else lo[A] = dir[a] > 0 ? G.s[a] : -1, hi[A] = lo[A] + 1;
    }
    const std::int64_t back = (side ? -1 : 1) * G.stride(axis);

    // Classify the variable.
    enum Kind { vel, pres, grad, temp, plain } kind = plain;
    int comp = 0;
    if (var >= kU && var <= kW) kind = vel, comp = var - kU;
    else if (var >= kUs && var <= kWs) kind = vel, comp = var - kUs;
    else if (var == kP || var == kPhi || var == kX) kind = pres;
    else if (var >= kGpx && var <= kGpz) kind = grad, comp = var - kGpx;
    else if (var == kT || var == kTs) kind = temp;

    for (std::int64_t k = lo[2]; k < hi[2]; ++k)
      for (std::int64_t j = lo[1]; j < hi[1]; ++j)
        for (std::int64_t i = lo[0]; i < hi[0]; ++i) {
          const std::int64_t cg = G.index(i, j, k), ci = cg + back;
          const double v = q[ci];
          double out = v;
          switch (kind) {
            case vel: {
              const bool normal = comp == axis;
              switch (b.type) {
                case BcType::wall: out = -v; break;
                case BcType::moving_wall: out = normal ? -v : 2.0 * b.velocity[static_cast<std::size_t>(comp)] - v; break;
                case BcType::inflow: {
                  std::array<std::int64_t, 3> ii{i, j, k};
                  ii[static_cast<std::size_t>(axis)] = side ? G.s[axis] - 1 : 0;
                  const auto x = centre(gd, ii[0], ii[1], ii[2]);
                  out = 2.0 * b.velocity[static_cast<std::size_t>(comp)] * profile_factor(b, axis, x) - v;
                  break;
                }
                case BcType::slip: out = normal ? -v : v; break;
                case BcType::outflow: case BcType::periodic: out = v; break;
              }
              break;
            }
            case pres: out = b.type == BcType::outflow ? -v : v; break;
            case grad: out = (comp == axis && b.type != BcType::outflow) ? -v : v; break;
            case temp: out = b.temperature_fixed ? 2.0 * b.temperature - v : v; break;
            case plain: break;
          }
          q[cg] = out;
        }
  }

  void exchange(std::span<const int> vars) {
    if (full) {
      forest.exchange_halos(vars, lmax, Interp::linear, bc);
      return;
    }
    if (!matched) {
      forest.communicate(vars, Interp::linear, bc);
      return;
    }
    forest.communicate(vars, Interp::constant, bc);
    for (std::size_t g = 0; g < forest.size(); ++g)
      for (const int v : vars) match_coarse_faces(g, v);
  }

  // Halo exchange of the grids on one level (multigrid), with flux-matched ghosts
  // at level jumps. Coarser levels are read as they are.
  void exchange_level(std::span<const int> vars, int level) {
    if (!matched) {
      forest.exchange_halos(vars, level, Interp::linear, bc);
      return;
    }
    forest.exchange_halos(vars, level, Interp::constant, bc);
    for (const std::size_t g : by_level[static_cast<std::size_t>(level)])
      for (const int v : vars) match_coarse_faces(g, v);
  }

  // Flux matching at a level jump. The forest has filled the ghosts next to a
  // coarser grid with the coarse cell value q_c (Interp::constant). The coarse side
  // sees, across the same face, the restricted average Q of the r_n layers of fine
  // cells that fill its neighbour cell, so its face flux is (Q - q_c) / h_c. The
  // ghosts of the r_t fine faces in front of one coarse cell are set to
  //   g_k = f_k - (Q - q_c) / r_n          (f_k: first fine layer),
  // so every fine face flux (f_k - g_k) / h_f equals the coarse one: the sum of the
  // fine fluxes is the coarse flux (conservative, as a reflux would make it), the
  // ghosts are exact for linear fields, and the fine grid needs nothing but its own
  // cells and the coarse value (no extra communication, rank-independent).
  void match_coarse_faces(std::size_t g, int var) {
    GridData& gd = grids[g];
    if (gd.coarse_faces.empty()) return;
    const BlockGeom& G = gd.geom;
    const auto& r = forest.shape().r;
    double* q = forest.data(g, var);
    for (const CoarseFace& cf : gd.coarse_faces) {
      const int a = cf.axis, t1 = (a + 1) % 3, t2 = (a + 2) % 3;
      const int rn = r[static_cast<std::size_t>(a)];
      const int r1 = r[static_cast<std::size_t>(t1)], r2 = r[static_cast<std::size_t>(t2)];
      if (rn > G.s[a]) continue;
      const std::int64_t in = cf.side ? -G.stride(a) : G.stride(a);  // towards the interior
      const std::int64_t ig = cf.side ? G.s[a] : -1;
      const double inv_n = 1.0 / static_cast<double>(r1 * r2);
      const double inv_nq = 1.0 / static_cast<double>(r1 * r2 * rn);
      std::array<std::int64_t, 3> ijk{};
      ijk[static_cast<std::size_t>(a)] = ig;
      const int n1 = G.s[t1] / r1, n2 = G.s[t2] / r2;
      // Coarse values of the ghost row, before any ghost is overwritten.
      qc_buf.resize(static_cast<std::size_t>(n1 * n2));
      for (int m2 = 0; m2 < n2; ++m2)
        for (int m1 = 0; m1 < n1; ++m1) {
          ijk[static_cast<std::size_t>(t1)] = m1 * r1, ijk[static_cast<std::size_t>(t2)] = m2 * r2;
          qc_buf[static_cast<std::size_t>(m1 + n1 * m2)] = q[G.index(ijk[0], ijk[1], ijk[2])];
        }
      auto qc_at = [&](int m1, int m2) { return qc_buf[static_cast<std::size_t>(m1 + n1 * m2)]; };
      // Tangential slope of the coarse values (per coarse cell), central inside the
      // row, one-sided at its ends.
      auto slope = [&](int m, int n, double lo, double mid, double hi) {
        if (n < 2) return 0.0;
        if (m == 0) return hi - mid;
        if (m == n - 1) return mid - lo;
        return 0.5 * (hi - lo);
      };
      for (int m2 = 0; m2 < n2; ++m2)
        for (int m1 = 0; m1 < n1; ++m1) {
          ijk[static_cast<std::size_t>(t1)] = m1 * r1, ijk[static_cast<std::size_t>(t2)] = m2 * r2;
          const std::int64_t c0 = G.index(ijk[0], ijk[1], ijk[2]);
          const double qc = qc_at(m1, m2);
          const double s1 = r1 > 1 ? slope(m1, n1, qc_at(std::max(m1 - 1, 0), m2), qc, qc_at(std::min(m1 + 1, n1 - 1), m2)) : 0.0;
          const double s2 = r2 > 1 ? slope(m2, n2, qc_at(m1, std::max(m2 - 1, 0)), qc, qc_at(m1, std::min(m2 + 1, n2 - 1))) : 0.0;
          double f1 = 0, all = 0;
          for (int d2 = 0; d2 < r2; ++d2)
            for (int d1 = 0; d1 < r1; ++d1) {
              const std::int64_t c = c0 + d1 * G.stride(t1) + d2 * G.stride(t2);
              f1 += q[c + in];
              for (int m = 1; m <= rn; ++m) all += q[c + m * in];
            }
          // Mean ghost for flux matching; spread tangentially with the coarse slope.
          const double mean = f1 * inv_n - (all * inv_nq - qc) / static_cast<double>(rn);
          for (int d2 = 0; d2 < r2; ++d2)
            for (int d1 = 0; d1 < r1; ++d1) {
              const std::int64_t c = c0 + d1 * G.stride(t1) + d2 * G.stride(t2);
              const double o1 = (d1 + 0.5) / r1 - 0.5, o2 = (d2 + 0.5) / r2 - 0.5;
              q[c] = mean + s1 * o1 + s2 * o2;
            }
        }
    }
  }

  // Reflux. `flux(g, c, a)` is a face flux in the +a direction through the + face of
  // cell c of grid g. Every fine leaf next to a coarser grid writes r_n times its
  // flux through the coarse-fine face into the first cell layer (zero elsewhere) of
  // the scratch variable of that axis (kB, kR, kX); restriction then averages it
  // into the parent cell, which is what the coarse leaf sees in its halo: the mean
  // of the fine fluxes through its face. `apply(g, c, a, side, fine, own)` gets, for
  // every coarse leaf cell at such a face, the fine mean and its own flux. All of
  // it is local arithmetic plus one restriction and halo exchange: rank-independent.
  // The scratch variables are free outside the pressure solve.
  static constexpr int kFluxVars[3] = {kB, kR, kX};
  template <class Flux, class Apply>
  void reflux(Flux&& flux, Apply&& apply) {
    if (full || !matched) return;
    const auto& r = forest.shape().r;
    for (const std::size_t g : leaves) {
      for (int a = 0; a < dim; ++a) std::fill_n(forest.data(g, kFluxVars[a]), forest.block_size(), 0.0);
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      for (const CoarseFace& cf : gd.coarse_faces) {
        const int a = cf.axis;
        const int rn = r[static_cast<std::size_t>(a)];
        double* S = forest.data(g, kFluxVars[a]);
        for_layer(G, a, cf.side, [&](std::int64_t c) {
          S[c] = static_cast<double>(rn) * flux(g, cf.side ? c : c - G.stride(a), a);
        });
      }
    }
    forest.communicate(std::span<const int>(kFluxVars, static_cast<std::size_t>(dim)), Interp::constant, {});
    for (const std::size_t g : leaves) {
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      for (const CoarseFace& ff : gd.fine_faces) {
        const int a = ff.axis;
        const std::int64_t str = G.stride(a);
        const double* S = forest.data(g, kFluxVars[a]);
        for_layer(G, a, ff.side, [&](std::int64_t c) {
          const std::int64_t fc = ff.side ? c : c - str;  // the face is the + face of fc
          apply(g, c, a, ff.side, S[ff.side ? c + str : c - str], flux(g, fc, a));
        });
      }
    }
  }

  // Calls f(c) for the interior cells next to face (a, side) of a block.
  template <class F>
  static void for_layer(const BlockGeom& G, int a, int side, F&& f) {
    const int t1 = (a + 1) % 3, t2 = (a + 2) % 3;
    std::array<std::int64_t, 3> ijk{};
    ijk[static_cast<std::size_t>(a)] = side ? G.s[a] - 1 : 0;
    for (int b2 = 0; b2 < G.s[t2]; ++b2)
      for (int b1 = 0; b1 < G.s[t1]; ++b1) {
        ijk[static_cast<std::size_t>(t1)] = b1, ijk[static_cast<std::size_t>(t2)] = b2;
        f(G.index(ijk[0], ijk[1], ijk[2]));
      }
  }

  // Advective flux of q (Forest variable) through the + face of cell c along a, as
  // the predictor computes it away from domain faces.
  double advective_flux(std::size_t g, int q, std::int64_t c, int a, double dt) {
    const BlockGeom& G = grids[g].geom;
    const double U = face_velocity(forest.data(g, kU + a), forest.data(g, kP), forest.data(g, kGpx + a), G, c, a, st.dt_prev);
    const double* f = forest.data(g, q);
    return U * face_value(f[c], f[c + G.stride(a)], U, upwind_gamma(U, dt, G.h[a], cfg.numerics.upwind));
  }

  // Coarse cells next to a level jump take the fine cells' advective fluxes (the
  // diffusive ones already agree: match_coarse_faces), so momentum and heat are
  // conserved across the jump.
  void reflux_predictor(double dt) {
    if (full || !matched) return;
    std::vector<std::pair<int, int>> qs;  // (advected variable, predictor output)
    for (int q = 0; q < dim; ++q) qs.emplace_back(kU + q, kUs + q);
    if (cfg.physics.energy) qs.emplace_back(kT, kTs);
    for (const auto& [q, out] : qs)
      reflux([&](std::size_t g, std::int64_t c, int a) { return advective_flux(g, q, c, a, dt); },
             [&, out = out](std::size_t g, std::int64_t c, int a, int side, double fine, double own) {
               const double d = dt * (fine - own) / grids[g].geom.h[a];
               forest.data(g, out)[c] += side ? -d : d;
             });
  }

  // ---------------------------------------------------------------- time step
  [[nodiscard]] double compute_dt() {
    double adv = 0.0, u2 = 0.0;
    int bad = 0;
    for (const std::size_t g : leaves) {
      const auto& G = grids[g].geom;
      const double* u[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
      for_interior(G, [&](std::int64_t c, int, int, int) {
        double s = 0, q = 0;
        for (int a = 0; a < dim; ++a) s += std::abs(u[a][c]) / G.h[a], q += u[a][c] * u[a][c];
        if (!std::isfinite(s)) bad = 1;
        adv = std::max(adv, s);
        u2 = std::max(u2, q);
      });
    }
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm);
    if (any_bad)
      throw std::runtime_error(fmt::format("the velocity is not finite at step {} (t = {}): the run is unstable",
                                           st.step, st.time));
    adv = allreduce_max(adv, comm);
    double bspeed = 0;
    for (int a = 0; a < dim; ++a) bspeed += cfg.boundary_speed() / h_finest[a];
    adv = std::max(adv, bspeed);
    u2 = std::max(allreduce_max(u2, comm), cfg.boundary_speed() * cfg.boundary_speed());
    double dt = cfg.time.dt > 0 ? cfg.time.dt : cfg.time.safety * stable_dt(cfg, adv, h_finest, u2);
    dt = std::min(dt, cfg.time.dt_max);
    // Reach the next event (an output time, or `end`) exactly without a tiny last
    // step: the remaining time is split into equal steps, so dt changes by at most a
    // factor (n-1)/n at a time (a dt jump would show in the Rhie–Chow face
    // velocities). Aiming at output times, not only at `end`, is what makes a run to
    // T followed by a restart take the same steps as one run to 2T.
    const double target = std::min(cfg.time.end, event_time);
    const double left = target - st.time;
    if (left > 0 && cfg.time.dt <= 0) {
      const double n = std::ceil(left / dt * (1.0 - 1e-12));
      if (n < 1e6) dt = left / std::max(n, 1.0);
    } else if (left > 0 && dt > left) {
      dt = left;
    }
    return dt;
  }

  void predictor(double dt) {
    const auto& ph = cfg.physics;
    const double dtp = st.dt_prev;
    const double up = cfg.numerics.upwind;
    const bool energy = ph.energy;
    for (const std::size_t g : leaves) {
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      const double* u[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
      double* us[3] = {forest.data(g, kUs), forest.data(g, kVs), forest.data(g, kWs)};
      const double* gp[3] = {forest.data(g, kGpx), forest.data(g, kGpy), forest.data(g, kGpz)};
      const double* p = forest.data(g, kP);
      const double* T = forest.data(g, kT);
      double* Ts = forest.data(g, kTs);
      std::array<std::int64_t, 3> str{};
      for (int a = 0; a < 3; ++a) str[static_cast<std::size_t>(a)] = G.stride(a);
      for_interior(G, [&](std::int64_t c, int i, int j, int k) {
        const int idx[3] = {i, j, k};
        double adv[4] = {0, 0, 0, 0};
        for (int a = 0; a < dim; ++a) {
          const std::int64_t s = str[static_cast<std::size_t>(a)];
          const double h = G.h[a];
          const double Up = face_velocity(u[a], p, gp[a], G, c, a, dtp);
          const double Um = face_velocity(u[a], p, gp[a], G, c - s, a, dtp);
          // Upwinding would mix the ghost into a prescribed face value: none on a
          // non-periodic domain face.
          const double gpf = (gd.on_face[static_cast<std::size_t>(2 * a + 1)] && idx[a] == G.s[a] - 1)
                                 ? 0.0 : upwind_gamma(Up, dt, h, up);
          const double gmf = (gd.on_face[static_cast<std::size_t>(2 * a)] && idx[a] == 0)
                                 ? 0.0 : upwind_gamma(Um, dt, h, up);
          for (int q = 0; q < dim; ++q) {
            const double* f = u[q];
            adv[q] += (Up * face_value(f[c], f[c + s], Up, gpf) - Um * face_value(f[c - s], f[c], Um, gmf)) / h;
          }
          if (energy) adv[3] += (Up * face_value(T[c], T[c + s], Up, gpf) - Um * face_value(T[c - s], T[c], Um, gmf)) / h;
        }
        const double buoy = energy ? -ph.beta * (T[c] - ph.T_ref) : 0.0;
        for (int q = 0; q < dim; ++q)
          us[q][c] = u[q][c] + dt * (-adv[q] + ph.nu * laplacian(u[q], G, c) - gp[q][c] + buoy * ph.gravity[static_cast<std::size_t>(q)]);
        if (energy) Ts[c] = T[c] + dt * (-adv[3] + ph.alpha * laplacian(T, G, c) + ph.heat_source);
      });
    }
  }

  // Direct forcing on the predictor; accumulates the force on each obstacle.
  void force_obstacles(double dt) {
    for (auto& f : forces) f.force = {0, 0, 0};
    if (cfg.obstacles.empty()) return;
    const bool temp = cfg.physics.energy &&
                      std::any_of(cfg.obstacles.begin(), cfg.obstacles.end(), [](const Obstacle& o) { return o.temperature.has_value(); });
    {
      std::vector<int> vars{kUs, kVs, kWs};
      if (temp) vars.push_back(kTs);
      exchange(vars);
    }
    // Per grid, per obstacle, per component partial sums; added in UID order.
    const std::size_t no = cfg.obstacles.size();
    std::vector<std::uint64_t> uids;
    std::vector<double> parts;
    std::vector<double> target;
    for (const std::size_t g : leaves) {
      const GridData& gd = grids[g];
      if (gd.forced.empty()) continue;
      const double dv = gd.geom.h[0] * gd.geom.h[1] * (dim == 3 ? gd.geom.h[2] : 1.0);
      std::vector<double> part(3 * no, 0.0);
      double* us[3] = {forest.data(g, kUs), forest.data(g, kVs), forest.data(g, kWs)};
      target.resize(gd.forced.size() * 4);
      // Targets from the unforced predictor first, so the result does not depend on
      // the order in which cells are forced.
      for (std::size_t n = 0; n < gd.forced.size(); ++n) {
        const Forced& f = gd.forced[n];
        for (int q = 0; q < dim; ++q) {
          double t = 0;
          for (int m = 0; m < f.n; ++m) t += f.w[static_cast<std::size_t>(m)] * us[q][f.c + f.off[static_cast<std::size_t>(m)]];
          target[4 * n + static_cast<std::size_t>(q)] = t;
        }
        if (temp) {
          const auto& ob = cfg.obstacles[static_cast<std::size_t>(f.obstacle)];
          if (ob.temperature) {
            const double* Ts = forest.data(g, kTs);
            const double tb = *ob.temperature;
            double t = tb;
            for (int m = 0; m < f.n; ++m) t += f.w[static_cast<std::size_t>(m)] * (Ts[f.c + f.off[static_cast<std::size_t>(m)]] - tb);
            target[4 * n + 3] = t;
          }
        }
      }
      for (std::size_t n = 0; n < gd.forced.size(); ++n) {
        const Forced& f = gd.forced[n];
        for (int q = 0; q < dim; ++q) {
          const double t = target[4 * n + static_cast<std::size_t>(q)];
          part[3 * static_cast<std::size_t>(f.obstacle) + static_cast<std::size_t>(q)] -= (t - us[q][f.c]) / dt * dv;
          us[q][f.c] = t;
        }
        if (temp && cfg.obstacles[static_cast<std::size_t>(f.obstacle)].temperature) forest.data(g, kTs)[f.c] = target[4 * n + 3];
      }
      uids.push_back(forest.grid(g).uid.raw());
      parts.insert(parts.end(), part.begin(), part.end());
    }
    const auto sums = ordered_sum(uids, parts, 3 * no);
    for (std::size_t o = 0; o < no; ++o)
      for (int q = 0; q < 3; ++q) forces[o].force[static_cast<std::size_t>(q)] = sums[3 * o + static_cast<std::size_t>(q)];
  }

  // Sum of per-grid partial vectors (K values per grid) over all ranks, added in UID
  // order so the result is the same for every partition.
  std::vector<double> ordered_sum(const std::vector<std::uint64_t>& uids, const std::vector<double>& parts, std::size_t K) {
    int nranks = 1;
    MPI_Comm_size(comm, &nranks);
    const int mine = static_cast<int>(uids.size());
    std::vector<int> counts(static_cast<std::size_t>(nranks)), displ(static_cast<std::size_t>(nranks));
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    int total = 0;
    for (int r = 0; r < nranks; ++r) displ[static_cast<std::size_t>(r)] = total, total += counts[static_cast<std::size_t>(r)];
    std::vector<std::uint64_t> all_uids(static_cast<std::size_t>(total));
    MPI_Allgatherv(uids.data(), mine, MPI_UINT64_T, all_uids.data(), counts.data(), displ.data(), MPI_UINT64_T, comm);
    std::vector<int> vc(counts), vd(displ);
    for (int r = 0; r < nranks; ++r) vc[static_cast<std::size_t>(r)] *= static_cast<int>(K), vd[static_cast<std::size_t>(r)] *= static_cast<int>(K);
    std::vector<double> all(static_cast<std::size_t>(total) * K);
    MPI_Allgatherv(parts.data(), mine * static_cast<int>(K), MPI_DOUBLE, all.data(), vc.data(), vd.data(), MPI_DOUBLE, comm);
    std::vector<std::size_t> order(static_cast<std::size_t>(total));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all_uids[a] < all_uids[b]; });
    std::vector<double> sum(K, 0.0);
    for (const std::size_t n : order)
      for (std::size_t k = 0; k < K; ++k) sum[k] += all[n * K + k];
    return sum;
  }

  void projection_rhs(double dt) {
    for (const std::size_t g : leaves) {
      const BlockGeom& G = grids[g].geom;
      const double* us[3] = {forest.data(g, kUs), forest.data(g, kVs), forest.data(g, kWs)};
      const double* gp[3] = {forest.data(g, kGpx), forest.data(g, kGpy), forest.data(g, kGpz)};
      const double* p = forest.data(g, kP);
      double* rhs = forest.data(g, kRhs);
      for_interior(G, [&](std::int64_t c, int, int, int) {
        double d = 0;
        for (int a = 0; a < dim; ++a)
          d += (face_velocity(us[a], p, gp[a], G, c, a, dt) - face_velocity(us[a], p, gp[a], G, c - G.stride(a), a, dt)) / G.h[a];
        rhs[c] = d / dt;
      });
    }
    // Mass: a coarse cell next to a level jump takes the mean of the fine face
    // velocities, so with the flux-matched Laplacian the projected fine and coarse
    // face velocities agree and mass is conserved across the jump.
    reflux([&](std::size_t g, std::int64_t c, int a) {
             const BlockGeom& G = grids[g].geom;
             return face_velocity(forest.data(g, kUs + a), forest.data(g, kP), forest.data(g, kGpx + a), G, c, a, dt);
           },
           [&](std::size_t g, std::int64_t c, int a, int side, double fine, double own) {
             const double d = (fine - own) / (grids[g].geom.h[a] * dt);
             forest.data(g, kRhs)[c] += side ? d : -d;
           });
  }

  void correct(double dt) {
    for (const std::size_t g : leaves) {
      const BlockGeom& G = grids[g].geom;
      const double* us[3] = {forest.data(g, kUs), forest.data(g, kVs), forest.data(g, kWs)};
      double* u[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
      const double* phi = forest.data(g, kPhi);
      double* p = forest.data(g, kP);
      double* T = forest.data(g, kT);
      const double* Ts = forest.data(g, kTs);
      const bool energy = cfg.physics.energy;
      for_interior(G, [&](std::int64_t c, int, int, int) {
        for (int a = 0; a < dim; ++a) u[a][c] = us[a][c] - dt * cell_gradient(phi, G, c, a);
        p[c] += phi[c];
        if (energy) T[c] = Ts[c];
      });
    }
  }

  void pressure_gradient() {
    for (const std::size_t g : leaves) {
      const BlockGeom& G = grids[g].geom;
      const double* p = forest.data(g, kP);
      double* gp[3] = {forest.data(g, kGpx), forest.data(g, kGpy), forest.data(g, kGpz)};
      for_interior(G, [&](std::int64_t c, int, int, int) {
        for (int a = 0; a < dim; ++a) gp[a][c] = cell_gradient(p, G, c, a);
      });
    }
    static constexpr int gv[] = {kGpx, kGpy, kGpz};
    exchange(std::span<const int>(gv, static_cast<std::size_t>(dim)));
  }

  void finish_state() {
    static constexpr int sv[] = {kU, kV, kW, kP, kT};
    exchange(sv);
    pressure_gradient();
  }

  StepInfo step() {
    using clock = std::chrono::steady_clock;
    auto t = clock::now();
    auto lap = [&](double& acc) {
      const auto now = clock::now();
      acc += std::chrono::duration<double>(now - t).count();
      t = now;
    };
    const double dt = compute_dt();
    lap(times.dt);
    predictor(dt);
    reflux_predictor(dt);
    lap(times.predictor);
    force_obstacles(dt);
    lap(times.obstacles);
    static constexpr int vs[] = {kUs, kVs, kWs};
    exchange(vs);
    projection_rhs(dt);
    lap(times.projection_rhs);
    last_pressure = solve(cfg.pressure.tolerance, dt);
    lap(times.pressure);
    correct(dt);
    lap(times.correction);
    st.dt_prev = dt;
    st.time += dt;
    st.step += 1;
    dt_last = dt;
    finish_state();
    lap(times.exchange);
    track_lift();
    times.pressure_cycles += last_pressure.cycles;
    times.steps += 1;
    return StepInfo{st.step, st.time, dt, last_pressure};
  }

  // ------------------------------------------------------------ multigrid
  [[nodiscard]] int sweeps(int base, int level) const {
    const double f = std::pow(cfg.pressure.coarse_factor, lmax - level);
    return std::min(cfg.pressure.max_sweeps, static_cast<int>(std::lround(base * f)));
  }

  void smooth(int level, int n) {
    const double omega = cfg.pressure.omega;
    static constexpr int xv[] = {kX};
    for (int s = 0; s < n; ++s) {
      exchange_level(xv, level);
      for (const std::size_t g : by_level[static_cast<std::size_t>(level)]) {
        const BlockGeom& G = grids[g].geom;
        double* x = forest.data(g, kX);
        const double* b = forest.data(g, kB);
        double ih2[3] = {0, 0, 0};
        for (int a = 0; a < dim; ++a) ih2[a] = 1.0 / (G.h[a] * G.h[a]);
        const double inv_diag = 1.0 / (2.0 * G.inv_h2_sum());
        const std::int64_t sy = G.sy(), sz = G.sz();
        for (int colour = 0; colour < 2; ++colour)
          for (int k = 0; k < G.s[2]; ++k)
            for (int j = 0; j < G.s[1]; ++j) {
              const int i0 = (colour + j + k) & 1;
              std::int64_t c = G.index(i0, j, k);
              for (int i = i0; i < G.s[0]; i += 2, c += 2) {
                double nb = (x[c + 1] + x[c - 1]) * ih2[0] + (x[c + sy] + x[c - sy]) * ih2[1];
                if (dim == 3) nb += (x[c + sz] + x[c - sz]) * ih2[2];
                const double gs = (nb - b[c]) * inv_diag;
                x[c] = omega == 1.0 ? gs : (1.0 - omega) * x[c] + omega * gs;
              }
            }
      }
    }
  }

  // R = B - L X on the grids of `level`.
  void level_residual(int level) {
    static constexpr int xv[] = {kX};
    exchange_level(xv, level);
    for (const std::size_t g : by_level[static_cast<std::size_t>(level)]) {
      const BlockGeom& G = grids[g].geom;
      const double* x = forest.data(g, kX);
      const double* b = forest.data(g, kB);
      double* r = forest.data(g, kR);
      for_interior(G, [&](std::int64_t c, int, int, int) { r[c] = b[c] - laplacian(x, G, c); });
    }
  }

  // Fills the halo of an array laid out like the root grid: periodic wrap or phi's
  // homogeneous condition (Neumann, Dirichlet at an outflow).
  void root_halo(double* q, const BlockGeom& G) const {
    for (int a = 0; a < dim; ++a) {
      const int t1 = (a + 1) % 3, t2 = (a + 2) % 3;
      const bool per = forest.shape().periodic[a];
      const double slo = cfg.boundary[static_cast<std::size_t>(2 * a)].type == BcType::outflow ? -1.0 : 1.0;
      const double shi = cfg.boundary[static_cast<std::size_t>(2 * a + 1)].type == BcType::outflow ? -1.0 : 1.0;
      for (int b2 = 0; b2 < G.s[t2]; ++b2)
        for (int b1 = 0; b1 < G.s[t1]; ++b1) {
          std::array<std::int64_t, 3> lo{}, hi{}, in0{}, in1{};
          lo[static_cast<std::size_t>(a)] = -1, hi[static_cast<std::size_t>(a)] = G.s[a];
          in0[static_cast<std::size_t>(a)] = 0, in1[static_cast<std::size_t>(a)] = G.s[a] - 1;
          for (auto* v : {&lo, &hi, &in0, &in1}) (*v)[static_cast<std::size_t>(t1)] = b1, (*v)[static_cast<std::size_t>(t2)] = b2;
          const auto I = [&](const std::array<std::int64_t, 3>& v) { return G.index(v[0], v[1], v[2]); };
          if (per) {
            q[I(lo)] = q[I(in1)];
            q[I(hi)] = q[I(in0)];
          } else {
            q[I(lo)] = slo * q[I(in0)];
            q[I(hi)] = shi * q[I(in1)];
          }
        }
    }
  }

  // Conjugate gradients on the single root grid (owned by one rank: local and
  // deterministic). Solves L X = B.
  void coarse_solve() {
    if (root < 0) return;
    const auto g = static_cast<std::size_t>(root);
    const BlockGeom& G = grids[g].geom;
    double* x = forest.data(g, kX);
    double* b = forest.data(g, kB);
    const std::size_t n = G.size();
    std::vector<double> r(n, 0.0), p(n, 0.0), ap(n, 0.0);
    std::int64_t cells = 0;
    double mean = 0;
    for_interior(G, [&](std::int64_t c, int, int, int) { mean += b[c], ++cells; });
    mean /= static_cast<double>(cells);
    // A Neumann/periodic problem is solvable only for a zero-mean right-hand side.
    for_interior(G, [&](std::int64_t c, int, int, int) {
      x[c] = 0.0;
      r[static_cast<std::size_t>(c)] = -(b[c] - (singular ? mean : 0.0));  // residual of (-L) x = -b at x = 0
      p[static_cast<std::size_t>(c)] = r[static_cast<std::size_t>(c)];
    });
    auto dot = [&](const std::vector<double>& a, const std::vector<double>& bb) {
      double s = 0;
      for_interior(G, [&](std::int64_t c, int, int, int) { s += a[static_cast<std::size_t>(c)] * bb[static_cast<std::size_t>(c)]; });
      return s;
    };
    double rr = dot(r, r);
    const double rr0 = rr;
    const int max_it = 4 * static_cast<int>(cells) + 10;
    for (int it = 0; it < max_it && rr > 1e-24 * rr0 && rr > 0; ++it) {
      root_halo(p.data(), G);
      for_interior(G, [&](std::int64_t c, int, int, int) { ap[static_cast<std::size_t>(c)] = -laplacian(p.data(), G, c); });
      const double pap = dot(p, ap);
      if (!(pap > 0)) break;
      const double alpha = rr / pap;
      for_interior(G, [&](std::int64_t c, int, int, int) {
        x[c] += alpha * p[static_cast<std::size_t>(c)];
        r[static_cast<std::size_t>(c)] -= alpha * ap[static_cast<std::size_t>(c)];
      });
      const double rn = dot(r, r);
      const double beta = rn / rr;
      rr = rn;
      for_interior(G, [&](std::int64_t c, int, int, int) {
        p[static_cast<std::size_t>(c)] = r[static_cast<std::size_t>(c)] + beta * p[static_cast<std::size_t>(c)];
      });
    }
  }

  // Composite residual B = RHS - L PHI on the leaves; returns its max norm.
  double composite_residual() {
    static constexpr int pv[] = {kPhi};
    exchange(pv);
    double m = 0;
    for (const std::size_t g : leaves) {
      const BlockGeom& G = grids[g].geom;
      const double* x = forest.data(g, kPhi);
      const double* f = forest.data(g, kRhs);
      double* b = forest.data(g, kB);
      for_interior(G, [&](std::int64_t c, int, int, int) {
        b[c] = f[c] - laplacian(x, G, c);
        m = std::max(m, std::abs(b[c]));
      });
    }
    return allreduce_max(m, comm);
  }

  void fill(int var, double v, bool leaves_only) {
    for (std::size_t g = 0; g < forest.size(); ++g)
      if (!leaves_only || grids[g].leaf) std::fill_n(forest.data(g, var), forest.block_size(), v);
  }

  // One V-cycle on the composite residual in B (leaves); corrections in X.
  void vcycle() {
    fill(kX, 0.0, false);
    static constexpr int xv[] = {kX};
    static constexpr int rv[] = {kR};
    for (int l = lmax; l >= 1; --l) {
      if (l < lmax)
        for (const std::size_t g : by_level[static_cast<std::size_t>(l)])
          if (!grids[g].leaf) std::copy_n(forest.data(g, kR), forest.block_size(), forest.data(g, kB));
      smooth(l, sweeps(cfg.pressure.pre_smooth, l));
      level_residual(l);
      forest.restrict_level(rv, l);
    }
    if (lmax >= 1)
      for (const std::size_t g : by_level[0])
        if (!grids[g].leaf) std::copy_n(forest.data(g, kR), forest.block_size(), forest.data(g, kB));
    coarse_solve();
    for (int l = 1; l <= lmax; ++l) {
      forest.exchange_halos(xv, l - 1, Interp::linear, bc);
      forest.prolong_level(xv, l, ProlongMode::add, Interp::linear);
      smooth(l, sweeps(cfg.pressure.post_smooth, l));
    }
    for (const std::size_t g : leaves) {
      const BlockGeom& G = grids[g].geom;
      double* phi = forest.data(g, kPhi);
      const double* x = forest.data(g, kX);
      for_interior(G, [&](std::int64_t c, int, int, int) { phi[c] += x[c]; });
    }
  }

  PressureStats solve(double tol, double scale) {
    fill(kPhi, 0.0, false);
    PressureStats ps;
    cycle_residuals.clear();
    double prev = 0;
    for (int cycle = 0;; ++cycle) {
      const double r = composite_residual();
      if (cycle > 0 && prev > 0) cycle_residuals.push_back(r / prev);
      prev = r;
      ps.residual = r * scale;
      ps.cycles = cycle;
      if (ps.residual <= tol) {
        ps.converged = true;
        break;
      }
      if (cycle >= cfg.pressure.max_cycles) break;
      vcycle();
    }
    // Leave phi's halos consistent for the correction.
    static constexpr int pv[] = {kPhi};
    exchange(pv);
    return ps;
  }

  // -------------------------------------------------------------- monitors
  void track_lift() {
    if (cfg.obstacles.empty()) return;
    const double U = cfg.reference_velocity(), L = cfg.reference_length();
    const double area = dim == 2 ? L : L * L;
    strouhal.add(st.time, 2.0 * forces[0].force[1] / (U * U * area));
  }

  // Max |div U| over leaf cells for the current face velocities (with the fine
  // face velocities at level jumps, as the projection sees them).
  [[nodiscard]] double max_divergence() {
    std::vector<std::vector<double>> jump(forest.size());
    reflux([&](std::size_t g, std::int64_t c, int a) {
             const BlockGeom& G = grids[g].geom;
             return face_velocity(forest.data(g, kU + a), forest.data(g, kP), forest.data(g, kGpx + a), G, c, a, st.dt_prev);
           },
           [&](std::size_t g, std::int64_t c, int a, int side, double fine, double own) {
             auto& j = jump[g];
             if (j.empty()) j.assign(forest.block_size(), 0.0);
             const double d = (fine - own) / grids[g].geom.h[a];
             j[static_cast<std::size_t>(c)] += side ? d : -d;
           });
    double m = 0;
    for (const std::size_t g : leaves) {
      const BlockGeom& G = grids[g].geom;
      const double* u[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
      const double* gp[3] = {forest.data(g, kGpx), forest.data(g, kGpy), forest.data(g, kGpz)};
      const double* p = forest.data(g, kP);
      const auto& j = jump[g];
      for_interior(G, [&](std::int64_t c, int, int, int) {
        double d = 0;
        for (int a = 0; a < dim; ++a)
          d += (face_velocity(u[a], p, gp[a], G, c, a, st.dt_prev) -
                face_velocity(u[a], p, gp[a], G, c - G.stride(a), a, st.dt_prev)) / G.h[a];
        if (!j.empty()) d += j[static_cast<std::size_t>(c)];
        m = std::max(m, std::abs(d));
      });
    }
    return allreduce_max(m, comm);
  }

  // Value of `var` at x by (bi/tri)linear interpolation of cell centres in the leaf
  // that contains x (halo included). Exactly one rank contributes.
  double sample(int var, const std::array<double, 3>& x) {
    double v[2] = {0.0, 0.0};
    for (const std::size_t g : leaves) {
      const GridData& gd = grids[g];
      const auto& box = forest.grid(g).box;
      bool in = true;
      for (int a = 0; a < dim; ++a) in = in && x[a] >= box.lo[a] && x[a] < box.hi[a];
      if (!in) continue;
      const BlockGeom& G = gd.geom;
      std::array<std::int64_t, 3> i0{0, 0, 0};
      std::array<double, 3> f{0, 0, 0};
      for (int a = 0; a < dim; ++a) {
        const double s = (x[a] - box.lo[a]) / G.h[a] - 0.5;
        i0[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(std::floor(s));
        f[static_cast<std::size_t>(a)] = s - static_cast<double>(i0[static_cast<std::size_t>(a)]);
      }
      const double* q = forest.data(g, var);
      double acc = 0;
      const int nk = dim == 3 ? 2 : 1;
      for (int dk = 0; dk < nk; ++dk)
        for (int dj = 0; dj < 2; ++dj)
          for (int di = 0; di < 2; ++di) {
            const double w = (di ? f[0] : 1 - f[0]) * (dj ? f[1] : 1 - f[1]) * (dim == 3 ? (dk ? f[2] : 1 - f[2]) : 1.0);
            acc += w * q[G.index(i0[0] + di, i0[1] + dj, i0[2] + dk)];
          }
      v[0] = acc, v[1] = 1.0;
      break;
    }
    double out[2] = {0, 0};
    MPI_Allreduce(v, out, 2, MPI_DOUBLE, MPI_SUM, comm);
    return out[1] > 0 ? out[0] / out[1] : std::numeric_limits<double>::quiet_NaN();
  }

  Monitors monitors() {
    Monitors m;
    m.step = st.step, m.time = st.time, m.dt = dt_last;
    m.pressure_cycles = last_pressure.cycles;
    m.pressure_residual = last_pressure.residual;
    m.max_divergence = max_divergence();
    const auto& sh = forest.shape();
    // Per-grid sums: kinetic energy, Nusselt on xmin and xmax.
    const FaceBc& bl = cfg.boundary[0];
    const FaceBc& br = cfg.boundary[1];
    m.has_nusselt = cfg.physics.energy && bl.type == BcType::wall && br.type == BcType::wall && bl.temperature_fixed &&
                    br.temperature_fixed && bl.temperature != br.temperature;
    const double dT = bl.temperature - br.temperature;
    const double Lx = sh.domain.extent(0);
    double wall_area = 1;
    for (int a = 1; a < dim; ++a) wall_area *= sh.domain.extent(a);
    std::vector<std::uint64_t> uids;
    std::vector<double> parts;
    double umax = 0, tg = 0;
    m.has_tg = cfg.initial.type == InitialType::taylor_green;
    const double kx = 2.0 * M_PI / sh.domain.extent(0);
    const double U0 = cfg.initial.velocity[0];
    const double decay = std::exp(-2.0 * cfg.physics.nu * kx * kx * st.time);
    for (const std::size_t g : leaves) {
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      const double dv = G.h[0] * G.h[1] * (dim == 3 ? G.h[2] : 1.0);
      const double* u[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
      const double* T = forest.data(g, kT);
      double ke = 0, nl = 0, nr = 0;
      std::size_t n = 0;
      for_interior(G, [&](std::int64_t c, int i, int j, int k) {
        const bool solid = gd.type[n++] == static_cast<std::uint8_t>(CellType::solid);
        double s = 0;
        for (int a = 0; a < dim; ++a) s += u[a][c] * u[a][c];
        umax = std::max(umax, std::sqrt(s));
        if (!solid) ke += 0.5 * s * dv;
        if (m.has_tg) {
          const auto x = centre(gd, i, j, k);
          const double X = kx * (x[0] - sh.domain.lo[0]), Y = kx * (x[1] - sh.domain.lo[1]);
          const double ue = U0 * std::sin(X) * std::cos(Y) * decay, ve = -U0 * std::cos(X) * std::sin(Y) * decay;
          tg = std::max({tg, std::abs(u[0][c] - ue) / U0, std::abs(u[1][c] - ve) / U0});
        }
        if (m.has_nusselt) {
          const double da = dv / G.h[0];
          if (gd.on_face[0] && i == 0) nl += -(T[c] - bl.temperature) / (0.5 * G.h[0]) * da;
          if (gd.on_face[1] && i == G.s[0] - 1) nr += -(br.temperature - T[c]) / (0.5 * G.h[0]) * da;
        }
      });
      uids.push_back(forest.grid(g).uid.raw());
      parts.insert(parts.end(), {ke, nl, nr});
    }
    const auto sums = ordered_sum(uids, parts, 3);
    m.kinetic_energy = sums[0];
    m.max_velocity = allreduce_max(umax, comm);
    if (m.has_tg) m.tg_error = allreduce_max(tg, comm);
    if (m.has_nusselt) {
      m.nu_xmin = sums[1] * Lx / (dT * wall_area);
      m.nu_xmax = sums[2] * Lx / (dT * wall_area);
    }
    if (!cfg.obstacles.empty()) {
      m.has_obstacle = true;
      const double U = cfg.reference_velocity(), L = cfg.reference_length();
      const double area = dim == 2 ? L : L * L;
      const double q = 0.5 * U * U * area;
      m.cd = forces[0].force[0] / q;
      m.cl = forces[0].force[1] / q;
      m.cl_z = forces[0].force[2] / q;
      m.strouhal = strouhal.value(L, U);
      m.dp = std::numeric_limits<double>::quiet_NaN();
      const auto& ob = cfg.obstacles[0];
      if (ob.type != ObstacleType::box) {
        // Pressure on the front and back points, extrapolated linearly from the
        // fluid at one and two finest cells' distance along x.
        const double h = h_finest[0];
        auto at = [&](double x) {
          auto p = ob.center;
          p[0] = x;
          return sample(kP, p);
        };
        const double xf = ob.center[0] - ob.radius, xb = ob.center[0] + ob.radius;
        const double pf = 2.0 * at(xf - h) - at(xf - 2 * h);
        const double pb = 2.0 * at(xb + h) - at(xb + 2 * h);
        m.dp = pf - pb;
      }
    }
    return m;
  }

  // ------------------------------------------------------------- initial
  void initialise() {
    const auto& sh = forest.shape();
    const double T0 = cfg.initial.temperature.value_or(cfg.physics.T_ref);
    const double kx = 2.0 * M_PI / sh.domain.extent(0);
    const double U0 = cfg.initial.velocity[0];
    for (std::size_t g = 0; g < forest.size(); ++g) {
      const GridData& gd = grids[g];
      const BlockGeom& G = gd.geom;
      for (int v = 0; v < kNumVars; ++v) std::fill_n(forest.data(g, v), forest.block_size(), 0.0);
      double* u[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
      double* p = forest.data(g, kP);
      double* T = forest.data(g, kT);
      std::size_t n = 0;
      for_interior(G, [&](std::int64_t c, int i, int j, int k) {
        const bool solid = gd.type[n++] == static_cast<std::uint8_t>(CellType::solid);
        T[c] = T0;
        switch (cfg.initial.type) {
          case InitialType::rest: break;
          case InitialType::uniform:
            if (!solid)
              for (int a = 0; a < dim; ++a) u[a][c] = cfg.initial.velocity[static_cast<std::size_t>(a)];
            break;
          case InitialType::taylor_green: {
            const auto x = centre(gd, i, j, k);
            const double X = kx * (x[0] - sh.domain.lo[0]), Y = kx * (x[1] - sh.domain.lo[1]);
            u[0][c] = U0 * std::sin(X) * std::cos(Y);
            u[1][c] = -U0 * std::cos(X) * std::sin(Y);
            p[c] = 0.25 * U0 * U0 * (std::cos(2 * X) + std::cos(2 * Y));
            break;
          }
        }
      });
    }
    st = ScalarState{};
    finish_state();
  }
};

// ------------------------------------------------------------------ Solver
Solver::Solver(SolverCase c, spacetree::LocalPlan plan, MPI_Comm comm)
    : impl_(std::make_unique<Impl>(std::move(c), std::move(plan), comm)) {
  impl_->initialise();
}
Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

const SolverCase& Solver::config() const { return impl_->cfg; }
spacetree::Forest& Solver::forest() { return impl_->forest; }
const spacetree::Forest& Solver::forest() const { return impl_->forest; }
StepInfo Solver::step() { return impl_->step(); }
bool Solver::finished() const {
  const auto& c = impl_->cfg;
  return impl_->st.step >= c.time.max_steps || impl_->st.time >= c.time.end * (1.0 - 1e-12);
}
double Solver::next_dt() { return impl_->compute_dt(); }
void Solver::set_event_time(double t) { impl_->event_time = t; }
ScalarState Solver::scalar_state() const {
  ScalarState s = impl_->st;
  s.strouhal = impl_->strouhal.state();
  return s;
}
void Solver::restore(const ScalarState& s) {
  impl_->st = s;
  impl_->strouhal.restore(s.strouhal);
  impl_->finish_state();
}
std::span<const std::uint8_t> Solver::cell_types(std::size_t g) const { return impl_->grids.at(g).type; }
Monitors Solver::monitors() { return impl_->monitors(); }
ObstacleForce Solver::obstacle_force(std::size_t i) const { return impl_->forces.at(i); }
PressureStats Solver::solve_pressure(double tolerance, double scale) { return impl_->solve(tolerance, scale); }
double Solver::pressure_residual() { return impl_->composite_residual(); }
double Solver::max_divergence() { return impl_->max_divergence(); }
void Solver::exchange(std::span<const int> vars) { impl_->exchange(vars); }
const PhaseTimes& Solver::phase_times() const { return impl_->times; }
double Solver::sample(int var, const std::array<double, 3>& x) { return impl_->sample(var, x); }
std::int64_t Solver::global_leaf_cells() const { return impl_->global_leaf_cells; }
std::vector<double> Solver::last_cycle_residuals() const { return impl_->cycle_residuals; }
void Solver::set_boundary(int face, const FaceBc& bc) { impl_->cfg.boundary.at(static_cast<std::size_t>(face)) = bc; }
void Solver::set_physics(const Physics& p) {
  if (p.energy != impl_->cfg.physics.energy)
    throw std::invalid_argument("the energy equation cannot be switched on or off during a run");
  impl_->cfg.physics = p;
}

void Solver::set_time_limits(double end, std::int64_t max_steps) {
  impl_->cfg.time.end = end;
  impl_->cfg.time.max_steps = max_steps;
}

void Solver::restrict_state() {
  static constexpr int sv[] = {kU, kV, kW, kP, kT};
  impl_->forest.restrict_levels(sv);
}

}  // namespace rwd::solver

// One time step: dt, the predictor, the direct forcing of obstacles, the projection
// and the correction.
#include "solver_impl.hpp"

namespace rwd::solver {

double Solver::Impl::compute_dt() {
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

void Solver::Impl::predictor(double dt, const Stage& s) {
  const auto& ph = cfg.physics;
  const double dtp = st.dt_prev;
  const double up = cfg.numerics.upwind;
  const bool energy = ph.energy;
  const double keep = s.keep, rest = 1.0 - s.keep;
  for (const std::size_t g : leaves) {
    const GridData& gd = grids[g];
    const BlockGeom& G = gd.geom;
    const double* u[3] = {forest.data(g, s.from), forest.data(g, s.from + 1), forest.data(g, s.from + 2)};
    const double* un[3] = {forest.data(g, kU), forest.data(g, kV), forest.data(g, kW)};
    double* us[3] = {forest.data(g, s.into), forest.data(g, s.into + 1), forest.data(g, s.into + 2)};
    const double* gp[3] = {forest.data(g, kGpx), forest.data(g, kGpy), forest.data(g, kGpz)};
    const double* p = forest.data(g, kP);
    const double* T = forest.data(g, temperature_of(s.from));
    const double* Tn = forest.data(g, kT);
    double* Ts = forest.data(g, temperature_of(s.into));
    std::array<std::int64_t, 3> str{};
    for (int a = 0; a < 3; ++a) str[static_cast<std::size_t>(a)] = G.stride(a);
    for_interior(G, [&](std::int64_t c, int i, int j, int k) {
      const int idx[3] = {i, j, k};
      double adv[4] = {0, 0, 0, 0};
      for (int a = 0; a < dim; ++a) {
        const std::int64_t sa = str[static_cast<std::size_t>(a)];
        const double h = G.h[a];
        const double Up = face_velocity(u[a], p, gp[a], G, c, a, dtp);
        const double Um = face_velocity(u[a], p, gp[a], G, c - sa, a, dtp);
        // Upwinding would mix the ghost into a prescribed face value: none on a
        // non-periodic domain face.
        const double gpf = (gd.on_face[static_cast<std::size_t>(2 * a + 1)] && idx[a] == G.s[a] - 1)
                               ? 0.0 : upwind_gamma(Up, dt, h, up);
        const double gmf = (gd.on_face[static_cast<std::size_t>(2 * a)] && idx[a] == 0)
                               ? 0.0 : upwind_gamma(Um, dt, h, up);
        for (int q = 0; q < dim; ++q) {
          const double* f = u[q];
          adv[q] += (Up * face_value(f[c], f[c + sa], Up, gpf) - Um * face_value(f[c - sa], f[c], Um, gmf)) / h;
        }
        if (energy)
          adv[3] += (Up * face_value(T[c], T[c + sa], Up, gpf) - Um * face_value(T[c - sa], T[c], Um, gmf)) / h;
      }
      const double buoy = energy ? -ph.beta * (T[c] - ph.T_ref) : 0.0;
      // keep = 0 (Euler, Heun's first stage) must not round differently from u + dt R.
      for (int q = 0; q < dim; ++q) {
        const double v = u[q][c] + dt * (-adv[q] + ph.nu * laplacian(u[q], G, c) - gp[q][c] +
                                         buoy * ph.gravity[static_cast<std::size_t>(q)]);
        us[q][c] = keep == 0.0 ? v : keep * un[q][c] + rest * v;
      }
      if (energy) {
        const double v = T[c] + dt * (-adv[3] + ph.alpha * laplacian(T, G, c) + ph.heat_source);
        Ts[c] = keep == 0.0 ? v : keep * Tn[c] + rest * v;
      }
    });
  }
}

void Solver::Impl::advance(double dt) {
  for (auto& f : forces) f.force = {0, 0, 0};
  std::vector<int> vs{kUs, kVs, kWs};
  if (cfg.physics.energy) vs.push_back(kTs);
  if (cfg.numerics.time_scheme == TimeScheme::euler) {
    const Stage s{kU, kUs, 0.0};
    predictor(dt, s);
    reflux_predictor(dt, s);
    force_obstacles(dt, kUs, 1.0);
    exchange(std::span<const int>(vs.data(), 3));
    return;
  }
  // Heun: u1 = u + dt R(u) forced (into u*), then u* = (u + u1 + dt R(u1)) / 2 forced,
  // built in place of u (every cell reads only its own u) and moved into u*. The step's
  // momentum has half the first forcing and all of the second: the force counts them so.
  const Stage s1{kU, kUs, 0.0};
  predictor(dt, s1);
  reflux_predictor(dt, s1);
  force_obstacles(dt, kUs, 0.5);
  exchange(vs);
  const Stage s2{kUs, kU, 0.5};
  predictor(dt, s2);
  reflux_predictor(dt, s2);
  force_obstacles(dt, kU, 1.0);
  for (const std::size_t g : leaves)
    for (int q = 0; q < dim; ++q) std::copy_n(forest.data(g, kU + q), forest.block_size(), forest.data(g, kUs + q));
  if (cfg.physics.energy)
    for (const std::size_t g : leaves) std::copy_n(forest.data(g, kT), forest.block_size(), forest.data(g, kTs));
  exchange(std::span<const int>(vs.data(), 3));
}

void Solver::Impl::force_obstacles(double dt, int vel, double weight) {
  if (cfg.obstacles.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  const bool temp = cfg.physics.energy &&
                    std::any_of(cfg.obstacles.begin(), cfg.obstacles.end(), [](const Obstacle& o) { return o.temperature.has_value(); });
  {
    std::vector<int> vars{vel, vel + 1, vel + 2};
    if (temp) vars.push_back(temperature_of(vel));
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
    double* us[3] = {forest.data(g, vel), forest.data(g, vel + 1), forest.data(g, vel + 2)};
    double* Ts = forest.data(g, temperature_of(vel));
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
      if (temp && cfg.obstacles[static_cast<std::size_t>(f.obstacle)].temperature) Ts[f.c] = target[4 * n + 3];
    }
    uids.push_back(forest.grid(g).uid.raw());
    parts.insert(parts.end(), part.begin(), part.end());
  }
  const auto sums = ordered_sum(uids, parts, 3 * no);
  for (std::size_t o = 0; o < no; ++o)
    for (int q = 0; q < 3; ++q)
      forces[o].force[static_cast<std::size_t>(q)] += weight * sums[3 * o + static_cast<std::size_t>(q)];
  times.obstacles += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> Solver::Impl::ordered_sum(const std::vector<std::uint64_t>& uids, const std::vector<double>& parts, std::size_t K) {
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

void Solver::Impl::projection_rhs(double dt) {
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

void Solver::Impl::correct(double dt) {
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

void Solver::Impl::pressure_gradient() {
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

void Solver::Impl::finish_state() {
  static constexpr int sv[] = {kU, kV, kW, kP, kT};
  exchange(sv);
  // A uniform tree's exchange touches only the leaves, so its parents fall behind
  // until sync_coarse_levels(); an adaptive tree's exchange has just restricted them.
  coarse_stale = full;
  pressure_gradient();
}

void Solver::Impl::sync_coarse_levels() {
  if (!coarse_stale) return;
  static constexpr int sv[] = {kU, kV, kW, kP, kT};
  const auto t0 = std::chrono::steady_clock::now();
  forest.restrict_levels(sv);
  times.restrict += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  coarse_stale = false;
}

StepResult Solver::Impl::step() {
  using clock = std::chrono::steady_clock;
  auto t = clock::now();
  auto lap = [&](double& acc) {
    const auto now = clock::now();
    acc += std::chrono::duration<double>(now - t).count();
    t = now;
  };
  const double dt = compute_dt();
  lap(times.dt);
  const double forcing_before = times.obstacles;
  advance(dt);
  lap(times.predictor);
  times.predictor -= times.obstacles - forcing_before;  // force_obstacles times itself
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
  return StepResult{st.step, st.time, dt, last_pressure};
}

}  // namespace rwd::solver

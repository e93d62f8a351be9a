// Initial conditions.
#include "solver_impl.hpp"

namespace rwd::solver {

void Solver::Impl::initialise() {
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

}  // namespace rwd::solver

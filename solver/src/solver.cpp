// The solver's variable table and its public methods; the member functions of
// Solver::Impl have a file per concern (solver_impl.hpp lists them).
#include "solver_impl.hpp"

namespace rwd::solver {

namespace {

constexpr Variable kFields[] = {
    {kU, "u", FieldRole::state},         {kV, "v", FieldRole::state},        {kW, "w", FieldRole::state},
    {kP, "p", FieldRole::state},         {kT, "T", FieldRole::state},        {kGpx, "gpx", FieldRole::derived},
    {kGpy, "gpy", FieldRole::derived},   {kGpz, "gpz", FieldRole::derived},  {kUs, "u_star", FieldRole::scratch},
    {kVs, "v_star", FieldRole::scratch}, {kWs, "w_star", FieldRole::scratch}, {kTs, "T_star", FieldRole::scratch},
    {kPhi, "phi", FieldRole::scratch},   {kRhs, "rhs", FieldRole::scratch},  {kB, "mg_rhs", FieldRole::scratch},
    {kR, "mg_residual", FieldRole::scratch}, {kX, "mg_correction", FieldRole::scratch},
};

}  // namespace

std::span<const Variable> field_table() { return kFields; }
std::vector<Variable> state_fields() {
  std::vector<Variable> out;
  for (const auto& f : kFields)
    if (f.role == FieldRole::state) out.push_back(f);
  return out;
}

std::vector<Variable> solved_fields(const SolverCase& c) {
  auto out = state_fields();
  std::erase_if(out, [&](const Variable& f) {
    return (f.var == kW && c.tree.shape.dim() == 2) || (f.var == kT && !c.physics.energy);
  });
  return out;
}

// ------------------------------------------------------------------ Solver
Solver::Solver(SolverCase c, spacetree::LocalPlan plan, MPI_Comm comm)
    : impl_(std::make_unique<Impl>(std::move(c), std::move(plan), comm)) {
  impl_->initialise();
}
Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

const SolverCase& Solver::config() const { return impl_->cfg; }
forest::Forest& Solver::forest() { return impl_->forest; }
const forest::Forest& Solver::forest() const { return impl_->forest; }
StepResult Solver::step() { return impl_->step(); }
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

void Solver::sync_coarse_levels() { impl_->sync_coarse_levels(); }

void Solver::set_time_limits(double end, std::int64_t max_steps) {
  impl_->cfg.time.end = end;
  impl_->cfg.time.max_steps = max_steps;
}

}  // namespace rwd::solver

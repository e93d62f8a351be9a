// Determinism and exact restart: the same case on 1, 2, 3 and 4 compute ranks gives
// bit-identical fields, and a run restored from its state fields continues
// bit-identically. Registered on 4 ranks: the ranks are split into sub-communicators
// of 1, 2, 3 and 4 that each run the case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_test_util.hpp"
#include "solver_test_util.hpp"

using namespace rwd;

namespace {

// Channel with a cylinder, parabolic inflow, buoyancy and a heat source, on an
// adaptive tree (level jumps around the cylinder): every code path at once.
const std::string kCase = R"(
[domain]
lo = [0.0, 0.0, 0.0]
hi = [2.0, 0.5, 1.0]
[tree]
r = [2, 2, 1]
s = [16, 4, 1]
depth = 2
max_depth = 3
[[tree.refine]]
center = [0.5, 0.25, 0.5]
radius = 0.2
level = 3
[physics]
nu = 0.005
Pr = 0.7
beta = 0.5
gravity = [0.0, -1.0, 0.0]
heat_source = 0.1
[time]
end = 10.0
max_steps = 12
[boundary.xmin]
type = "inflow"
velocity = [1.0, 0.0, 0.0]
profile = "parabolic"
temperature = 0.0
[boundary.xmax]
type = "outflow"
[boundary.ymin]
temperature = 1.0
[[obstacle]]
type = "circle"
center = [0.5, 0.24, 0.5]
radius = 0.07
temperature = 0.5
[solver]
tolerance = 1e-7
)";

std::uint64_t fnv(std::uint64_t h, const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// Hash of the interior of every variable that carries state, over all grids in UID
// order (collective over the solver's communicator).
std::uint64_t field_hash(solver::Solver& s, MPI_Comm comm) {
  auto& fo = s.forest();
  std::vector<std::uint64_t> mine;  // pairs (uid, hash)
  const auto& sh = fo.shape().s;
  for (std::size_t g = 0; g < fo.size(); ++g) {
    std::uint64_t h = 1469598103934665603ull;
    for (int v : {solver::kU, solver::kV, solver::kW, solver::kP, solver::kT, solver::kGpx, solver::kGpy})
      for (int k = 0; k < sh[2]; ++k)
        for (int j = 0; j < sh[1]; ++j)
          for (int i = 0; i < sh[0]; ++i) {
            const double x = fo.at(g, v, i, j, k);
            h = fnv(h, &x, sizeof x);
          }
    mine.push_back(fo.grid(g).uid.raw());
    mine.push_back(h);
  }
  int n = static_cast<int>(mine.size()), size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::partial_sum(counts.begin(), counts.end() - 1, displ.begin() + 1);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(displ.back() + counts.back()));
  MPI_Allgatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(), displ.data(), MPI_UINT64_T, comm);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (std::size_t i = 0; i < all.size(); i += 2) pairs.emplace_back(all[i], all[i + 1]);
  std::sort(pairs.begin(), pairs.end());
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& p : pairs) h = fnv(h, &p, sizeof p);
  return h;
}

// The time schemes: explicit Euler (the default) and Heun's rk2 (two predictor stages,
// one written in place, a weighted reflux and forcing).
std::vector<std::string> scheme_overrides() {
  const bool rk2 = GENERATE(false, true);
  if (!rk2) return {};
  return {"solver.time_scheme=\"rk2\"", "solver.upwind=0"};
}

}  // namespace

TEST_CASE("Bit-identical fields and monitors on 1..N compute ranks", "[solver][mpi]") {
  const auto scheme = scheme_overrides();
  INFO("overrides: " << (scheme.empty() ? "none (euler)" : scheme.front()));
  const int world = test::world_size(), rank = test::world_rank();
  std::vector<std::uint64_t> hashes;
  std::vector<double> cds;
  for (int n = 1; n <= world; ++n) {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &sub);
    std::uint64_t h = 0;
    double cd = 0;
    if (sub != MPI_COMM_NULL) {
      auto s = test::make_solver(kCase, sub, scheme);
      while (!s.finished()) s.step();
      h = field_hash(s, sub);
      cd = s.monitors().cd;
      MPI_Comm_free(&sub);
    }
    MPI_Bcast(&h, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(&cd, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    hashes.push_back(h);
    cds.push_back(cd);
  }
  for (std::size_t i = 1; i < hashes.size(); ++i) {
    INFO("1 rank vs " << i + 1 << " ranks");
    CHECK(hashes[i] == hashes[0]);
    CHECK(std::memcmp(&cds[i], &cds[0], sizeof(double)) == 0);
  }
}

TEST_CASE("Restore from the state fields continues bit-identically", "[solver][mpi]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const auto scheme = scheme_overrides();
  INFO("overrides: " << (scheme.empty() ? "none (euler)" : scheme.front()));
  auto with = [&](const std::string& o) {
    auto v = scheme;
    v.push_back(o);
    return v;
  };
  auto a = test::make_solver(kCase, comm, with("time.max_steps=6"));
  while (!a.finished()) a.step();
  // What the kernel would write: the state fields' interiors and the scalar state.
  std::vector<std::vector<double>> saved;
  auto& fa = a.forest();
  for (std::size_t g = 0; g < fa.size(); ++g)
    for (const auto& f : solver::state_fields())
      saved.emplace_back(fa.data(g, f.var), fa.data(g, f.var) + fa.block_size());
  const auto ss = a.scalar_state();
  auto c = test::parse_case(kCase, with("time.max_steps=12"));
  a = test::make_solver(c, comm);  // reference: uninterrupted 12 steps
  while (!a.finished()) a.step();
  const auto ref = field_hash(a, comm);

  auto b = test::make_solver(c, comm);
  auto& fb = b.forest();
  std::size_t n = 0;
  for (std::size_t g = 0; g < fb.size(); ++g)
    for (const auto& f : solver::state_fields()) {
      // Scribble on everything first: only interiors of the state may matter.
      std::fill_n(fb.data(g, f.var), fb.block_size(), -1e300);
      const auto& src = saved[n++];
      for (int k = 0; k < fb.shape().s[2]; ++k)
        for (int j = 0; j < fb.shape().s[1]; ++j)
          for (int i = 0; i < fb.shape().s[0]; ++i) fb.at(g, f.var, i, j, k) = src[static_cast<std::size_t>(fb.index(i, j, k))];
    }
  b.restore(ss);
  CHECK(b.scalar_state() == ss);
  while (!b.finished()) b.step();
  CHECK(b.scalar_state().step == 12);
  CHECK(field_hash(b, comm) == ref);
}

// A fork's branch point, read once for all its futures (restart.hpp): restore_solvers for
// futures on the same ranks, restore_groups for futures on groups of ranks, which each need
// the whole step on their own partition. Instead of one read per group, every row of the
// step is read by one of the ranks that hold its grid (one per group), straight into that
// grid's arrays, and sent from there straight into the others' (MPI datatypes over the
// grids' interiors): no buffer, no second read.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "agree.hpp"
#include "restart_rows.hpp"
#include "rewind/driver/restart.hpp"

namespace rwd::driver {

namespace k = rwd::kernel;

namespace {

// The first solver's state (as read, before restore() derives anything from it) copied to
// the others, so each future restores exactly as a restart of its own would; then each
// restores its scalar state.
void restore_copies(const std::vector<solver::Solver*>& solvers, const RestartPoint& rp) {
  const auto& from = solvers.front()->forest();
  for (std::size_t i = 1; i < solvers.size(); ++i) {
    auto& to = solvers[i]->forest();
    if (to.size() != from.size() || to.block_size() != from.block_size())
      throw std::logic_error("restore_solvers: the solvers' grids differ");
    for (const auto& f : solver::state_fields())
      for (std::size_t g = 0; g < from.size(); ++g)
        std::copy_n(from.data(g, f.var), from.block_size(), to.data(g, f.var));
  }
  for (auto* s : solvers)
    s->restore(solver::ScalarState{rp.step.time, rp.step.step, rp.step.dt, rp.step.monitor_state});
}

// One grid's interior in its halo'd array (Forest's layout: x fastest, a one-cell halo
// on every side, also in z in 2-D), as an MPI datatype. The caller frees it.
MPI_Datatype interior_type(const spacetree::TreeShape& sh) {
  const int sizes[3] = {sh.s[2] + 2, sh.s[1] + 2, sh.s[0] + 2};
  const int inner[3] = {sh.s[2], sh.s[1], sh.s[0]};
  const int starts[3] = {1, 1, 1};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_create_subarray(3, sizes, inner, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

// Where every row goes: `rows[r]`, the rows rank r holds a grid of (in its grid order), the
// same on every rank. Each row is read by one of its holders, who sends it to the others;
// the H ranks holding the same rows share them in H even stretches, in file order (each
// reads runs of rows, not every H-th one).
struct RowPlan {
  std::vector<std::int64_t> read;                   ///< this rank's rows to read
  std::vector<std::vector<std::int64_t>> to, from;  ///< per peer: rows sent, rows received (ascending)
};
RowPlan plan_rows(const std::vector<std::vector<std::int64_t>>& rows, std::int64_t n, int rank) {
  std::vector<std::vector<int>> holders(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const auto row : rows[r]) holders[static_cast<std::size_t>(row)].push_back(static_cast<int>(r));
  std::map<std::vector<int>, std::vector<std::int64_t>> shared;  // holders -> their rows, ascending
  for (std::int64_t row = 0; row < n; ++row)
    if (!holders[static_cast<std::size_t>(row)].empty()) shared[holders[static_cast<std::size_t>(row)]].push_back(row);
  RowPlan p;
  p.to.resize(rows.size());
  p.from.resize(rows.size());
  for (const auto& [h, list] : shared) {
    const bool mine = std::find(h.begin(), h.end(), rank) != h.end();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const int reader = h[i * h.size() / list.size()];
      if (reader == rank) {
        p.read.push_back(list[i]);
        for (const int r : h)
          if (r != rank) p.to[static_cast<std::size_t>(r)].push_back(list[i]);
      } else if (mine) {
        p.from[static_cast<std::size_t>(reader)].push_back(list[i]);
      }
    }
  }
  // Ascending everywhere: a sender's list for a peer and the peer's from it in one order.
  std::sort(p.read.begin(), p.read.end());
  for (auto& v : p.to) std::sort(v.begin(), v.end());
  for (auto& v : p.from) std::sort(v.begin(), v.end());
  return p;
}

// The grids of `rows` (through `grid_of`), every field of `vars`, in that order, as one
// datatype of absolute addresses (for MPI_BOTTOM). The caller frees it.
MPI_Datatype rows_type(const std::vector<std::int64_t>& rows,
                       const std::unordered_map<std::int64_t, std::size_t>& grid_of, forest::Forest& forest,
                       const std::vector<int>& vars, MPI_Datatype interior) {
  std::vector<MPI_Aint> at;
  for (const auto row : rows)
    for (const int v : vars) {
      MPI_Aint a = 0;
      MPI_Get_address(forest.data(grid_of.at(row), v), &a);
      at.push_back(a);
    }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_create_hindexed_block(static_cast<int>(at.size()), 1, at.data(), interior, &t);
  MPI_Type_commit(&t);
  return t;
}

}  // namespace

void restore_solvers(const std::vector<solver::Solver*>& solvers, const RestartPoint& rp, MPI_Comm comm) {
  if (solvers.empty()) return;
  restore_solver_fields(*solvers.front(), rp, comm);
  restore_copies(solvers, rp);
}

bool restore_groups(const std::vector<solver::Solver*>& solvers, const RestartPoint& rp, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (solvers.empty()) throw std::logic_error("restore_groups: every rank computes a future");
  const auto reader = k::Reader::open(rp.file, comm);
  const auto topo = reader.read_topology(rp.step.step);
  const auto solved = solver::solved_fields(solvers.front()->config());
  const auto want = rows_of_grids(solvers.front()->forest(), solved, rp, reader, topo, comm);
  // Every future solves the same fields (unless a change turned one on or off): else each
  // group reads for itself.
  std::vector<int> vars;
  unsigned mask = 0;
  for (const auto& f : solved) {
    vars.push_back(f.var);
    mask |= 1U << static_cast<unsigned>(f.var);
  }
  unsigned lo = 0, hi = 0;
  MPI_Allreduce(&mask, &lo, 1, MPI_UNSIGNED, MPI_BAND, comm);
  MPI_Allreduce(&mask, &hi, 1, MPI_UNSIGNED, MPI_BOR, comm);
  if (lo != hi) return false;

  // Who holds which rows: every rank's list, gathered.
  std::vector<int> counts(static_cast<std::size_t>(size)), at(static_cast<std::size_t>(size), 0);
  const int mine = static_cast<int>(want.size());
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (std::size_t r = 1; r < counts.size(); ++r) at[r] = at[r - 1] + counts[r - 1];
  std::vector<std::int64_t> all(static_cast<std::size_t>(at.back() + counts.back()));
  MPI_Allgatherv(want.data(), mine, MPI_INT64_T, all.data(), counts.data(), at.data(), MPI_INT64_T, comm);
  std::vector<std::vector<std::int64_t>> rows(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) rows[r].assign(all.begin() + at[r], all.begin() + at[r] + counts[r]);
  const auto plan = plan_rows(rows, topo.n_grids, rank);
  std::unordered_map<std::int64_t, std::size_t> grid_of;
  for (std::size_t g = 0; g < want.size(); ++g) grid_of.emplace(want[g], g);

  // The read: this rank's share, straight into its grids' arrays.
  auto& forest = solvers.front()->forest();
  std::vector<k::Reader::FieldRef> refs;
  std::vector<std::vector<double*>> dest(vars.size());
  for (std::size_t f = 0; f < vars.size(); ++f) {
    refs.push_back({"cell_data", solved[f].name});
    for (const auto row : plan.read) dest[f].push_back(forest.data(grid_of.at(row), vars[f]));
  }
  agreed(comm, [&] { reader.read_fields_into(rp.step.step, refs, plan.read, dest, 1); });  // a damaged row fails all

  // Then from the grids that were read into the same grids on the other groups' ranks.
  const auto interior = interior_type(forest.shape());
  const auto ranks = static_cast<std::size_t>(size);
  std::vector<MPI_Datatype> send(ranks, MPI_DOUBLE), recv(ranks, MPI_DOUBLE);
  std::vector<int> send_n(ranks, 0), recv_n(ranks, 0), zero(ranks, 0);
  for (std::size_t r = 0; r < ranks; ++r) {
    if (!plan.to[r].empty()) {
      send[r] = rows_type(plan.to[r], grid_of, forest, vars, interior);
      send_n[r] = 1;
    }
    if (!plan.from[r].empty()) {
      recv[r] = rows_type(plan.from[r], grid_of, forest, vars, interior);
      recv_n[r] = 1;
    }
  }
  MPI_Alltoallw(MPI_BOTTOM, send_n.data(), zero.data(), send.data(), MPI_BOTTOM, recv_n.data(), zero.data(),
                recv.data(), comm);
  for (std::size_t r = 0; r < ranks; ++r) {
    if (send_n[r] > 0) MPI_Type_free(&send[r]);
    if (recv_n[r] > 0) MPI_Type_free(&recv[r]);
  }
  auto t = interior;
  MPI_Type_free(&t);
  restore_copies(solvers, rp);
  return true;
}

}  // namespace rwd::driver

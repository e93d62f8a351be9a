// Builds a Solver from case text on a communicator (plan from the in-process
// topology), for the solver tests.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "rewind/solver/solver.hpp"
#include "rewind/config/case_file.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/plan.hpp"
#include "rewind/spacetree/topology.hpp"

namespace rwd::test {

inline solver::SolverCase parse_case(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto doc = config::CaseDocument::parse(text, "test.toml", overrides);
  auto sc = solver::parse_solver_case(doc);
  doc.reject_unknown();
  return sc;
}

inline solver::Solver make_solver(const solver::SolverCase& sc, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto tree = config::build_tree(sc.tree);
  spacetree::Topology topo(tree, spacetree::partition_morton(tree, size));
  return solver::Solver(sc, spacetree::make_local_plan(topo, rank), comm);
}

inline solver::Solver make_solver(const std::string& text, MPI_Comm comm, const std::vector<std::string>& overrides = {}) {
  return make_solver(parse_case(text, overrides), comm);
}

}  // namespace rwd::test

// The rows of a solver's grids in a restart step, shared by restart.cpp (a restart) and
// restart_shared.cpp (a fork's futures). Private to rewind::driver.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "rewind/driver/restart.hpp"

namespace rwd::driver {

/// The rows of `forest`'s grids in step rp.step of `reader` (grid order), after checking
/// the step fits the solver: every grid in it (the count missing summed over `comm` before
/// any rank throws; with rp.refine a grid the refinement added has row -1), the case's
/// d-grid size, every field of `solved` stored. Throws
/// std::runtime_error, the same on every rank. Collective over `comm`.
std::vector<std::int64_t> rows_of_grids(const forest::Forest& forest, const std::vector<solver::Variable>& solved,
                                        const RestartPoint& rp, const kernel::Reader& reader,
                                        const kernel::StepTopology& topo, MPI_Comm comm);

}  // namespace rwd::driver

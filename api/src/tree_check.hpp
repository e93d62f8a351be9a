// Is the tree the ranks describe together a tree? Checked once per change of the grids,
// before a write acts on them. Private to the C API.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/metadata.hpp"

namespace rwd::api {

/// Collective over `comm` (every rank with its own grids). This rank's part of what is
/// wrong, "" if nothing it can see, each message naming the grid, the rank that described
/// it and the rule: every grid's box is its level's size (domain / refinement^level) on
/// that level's grid lines inside the domain; a child is one level below its parent,
/// inside its parent's box, and its parent is described on some rank; no uid is
/// described twice (on one rank or on two). One all-to-all: each grid goes to the rank
/// that owns its uid's hash, and to the one owning its parent's, O(grids) in all.
std::string tree_problem(MPI_Comm comm, const kernel::CommonInfo& common, const std::vector<kernel::GridRecord>& grids);

}  // namespace rwd::api

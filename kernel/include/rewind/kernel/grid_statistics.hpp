// The per-grid statistics of a running code's grids, and their per-octant shares of their
// parents' details, as a step written from them would store them (docs/file-format.md §3,
// "Statistics"), without writing anything: the live state's adaptive windows rank its
// grids by these (rewind::live). The writer's
// own code computes them, so for the same grids they equal a file's bit for bit.
#pragma once
#include <mpi.h>

#include <array>
#include <vector>

#include "rewind/kernel/grids.hpp"

namespace rwd::kernel {

/// One grid's statistics of one field: {minimum, maximum} over its non-solid cells (NaN
/// when it has none) and its detail (the L2 norm over its children's cells of their
/// values minus its own cells prolonged onto them; 0 for a leaf).
using GridStatistic = std::array<double, 3>;

/// Collective over `comm`: for each of this rank's grids (in `grids.grids` order), the
/// statistics of the field in slot `slot` of GridRecord::fields that a step written by
/// these ranks from these grids would store (`float32`: of the values rounded as a
/// float32 field is stored). `max_children`: the tree's child slots (4: quadtree, 8:
/// octree). Parents must hold their children's averages (a code restricts first).
/// Returns an empty vector on every rank where a step would store no statistics (a
/// max_children other than 2, 4, 8, or an odd cell count on a refined axis). Throws
/// std::invalid_argument on every rank for grids that are not one tree (a uid twice, a
/// link to a grid no rank has, not exactly one root, a level outside 0..63) or lack the slot.
///
/// `shares` (optional, owned by the caller): set to grids.grids.size() × max_children
/// values, grid after grid in `grids.grids` order, each grid's per-octant shares of its
/// parent's detail as a step written from these grids would store them in shares/<var>
/// (format 1.10; 0 for the root), bit for bit; emptied where a step would store none (no
/// statistics, or a refined axis's cell count not divisible by 4).
std::vector<GridStatistic> grid_statistics(MPI_Comm comm, const LocalGrids& grids, int max_children, int slot,
                                           bool float32 = false, std::vector<double>* shares = nullptr);

/// The first two columns of grid `g`'s statistics row alone: {minimum, maximum} of the
/// field in slot `slot` over its non-solid cells (cell_type != 1; every cell without cell
/// types), {NaN, NaN} when it has none. Local, no detail (what a live window's colour
/// range is taken from). Throws std::invalid_argument if the grid lacks the slot.
std::array<double, 2> grid_range(const LocalGrids& grids, std::size_t g, int slot);

}  // namespace rwd::kernel

// What a case will cost before anything is built: grids per level from the case alone,
// and the memory a process needs to hold its part of the tree and of the fields.
//
// Pure and cheap (no tree is built, nothing proportional to the tree is allocated), so
// every subcommand can refuse an oversized case — `tree.depth = 9` in 3-D asks for
// 8^9 = 134 million grids — with one line before it allocates, on every rank alike.
//
// The grid count is an upper bound of what build_tree() makes, up to balancing across
// a periodic wrap: every grid of level l < tree.depth is refined; for l >= tree.depth a
// grid is counted as refined if it meets a refine region of a deeper level L, grown on
// every side by the grid widths of levels l+1 .. L-1: 2:1 balancing refines a grid of
// level l only where it touches a refined grid of level l+1, so by induction from L-1
// down, no refined grid of level l lies farther from the region than that. Regions are
// summed (overlaps counted twice), and every level is capped by the grids it can have.
// Spheres are counted grid row by grid row, boxes by index ranges.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rewind/config/case_file.hpp"

namespace rwd::config {

/// Upper bound of the grids of a case's tree, per level.
struct TreeEstimate {
  std::vector<std::int64_t> grids_per_level;  ///< level 0 .. deepest level
  std::int64_t grids = 0;                     ///< sum of grids_per_level
  std::int64_t cells = 0;                     ///< grids * interior cells per grid
  /// True when counting stopped early because `grids` passed the caller's limit; the
  /// numbers are then a lower bound of the estimate, already above the limit.
  bool stopped = false;
};

/// Counts the grids build_tree(c) would make, as an upper bound (see above). Stops
/// counting once the total passes `stop_above` grids (the count is then still above
/// the limit). Pure; O(levels x regions) for boxes, O(rows of grids in a sphere's
/// bounding box) for spheres.
TreeEstimate estimate_tree(const TreeCase& c, std::int64_t stop_above = INT64_MAX);

/// Memory model of a run, in bytes. Coefficients measured on `rewind run` and
/// `rewind tree` (docs/validation.md, "Memory"), rounded up.
struct MemoryModel {
  std::int64_t tree_bytes_per_grid = 0;   ///< the whole logical tree + partition + topology
  std::int64_t field_bytes_per_grid = 0;  ///< one compute rank's fields, solver scratch and
                                          ///< output buffer for one of its grids
  std::int64_t process_bytes = 0;         ///< any process: libraries, MPI, HDF5
};

/// The model for a case: `variables` cell arrays of (s+2)^dim doubles per grid (the
/// forest with its halo) plus the solver's and the output's share per grid.
MemoryModel memory_model(const spacetree::TreeShape& shape, int variables);

/// Bytes a process needs: the tree (server or single process) and/or a 1/ranks share
/// of the fields (compute ranks; `imbalance` >= 1 covers an uneven partition).
std::int64_t bytes_needed(const TreeEstimate& e, const MemoryModel& m, bool holds_tree, int compute_ranks,
                          double imbalance = 1.25);

/// "1.23 GiB", "512 MiB", "12.0 kiB".
std::string format_bytes(double bytes);

/// Parses "8G", "512MiB", "1.5GB", "2000000000" (bytes; K/M/G/T binary units, an
/// optional "iB"/"B"). Throws std::invalid_argument naming the text.
std::int64_t parse_bytes(const std::string& text);

}  // namespace rwd::config

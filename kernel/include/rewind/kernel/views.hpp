// Stock-reader views: small VTKHDF UnstructuredGrid files that ParaView 5.11 opens
// without our plugin. Every cell of every grid is a cell (quads in a 2-D run, hexahedra in
// 3-D); the variables are virtual datasets into the shared file (no bulk data copied), named
// with their unit ("u [m∕s]"); beside them the geometry, a compressed vtkGhostType that
// hides the solid cells and the cells under finer grids, and the field arrays `time` and
// `step` (docs/file-format.md §7). Not AMR: ParaView 5.11 keeps an AMR series' first data
// time, an unstructured grid's follows the time toolbar.
//
// Layout (next to run.h5):  run.views/step_00000042.hdf   (one per step)
//                           run.views/run.hdf.series      (JSON, time-aware)
// The Writer calls write_step_view on rank 0 after each committed step (IoOptions::
// write_views); regenerate_views rebuilds them offline from the shared file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rewind/kernel/metadata.hpp"

namespace rwd::kernel {

struct StepTopology;

/// Directory holding the views of `h5_path` ("<dir>/<stem>.views").
std::string views_directory(const std::string& h5_path);
/// The .hdf.series file of `h5_path`.
std::string series_path(const std::string& h5_path);

/// The cell_type code a view hides, as the ParaView plugin does: 1, solid (inside an
/// obstacle; docs/file-format.md §9).
inline constexpr std::uint8_t kHiddenCellType = 1;

/// A run of cells a view hides: cells [first, first + count) of a step, a cell numbered
/// row * cells_per_grid + its index in the row (z, y, x order).
struct CellRun {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

/// Appends to `out` the runs of one row's `cells` cell types (interior, z, y, x order)
/// that equal kHiddenCellType, numbered from `row` * `cells`. Pure.
void append_hidden_runs(const std::uint8_t* types, std::int64_t row, std::int64_t cells, std::vector<CellRun>& out);

/// A variable's array name in a view: "u [m∕s]" — its unit in brackets, each '/' of the
/// unit as '∕' (U+2215: an HDF5 name cannot hold '/'); the bare name without a unit. Pure.
std::string view_array_name(const std::string& name, const std::string& unit);

/// The most cells a step's view is written for. Each cell of a view is a cell of an
/// unstructured grid, about 100 bytes of geometry on the rank that writes it (a few bytes
/// each once compressed): a step with more cells gets no view, and its run is opened with
/// the Rewind plugin, whose windows stay within a budget (docs/paraview.md).
inline constexpr std::int64_t kMaxViewCells = std::int64_t{1} << 22;

/// Serial. Writes the view of one step and adds it to the series file.
/// `fields`: the step's cell_data variables to expose. `hidden`: the step's cells to hide
/// (sorted, disjoint), or nullptr when the step has no cell types. Throws FileError
/// (invalid_argument, before anything is written) for a step of more than kMaxViewCells
/// cells, and FileError for a failed write.
void write_step_view(const std::string& h5_path, const CommonInfo& common, const StepEntry& step,
                     const StepTopology& topo, const std::vector<FieldInfo>& fields,
                     const std::vector<CellRun>* hidden = nullptr);

/// Serial, read-only on `h5_path`: rewrites the views of every committed step (the
/// hidden cells from each step's cell_type); steps of more than kMaxViewCells cells get
/// none, as when they were written.
void regenerate_views(const std::string& h5_path);

}  // namespace rwd::kernel

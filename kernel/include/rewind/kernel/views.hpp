// Stock-reader views: tiny VTKHDF OverlappingAMR files that ParaView 5.11 opens without
// our plugin. A view holds no bulk data: every CellData array is a virtual dataset with
// one mapping per level into the shared file (rows of a level are contiguous).
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

/// Serial. Writes the view of one step and adds it to the series file.
/// `fields`: the step's cell_data variables to expose. Throws FileError.
void write_step_view(const std::string& h5_path, const CommonInfo& common,
                     const StepEntry& step, const StepTopology& topo,
                     const std::vector<FieldInfo>& fields);

/// Serial, read-only on `h5_path`: rewrites the views of every committed step.
void regenerate_views(const std::string& h5_path);

}  // namespace rwd::kernel

// What the reader and the live source share besides their properties: a window request
// built from vtkRewindWindowSource's properties, and the VTK output of a window reply
// (whether FileService answered it from a file or a collector over TCP). Private to the
// plugin (not wrapped); pure except for building VTK objects, never throws into VTK
// (the callers catch).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rewind/collector/messages.hpp"

class vtkDataArraySelection;
class vtkInformation;
class vtkMultiBlockDataSet;
class vtkRewindWindowSource;
class vtkTable;

namespace rwd::paraview {

/// The request `source`'s window properties ask: box (UseBox 0: the whole domain
/// [lo, hi]), budget (0 stays 0: callers that need a positive one replace it), the
/// enabled cell arrays. time and file are left to the caller.
collector::WindowRequest window_request(vtkRewindWindowSource& source, const std::array<double, 3>& lo,
                                        const std::array<double, 3>& hi);

/// Makes `names` the arrays on offer: arrays not offered before are enabled, arrays no
/// longer offered are removed, the user's choices for the others are kept.
void offer_arrays(vtkDataArraySelection& selection, const std::vector<std::string>& names);

/// Replaces `out` with the reply: one block per level 0 .. the deepest piece level (at
/// least reply.level), "Level N", each a vtkMultiPieceDataSet with one vtkImageData per
/// piece (cell data: the reply's variables, each with its unit from info.variables as
/// vtkDataArray::UNITS_LABEL; with u and v, "velocity" (u, v, w or 0; the active vectors)
/// and "velocity_magnitude" (the active scalars: ParaView colours by it when it shows
/// the source); "cell_type" if `cell_types` and the reply has them; whenever the reply
/// has cell types, vtkGhostType with HIDDENCELL on the solid cells (cell_type 1) so they
/// are not drawn; field data: the grid's rewind_row (-1 live), rewind_uid, rewind_level,
/// rewind_stride, rewind_first). A 2-D case (info.dim 2) gives planes at the domain's
/// lower z (one point layer: its cells are pixels), not slabs one cell deep. Field data
/// of `out`: rewind_step, rewind_time, rewind_level, rewind_stride, rewind_file,
/// rewind_annotation (annotation()), rewind_units ("u [m/s]" per variable, the
/// reply's order) and, for each variable with a finite reply.ranges entry (a file step
/// with statistics), rewind_range_<var>: two values, min and max over the shown grids'
/// non-solid cells (what the GUI fits the colour map to). Throws std::runtime_error if an array of the reply does not
/// hold exactly its cells.
void fill_output(const collector::WindowReply& reply, bool cell_types, const collector::ServerInfo& info,
                 vtkMultiBlockDataSet* out);

/// "step N  t = T" (T to 6 significant digits): what the sources' Annotation port shows.
std::string annotation(const collector::WindowReply& reply);

/// Replaces `out` with a one-cell table, column "rewind_annotation" holding `text`: the
/// sources' second output port, which ParaView draws as text in the view's corner.
void fill_annotation(const std::string& text, vtkTable* out);

/// Which of the ascending, non-empty `times` ParaView's request (an output information
/// with or without UPDATE_TIME_STEP) shows: the last step at or before the time
/// (kernel::index_at_or_before, find_step's rule), the first before the first, the last
/// when no time is asked.
std::size_t step_for_time(vtkInformation* request, const std::vector<double>& times);

/// One step of a live source's time axis: the file holding it, its number, its time.
struct AxisStep {
  std::string file;
  std::int64_t step = 0;
  double time = 0.0;
};

/// The timeline of `file` among a run's committed `steps` (steps_reply): the timeline of
/// the file it branched from (`parents`: file -> parent, from status_reply) before its
/// own first step, then its own steps, ascending in time -- what a branch made in the job
/// continues, as kernel::timeline is for files. A file without steps yet: its parent's.
std::vector<AxisStep> live_timeline(const std::string& file, const std::vector<collector::StepRecord>& steps,
                                    const std::map<std::string, std::string>& parents);

}  // namespace rwd::paraview

// File-level metadata of a Rewind HDF5 file: constants in /common, steps, lineage.
// Plain data, nothing collective. See docs/file-format.md for how each field is stored.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rewind/kernel/grids.hpp"

namespace rwd::kernel {

/// The format this kernel writes. A reader refuses files whose major version is newer;
/// minor versions only add optional objects.
inline constexpr const char* kFormatName = "rewind-hgrid-h5";
inline constexpr int kFormatMajor = 1;
inline constexpr int kFormatMinor = 10;
/// A step's group of current cell data, its group of per-grid statistics of those fields
/// (format 1.9) and its group of each grid's per-octant shares of its parent's detail
/// (format 1.10; docs/file-format.md §3 "Statistics"); neither of the last two is a field group.
inline constexpr const char* kCellData = "cell_data";
inline constexpr const char* kStatistics = "statistics";
inline constexpr const char* kShares = "shares";
/// Version of this library, stored as /common code_version unless the caller sets one.
inline constexpr const char* kKernelVersion = "rewind-kernel 0.1.0";

/// A cell variable: name (snake_case, no '/' or '.') and physical unit.
struct Variable {
  std::string name;
  std::string unit;
};

/// Where a branch file came from. Empty parent_file: an original run.
struct Lineage {
  /// The parent as stored: relative to the branch file's directory (Writer::create
  /// makes it so), so a run moved together with its branches keeps its chain.
  std::string parent_file;
  std::string parent_file_absolute; ///< the parent's absolute path when branched: a hint
                                    ///< for a branch moved without its parent (format 1.3)
  std::int64_t parent_step = -1;    ///< step number in the parent file
  double parent_time = 0.0;         ///< simulated time of that step
  std::vector<std::string> changes; ///< what changed, one "key=value" per entry
  [[nodiscard]] bool is_branch() const { return !parent_file.empty(); }
};

/// Constants of a run, written once to /common when the file is created.
struct CommonInfo {
  int dim = 3;                         ///< 2 or 3
  BlockShape block;                    ///< d-grid size s (cells per grid per axis)
  int refinement = 2;                  ///< r: children per axis when a grid is refined
  int max_children = 8;                ///< width of child_uids/child_rows (r^dim)
  BoxRow domain{};                        ///< physical extent of the root grid
  std::map<std::string, double> time_stepping;  ///< e.g. dt, t_end, cfl
  std::map<std::string, double> fluid;          ///< fluid properties, e.g. nu, rho, Pr
  std::vector<Variable> variables;     ///< cell variables of the run
  std::string case_text;               ///< the case file, verbatim
  std::string code_version = kKernelVersion;
  std::string creator = "rewind";      ///< program that wrote the file
  Lineage lineage;                     ///< branch origin (empty for an original run)
};

/// A named value a code records with a step: one of its monitors (drag, energy, a
/// residual). Stored as the step attributes `scalar_names` and `scalar_values` (format 1.8).
struct Scalar {
  std::string name;  ///< letters, digits and '_'; unique within the step
  double value = 0.0;
  bool operator==(const Scalar& o) const { return name == o.name && value == o.value; }
};

/// Output kind of a step.
enum class StepKind : std::uint8_t {
  visualisation = 0,  ///< current data of chosen variables, maybe float32
  checkpoint = 1,     ///< everything needed to continue bit-exactly
};
const char* to_string(StepKind k) noexcept;

/// One entry of a file's step list (read from the step groups themselves).
struct StepEntry {
  std::int64_t step = -1;      ///< the caller's step (cycle) number; group step_%08d
  double time = 0.0;           ///< simulated time
  double dt = 0.0;
  StepKind kind = StepKind::visualisation;
  bool committed = false;      ///< fully written and flushed (crash protocol)
  std::int64_t n_grids = 0;
  std::int64_t n_cells = 0;    ///< n_grids * cells per grid
  std::int64_t bytes = 0;      ///< bytes of all datasets of the step
  int n_levels = 0;
  /// Leaf grids (no children) per level, 0 .. n_levels-1: the tree at a glance. Format
  /// 1.1; empty for steps written by older versions (derive it from the topology).
  std::vector<std::int64_t> leaf_grids_per_level;
  /// Settings changed while the run was going (steering), in force from this step on:
  /// "key=value" case overrides on top of /common's case_text. Format 1.2; empty for
  /// unsteered steps and older files.
  std::vector<std::string> case_overrides;
  /// The solver's monitor state (StepInfo::monitor_state). Format 1.4; empty when the
  /// step stores none and in older files.
  std::vector<double> monitor_state;
  /// The code's named scalars of this step (StepInfo::scalars), in the order written.
  /// Format 1.8; empty when the step stores none and in older files.
  std::vector<Scalar> scalars;
  std::string group;           ///< "/simulation/step_00000042"
  /// Empty, unless the step is damaged: /simulation/index lists it as committed (a row is
  /// written only after the group's `committed` flag reached the disk), yet its group
  /// cannot be read or (format 1.7) says it is not committed. Then one line saying so;
  /// `committed` is false and, of the rest, only `step` and `group` are known
  /// (docs/file-format.md §5: damage, never absence). Reader::steps(false) lists such
  /// steps, Reader::selectable_steps too, and no selector passes over one.
  std::string damage;
};

/// A dataset of cell data in a step: group ("cell_data", "previous_cell_data", ...)
/// and variable name, with its stored precision.
struct FieldInfo {
  std::string group;
  std::string name;
  bool float32 = false;
};

}  // namespace rwd::kernel

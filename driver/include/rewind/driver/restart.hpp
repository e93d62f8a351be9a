// Restart and branch points: where a run starts from a file, and the branch policy
// (continue the same file, or branch into a new one that remembers its parent).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rewind/config/case_file.hpp"
#include "rewind/kernel/kernel.hpp"
#include "rewind/solver/solver.hpp"
#include "rewind/spacetree/tree.hpp"

namespace rwd::driver {

/// A committed checkpoint to restart from: FILE[@STEP], STEP any kernel selector
/// ("latest" = the latest committed checkpoint, "42", "#-1", "t=0.5").
struct RestartPoint {
  std::string file;
  kernel::StepEntry step;
  std::string case_text;              ///< the case the parent ran with (/common)
  /// Steering changes in force at that step ("key=value"; the step attribute
  /// `case_overrides`, empty for unsteered runs): applied on top of case_text.
  std::vector<std::string> steered;
  std::int64_t last_committed = -1;   ///< last committed step of the file (any kind)
  std::int64_t last_checkpoint = -1;  ///< last committed checkpoint of the file
  /// The file's first damaged committed step (kernel::StepEntry::damage), if any: the
  /// file is then never continued in place, which would set it aside.
  std::optional<kernel::StepEntry> damaged;
  /// When the step is not exactly the one asked for (t=T between outputs, or on a
  /// visualisation step): one line saying which checkpoint stands for it; else "".
  std::string note;
  /// The restart's overrides refine the tree (config::OnRestart::refines): the run goes on
  /// the case's own tree, which holds every stored grid; the grids it adds start from
  /// their parents' values, interpolated (forest::Interp::linear).
  bool refine = false;
};
/// The checkpoint to restart from, by FILE[@STEP]: "latest" (the default) and t=T
/// take the last checkpoint at or before (T); a step number or #i must name a
/// checkpoint. A choice that lands on or passes over a damaged committed step throws
/// kernel::FileError(corrupt) naming it. Serial, read-only. Throws kernel::FileError /
/// std::runtime_error with one line.
RestartPoint find_restart_point(const std::string& spec);
/// A checkpoint a run is about to write into `file` (an in-job branch checks its plan
/// before it writes anything): `step` with the run's steered overrides in force.
struct PendingCheckpoint {
  std::string file;
  kernel::StepEntry step;
};
/// find_restart_point as if `pending` were already a committed checkpoint of its file
/// (when it is later than the file's last step). Serial, read-only; throws alike.
RestartPoint find_restart_point(const std::string& spec, const std::optional<PendingCheckpoint>& pending);
/// The tree of a restart (serial, read-only): the one stored in the checkpoint, or with
/// rp.refine the case's own tree (config::build_tree), after checking that it holds every
/// stored grid: a restart refines, never coarsens. Throws std::runtime_error naming what
/// would be lost.
spacetree::Tree restart_tree(const RestartPoint& rp, const config::TreeCase& tree_case);
/// Collective over `comm`: fills the solver's state from the checkpoint and restores
/// its scalar state, so the run continues bit-identically (with rp.refine: the stored
/// grids as stored, the added ones interpolated from their parents, level by level).
void restore_solver(solver::Solver& s, const RestartPoint& rp, MPI_Comm comm);
/// restore_solver's first half: the state fields read into the solver's arrays (its
/// scalar state not yet restored).
void restore_solver_fields(solver::Solver& s, const RestartPoint& rp, MPI_Comm comm);
/// restore_solver for several solvers on the same grids (the futures of a fork): the
/// checkpoint read once, into the first, and copied to the others. Collective.
void restore_solvers(const std::vector<solver::Solver*>& solvers, const RestartPoint& rp, MPI_Comm comm);
/// restore_solvers for the futures of a fork on groups of ranks (`solvers`: this rank's, on
/// its group's grids; every rank of `comm`, the forked future's ranks, computes one of
/// them): the step read once over `comm`, every row by one of the ranks holding its grid
/// (one per group; the ranks holding the same rows read even stretches of them), straight into that grid's arrays, then
/// sent from there into the same grid's arrays on the other groups' ranks (MPI datatypes, no buffer). Returns false,
/// having read nothing, when the futures do not all solve the same fields (a change turned
/// one on or off): each group then reads for itself (restore_solvers on its own ranks).
/// Errors (a damaged row, a missing grid) are agreed over `comm`. Collective over `comm`.
bool restore_groups(const std::vector<solver::Solver*>& solvers, const RestartPoint& rp, MPI_Comm comm);
/// branch_name, skipping the names in `taken` (the other futures of one fork).
std::string branch_name(const std::string& parent, std::int64_t step, const std::vector<std::string>& taken);

/// The file a branch goes to when none is named: beside the parent, named after the
/// restart step (cylinder.branch40.h5, then -2, -3 ...), never an existing file but an
/// empty leftover.
std::string branch_name(const std::string& parent, std::int64_t step);
/// True if `file` is a Rewind file with no committed step that no live job claims: what a
/// job leaves that ended before its first step was committed (e.g. killed after an in-job
/// branch, while paused; or an empty file, as a job's claim makes it before the writer
/// does: kernel::FileClaim). It holds nothing to lose: a run or branch may write over it
/// without --force. Serial, read-only.
bool empty_leftover(const std::string& file);
/// True if a and b name the same file (or would, once created).
bool same_file(const std::string& a, const std::string& b);
/// Throws if an override changes a key the key table marks OnRestart::fixed (domain,
/// tree, run): a restart continues on the grids stored in the file. OnRestart::refines
/// keys too unless `refine_allowed` (`rewind run --restart`; not inside a job, whose
/// futures and steering share its grids).
void refuse_tree_overrides(const std::vector<std::string>& overrides, bool refine_allowed);
/// True if an override is a OnRestart::refines key ([[tree.refine]], tree.depth).
bool refines_tree(const std::string& override_kv);
/// The overrides that change the simulation: all but the keys the key table marks
/// OnRestart::extends (time.end, time.max_steps).
std::vector<std::string> changing_overrides(const std::vector<std::string>& overrides);

}  // namespace rwd::driver

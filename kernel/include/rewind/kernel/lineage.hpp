// Branch lineage: follow a branch file back through its parents, find branches of a file.
// Everything here is serial and read-only (files are opened with Reader::open(path)).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rewind/kernel/metadata.hpp"

namespace rwd::kernel {

/// One file in a lineage chain.
struct LineageNode {
  std::string path;                     ///< as resolved on disk
  Lineage lineage;                      ///< what the file's /common records
  std::vector<StepEntry> steps;         ///< committed steps of the file
  std::string error;                    ///< non-empty if the file could not be read
};

/// The chain from `path` back to the original run: element 0 is `path` itself, the last
/// element the root ancestor. A relative parent_file is resolved against the directory
/// of the child. Stops (with LineageNode::error set on the last element) at a missing
/// or unreadable parent, or at a cycle.
std::vector<LineageNode> lineage_chain(const std::string& path);

/// One continuous timeline for `path`: the parent's committed steps up to and including
/// the branch step, recursively, followed by the file's own steps. Each entry says which
/// file holds it.
struct TimelineEntry {
  std::string path;
  StepEntry step;
};
std::vector<TimelineEntry> timeline(const std::string& path);

/// A change of the steered settings (step attribute `case_overrides`, docs/file-format.md
/// §3) along a timeline: the step from which it is in force and what changed there, one
/// line each: "key=value" set or changed, "key back to the case's value" when a setting
/// is no longer overridden.
struct SteeringChange {
  std::string path;  ///< the file that holds the step
  StepEntry step;
  std::vector<std::string> changes;
};
/// Every change of the steered settings along `timeline` (a file's steps, or timeline()),
/// in order: the first step that carries overrides, and each step whose overrides differ
/// from the step before it in the same file (a branch's file starts from its own case, in
/// which its parent's steered settings are among its lineage changes). Damaged steps (StepEntry::damage) say nothing and are passed
/// over. Pure.
std::vector<SteeringChange> steering_changes(const std::vector<TimelineEntry>& timeline);

/// The entry `selector` names on a timeline (select_step's rule over its steps: `#i` the
/// i-th step of the timeline, `t=T` the step in force at T, `N` step N, `latest` the last);
/// where a branch's first step repeats its parent's branch step, the branch's. This is
/// the one rule for a branch's timeline (docs/file-format.md §6, "A branch's timeline"): `steer branch`
/// without a file and `rewind serve` of a branch use it. Pure; throws as select_step,
/// naming `file`.
TimelineEntry select_on_timeline(const std::vector<TimelineEntry>& timeline, const std::string& selector,
                                 const std::string& file);

/// `current@selector` when `selector` names a step of the file `current` on its timeline
/// (select_on_timeline; `pending`, if not null, a step about to be written to `current`
/// counts as its last), else `parent@N` (or `parent@t=T`) of the parent that holds it.
/// A parent that cannot be read leaves `current@selector`. Throws as select_step.
std::string timeline_spec(const std::string& current, const std::string& selector, const StepEntry* pending = nullptr);

/// Rewind files whose parent_file resolves to `path`: those in `directory`
/// (non-recursive, *.h5) and those `path`'s branch registry names, wherever they live.
/// Unreadable files and stale registry entries (a branch gone, moved, or now pointing
/// elsewhere) are skipped.
std::vector<std::string> find_branches(const std::string& path, const std::string& directory);

/// The branch registry of `parent`: the text file PARENT.branches beside it, one branch
/// path per line, relative to the parent's directory (docs/file-format.md, "Branch
/// registry"). The parent file itself is never opened for writing.
std::string branch_registry(const std::string& parent);
/// Appends `branch` to `parent`'s registry unless it is listed already: the registry is
/// replaced by a complete copy, so a failed write (a full disk) leaves it as it was, never
/// cut or empty. Serial; best effort: false (no exception, `why` set to the cause) when the
/// registry cannot be written, e.g. a read-only directory or a full disk; the branch is
/// then found only beside its parent.
bool register_branch(const std::string& branch, const std::string& parent, std::string* why = nullptr);

/// What breaks `path`'s chain back to its original run, one line each: a parent that
/// is missing or unreadable, or one that no longer holds the committed step the child
/// branched from (the parent was overwritten). Empty for an intact chain.
std::vector<std::string> lineage_problems(const std::string& path);

/// The branch tree as text, rooted at the original run of `path`'s chain, listing the
/// branches of each file (find_branches: beside it and in its registry), drawn with ├─ / └─,
/// times to 6 significant digits. `path` is marked "* (this file)". Used by `rewind lineage`.
std::string format_branch_tree(const std::string& path);

}  // namespace rwd::kernel

"""The branches of a run file and the timelines through it (RunFile.branches(),
RunFile.timelines()): the futures of a fork, the branches of a restart, each a timeline.

Branches are found by the kernel's rule (kernel::find_branches, docs/file-format.md §6,
"Branch registry"): the *.h5 files beside the run and the ones its registry
RUN.h5.branches names, kept when their lineage resolves to the run; unreadable files and
stale registry entries are skipped.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import h5py

from .errors import LineageError

if TYPE_CHECKING:
    from .reader import RunFile, Timeline


def _lineage_parent(path):
    """The parent `path`'s lineage resolves to (realpath), or None (an original run, or
    not a readable Rewind file)."""
    from .reader import Lineage  # reader imports this module on first use
    try:
        with h5py.File(path, "r") as f:
            attrs = dict(f["common/lineage"].attrs) if "common/lineage" in f else {}
    except (OSError, KeyError):
        return None
    parent = Lineage(path, attrs, []).parent_path
    return os.path.realpath(parent) if parent else None


def branch_paths(path: str) -> list[str]:
    """The files whose parent is `path` (kernel::find_branches), sorted, as found."""
    here = os.path.dirname(path) or "."
    candidates = {os.path.join(here, n) for n in os.listdir(here) if n.endswith(".h5")}
    try:
        with open(path + ".branches") as f:
            candidates |= {os.path.join(here, line.strip()) for line in f if line.strip()}
    except OSError:
        pass  # no registry: the branches beside the run only
    me = os.path.realpath(path)
    return sorted(c for c in candidates if os.path.realpath(c) != me and _lineage_parent(c) == me)


def timelines(run: RunFile) -> dict[str, Timeline]:
    """{path: Timeline} of `run` and of every branch below it (branches of branches too),
    `run` first: each the continuous history of that file through its parents. Raises
    LineageError on a cycle."""
    from .reader import RunFile
    out, todo, seen = {run.path: run.timeline()}, [run], {os.path.realpath(run.path)}
    while todo:
        for path in branch_paths(todo.pop().path):
            real = os.path.realpath(path)
            if real in seen:
                raise LineageError(f"{run.path}: lineage cycle at {path}")
            seen.add(real)
            branch = RunFile(path)
            out[path] = branch.timeline()
            todo.append(branch)
    return out

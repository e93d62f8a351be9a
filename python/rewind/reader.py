"""rewind.reader: Rewind run files (docs/file-format.md) read with h5py, lazily.

    run = rewind.open("cylinder.h5")   # reads the root attributes, /common and the step index
    run.steps                          # the committed steps (a Steps table: .step, .time, ...)
    run[0], run[-1]                    # a Step by position; run.step(200) by step number;
    run.at(2.0), run.at("t=2")         # the step in force at a time; run.select("#-1")
    run[-1]["u"]                       # a Field: the leaf grids' cells of u (read now)
    run[-1].grids(level=2)["p"]        # every grid of level 2; .level_cut(2): the LOD cut
    run.window(box, budget)            # a rewind.Window, as `rewind window` computes it
    run.lineage, run.parent, run.timeline(), run.timelines()

Nothing but /common and /simulation/index is read when a file is opened; a step's
topology when first needed; cell data when asked for. Values come as stored (float32 in a
float32 visualisation step, float64 otherwise); windows are float64, as a collector
sends them. A file is shown as it was when opened (HDF5 without SWMR): open it again to
see steps committed since. Every error is a rewind.RewindError naming the file (and the
step); the file is only ever opened read-only.
"""
import collections
import math
import os

import h5py
import numpy as np

from . import selection
from .windows import Window
from .errors import FileError, InvalidArgument, LineageError, NoSuchFile, NoSuchStep, UnknownVariable
from .grids import Field, Grids, Topology, _StepRows  # noqa: F401 - Field: rewind.reader's name too

FORMAT_NAME = "rewind-hgrid-h5"
FORMAT_MAJOR = 1
KINDS = ("visualisation", "checkpoint")  # the index's kind code -> name
NO_UID = (1 << 64) - 1


def open(path):  # noqa: A001 - rewind.open, as h5py.File / xarray.open_dataset
    """A RunFile (read-only). Raises NoSuchFile, or FileError for a file that is not a
    Rewind file of a major format version this package reads."""
    return RunFile(path)


def _text(v):
    """A fixed-length HDF5 string (bytes, null-padded) as str."""
    if isinstance(v, np.ndarray):
        return [_text(x) for x in v.reshape(-1)]
    return v.decode("utf-8").rstrip("\0") if isinstance(v, (bytes, np.bytes_)) else str(v)


class StepInfo(collections.namedtuple("StepInfo", "step time dt kind committed n_grids n_levels bytes")):
    """One row of the step list: step number, simulated time, dt, kind ("visualisation"
    or "checkpoint"), committed, grids, levels, bytes of all its datasets."""


class Steps:
    """The committed steps of a file in step order: a sequence of StepInfo, with columns
    as numpy arrays (steps.step, steps.time, steps.dt, steps.n_grids, ...) and
    steps.kind as a list of names."""

    def __init__(self, infos):
        self._infos = list(infos)
        for i, name in enumerate(StepInfo._fields):
            col = [s[i] for s in self._infos]
            setattr(self, name, col if name == "kind" else np.array(col, dtype=float if name in ("time", "dt") else None))

    def __len__(self):
        return len(self._infos)

    def __getitem__(self, i):
        return self._infos[i]

    def __iter__(self):
        return iter(self._infos)

    def __repr__(self):
        lines = [f"{'step':>10} {'time':>14} {'kind':<14} {'grids':>8} {'levels':>6} {'bytes':>12}"]
        lines += [f"{s.step:>10} {s.time:>14.6g} {s.kind:<14} {s.n_grids:>8} {s.n_levels:>6} {s.bytes:>12}"
                  for s in self._infos]
        return "\n".join(lines)


class Lineage:
    """Where a branch file came from (/common/lineage): parent_file as stored (relative
    to this file's directory; "" for an original run), parent_file_absolute (the hint
    recorded when branching), parent_step, parent_time, changes ("key=value" list);
    parent_path: the parent resolved by the kernel's rule (the stored path against this
    file's directory, else the absolute hint when that exists; None for an original run)."""

    def __init__(self, path, attrs, changes):
        self.parent_file = _text(attrs.get("parent_file", b""))
        self.parent_file_absolute = _text(attrs.get("parent_file_absolute", b""))
        self.parent_step = int(attrs.get("parent_step", -1))
        self.parent_time = float(attrs.get("parent_time", 0.0))
        self.changes = changes
        self.parent_path = _resolve_parent(path, self.parent_file, self.parent_file_absolute)

    @property
    def is_branch(self):
        return bool(self.parent_file)

    def __repr__(self):
        if not self.is_branch:
            return "<rewind.Lineage: original run>"
        return (f"<rewind.Lineage: branch of {self.parent_file} at step {self.parent_step} (t={self.parent_time:g})"
                f"{'; changed: ' + ' '.join(self.changes) if self.changes else ''}>")


def _dir_of(path):
    s = path.rfind("/")
    return "." if s < 0 else ("/" if s == 0 else path[:s])


def _resolve_parent(child, parent, absolute):
    """kernel/src/read/lineage.cpp resolve_parent: an absolute parent as is; a relative one
    against the child's directory, or the absolute hint if that is not there and it is."""
    if not parent or parent.startswith("/"):
        return parent or None
    p = _dir_of(child) + "/" + parent
    if not os.path.exists(p) and absolute and os.path.exists(absolute):
        return absolute
    return p


def _num(t):
    """A float as the kernel's messages print it (shortest round trip, no trailing .0)."""
    r = repr(float(t))
    return r[:-2] if r.endswith(".0") else r


def _parse_time(selector, path):
    """T of "t=T" (or of "T"), or NoSuchStep naming the bad selector."""
    text = selector[2:] if selector.startswith("t=") else selector
    try:
        t = float(text)
    except ValueError:
        t = float("nan")
    if not np.isfinite(t):
        raise NoSuchStep(f"{path}: bad time selector '{selector}' (t=T: a simulated time, e.g. t=1.5)")
    return t


def _index_at_or_before(times, t):
    """kernel::index_at_or_before: the last of the ascending `times` at or before t,
    within a relative 1e-12 (a time printed and parsed back finds its step); -1 if none."""
    limit = t * (1 + 1e-12) + 1e-300
    return int(np.searchsorted(np.asarray(times, dtype=float), limit, side="right")) - 1


class RunFile:
    """An open Rewind file (rewind.open). Attributes: path, format_version, creator,
    dim, block_cells (sx, sy, sz), refinement, max_children, domain ([xmin, xmax, ymin,
    ymax, zmin, zmax]), variables (names), units ({name: unit}), case_text,
    time_stepping and fluid (dicts), code_version, lineage, steps. A sequence of its
    committed steps: len(run), run[i], iteration. Close it (or use `with`)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise NoSuchFile(f"{self.path}: no such file")
        try:
            self._h5 = h5py.File(self.path, "r")
        except OSError as e:
            raise FileError(f"{self.path}: not an HDF5 file or not readable ({e})") from None
        try:
            self._read_header()
            self.steps = Steps(s for s in self._list_steps() if s.committed)
        except BaseException:
            self._h5.close()
            raise
        self._parent = None

    # --- what opening reads: root attributes, /common, the index -------------------

    def _read_header(self):
        f, p = self._h5, self.path
        fmt = _text(f.attrs.get("format", b""))
        if fmt != FORMAT_NAME:
            raise FileError(f"{p}: not a Rewind file (root attribute format is {fmt!r}, expected {FORMAT_NAME!r})")
        version = [int(x) for x in np.atleast_1d(f.attrs.get("format_version", [0, 0]))]
        if len(version) != 2 or version[0] > FORMAT_MAJOR:
            raise FileError(f"{p}: format version {'.'.join(map(str, version))} is newer than this reader "
                            f"({FORMAT_MAJOR}.x): update the rewind package")
        self.format_version = tuple(version)
        self.creator = _text(f.attrs.get("creator", b""))
        try:
            c = f["common"]
            a = c.attrs
            self.dim = int(a["dim"])
            self.block_cells = tuple(int(x) for x in a["block_cells"])
            self.refinement = int(a["refinement"])
            self.max_children = int(a["max_children"])
            self.domain = np.array(a["domain"], dtype=float)
            self.code_version = _text(a.get("code_version", b""))
            self.variables = _text(c["variable_names"][()])
            self.units = dict(zip(self.variables, _text(c["variable_units"][()])))
            self.case_text = _text(c["case_file"][()])[0] if c["case_file"].shape else ""
            self.time_stepping = {k: float(v) for k, v in c["time_stepping"].attrs.items()}
            self.fluid = {k: float(v) for k, v in c["fluid"].attrs.items()}
            lin = c["lineage"]
            self.lineage = Lineage(p, lin.attrs, _text(lin["changes"][()]) if "changes" in lin else [])
        except KeyError as e:
            raise FileError(f"{p}: /common lacks {e.args[0] if e.args else 'an object'} (damaged file?)") from None

    def _list_steps(self):
        """Every step group with its StepInfo: from the index where it has a committed row
        for the group, from the group's own attributes otherwise (the group attribute
        `committed` is authoritative; the index is written right after it)."""
        sim = self._h5.get("simulation")
        if sim is None:
            raise FileError(f"{self.path}: no /simulation group (damaged file?)")
        groups = {int(n[5:]): n for n in sim.keys() if n.startswith("step_") and n[5:].isdigit()}
        found = {}
        if "index" in sim:
            for r in sim["index"][()]:
                if r["committed"] == 1 and int(r["step"]) in groups:
                    kind = KINDS[r["kind"]] if r["kind"] < len(KINDS) else str(r["kind"])
                    found[int(r["step"])] = StepInfo(int(r["step"]), float(r["time"]), float(r["dt"]), kind, True,
                                                     int(r["n_grids"]), int(r["n_levels"]), int(r["bytes"]))
        for number, name in groups.items():
            if number not in found:
                found[number] = self._group_info(number, sim[name].attrs)
        return [found[k] for k in sorted(found)]

    @staticmethod
    def _group_info(number, a):
        try:
            return StepInfo(int(a["step"]), float(a["time"]), float(a["dt"]), _text(a["kind"]),
                            int(a["committed"]) == 1, int(a["n_grids"]), int(a["n_levels"]), int(a["bytes"]))
        except KeyError:  # a step killed while its group was created: not committed
            return StepInfo(number, float("nan"), float("nan"), "", False, 0, 0, 0)

    def all_steps(self):
        """Every step group in the file, committed or not (a writer killed mid-step leaves
        one uncommitted), as a Steps table; only committed ones can be read."""
        return Steps(self._list_steps())

    # --- the file as a sequence of committed steps -------------------------------------

    def __len__(self):
        return len(self.steps)

    def __iter__(self):
        return (Step(self, i) for i in range(len(self.steps)))

    def __getitem__(self, i):
        """Committed step(s) by position: run[0], run[-1], run[2:5] (a list)."""
        if isinstance(i, slice):
            return [Step(self, k) for k in range(len(self.steps))[i]]
        n = len(self.steps)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"steps are indexed by position (int or slice), not {type(i).__name__}: "
                            "run.step(N) takes a step number, run.at(T) a time")
        if not -n <= i < n:
            raise NoSuchStep(f"{self.path}: step index {i} out of range ({n} committed steps)")
        return Step(self, int(i) % n)

    def step(self, number):
        """The committed step numbered `number` (the N of FILE@N, the group step_N)."""
        hits = np.flatnonzero(self.steps.step == number)
        if not len(hits):
            raise NoSuchStep(f"{self.path}: no committed step {number}")
        return Step(self, int(hits[0]))

    def at(self, t):
        """The step in force at simulated time t (a number, or "t=T"): the last committed
        step at or before t, within a relative 1e-12 (kernel::Reader::find_step). Raises
        NoSuchStep for a time before the first step or after the last committed one (a
        time not reached yet)."""
        return self.select("t=" + _num(_parse_time(t, self.path) if isinstance(t, str) else t))

    def select(self, selector):
        """A committed step by the selector every rewind command takes (FILE@SEL,
        --time SEL): "latest", "N" (step number), "#i" (position, negative from the end)
        or "t=T" (the step in force at T). The kernel's rule and messages."""
        p, n, sel = self.path, len(self.steps), str(selector)
        if n == 0:
            raise NoSuchStep(f"{p}: the file has no committed step")
        if sel in ("", "latest"):
            return Step(self, n - 1)
        if sel.startswith("#"):
            try:
                i = int(sel[1:])
            except ValueError:
                raise NoSuchStep(f"{p}: bad step selector '{sel}' (#i: the i-th committed step, e.g. #0, #-1)") from None
            if not -n <= i < n:
                raise NoSuchStep(f"{p}: step index {sel} out of range (0..{n - 1})")
            return Step(self, i % n)
        if sel.startswith("t="):
            t = _parse_time(sel, p)
            best = _index_at_or_before(self.steps.time, t)
            if best < 0:
                raise NoSuchStep(f"{p}: no committed step at or before t={_num(t)}")
            last = self.steps[-1]
            if _index_at_or_before([t], last.time) < 0:
                raise NoSuchStep(f"{p}: t={_num(t)} has not been reached: the last committed step is {last.step} "
                                 f"(t = {last.time:.6g})")
            return Step(self, best)
        try:
            number = int(sel)
        except ValueError:
            raise NoSuchStep(f"{p}: bad step selector '{sel}' (use latest, N, #i or t=T)") from None
        return self.step(number)

    def _step_of(self, step):
        """A Step from a Step, a position (int) or a selector (str)."""
        if isinstance(step, Step):
            return step
        return self.select(step) if isinstance(step, str) else self[step]

    def window(self, box=None, budget=0, variables=None, step=-1, max_level=-1, lod="uniform"):
        """The sliding window of `step` (a position, default the last; a selector string
        such as "t=2" or "latest"; or a Step): Step.window."""
        return self._step_of(step).window(box, budget, variables, max_level, lod)

    # --- lineage -----------------------------------------------------------------

    @property
    def parent(self):
        """The parent RunFile of a branch (opened on first use, kept), None for an
        original run. Raises LineageError if it cannot be found or read."""
        if not self.lineage.is_branch:
            return None
        if self._parent is None:
            where = self.lineage.parent_path
            try:
                self._parent = RunFile(where)
            except FileError as e:
                raise LineageError(f"{self.path}: its parent {where} (stored as {self.lineage.parent_file!r}, "
                                   f"absolute hint {self.lineage.parent_file_absolute!r}) cannot be read: {e}") from None
        return self._parent

    def chain(self):
        """[this file, its parent, ..., the original run] (kernel::lineage_chain), as
        RunFiles. Raises LineageError at a missing or unreadable parent or a cycle."""
        out, seen = [self], {os.path.realpath(self.path)}
        while out[-1].lineage.is_branch:
            parent = out[-1].parent
            real = os.path.realpath(parent.path)
            if real in seen:
                raise LineageError(f"{self.path}: lineage cycle at {parent.path}")
            seen.add(real)
            out.append(parent)
        return out

    def timeline(self):
        """A branch's continuous history (kernel::timeline): each ancestor's committed
        steps up to and including the step the next file branched from, then this
        file's own; at the branch point the branch's own step stands (as the ParaView
        reader shows it), so times increase. An original run: its own steps."""
        chain = self.chain()
        entries = []
        for i in range(len(chain) - 1, -1, -1):
            f = chain[i]
            cut = chain[i - 1].lineage.parent_step if i > 0 else None
            for k, s in enumerate(f.steps):
                if cut is not None and s.step > cut:
                    continue
                if entries and s.time <= entries[-1][2].time:
                    entries.pop()  # a branch's step at its branch point replaces its parent's
                entries.append((f, k, s))
        return Timeline(self, entries)

    def timelines(self):
        """{path: Timeline} of this file and of every branch below it (the futures of a
        fork, restarts into other files; found as rewind.branches.branch_paths finds them)."""
        from .branches import timelines
        return timelines(self)

    # --- housekeeping ----------------------------------------------------------------

    def close(self):
        if self._parent is not None:
            self._parent.close()
        self._h5.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        kind = f"branch of {self.lineage.parent_file} at step {self.lineage.parent_step}" if self.lineage.is_branch \
            else "original run"
        span = f", t={self.steps.time[0]:g}..{self.steps.time[-1]:g}" if len(self.steps) else ""
        return (f"<rewind.RunFile {self.path}: {self.dim}-D, {len(self.steps)} committed steps{span}, "
                f"variables {', '.join(self.variables)}; {kind}>")

    # --- reading (for Step and Grids) -------------------------------------------------

    def _dataset(self, step, path):
        full = f"/simulation/step_{step.number:08d}/{path}"
        d = self._h5.get(full)
        if not isinstance(d, h5py.Dataset):
            raise FileError(f"{self.path}: step {step.number} has no dataset {path}")
        return d

    def _read(self, d, rows=None, gap=0):
        """Rows of dataset d (all if None), read as runs of consecutive rows; with gap > 0
        (rows ascending), runs at most `gap` rows apart are read as one span (one HDF5
        call per span: a window's topology rows are many short runs)."""
        try:
            if rows is None:
                return d[()]
            rows = np.asarray(rows, dtype=np.int64)
            if len(rows) == 0:
                return np.empty((0,) + d.shape[1:], dtype=d.dtype)
            cuts = np.flatnonzero(np.diff(rows) != 1) + 1 if gap <= 0 else np.flatnonzero(np.diff(rows) > gap + 1) + 1
            runs = np.split(rows, cuts)
            if gap <= 0:
                return np.concatenate([d[int(r[0]):int(r[-1]) + 1] for r in runs])
            return np.concatenate([d[int(r[0]):int(r[-1]) + 1][r - r[0]] for r in runs])
        except OSError as e:
            hint = ""
            if "filter" in str(e).lower():
                hint = (" -- it is compressed with an HDF5 filter this h5py cannot load: for zfp put Rewind's "
                        "build/lib/hdf5-plugins on HDF5_PLUGIN_PATH (docs/file-format.md, Compression)")
            raise FileError(f"{self.path}: cannot read {d.name}: {e}{hint}") from None


class Step:
    """One committed step of a RunFile: number, time, dt, kind, n_grids, n_levels,
    position (in run.steps), variables (the cell_data variables it stores, in the file's
    order: a visualisation step holds a chosen few), fields ({group: [names]}: cell_data,
    and previous_cell_data, ... in checkpoints), float32, case_overrides (settings steered
    in from this step on), leaf_grids_per_level, monitor_state, scalars (the code's named
    scalars, {name: value}, format 1.8); topology (read on first
    use). step["u"] is the leaves' u (a Field); grids(), leaves(), level_cut() select
    other grids; window() a sliding window."""

    def __init__(self, run, position):
        self.run, self.position = run, position
        self.info = run.steps[position]
        self.number, self.time, self.dt, self.kind = self.info.step, self.info.time, self.info.dt, self.info.kind
        self.n_grids, self.n_levels = self.info.n_grids, self.info.n_levels
        self._topology = None

    @property
    def _group(self):
        return self.run._h5[f"/simulation/step_{self.number:08d}"]

    def _attr(self, name, default):
        return self._group.attrs.get(name, default)

    @property
    def case_overrides(self):
        text = _text(self._attr("case_overrides", b""))
        return [line for line in text.split("\n") if line]

    @property
    def leaf_grids_per_level(self):
        return np.array(self._attr("leaf_grids_per_level", []), dtype=np.int64)

    @property
    def monitor_state(self):
        return np.array(self._attr("monitor_state", []), dtype=float)

    @property
    def scalars(self):
        """The code's named scalars of this step (its monitors: drag, energy, a residual),
        {name: value} in the order written; {} when it stores none (and before format 1.8)."""
        names = [line for line in _text(self._attr("scalar_names", b"")).split("\n") if line]
        values = np.atleast_1d(np.asarray(self._attr("scalar_values", []), dtype=float))
        if len(values) != len(names):
            raise ValueError(f"{self._group.name} names {len(names)} scalars but holds {len(values)} values")
        return {n: float(v) for n, v in zip(names, values)}

    @property
    def fields(self):
        g = self._group
        no_cells = ("statistics", "shares")  # per-grid groups, no field group
        return {k: sorted(g[k].keys()) for k in g if k not in no_cells and isinstance(g[k], h5py.Group)}

    def statistics(self, name):
        """The per-grid statistics of cell_data variable `name` (format 1.9; docs/file-format.md
        §3 "Statistics"): an (n_grids, 3) float64 array in row order, each grid's minimum and
        maximum over its non-solid cells (NaN: it has none) and its detail; None when the
        step stores none (files before 1.9, output.io.statistics = false)."""
        self._check_variable(name)
        if not self._has_statistics(name):
            return None
        return self.run._read(self.run._dataset(self, f"statistics/{name}"))

    def _has_statistics(self, name):
        return "/" not in name and "statistics" in self._group and name in self._group["statistics"]

    def range(self, name):
        """(min, max) of cell_data variable `name` over the non-solid cells of every grid of
        the step: from its statistics without reading a cell when it stores them, else from
        the cells."""
        st = self.statistics(name)
        if st is not None:
            lo, hi = st[:, 0], st[:, 1]
            ok = ~np.isnan(lo)
            return (float(lo[ok].min()), float(hi[ok].max())) if ok.any() else (math.nan, math.nan)
        values = self.run._read(self.run._dataset(self, f"cell_data/{name}"))
        if "cell_type" in self._group:
            values = values[self.run._read(self.run._dataset(self, "cell_type")) != 1]
        return (float(values.min()), float(values.max())) if values.size else (math.nan, math.nan)

    @property
    def variables(self):
        stored = set(self.fields.get("cell_data", []))
        return [v for v in self.run.variables if v in stored]

    @property
    def float32(self):
        g = self._group.get("cell_data")
        return bool(g is not None and any(g[v].dtype == np.float32 for v in g))

    @property
    def topology(self):
        if self._topology is None:
            self._topology = Topology(self.run, self)
        return self._topology

    def grids(self, level=None, leaves=False):
        """Grids of this step: all of them (level None), those of one level, the leaves
        (leaves=True), or the leaves of one level."""
        t = self.topology
        mask = np.ones(self.n_grids, dtype=bool) if level is None else (t.level == level)
        if leaves:
            mask &= t.is_leaf
        return Grids(self, np.flatnonzero(mask))

    def leaves(self):
        """The grids without children: the finest cells everywhere (what step["u"] reads)."""
        return self.grids(leaves=True)

    def level_cut(self, max_level):
        """The level-of-detail cut: every grid on max_level and every leaf above it (the
        ParaView reader's MaximumLevel; -1: the leaves), window::level_cut's rows."""
        t = self.topology
        rows = selection.level_cut(t.level, t.bbox, t.child_rows, self.run.block_cells, max_level)
        return Grids(self, np.array(rows, dtype=np.int64))

    def __getitem__(self, name):
        """The leaves' cells of variable `name` (a Field); "group/name" for another group
        of a checkpoint ("previous_cell_data/u")."""
        return self.leaves()[name]

    def _check_variable(self, name):
        group, _, var = name.rpartition("/")
        group = group or "cell_data"
        if var not in self.fields.get(group, []):
            stored = self.variables if group == "cell_data" else self.fields.get(group, [])
            raise UnknownVariable(f"{self.run.path}: step {self.number} does not store \"{name}\" "
                                  f"(it stores {', '.join(stored) or 'nothing'} in {group})")
        return f"{group}/{var}"

    def window(self, box=None, budget=0, variables=None, max_level=-1, lod="uniform"):
        """The sliding window of this step, computed here from the file exactly as
        `rewind window FILE@STEP` and `rewind serve` compute it (window::select, same
        pieces, same values): box ((x0, y0, z0), (x1, y1, z1)), None = the whole domain
        (lo == hi on an axis: a slice); budget: at most N cells (N values of each variable), 0 = unlimited;
        variables: names (None or [] = every variable the step stores); max_level: deepest
        level (-1 = no cap); lod: "uniform" (one level over the box, the paper's rule) or
        "adaptive" (the budget spent where the first variable changes most, pieces on
        several levels; by octants where the step stores shares, format 1.10, so a grid
        may be shown in part, as several pieces; a step without that variable's
        statistics answers with the uniform rule: the Window's `lod` says which answered). A rewind.Window (values
        float64, cell_type uint8)."""
        if lod not in selection.LODS:
            raise InvalidArgument(f'lod "{lod}" is not "uniform" or "adaptive"')
        run = self.run
        if box is None:
            d = run.domain
            box = ((d[0], d[2], d[4]), (d[1], d[3], d[5]))
        try:
            box = np.asarray(box, dtype=float).reshape(2, 3)
        except (TypeError, ValueError):
            raise InvalidArgument(f"box {box!r}: expected ((x0, y0, z0), (x1, y1, z1))") from None
        if isinstance(variables, str):
            variables = [variables]
        names = list(variables) if variables else self.variables
        paths = [self._check_variable(v) for v in names]
        # The whole topology if this step has read it, else only the rows the walk visits.
        t = self._topology
        detail = names[0] if lod == "adaptive" and names and self._has_statistics(names[0]) else None
        shares = detail if detail and "shares" in self._group and detail in self._group["shares"] else None
        if t is not None:
            d = run._read(run._dataset(self, f"statistics/{detail}"))[:, 2] if detail else None
            sh = run._read(run._dataset(self, f"shares/{shares}")) if shares else None
            tree = selection.Arrays(t.level, t.bbox, t.child_rows, d, sh)
        else:
            tree = _StepRows(run, self, detail, shares)
        sel = selection.select_rows(tree, run.block_cells, box, int(budget or 0), int(max_level), lod)
        rows, slots = sel.rows, sel.slots
        uid = t.uid[rows] if t is not None else run._read(run._dataset(self, "uid"), rows)
        arrays = [self._extract(sel, run._read(run._dataset(self, p), rows), np.float64) for p in paths]
        types = np.empty(0, dtype=np.uint8)
        if "cell_type" in self._group:
            types = self._extract(sel, run._read(run._dataset(self, "cell_type"), rows), np.uint8)
        pieces = [{"row": p["row"], "uid": int(uid[k]), **{key: p[key] for key in
                   ("level", "first", "count", "stride", "origin", "spacing")}} for p, k in zip(sel.pieces, slots)]
        meta = {"step": self.number, "time": self.time, "file": run.path, "level": sel.level, "stride": sel.stride,
                "box": sel.covered, "cells": sel.values, "pieces": pieces, "variables": names}
        if sel.lod != "uniform":
            meta["lod"] = sel.lod
        return Window(meta, arrays + [types])

    @staticmethod
    def _extract(sel, grids, dtype):
        """The pieces' cells out of their grids' rows (sel.rows, in order), x fastest."""
        out = np.empty(sel.values, dtype=dtype)
        at = 0
        for p, k in zip(sel.pieces, sel.slots):
            g = grids[k]
            (fx, fy, fz), (nx, ny, nz), k = p["first"], p["count"], p["stride"]
            cut = g[fz:fz + (nz - 1) * k + 1:k, fy:fy + (ny - 1) * k + 1:k, fx:fx + (nx - 1) * k + 1:k]
            out[at:at + cut.size] = cut.reshape(-1)
            at += cut.size
        return out

    def __repr__(self):
        return (f"<rewind.Step {self.number} (t={self.time:.6g}, {self.kind}) of {self.run.path}: "
                f"{self.n_grids} grids on {self.n_levels} levels, variables {', '.join(self.variables)}>")


class Timeline:
    """A branch's continuous history (RunFile.timeline()): a sequence of Steps, each
    from the file that holds it (parents opened on first use). entries: (path, StepInfo)
    pairs; times, steps: numpy arrays; paths; at(t): the step in force at t (the same
    rule as RunFile.at, across files)."""

    def __init__(self, run, entries):
        self.run, self._entries = run, entries
        self.paths = [f.path for f, _, _ in entries]
        self.entries = [(f.path, s) for f, _, s in entries]
        self.times = np.array([s.time for _, _, s in entries], dtype=float)
        self.steps = np.array([s.step for _, _, s in entries], dtype=np.int64)

    def __len__(self):
        return len(self._entries)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        f, k, _ = self._entries[range(len(self))[i]]
        return Step(f, k)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def at(self, t):
        t = _parse_time(t, self.run.path) if isinstance(t, str) else float(t)
        best = _index_at_or_before(self.times, t)
        if best < 0:
            raise NoSuchStep(f"{self.run.path}: no committed step at or before t={_num(t)} on its timeline")
        if _index_at_or_before([t], self.times[-1]) < 0:
            raise NoSuchStep(f"{self.run.path}: t={_num(t)} has not been reached: the timeline ends at step "
                             f"{self.steps[-1]} (t = {self.times[-1]:.6g}) of {self.paths[-1]}")
        return self[best]

    def __repr__(self):
        lines = [f"{'step':>10} {'time':>14}  file"]
        lines += [f"{s.step:>10} {s.time:>14.6g}  {p}" for p, s in self.entries]
        return "\n".join(lines)


"""rewind.selection: the sliding-window selection of rewind::window::select, in numpy.

The rule and its definitions are the data contract of
window/include/rewind/window/select.hpp (tolerance 1e-9 of the root's extent, slices,
"meets", candidates, the choice of the finest level L* whose cells in the box fit the
budget, coarser leaves filling gaps, the level-0 stride, and the adaptive level of detail: details, gains, the
two greedy walks and the choice between them; with shares, the octant walk of
rewind.octants); this module follows
window/src/select.cpp operation for operation, so a window of a file computed here has
the same pieces, bit for bit, as `rewind window FILE --out W.json` (tests/python checks
it). It works level by level on whole arrays instead of grid by grid.
"""
from __future__ import annotations

import heapq
from typing import Any, Sequence

import numpy as np

from . import octants
from .errors import FileError, InvalidArgument

REL_TOL = 1e-9
_AXES = "xyz"
LODS = ("uniform", "adaptive")


class Selection:
    """What select() chose: level (L*), stride (1, or k >= 2 at level 0), pieces (dicts
    sorted by row: row, level, first, count, stride, origin, spacing, cell; count and
    first per axis x, y, z), values (the sum of the pieces' cells) and covered
    ({"lo", "hi"}: the union of the returned cells; zeros when empty); lod, the rule that
    answered ("adaptive" only if asked for and the tree has details)."""

    def __init__(self, level: int, stride: int, pieces: list[dict[str, Any]], lod: str = "uniform"):
        self.level, self.stride = level, stride
        self.pieces = sorted(pieces, key=lambda p: (p["row"], p["first"][2], p["first"][1], p["first"][0]))
        self.lod = lod
        self.values = sum(int(np.prod(p["count"])) for p in self.pieces)
        lo, hi = [0.0] * 3, [0.0] * 3
        for i, p in enumerate(self.pieces):
            for a in range(3):
                plo = p["origin"][a]
                phi = p["origin"][a] + (p["count"][a] - 1) * p["spacing"][a] + p["cell"][a]
                lo[a] = plo if i == 0 else min(lo[a], plo)
                hi[a] = phi if i == 0 else max(hi[a], phi)
        self.covered = {"lo": lo, "hi": hi}

    @property
    def rows(self) -> list[int]:
        """The pieces' rows, each once (an octant walk's grid may give several pieces)."""
        out = []
        for p in self.pieces:
            if not out or out[-1] != p["row"]:
                out.append(p["row"])
        return out

    @property
    def slots(self) -> list[int]:
        """For each piece, the index of its row in rows."""
        out, slot = [], -1
        for i, p in enumerate(self.pieces):
            slot += 1 if i == 0 or p["row"] != self.pieces[i - 1]["row"] else 0
            out.append(slot)
        return out


class _Query:
    def __init__(self, root, cells, box):
        lo, hi = (np.asarray(b, dtype=float).reshape(3) for b in box)
        for a in range(3):
            if not (np.isfinite(lo[a]) and np.isfinite(hi[a])):
                raise InvalidArgument(f"the box has a NaN or infinite bound on {_AXES[a]}")
            if lo[a] > hi[a]:
                raise InvalidArgument(f"the box has lo > hi on {_AXES[a]} ({lo[a]!r} > {hi[a]!r})")
        self.lo, self.hi, self.cells = lo, hi, cells
        self.tol = [REL_TOL * (root[2 * a + 1] - root[2 * a]) for a in range(3)]
        self.dom_hi = [root[2 * a + 1] for a in range(3)]
        self.slice = [hi[a] - lo[a] <= 2 * self.tol[a] for a in range(3)]
        self.slice_at = [0.5 * (lo[a] + hi[a]) for a in range(3)]


def _cells_in_box(bbox, q):
    """(first, end, meets) of the grids with boxes `bbox` (m, 6): the cells [first, end)
    per axis meeting the box (index arithmetic equal to the per-cell "meets" rule)."""
    m = len(bbox)
    first, end = np.zeros((m, 3), dtype=np.int64), np.zeros((m, 3), dtype=np.int64)
    for a in range(3):
        s, tol = q.cells[a], q.tol[a]
        g0, g1 = bbox[:, 2 * a], bbox[:, 2 * a + 1]
        h = (g1 - g0) / s
        if q.slice[a]:
            p = q.slice_at[a]
            f = np.floor((p + tol - g0) / h)
            closing = (np.abs(g1 - q.dom_hi[a]) <= tol) & (abs(p - q.dom_hi[a]) <= tol)
            f = np.where(closing & (f >= s - 1), float(s - 1), f)
            e = f + 1
        else:
            f = np.floor((q.lo[a] + tol - g0) / h)
            e = np.ceil((q.hi[a] - tol - g0) / h)
        first[:, a] = np.clip(f, 0.0, float(s)).astype(np.int64)
        end[:, a] = np.clip(e, 0.0, float(s)).astype(np.int64)
    meets = np.all(end > first, axis=1)
    return first, end, meets


def _piece(row, level, g, cells, first, count, stride):
    """The piece of grid `row` (on `level`, box `g`) cropped to cells first + count."""
    cell = [(g[2 * a + 1] - g[2 * a]) / cells[a] for a in range(3)]
    return {"row": int(row), "level": int(level), "first": [int(x) for x in first],
            "count": [int(x) for x in count], "stride": int(stride),
            "origin": [float(g[2 * a] + int(first[a]) * cell[a]) for a in range(3)],
            "spacing": [float(cell[a] * stride) for a in range(3)], "cell": [float(c) for c in cell]}


def _strided_root(level, g, cells, first, end, budget):
    """Level 0 overflowed: the smallest stride k >= 2 on the root's cell-0 lattice that fits."""
    k = 2
    while True:
        f0, count, values = [], [], 1
        for a in range(3):
            f = (int(first[a]) + k - 1) // k * k
            n = (int(end[a]) - 1 - f) // k + 1 if f < end[a] else 0
            f0.append(f if n > 0 else int(first[a]))
            count.append(max(n, 1))
            values *= count[-1]
        if values <= budget:
            return _piece(0, level, g, cells, f0, count, k)
        k += 1


class Arrays:
    """A whole topology in memory (level, bbox, child_rows: one entry per row; detail, one
    per row or None) as a row source for select_rows: what select() walks."""

    def __init__(self, level: np.ndarray, bbox: np.ndarray, child_rows: np.ndarray, detail: np.ndarray | None = None,
                 shares: np.ndarray | None = None):
        self.n, self.level, self.bbox, self.child_rows = len(level), level, bbox, child_rows
        self.max_children = child_rows.shape[1] if child_rows.ndim == 2 else 0
        self.has_detail, self._detail = detail is not None, detail
        self.has_shares, self._shares = shares is not None, shares
        if detail is not None and len(detail) != self.n:
            raise InvalidArgument(f"the tree has {len(detail)} details for {self.n} rows")
        if shares is not None and shares.shape != (self.n, self.max_children):
            raise InvalidArgument(f"the tree has shares of shape {shares.shape} for {self.n} rows of "
                                  f"{self.max_children} octants")

    def read(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.level[rows], self.bbox[rows], self.child_rows[rows]

    def detail(self, rows: np.ndarray) -> np.ndarray:
        return self._detail[rows]

    def shares(self, rows: np.ndarray) -> np.ndarray:
        return self._shares[rows]


def _gain(row, d, g, cells, children):
    """select.hpp's gain: d^2 times the volume of one child cell, in select.cpp's order."""
    d = float(d)
    if not (d >= 0) or not np.isfinite(d):
        raise InvalidArgument(f"the detail of row {row} is negative or not finite ({d!r})")
    cell = ((float(g[1]) - float(g[0])) / cells[0]) * ((float(g[3]) - float(g[2])) / cells[1]) \
        * ((float(g[5]) - float(g[4])) / cells[2])
    return d * d * (cell / int(children))


def _refine(tree, q, cells, budget, cap, hits, gain):
    """One greedy walk of the adaptive rule from `hits` (row, level, bbox, child rows,
    first, end) whose refined ancestors gained `gain`: (its grids, its total gain), grid
    by grid in select.cpp's order."""
    values, out, heap = 0, [], []

    def offer(batch):
        nonlocal values
        details = tree.detail(np.array([h[0] for h in batch], dtype=np.int64)) if batch else []
        for h, d in zip(batch, details):
            row, lv, g, ch, f, e = h
            values += int(np.prod(e - f))
            children = int((ch >= 0).sum())
            if lv < cap and children:
                heapq.heappush(heap, (-_gain(row, d, g, cells, children), row, h))
            else:
                out.append(h)

    offer(hits)
    while heap:
        key, row, h = heapq.heappop(heap)
        kids = h[3][h[3] >= 0]
        if (kids >= tree.n).any():
            raise FileError(f"row {row} names child row {int(kids[kids >= tree.n][0])}, which is out of range")
        order = np.sort(kids)
        klv, kbb, kch = (a[np.searchsorted(order, kids)] for a in tree.read(order))
        if (klv != h[1] + 1).any():
            raise FileError(f"row {row} names child row {int(kids[klv != h[1] + 1][0])}, which is not on the next level")
        kf, ke, km = _cells_in_box(kbb, q)
        more = int(np.prod(ke[km] - kf[km], axis=1).sum()) - int(np.prod(h[5] - h[4]))
        if budget > 0 and values + more > budget:
            out.append(h)
            continue
        gain += -key
        values -= int(np.prod(h[5] - h[4]))
        offer([(int(k), int(l), b, c, f, e) for k, l, b, c, f, e in zip(kids[km], klv[km], kbb[km], kch[km], kf[km], ke[km])])
    return out, gain


def _by_octants(tree, q, cells, budget, cap, root_range, at, hits) -> Selection:
    """The octant walk's answer (select_octants.cpp) from the uniform one (`hits` on level
    `at`) and from the root (its cells in the box `root_range`): the larger gain."""
    def box_range(g):
        f, e, m = _cells_in_box(np.asarray(g, dtype=float).reshape(1, 6), q)
        return (f[0], e[0]) if m[0] else None

    def piece(row, lv, g, fr, count):
        return _piece(row, lv, g, cells, fr, count, 1)

    values = sum(int(np.prod(h[5] - h[4])) for h in hits)
    pu, gu = octants.Walk(tree, cells, box_range, piece, budget, cap).from_uniform(root_range, at, values)
    pr, gr = octants.Walk(tree, cells, box_range, piece, budget, cap).from_root(root_range)
    pieces = pr if gr > gu else pu
    return Selection(max([at] + [p["level"] for p in pieces]), 1, pieces, "adaptive")


def select(level: np.ndarray, bbox: np.ndarray, child_rows: np.ndarray, cells: Sequence[int],
           box: Sequence[Sequence[float]], budget: int = 0, max_level: int = -1, lod: str = "uniform",
           detail: np.ndarray | None = None, shares: np.ndarray | None = None) -> Selection:
    """The cells answering a window on one step's tree (select.hpp's select()).

    level (n,) int, bbox (n, 6), child_rows (n, nc) with -1 = none: a step's topology
    (rows level-major, row 0 the root); cells: cells per grid (sx, sy, sz); box:
    (lo, hi), each (x, y, z); budget: at most N cells (N values of each variable), 0 = unlimited;
    max_level: deepest level returned (-1 = no cap); lod: "uniform" (the paper's rule)
    or "adaptive" (refined where `detail`, one value per row, is largest, or with
    `shares`, (n, nc), by octants; without either, the uniform rule answers). Returns a Selection. Raises InvalidArgument for a
    box with NaN or lo > hi, a negative budget or max_level < -1, an unknown lod, a
    negative or non-finite detail, FileError for a tree whose child rows are out of
    range or on the wrong level."""
    return select_rows(Arrays(level, bbox, child_rows, detail, shares), cells, box, budget, max_level, lod)


def select_rows(tree: Any, cells: Sequence[int], box: Sequence[Sequence[float]], budget: int = 0, max_level: int = -1,
                lod: str = "uniform") -> Selection:
    """select() on a tree whose rows are read as the walk reaches them (select.hpp's
    RowSource): `tree` has n (rows) and read(rows) -> (level, bbox, child_rows) of those
    rows (ascending, distinct, in range). Reads the root and the last row, then on each
    level the children of the grids it keeps (all of them, even if the walk stops there),
    so a window's cost follows its budget and box, not the step. An adaptive window asks
    tree.detail(rows) (if tree.has_detail) for the rows it keeps, and reads the children
    of the grids it tries to refine, one grid at a time."""
    if lod not in LODS:
        raise InvalidArgument(f"lod must be one of {', '.join(LODS)}, got {lod!r}")
    n = tree.n
    if n == 0:
        raise FileError("the step has no grids")
    if budget < 0:
        raise InvalidArgument(f"the budget must be >= 0 (0 = unlimited), got {budget}")
    if max_level < -1:
        raise InvalidArgument(f"max_level must be >= -1 (-1 = no cap), got {max_level}")
    level, bbox, child_rows = tree.read(np.array([0] if n == 1 else [0, n - 1], dtype=np.int64))
    q = _Query(bbox[0], cells, box)
    deepest = int(level[-1])
    cap = deepest if max_level < 0 else min(max_level, deepest)
    limited = budget > 0
    first, end, meets = _cells_in_box(bbox[:1], q)
    by_octants = lod == "adaptive" and octants.applies(tree, cells)
    lod = "adaptive" if lod == "adaptive" and (getattr(tree, "has_detail", False) or by_octants) else "uniform"
    if not meets[0]:
        return Selection(cap, 1, [], lod)
    if limited and int(np.prod(end[0] - first[0])) > budget:
        p = _strided_root(level[0], bbox[0], cells, first[0], end[0], budget)
        return Selection(0, p["stride"], [p], lod)
    # Invariant at level L: `leaves` = leaves at levels < L meeting the box, `frontier` =
    # grids at level L meeting the box (rows, their level, bbox and child rows, the cells
    # [f, e) in the box), and count(L) <= budget.
    leaves = []
    frontier = (np.zeros(1, dtype=np.int64), level[:1], bbox[:1], child_rows[:1], first, end)
    leaf_values = 0
    uniform_gain = 0.0  # of the grids the uniform answer refines (adaptive only)
    at = 0
    while at < cap:
        rows, lv, bb, ch, f, e = frontier
        leaf = np.all(ch < 0, axis=1)
        next_leaf_values = leaf_values + int(np.prod(e[leaf] - f[leaf], axis=1).sum())
        kids = ch[~leaf].ravel()
        kids = kids[kids >= 0]
        if (kids >= n).any():
            raise FileError(f"a grid names child row {int(kids[kids >= n][0])}, which is out of range or not on level {at + 1}")
        loaded = np.unique(kids)
        klv, kbb, kch = (a[np.searchsorted(loaded, kids)] for a in tree.read(loaded))
        bad = klv != at + 1
        if bad.any():
            raise FileError(f"a grid names child row {int(kids[bad][0])}, which is out of range or not on level {at + 1}")
        kf, ke, km = _cells_in_box(kbb, q)
        next_values = int(np.prod(ke[km] - kf[km], axis=1).sum())
        if limited and next_leaf_values + next_values > budget:
            break  # count(at + 1) > budget: L* = at
        leaves.append(tuple(x[leaf] for x in frontier))
        if lod == "adaptive" and not by_octants and (~leaf).any():
            for row, g, c, d in zip(rows[~leaf], bb[~leaf], ch[~leaf], tree.detail(rows[~leaf])):
                uniform_gain += _gain(int(row), d, g, cells, int((c >= 0).sum()))
        leaf_values = next_leaf_values
        frontier = (kids[km], klv[km], kbb[km], kch[km], kf[km], ke[km])
        at += 1
    hits = [(int(row), int(l), g, ch, fr, er) for rows, lv, bb, chs, f, e in leaves + [frontier]
            for row, l, g, ch, fr, er in zip(rows, lv, bb, chs, f, e)]
    if by_octants:
        return _by_octants(tree, q, cells, budget, cap, (first[0], end[0]), at, hits)
    if lod == "adaptive":
        hits, gain = _refine(tree, q, cells, budget, cap, hits, uniform_gain)
        root_hits, root_gain = _refine(tree, q, cells, budget, cap,
                                       [(0, int(level[0]), bbox[0], child_rows[0], first[0], end[0])], 0.0)
        hits = root_hits if root_gain > gain else hits
        at = max([at] + [h[1] for h in hits])
    pieces = [_piece(row, l, g, cells, fr, er - fr, 1) for row, l, g, _, fr, er in hits]
    return Selection(at, 1, pieces, lod)


def level_cut(level: np.ndarray, bbox: np.ndarray, child_rows: np.ndarray, cells: Sequence[int],
              max_level: int = -1) -> list[int]:
    """The rows of the level-of-detail cut (select.hpp's level_cut()): every grid on
    max_level plus every leaf above it (max_level -1: all leaves), sorted by row."""
    root = bbox[0]
    box = ((root[0], root[2], root[4]), (root[1], root[3], root[5]))
    return select(level, bbox, child_rows, cells, box, 0, max_level).rows

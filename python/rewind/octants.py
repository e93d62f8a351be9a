"""rewind.octants: the adaptive walk over octants of rewind::window::select, in numpy.

window/include/rewind/window/select.hpp, "Octants", is the contract; this module follows
window/src/select_octants.cpp operation for operation (the same units offered in the same
order, the same sums of gains), so a window computed here has the same pieces, bit for
bit, as `rewind window FILE --lod adaptive` (tests/python checks it).
"""
from __future__ import annotations

import heapq

import numpy as np

from .errors import FileError, InvalidArgument


def applies(tree, cells) -> bool:
    """Whether the octant walk answers: shares, max_children 2, 4 or 8, refined axes' cell
    counts divisible by 4."""
    axes = {2: 1, 4: 2, 8: 3}.get(int(tree.max_children), 0)
    return axes > 0 and getattr(tree, "has_shares", False) and all(cells[a] % 4 == 0 for a in range(axes))


class _Range:
    __slots__ = ("first", "end")

    def __init__(self, first, end):
        self.first, self.end = list(first), list(end)

    def empty(self):
        return any(e <= f for f, e in zip(self.first, self.end))

    def cells(self):
        return 0 if self.empty() else int(np.prod([e - f for f, e in zip(self.first, self.end)]))


class _Shown:
    __slots__ = ("mask", "range", "kid")

    def __init__(self):
        self.mask, self.range, self.kid = 0, None, None


class Walk:
    """One walk (select_octants.cpp's Octants): `tree` a row source with n, max_children,
    read(rows) -> (level, bbox, child_rows) and shares(rows) -> (m, max_children);
    `box_range(bbox)` the cells of a grid in the box as (first, end) or None; `piece(row,
    level, bbox, first, count)` a piece dict."""

    def __init__(self, tree, cells, box_range, piece, budget, cap):
        self.t, self.cells, self.box_range, self.piece = tree, cells, box_range, piece
        self.budget, self.cap = budget, cap
        self.axes = {2: 1, 4: 2, 8: 3}[int(tree.max_children)]
        self.half = [cells[a] // 2 if a < self.axes else cells[a] for a in range(3)]
        self.cut, self.heap, self.values, self.gain = {}, [], 0, 0.0
        self.rows = {}  # row -> (level, bbox, child_rows, shares)

    # -- rows ------------------------------------------------------------------------
    def load(self, rows):
        need = np.array(sorted({int(r) for r in rows if int(r) not in self.rows}), dtype=np.int64)
        if len(need) == 0:
            return
        level, bbox, child_rows = self.t.read(need)
        shares = self.t.shares(need)
        for i, r in enumerate(need):
            self.rows[int(r)] = (int(level[i]), bbox[i], child_rows[i], shares[i])

    def range_of(self, row):
        fe = self.box_range(self.rows[row][1])
        return _Range([0, 0, 0], [0, 0, 0]) if fe is None else _Range(*fe)

    def all(self):
        return (1 << (1 << self.axes)) - 1

    def open(self, g):
        s = self.cut.setdefault(g, _Shown())
        if s.kid is not None:
            return
        s.kid = [-1] * 8
        lv, gb, ch, _ = self.rows[g]
        kids = [int(k) for k in ch if k >= 0]
        if any(k >= self.t.n for k in kids):
            bad = next(k for k in kids if k >= self.t.n)
            raise FileError(f"row {g} names child row {bad}, which is out of range or not on the next level")
        self.load(kids)
        for k in kids:
            klv, kb = self.rows[k][0], self.rows[k][1]
            if klv != lv + 1:
                raise FileError(f"row {g} names child row {k}, which is out of range or not on the next level")
            o = 0
            for a in range(self.axes):
                if kb[2 * a] - gb[2 * a] > 0.25 * (gb[2 * a + 1] - gb[2 * a]):
                    o |= 1 << a
            s.kid[o] = k

    def part(self, rng, o, sub, parts):
        r = _Range(rng.first, rng.end)
        for a in range(self.axes):
            n = 2 * self.half[a] // parts
            i = (o >> a & 1) if parts == 2 else 2 * (o >> a & 1) + (sub >> a & 1)
            r.first[a] = max(r.first[a], i * n)
            r.end[a] = min(r.end[a], (i + 1) * n)
        return r

    def gain_of(self, row, o):
        d = float(self.rows[row][3][o])
        if not (d >= 0) or not np.isfinite(d):
            raise InvalidArgument(f"the share of row {row} in octant {o} is negative or not finite ({d!r})")
        g, s = self.rows[row][1], self.cells
        return d * d * (((float(g[1]) - float(g[0])) / s[0]) * ((float(g[3]) - float(g[2])) / s[1])
                        * ((float(g[5]) - float(g[4])) / s[2]))

    # -- the walk ----------------------------------------------------------------------
    def offer_children(self, g):
        if self.rows[g][0] >= self.cap:
            return
        self.open(g)
        s = self.cut[g]
        for o in range(8):
            if s.mask >> o & 1:
                self.offer(s.kid[o], g, o)

    def offer(self, k, p, po):
        if k < 0 or self.rows[k][0] > self.cap:
            return
        kr = self.range_of(k)
        if kr.empty():
            return
        for o in range(1 << self.axes):
            mine = self.part(kr, o, 0, 2)
            if mine.empty():
                continue
            more = mine.cells() - self.part(self.cut[p].range, po, o, 4).cells()
            heapq.heappush(self.heap, (-self.gain_of(k, o), k, o, more))

    def from_root(self, root_range):
        self.load([0])
        r = self.cut.setdefault(0, _Shown())
        r.mask, r.range = self.all(), _Range(*root_range)
        self.values = r.range.cells()
        self.offer_children(0)
        return self.run()

    def from_uniform(self, root_range, at, values):
        self.load([0])
        r = self.cut.setdefault(0, _Shown())
        r.mask, r.range = self.all(), _Range(*root_range)
        self.values = values
        frontier = [0]
        for _ in range(at):
            nxt = []
            for g in frontier:
                self.open(g)
                for o in range(8):
                    k = self.cut[g].kid[o]
                    if k < 0:
                        continue
                    kr = self.range_of(k)
                    if kr.empty():
                        continue
                    s = self.cut.setdefault(k, _Shown())
                    s.range = kr
                    for ko in range(1 << self.axes):
                        if not self.part(kr, ko, 0, 2).empty():
                            s.mask |= 1 << ko
                            self.gain += self.gain_of(k, ko)
                    nxt.append(k)
            frontier = sorted(nxt)
        for g in frontier:
            self.offer_children(g)
        return self.run()

    def run(self):
        while self.heap:
            neg, row, o, more = heapq.heappop(self.heap)
            if self.budget > 0 and self.values + more > self.budget:
                continue
            self.values += more
            self.gain += -neg
            s = self.cut.setdefault(row, _Shown())
            if s.mask == 0:
                s.range = self.range_of(row)
            s.mask |= 1 << o
            if self.rows[row][0] >= self.cap:
                continue
            self.open(row)
            self.offer(self.cut[row].kid[o], row, o)
        pieces = []
        for row, s in self.cut.items():
            pieces += self.pieces_of(row, s)
        return pieces, self.gain

    # -- pieces --------------------------------------------------------------------------
    def state(self, row, s, b):
        o = sub = 0
        for a in range(self.axes):
            o |= (b[a] >> 1) << a
            sub |= (b[a] & 1) << a
        if self.part(s.range, o, sub, 4).empty():
            return 0
        if row != 0 and not (s.mask >> o & 1):
            return 2
        k = s.kid[o] if s.kid is not None else -1
        if k >= 0 and k in self.cut and self.cut[k].mask >> sub & 1:
            return 2
        return 1

    def pieces_of(self, row, s):
        if s.range is None or s.range.empty() or (row != 0 and s.mask == 0):
            return []
        n = [4 if a < self.axes else 1 for a in range(3)]
        st = np.zeros((4, 4, 4), dtype=np.int8)
        for z in range(n[2]):
            for y in range(n[1]):
                for x in range(n[0]):
                    st[z, y, x] = self.state(row, s, (x, y, z))
        out = []
        for z in range(n[2]):
            for y in range(n[1]):
                for x in range(n[0]):
                    if st[z, y, x] != 1:
                        continue
                    lo, hi = [x, y, z], [x + 1, y + 1, z + 1]
                    for a in range(3):
                        while hi[a] < n[a]:
                            l2, h2 = list(lo), list(hi)
                            l2[a], h2[a] = hi[a], hi[a] + 1
                            if (st[l2[2]:h2[2], l2[1]:h2[1], l2[0]:h2[0]] > 1).any():
                                break
                            hi[a] += 1
                    st[lo[2]:hi[2], lo[1]:hi[1], lo[0]:hi[0]] = 3
                    r = _Range(s.range.first, s.range.end)
                    for a in range(3):
                        size = self.half[a] // 2 if a < self.axes else self.half[a]
                        r.first[a] = max(r.first[a], lo[a] * size)
                        r.end[a] = min(r.end[a], hi[a] * size)
                    if r.empty():
                        continue
                    lv, bb = self.rows[row][0], self.rows[row][1]
                    out.append(self.piece(row, lv, bb, r.first, [e - f for f, e in zip(r.first, r.end)]))
        return out

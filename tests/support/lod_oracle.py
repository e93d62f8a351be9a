"""The level-of-detail oracle: what a Rewind file's leaves imply for every coarser grid.

Independent of Rewind's own reading code: h5py and numpy only, from the stored datasets
(bounding_box, child_rows, cell_data) and nothing else. A parent cell is the average of
the child cells it covers (docs/file-format.md §9); applied bottom up, every grid with
children has one value per cell implied by the leaves below it. `implied()` computes
those values; `check_step()` compares them with what the file stores.

usage:
  lod_oracle.py FILE.h5 [--step N ...]           check every committed step (or the given)
  lod_oracle.py FILE.h5 --window W.json          check a `rewind window --out W.json` dump
                                                  (offline or live) against the leaves of
                                                  its step, value by value
Exit 0 when everything agrees, 1 with one line per disagreement, 2 on bad input.
"""
import argparse
import json
import sys

import h5py
import numpy as np

F64_REL = 1e-12            # the bound for double-precision steps
F32_REL = 4 * 2.0 ** -24   # a float32 step stores f32(average) next to f32 children


def committed_steps(h5):
    """Step numbers of the committed steps, in file order."""
    index = h5["/simulation/index"][:]
    return [int(r["step"]) for r in index if int(r["committed"]) == 1]


def step_group(h5, step):
    return h5[f"/simulation/step_{step:08d}"]


class Topology:
    """Rows, boxes and links of one step, as stored."""

    def __init__(self, g, block):
        self.block = block  # (sx, sy, sz)
        self.bbox = g["bounding_box"][:]
        self.child_rows = g["child_rows"][:]
        self.level = g["level"][:]
        self.uid = g["uid"][:]
        self.n = len(self.level)

    def children(self, row):
        return [int(c) for c in self.child_rows[row] if c >= 0]

    def spacing(self, row):
        b = self.bbox[row]
        return np.array([(b[1] - b[0]) / self.block[0], (b[3] - b[2]) / self.block[1], (b[5] - b[4]) / self.block[2]])

    def placement(self, parent, child):
        """(offset in parent cells, coarsening factor) per axis x, y, z for `child`."""
        hp, hc = self.spacing(parent), self.spacing(child)
        ratio = np.rint(hp / hc).astype(int)
        pb, cb = self.bbox[parent], self.bbox[child]
        off = np.rint((np.array([cb[0], cb[2], cb[4]]) - np.array([pb[0], pb[2], pb[4]])) / hp).astype(int)
        if np.any(ratio < 1) or np.any(np.abs(ratio * hc - hp) > 1e-9 * hp):
            raise ValueError(f"row {child}: spacing {hc} is no refinement of its parent row {parent}'s {hp}")
        return off, ratio


def coarsen(a, ratio):
    """Mean over ratio-sized blocks of a (z, y, x) array; ratio is (rx, ry, rz)."""
    rx, ry, rz = (int(r) for r in ratio)
    z, y, x = a.shape
    return a.reshape(z // rz, rz, y // ry, ry, x // rx, rx).mean(axis=(1, 3, 5))


def implied(topo, data):
    """For every row, the values its leaves imply: stored values for leaves, for a grid
    with children the average of its children's implied values over the cells each
    covers. `data` is the (ng, sz, sy, sx) array of one variable, read as float64."""
    out = [None] * topo.n
    for row in sorted(range(topo.n), key=lambda r: -int(topo.level[r])):
        kids = topo.children(row)
        if not kids:
            out[row] = data[row]
            continue
        acc = np.zeros(data.shape[1:])
        covered = np.zeros(data.shape[1:], dtype=int)
        for c in kids:
            off, ratio = topo.placement(row, c)
            part = coarsen(out[c], ratio)
            z, y, x = part.shape
            sl = (slice(off[2], off[2] + z), slice(off[1], off[1] + y), slice(off[0], off[0] + x))
            acc[sl] += part
            covered[sl] += 1
        if np.any(covered != 1):
            raise ValueError(f"row {row}: its children cover some cells {covered.min()}..{covered.max()} times")
        out[row] = acc
    return out


def tolerance(ds, values):
    scale = max(float(np.max(np.abs(values))) if values.size else 0.0, 1e-300)
    if "zfp_accuracy" in ds.attrs:
        return 2.0 * float(ds.attrs["zfp_accuracy"]) + F32_REL * scale * (ds.dtype == np.float32)
    return (F32_REL if ds.dtype == np.float32 else F64_REL) * scale


def block_of(h5):
    b = h5["/common"].attrs["block_cells"]
    return (int(b[0]), int(b[1]), int(b[2]))


def check_step(h5, step):
    """Disagreements (one line each, at most one per variable) of one step: parents that
    are not the average their leaves imply."""
    g = step_group(h5, step)
    topo = Topology(g, block_of(h5))
    problems = []
    for name, ds in g["cell_data"].items():
        data = ds[:].astype(np.float64)
        want = implied(topo, data)
        tol = tolerance(ds, data)
        bad, worst, worst_row = 0, 0.0, -1
        for row in range(topo.n):
            if not topo.children(row):
                continue
            err = float(np.max(np.abs(data[row] - want[row])))
            if err > tol:
                bad += 1
                if err > worst:
                    worst, worst_row = err, row
        if bad:
            problems.append(f"step {step} {name}: {bad} parent grids differ from the average of their leaves "
                            f"(worst row {worst_row}, level {int(topo.level[worst_row])}: |diff| {worst:.3g} > {tol:.3g})")
    return problems


def parents_checked(h5, step):
    g = step_group(h5, step)
    return int(np.sum(np.any(g["child_rows"][:] >= 0, axis=1)))


def check_window(h5, dump):
    """A window dump against its step's leaves: every piece's values (any level) equal to
    what the leaves imply for that grid, within the step's tolerance."""
    with open(dump) as f:
        w = json.load(f)
    g = step_group(h5, w["step"])
    if abs(float(g.attrs["time"]) - w["time"]) > 1e-12 * max(1.0, abs(w["time"])):
        return [f"{dump}: step {w['step']} has time {g.attrs['time']}, the window says {w['time']}"]
    topo = Topology(g, block_of(h5))
    row_of = {int(u): r for r, u in enumerate(topo.uid)}
    problems = []
    for v, name in enumerate(w["variables"]):
        ds = g["cell_data"][name]
        data = ds[:].astype(np.float64)
        want = implied(topo, data)
        tol = tolerance(ds, data)
        offset = 0
        for p in w["pieces"]:
            row = p["row"] if p["row"] >= 0 else row_of[p["uid"]]
            (fx, fy, fz), (cx, cy, cz), s = p["first"], p["count"], p["stride"]
            n = cx * cy * cz
            expect = want[row][fz:fz + cz * s:s, fy:fy + cy * s:s, fx:fx + cx * s:s].ravel()
            got = np.array(w["values"][v][offset:offset + n], dtype=np.float64)
            # a window may be served in float32 (a float32 step): compare at that precision
            t = max(tol, F32_REL * float(np.max(np.abs(expect)) if n else 0.0)) if ds.dtype == np.float32 else tol
            if got.shape != expect.shape or np.any(np.abs(got - expect) > t):
                err = float(np.max(np.abs(got - expect))) if got.shape == expect.shape else float("inf")
                problems.append(f"{dump}: {name} row {row} (level {p['level']}) differs from its leaves' average "
                                f"by {err:.3g} (> {t:.3g})")
                break
            offset += n
    return problems, w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--step", type=int, action="append", default=None)
    ap.add_argument("--window", action="append", default=None)
    a = ap.parse_args()
    try:
        h5 = h5py.File(a.file, "r")
    except OSError as e:
        print(f"lod_oracle: {a.file}: {e}", file=sys.stderr)
        return 2
    with h5:
        if a.window:
            bad = 0
            for dump in a.window:
                problems, w = check_window(h5, dump)
                for p in problems:
                    print("WRONG", p)
                bad += len(problems)
                if not problems:
                    print(f"ok {dump}: step {w['step']}, level {w['level']}, {len(w['pieces'])} pieces, "
                          f"{w['cells']} cells: every value equals the average of its leaves")
            return 1 if bad else 0
        steps = a.step if a.step else committed_steps(h5)
        problems = []
        for s in steps:
            problems += check_step(h5, s)
        for p in problems:
            print("WRONG", p)
        if not problems:
            print(f"ok {a.file}: {len(steps)} steps, {parents_checked(h5, steps[-1])} parent grids each: "
                  f"every parent equals the average of its leaves")
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""How far the adaptive level of detail is from the best a budget can buy, over the whole
domain: the greedy selection of window/select.hpp ("Walks", "Choice": from the uniform
answer and from the root, the larger gain) against the optimum of the same problem found
exactly by dynamic programming over the tree (a tree knapsack: every grid either shown or
replaced by its children, each child's subtree given part of the budget). Both in the
selection's own terms (select.hpp, "Gain": refining grid g removes d(g)^2 * the volume of
one child cell from the squared L2 error against the leaves, parents being the averages
of their children), read with h5py from a step's statistics; printed as the relative
error ratio against the uniform rule, sqrt((E - gain) / (E - uniform gain)), E the total
of every grid's gain (the error of showing the root alone). Budgets whose uniform answer
is the root strided (the root alone does not fit) are skipped.

    bench/window/lod_ceiling.py FILE STEP VAR BUDGET...

docs/benchmarks.md, "Adaptive windows of files" (the files: tests/apps/cli_statistics.sh's
runs). Pure Python over the statistics; no window is fetched.
"""
import heapq
import math
import sys

import h5py
import numpy as np


def load(path, step, var):
    with h5py.File(path, "r") as f:
        s = f[f"/simulation/step_{step:08d}"]
        kids = [[int(c) for c in row if c >= 0] for row in s["child_rows"][:]]
        detail = s[f"statistics/{var}"][:, 2]
        box = s["bounding_box"][:]
        shape = s["cell_data"][var].shape[1:]  # (sz, sy, sx)
    cells = int(np.prod(shape))
    gain = np.zeros(len(kids))
    for r, k in enumerate(kids):
        if k:
            b = box[r]
            vol = np.prod([(b[2 * a + 1] - b[2 * a]) / shape[2 - a] for a in range(3) if b[2 * a + 1] > b[2 * a]])
            gain[r] = detail[r] ** 2 * vol / len(k)
    return kids, gain, cells


def uniform(kids, gain, cells, budget):
    """The uniform rule's answer (grids shown) and the gain of the grids it refined."""
    frontier, leaves, g = [0], [], 0.0
    while True:
        nxt = [c for r in frontier for c in kids[r]]
        if not nxt or (len(leaves) + len(frontier) - sum(1 for r in frontier if kids[r]) + len(nxt)) * cells > budget:
            return leaves + frontier, g
        g += sum(gain[r] for r in frontier if kids[r])
        leaves += [r for r in frontier if not kids[r]]
        frontier = nxt


def greedy(kids, gain, cells, budget, start, g0):
    """One walk of select.hpp: the largest gain first, refined if its children still fit."""
    shown, heap, total = len(start) * cells, [], g0
    for r in start:
        if kids[r]:
            heapq.heappush(heap, (-gain[r], r))
    while heap:
        g, r = heapq.heappop(heap)
        more = (len(kids[r]) - 1) * cells
        if shown + more > budget:
            continue
        total, shown = total - g, shown + more
        for c in kids[r]:
            if kids[c]:
                heapq.heappush(heap, (-gain[c], c))
    return total


def optimum(kids, gain, cells, budget):
    """The largest total gain of any cut within the budget (units: grids)."""
    units, none = budget // cells, -math.inf
    best = {}
    for r in range(len(kids) - 1, -1, -1):  # rows are level-major: every child before its parent
        f = np.full(units + 1, none)
        f[1:] = 0.0  # shown
        if kids[r]:
            acc = np.full(units + 1, none)
            acc[0] = 0.0
            for c in kids[r]:
                fc, new = best.pop(c), np.full(units + 1, none)
                for a in np.nonzero(acc > none)[0]:
                    for b in np.nonzero(fc[1:units + 1 - a] > none)[0] + 1:
                        new[a + b] = max(new[a + b], acc[a] + fc[b])
                acc = new
            f = np.maximum(f, acc + gain[r])
        best[r] = f
    return best[0].max()


def main():
    path, step, var = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    kids, gain, cells = load(path, step, var)
    total = gain.sum()
    print(f"{path} step {step} {var}: {len(kids)} grids of {cells} cells; error ratio against uniform")
    for budget in (int(b) for b in sys.argv[4:]):
        if budget < cells:
            print(f"  budget {budget}: the root strided (both rules)")
            continue
        shown, gu = uniform(kids, gain, cells, budget)
        gg = max(greedy(kids, gain, cells, budget, shown, gu), greedy(kids, gain, cells, budget, [0], 0.0))
        go = optimum(kids, gain, cells, budget)
        ratio = lambda g: math.sqrt(max(total - g, 0.0) / max(total - gu, 1e-300))  # noqa: E731
        print(f"  budget {budget}: greedy {ratio(gg):.3f}, optimum {ratio(go):.3f}")


if __name__ == "__main__":
    main()

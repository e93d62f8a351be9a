"""Tables of the sliding-window benchmark from run.sh's log: medians over rounds of each
latency, and medians of the per-round ratios (both contenders measured in that round)."""
import statistics
import sys
from collections import defaultdict

from pagecache import parse_plan


def main(path):
    m = defaultdict(dict)  # (stem, who, cache, budget) -> {round: ms}
    values = {}            # (stem, who, budget) -> values returned
    vzoom = {}
    for line in open(path):
        w = line.split()
        if w and w[0] == "m":
            m[(w[2], w[3], w[4], int(w[5]))][int(w[1])] = float(w[6])
            values[(w[2], w[3], int(w[5]))] = int(w[7])
        elif w and w[0] == "vzoom":
            vzoom[(w[1], int(w[2]))] = w[3:]
    plan = parse_plan(path)
    budgets = sorted({b for _, b in plan})
    stems = sorted({s for s, _ in plan}, key=lambda s: plan[(s, budgets[0])]["leaf"][0])

    def fmt(x, d):
        return "–" if x is None else f"{x:.{d}f}"

    def med(s, who, cache, b, d=2):
        v = m.get((s, who, cache, b))
        return fmt(statistics.median(v.values()) if v else None, d)

    def ratio(num, den, d=1):
        """Median over rounds of num/den; num, den = (stem, who, cache, budget)."""
        a, b = m.get(num, {}), m.get(den, {})
        r = [a[k] / b[k] for k in a if k in b and b[k] > 0]
        return fmt(statistics.median(r) if r else None, d) + "×"

    def pair(s, b, who, peer, cache, bp=None, d=1):
        """'who ms | peer ms | peer/who' for one step, budget and cache state."""
        bp = b if bp is None else bp
        return f"{med(s, who, cache, b)} | {med(s, peer, cache, bp, 2 if d else 0)} | {ratio((s, peer, cache, bp), (s, who, cache, b), d)}"

    def level(p, key="level"):
        return f"{p[key]}" + (f" (stride {p['stride']})" if key == "level" and p["stride"] > 1 else "")

    rounds = max((len(v) for v in m.values()), default=0)
    print(f"# {rounds} rounds; ms = median over rounds; ratios = median of the per-round ratios\n")

    def table(title, header, rows):
        print(f"\n## {title}\n")
        print("| " + " | ".join(header) + " |")
        print("|---|" + "---:|" * (len(header) - 1))
        for r in rows:
            print(f"| {r} |")

    grid = [(s, b) for s in stems for b in budgets]
    leaf = {s: "×".join(str(n) for n in plan[(s, budgets[0])]["leaf"]) for s in stems}
    table("rewind window vs (a) whole step + subsample ((a)/rewind: how many times faster rewind is)",
          ["step (leaf cells)", "budget", "values", "level", "rewind_open warm ms", "rewind warm ms", "(a) warm ms",
           "(a)/rewind warm", "rewind cold ms", "(a) cold ms", "(a)/rewind cold"],
          [f"{s} ({leaf[s]}) | {b:.0e} | {plan[(s, b)]['values']} | {level(plan[(s, b)])} | {med(s, 'rewind_open', 'warm', b)} | "
           f"{pair(s, b, 'rewind', 'whole', 'warm')} | {pair(s, b, 'rewind', 'whole', 'cold')}" for s, b in grid])
    table("rewind window vs OpenVisus (same field as IDX, same box and value count; visus/rewind > 1: rewind faster)",
          ["step", "budget", "values", "rewind_open warm ms", "visus_open warm ms", "visus_open/rewind_open", "rewind warm ms",
           "visus warm ms", "visus/rewind warm", "rewind cold ms", "visus cold ms", "visus/rewind cold"],
          [f"{s} | {b:.0e} | {plan[(s, b)]['values']} | {pair(s, b, 'rewind_open', 'visus_open', 'warm', d=2)} | "
           f"{pair(s, b, 'rewind', 'visus', 'warm', d=2)} | {pair(s, b, 'rewind', 'visus', 'cold', d=2)}"
           for s, b in grid if (s, "visus", "warm", b) in m])
    top = budgets[-1]
    table("(b) stock ParaView (pvpython) opens the VTKHDF view of the whole step: one variable, every level",
          ["step", "cells read", f"rewind warm ms (budget {top:.0e})", "pvpython warm ms", "pvpython/rewind warm", "rewind cold ms",
           "pvpython cold ms", "pvpython/rewind cold"],
          [f"{s} | {values.get((s, 'paraview', 0), '–')} | {pair(s, top, 'rewind', 'paraview', 'warm', bp=0, d=0)} | "
           f"{pair(s, top, 'rewind', 'paraview', 'cold', bp=0, d=0)}" for s in stems if (s, "paraview", "warm", 0) in m])
    table("Zoom: a box of 1/64 of the domain's volume, same budget",
          ["step", "budget", "whole domain: level, values", "box: level, values", "box cells finer per axis",
           "OpenVisus box at the whole read's resolution: values, finer per axis"],
          [f"{s} | {b:.0e} | {level(plan[(s, b)])}, {plan[(s, b)]['values']} | {level(plan[(s, b)], 'zoom_level')}, "
           f"{plan[(s, b)]['zoom_values']} | {plan[(s, b)]['finer']:g}× | "
           + (f"{vzoom[(s, b)][1]}, {float(vzoom[(s, b)][5]):g}×" if (s, b) in vzoom else "–") for s, b in grid])

if __name__ == "__main__":
    main(sys.argv[1])

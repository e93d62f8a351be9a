"""rewind.selection's adaptive windows equal rwd::window::select's, piece by piece and bit
for bit, on the random trees, details and windows tests/window/adaptive_cases.cpp writes;
and the same trees without details answer with the uniform rule; half the trees carry
shares (the octant walk).
   python -m pytest tests/python/test_adaptive.py [--window-cases PATH]   (rewind from python/)"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))
from rewind import selection  # noqa: E402


def cases(lines):
    """(cells, level, bbox, child_rows, detail, windows) per tree; windows: (box, budget,
    max_level, level, stride, pieces as tuples)."""
    i = 0
    while i < len(lines):
        _, sx, sy, sz, mc, n, with_shares = lines[i].split()
        mc, n = int(mc), int(n)
        rows = [line.split() for line in lines[i + 1:i + 1 + n]]
        i += 1 + n
        level = np.array([int(r[0]) for r in rows], dtype=np.int32)
        bbox = np.array([[float(x) for x in r[1:7]] for r in rows])
        child_rows = np.array([[int(x) for x in r[7:7 + mc]] for r in rows], dtype=np.int64)
        detail = np.array([float(r[7 + mc]) for r in rows])
        shares = np.array([[float(x) for x in r[8 + mc:8 + 2 * mc]] for r in rows]) if with_shares == "1" else None
        windows = []
        while i < len(lines) and lines[i].startswith("window"):
            w = lines[i].split()[1:]
            _, lv, stride, count = lines[i + 1].split()
            pieces = [tuple(float(x) if "." in x or "e" in x else int(x) for x in line.split())
                      for line in lines[i + 2:i + 2 + int(count)]]
            windows.append(((tuple(map(float, w[0:3])), tuple(map(float, w[3:6]))), int(w[6]), int(w[7]),
                            int(lv), int(stride), pieces))
            i += 2 + int(count)
        yield (int(sx), int(sy), int(sz)), level, bbox, child_rows, detail, shares, windows


def as_tuple(p):
    return (p["row"], p["level"], *p["first"], *p["count"], p["stride"], *p["origin"], *p["spacing"])


def test_adaptive_windows_equal_cpp(request):
    out = subprocess.run([request.config.getoption("window_cases")], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    failures, compared, refined, by_octants = 0, 0, 0, 0
    for t, (cells, level, bbox, child_rows, detail, shares, windows) in enumerate(cases(out)):
        for box, budget, max_level, lv, stride, pieces in windows:
            mine = selection.select(level, bbox, child_rows, cells, box, budget, max_level, "adaptive", detail, shares)
            uniform = selection.select(level, bbox, child_rows, cells, box, budget, max_level)
            fallback = selection.select(level, bbox, child_rows, cells, box, budget, max_level, "adaptive")
            same = (mine.level, mine.stride, [as_tuple(p) for p in mine.pieces]) == (lv, stride, pieces)
            if not same or mine.lod != "adaptive" or fallback.lod != "uniform" or fallback.rows != uniform.rows:
                failures += 1
                print(f"FAIL tree {t} box {box} budget {budget} max_level {max_level}: C++ level {lv} "
                      f"{[p[0] for p in pieces]}, Python level {mine.level} {mine.rows}")
            compared += 1
            refined += mine.rows != uniform.rows
            by_octants += shares is not None and len(mine.pieces) > len(mine.rows)
    print(f"{'FAIL' if failures else 'ok  '} {compared - failures} of {compared} adaptive windows equal "
          f"rwd::window::select's piece by piece ({refined} differ from the uniform rule's, {by_octants} show a "
          f"grid in several pieces)")
    if by_octants < compared // 20:
        print("FAIL too few windows show grids in part to compare the octant walk")
        failures += 1
    if refined < compared // 5:
        print("FAIL too few windows where the adaptive rule changes the answer to compare anything")
        failures += 1
    assert failures == 0, f"{failures} failure(s) (FAIL lines above)"

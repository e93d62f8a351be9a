"""Checks a `rewind window --out X.json` dump against the HDF5 file read directly with
h5py: every piece's uid and level, and every value and cell type, bit for bit; and the
colour ranges it carries (if any: a file step's statistics, a live state's since protocol
1.13): each variable's min and max with numpy over the non-solid cells of the whole grids
shown. Live
windows (pieces with row -1) are matched to the step's rows by uid. The file and the
window could agree and both be wrong, so every value is also checked against what the
step's leaves imply at its level (tests/support/lod_oracle.py: parents are the average
of their children, computed with numpy from the leaves).

usage: check_window.py FILE.h5 WINDOW.json [OTHER.json ...]   (others must be identical)
"""
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import lod_oracle  # noqa: E402


def check(h5, dump):
    with open(dump) as f:
        w = json.load(f)
    step = h5[f"/simulation/step_{w['step']:08d}"]
    assert abs(step.attrs["time"] - w["time"]) == 0, "time differs"
    offset = 0
    assert w["cells"] == sum(int(np.prod(p["count"])) for p in w["pieces"]), "cells != sum of pieces"
    assert w["cells"] > 0, "empty window"
    row_of = {int(u): r for r, u in enumerate(step["uid"][:])}
    for p in w["pieces"]:
        row = p["row"] if p["row"] >= 0 else row_of[p["uid"]]  # live windows: row -1, found by uid
        assert int(step["uid"][row]) == p["uid"], f"uid of row {row}"
        assert int(step["level"][row]) == p["level"], f"level of row {row}"
        (fx, fy, fz), (cx, cy, cz), s = p["first"], p["count"], p["stride"]
        n = cx * cy * cz
        def cut(ds):
            return ds[row][fz:fz + cz * s:s, fy:fy + cy * s:s, fx:fx + cx * s:s].ravel()
        for v, name in enumerate(w["variables"]):
            want = cut(step["cell_data"][name])
            got = np.array(w["values"][v][offset:offset + n], dtype=np.float64)
            assert want.shape == got.shape, f"{name}: piece row {row} shape"
            assert np.array_equal(want, got), f"{name}: piece row {row} values differ"
        if w["cell_type"]:
            types = np.array(w["cell_type"][offset:offset + n])
            if "cell_type" in step:
                assert np.array_equal(cut(step["cell_type"]), types), f"cell_type row {row}"
            else:  # a code that writes no cell types: every cell is fluid (0)
                assert not types.any(), f"cell_type row {row}: the file has none, the window says some are not fluid"
        offset += n
    check_ranges(step, w, row_of)
    problems, _ = lod_oracle.check_window(h5, dump)
    assert not problems, problems[0]
    return w


def check_ranges(step, w, row_of):
    """The window's "ranges" against numpy: min and max over the non-solid cells
    (cell_type != 1) of every grid a piece shows, whole grids (None where none)."""
    if not w.get("ranges"):
        assert all(p["row"] >= 0 for p in w["pieces"]), "a live window without its colour ranges (protocol 1.13)"
        return
    rows = sorted({p["row"] if p["row"] >= 0 else row_of[p["uid"]] for p in w["pieces"]})
    fluid = None
    if "cell_type" in step:
        fluid = np.stack([step["cell_type"][r] for r in rows]) != 1
    for name, got in w["ranges"].items():
        values = np.stack([step["cell_data"][name][r] for r in rows]).astype(np.float64)
        if fluid is not None:
            values = values[fluid]
        want = [float(values.min()), float(values.max())] if values.size else [None, None]
        assert got == want, f"{name}: range {got}, numpy over the shown grids' non-solid cells {want}"


def main():
    with h5py.File(sys.argv[1], "r") as h5:
        first = check(h5, sys.argv[2])
        for other in sys.argv[3:]:
            o = check(h5, other)
            for k in ("step", "level", "stride", "cells", "pieces", "values", "cell_type"):
                assert first[k] == o[k], f"{other}: {k} differs from {sys.argv[2]}"
    print(f"ok {sys.argv[2]}: level {first['level']}, {len(first['pieces'])} pieces, {first['cells']} cells, "
          f"{len(first['variables'])} variables, every value equal to the file and to the average of its leaves"
          + (", the colour ranges to numpy's" if first.get("ranges") else ""))


if __name__ == "__main__":
    main()

"""Checks a `rewind window --out X.json` dump against the HDF5 file read directly with
h5py: every piece's uid and level, and every value and cell type, bit for bit. Live
windows (pieces with row -1) are matched to the step's rows by uid.

usage: check_window.py FILE.h5 WINDOW.json [OTHER.json ...]   (others must be identical)
"""
import json
import sys

import h5py
import numpy as np


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
            assert np.array_equal(cut(step["cell_type"]), np.array(w["cell_type"][offset:offset + n])), f"cell_type row {row}"
        offset += n
    return w


def main():
    with h5py.File(sys.argv[1], "r") as h5:
        first = check(h5, sys.argv[2])
        for other in sys.argv[3:]:
            o = check(h5, other)
            for k in ("step", "level", "stride", "cells", "pieces", "values", "cell_type"):
                assert first[k] == o[k], f"{other}: {k} differs from {sys.argv[2]}"
    print(f"ok {sys.argv[2]}: level {first['level']}, {len(first['pieces'])} pieces, {first['cells']} cells, "
          f"{len(first['variables'])} variables, every value equal to the file")


if __name__ == "__main__":
    main()

"""One window of a paused live run asked twice, over codec none and over zstd: the
replies must be identical, array for array (the collector writes codec none from the
memory it shares with the compute ranks, zstd from arrays received over MPI).

    same_window_codecs.py PORT
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from rewind.client import Client  # noqa: E402

port = int(sys.argv[1])
box = ((0, 0, 0), (2.2, 0.41, 0))
with Client("127.0.0.1", port, timeout=60, codec="none") as a, Client("127.0.0.1", port, timeout=60, codec="zstd") as b:
    for budget, names in ((3000, ["p", "u", "v"]), (500, ["p"])):
        x, y = a.window(box, budget, names), b.window(box, budget, names)
        assert x.step == y.step and x.cells == y.cells and x.pieces == y.pieces, "different windows"
        for n in names:
            assert np.array_equal(x.values[n], y.values[n]), f"{n} differs"
        assert np.array_equal(x.cell_type, y.cell_type), "cell types differ"
        print(f"ok {x.cells} cells of {names} at step {x.step}: none == zstd")

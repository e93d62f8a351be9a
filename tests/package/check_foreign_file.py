"""The file examples/kernel/foreign_writer.cpp writes, read with h5py and numpy only (no
Rewind code): steps 1, 2, 3 committed, 9 grids each (a root and its 8 children), every
cell of the grid with UID u in step s equal to 300 + (u % 97) + s.
   check_foreign_file.py FILE"""
import sys

import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    steps = sorted(k for k in f["simulation"] if k.startswith("step_"))
    assert steps == ["step_00000001", "step_00000002", "step_00000003"], steps
    for s, name in enumerate(steps, start=1):
        step = f["simulation"][name]
        assert int(step.attrs["committed"]) == 1, f"{name} not committed"
        uid = step["uid"][...].astype(np.uint64)
        data = step["cell_data/temperature"][...]
        assert data.shape == (9, 8, 8, 8), data.shape
        assert len(set(int(u) for u in uid)) == 9, uid
        for row, u in enumerate(uid):
            want = 300.0 + float(int(u) % 97) + s
            assert np.all(data[row] == want), f"{name}: row {row} (uid {int(u):#x}) differs from {want}"
print(f"h5py: {sys.argv[1]}: steps 1-3, 9 grids each, every value as written")

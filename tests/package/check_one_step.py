"""The file one_step wrote, read with h5py and numpy only (no Rewind code): one committed
step, 9 grids, every cell of the grid with UID u at row r equal to 1000 * (u & 0xff) + c + 0.25.
   check_one_step.py FILE"""
import sys

import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    steps = [k for k in f["simulation"] if k.startswith("step_")]
    assert steps == ["step_00000001"], steps
    step = f["simulation/step_00000001"]
    assert int(step.attrs["committed"]) == 1, "step 1 not committed"
    uid = step["uid"][...]
    data = step["cell_data/temperature"][...]
    assert data.shape == (9, 4, 4, 4), data.shape
    assert sorted(int(u) & 0xff for u in uid) == list(range(9)), uid
    cells = np.arange(64, dtype=np.float64).reshape(4, 4, 4)
    for row, u in enumerate(uid):
        want = 1000.0 * (int(u) & 0xff) + cells + 0.25
        assert np.array_equal(data[row], want), f"row {row} (uid {int(u):#x}) differs"
print(f"h5py: {sys.argv[1]}: step 1, 9 grids, every value as written")

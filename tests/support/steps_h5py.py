"""steps_h5py.py FILE: "STEP:TIME:KIND" of every step group of a Rewind file, in step
order on one line, read by h5py alone (no Rewind code: an independent oracle). Fails
(exit 1, with the reason) if a step group is not committed or holds a cell value that is
not finite."""
import sys

import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    out = []
    for name in sorted(f["simulation"]):
        if not name.startswith("step_"):
            continue
        g = f["simulation"][name]
        if int(g.attrs["committed"]) != 1:
            sys.exit(f"{name}: not committed")
        for v in g["cell_data"]:
            if not np.isfinite(g["cell_data"][v][...]).all():
                sys.exit(f"{name}/cell_data/{v}: a value that is not finite")
        kind = g.attrs["kind"]
        kind = kind.decode() if isinstance(kind, bytes) else str(kind)
        out.append("%d:%.9g:%s" % (g.attrs["step"], g.attrs["time"], kind))
    print(" ".join(out))

"""The h5py + numpy oracle of float32 input (rewind_grids_set_field_float; no Rewind
code): capi_roundtrip writes the same leaves as double arrays into OUT.h5 and as float32
arrays into OUT.h5.float.h5. In the float file, step 1 (a checkpoint) stores every leaf
value as double, equal to the double file's value rounded to float32; step 2 (a float32
visualisation step of psi) stores float32 values equal to the double file's. Parents
are checked by lod_oracle.py. Exit 0 when all hold.
  float_oracle.py OUT.h5 OUT.h5.float.h5"""
import sys

import h5py
import numpy as np


def leaves(f, step):
    g = f[f"simulation/step_{step:08d}"]
    return np.all(g["child_rows"][...] < 0, axis=1)


def main():
    bad = []
    with h5py.File(sys.argv[1], "r") as d, h5py.File(sys.argv[2], "r") as f:
        for step, var, dtype in ((1, "phi", np.float64), (1, "psi", np.float64), (2, "psi", np.float32)):
            name = f"simulation/step_{step:08d}/cell_data/{var}"
            got, want = f[name], d[name][...]
            leaf = leaves(f, step)
            if got.dtype != dtype:
                bad.append(f"{name}: stored as {got.dtype}, expected {np.dtype(dtype)}")
            elif not np.array_equal(got[...][leaf], want[leaf].astype(np.float32).astype(dtype)):
                bad.append(f"{name}: the leaves differ from the double file's values rounded to float32")
            elif var == "phi" and np.array_equal(want[leaf], want[leaf].astype(np.float32)):
                bad.append(f"{name}: the double file's values are float32 already: nothing was tested")
    print("\n".join(bad) if bad else "float32 input stored as the file's type, values as given")
    return 1 if bad else 0


sys.exit(main())

"""The h5py oracle of tests/api/capi_misuse.c: after every refused call, the file holds
exactly the good steps the program committed, with the values it wrote. h5py and numpy
only (no Rewind code).

usage: misuse_oracle.py FILE.h5      exit 0 when all holds, 1 with one line per difference
"""
import sys

import h5py
import numpy as np

S = 4  # cells per grid and axis (capi_misuse.c)
WANT = {1: (0.0, 1, ("T", "u")), 2: (0.1, 1, ("T", "u")), 3: (0.2, 0, ("T",))}  # step: time, kind, variables


def value(uid, var, step):
    """capi_misuse.c's value(): cell (i, j) of grid uid, as (z, y, x)."""
    j, i = np.meshgrid(np.arange(S), np.arange(S), indexing="ij")
    return (step * 1000.0 + var * 100.0 + float(uid) + (i + S * j) / 64.0).reshape(1, S, S)


def problems(path):
    out = []
    with h5py.File(path, "r") as h5:
        index = h5["/simulation/index"][:]
        rows = [(int(r["step"]), float(r["time"]), int(r["kind"])) for r in index if int(r["committed"]) == 1]
        want = [(s, t, k) for s, (t, k, _) in sorted(WANT.items())]
        if rows != want:
            out.append(f"index: committed (step, time, kind) {rows}, want {want}")
        groups = sorted(n for n in h5["/simulation"] if n.startswith("step_"))
        if groups != [f"step_{s:08d}" for s in WANT]:
            out.append(f"step groups {groups}: a refused call left one behind")
        for step, (time, _, names) in WANT.items():
            g = h5.get(f"/simulation/step_{step:08d}")
            if g is None:
                continue
            if g.attrs["time"] != time:
                out.append(f"step {step}: time {g.attrs['time']}, want {time}")
            if sorted(g["cell_data"]) != sorted(names):
                out.append(f"step {step}: variables {sorted(g['cell_data'])}, want {sorted(names)}")
            uids = g["uid"][:]
            if sorted(int(u) for u in uids) != [1, 10, 11, 12, 13, 20, 21, 22, 23]:
                out.append(f"step {step}: uids {sorted(int(u) for u in uids)}")
            for var, name in enumerate(("T", "u")):
                if name not in g["cell_data"]:
                    continue
                d = g["cell_data"][name]
                f32 = step == 3
                if d.dtype != (np.float32 if f32 else np.float64):
                    out.append(f"step {step} {name}: stored as {d.dtype}")
                cells = d[()]
                for row, uid in enumerate(uids):
                    expect = value(uid, var, step).astype(np.float32 if f32 else np.float64)
                    if not np.array_equal(cells[row], expect):
                        out.append(f"step {step} {name}: grid {uid} holds {cells[row].ravel()[:3]}..., want {expect.ravel()[:3]}...")
    return out


if __name__ == "__main__":
    found = problems(sys.argv[1])
    for p in found:
        print(p)
    print("ok: exactly steps 1, 2, 3 with the values written" if not found else f"{len(found)} problems")
    sys.exit(1 if found else 0)

#!/usr/bin/python3
"""Max error of a run of tests/support/immersed-channel.toml against the analytic
Poiseuille profile, from the file's leaf cells with h5py + numpy (not Rewind's reader).

  channel_oracle.py FILE.h5 LIMIT     exit 0 if max |u - u_exact| / u_max <= LIMIT
"""
import sys

import h5py
import numpy as np

Y1, Y2, NU, F = 0.2137, 0.8311, 0.1, -1.0


def main():
    path, limit = sys.argv[1], float(sys.argv[2])
    with h5py.File(path, "r") as h:
        sim = h["simulation"]
        g = sim[sorted(k for k in sim if k.startswith("step_"))[-1]]
        leaf = (g["child_rows"][:] < 0).all(axis=1)
        boxes, u = g["bounding_box"][:][leaf], g["cell_data/u"][:][leaf]
    umax = abs(F) / (2 * NU) * 0.25 * (Y2 - Y1) ** 2
    err = 0.0
    for box, ug in zip(boxes, u):
        ny = ug.shape[-2]
        y = box[2] + (np.arange(ny) + 0.5) * (box[3] - box[2]) / ny  # bounding_box: x0 x1 y0 y1 z0 z1
        exact = np.where((y > Y1) & (y < Y2), F / (2 * NU) * (y - Y1) * (Y2 - y), 0.0)
        err = max(err, float(np.abs(ug[0] - exact[:, None]).max()) / umax)
    print(f"max |u - u_exact| / u_max = {err:.3e} (limit {limit:g})")
    return 0 if err <= limit else 1


if __name__ == "__main__":
    sys.exit(main())

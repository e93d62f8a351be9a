"""The h5py oracle of tests/api/capi_scalars.c's file (no Rewind code reads it here):
each step's attributes scalar_names / scalar_values (docs/file-format.md, format 1.8)
hold exactly what the C program set, bit for bit; then `rewind info --json` and the
Python package's Step.scalars must say what h5py read.
    scalars_oracle.py FILE REWIND NRANKS      (exit 0: all agree)"""
import json
import subprocess
import sys

import h5py
import numpy as np

path, rewind, nranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
expected = {1: {"drag": 0.1 + 0.2, "energy": -1.5e300}, 2: {}, 3: {"drag": 2.5, "residual": 1e-12},
            5: {"lift": 0.25}}
if nranks == 1:  # nothing differs on one rank: step 4 is written with its drag
    expected[4] = {"drag": 0.5}
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def h5_scalars(group):
    """A step's scalars as h5py reads them: names in order, then the values."""
    if "scalar_names" not in group.attrs:
        check("scalar_values" not in group.attrs, f"{group.name}: no names, no values")
        return {}
    names = [n for n in group.attrs["scalar_names"].decode().rstrip("\0").split("\n") if n]
    values = np.asarray(group.attrs["scalar_values"])
    check(values.dtype == np.float64 and values.shape == (len(names),),
          f"{group.name}: f64 values of shape (ns), one per name (a single one too): {values.shape}")
    return dict(zip(names, (float(v) for v in values)))


with h5py.File(path, "r") as f:
    check(list(f.attrs["format_version"]) >= [1, 8], "format_version is at least 1.8")
    steps = {int(g.attrs["step"]): g for g in f["simulation"].values() if isinstance(g, h5py.Group)}
    check(sorted(steps) == sorted(expected), f"the steps written: {sorted(steps)}")
    read = {n: h5_scalars(g) for n, g in steps.items()}
for n, want in expected.items():
    got = read.get(n)
    check(got == want and list(got) == list(want), f"step {n}: h5py reads {got}, the program set {want}")

info = json.loads(subprocess.run([rewind, "info", path, "--json"], check=True, capture_output=True, text=True).stdout)
for s in info["steps"]:
    check(s["scalars"] == read[s["step"]], f"rewind info --json, step {s['step']}: {s['scalars']}")
text = subprocess.run([rewind, "info", path], check=True, capture_output=True, text=True).stdout
check("scalars: drag = 0.30000000000000004, energy = -1.5e+300" in text, "rewind info: step 1's scalars, each exact")

import rewind as rw  # noqa: E402  (the package of the source tree: PYTHONPATH)

for step in rw.open(path):
    got = step.scalars
    check(got == read[step.number] and list(got) == list(read[step.number]),
          f"Python Step.scalars, step {step.number}: {got}")
sys.exit(1 if failures else 0)

#!/usr/bin/env bash
# A run file read with stock tools (h5py, numpy), as docs/file-format.md tells (format 1.7):
#  - the leaf recipe of file-format.md §2, run as written on a file `rewind run` wrote,
#    finds the leaf cells the run printed (per level) and `leaf_grids_per_level`;
#  - /simulation/index's `kind` is an HDF5 enum whose names say what `rewind info` says;
#  - every field dataset carries its unit as the attribute `units`, /common's unit;
#  - a file written before 1.7 (a bare u8 kind, no `units`) still reads, verifies and
#    continues, its index staying as it was.
#   cli_stock_tools.sh REWIND SOURCE_DIR [MPIEXEC]
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
"$rewind" run "$src/cases/cylinder-2d1-adaptive.toml" --steps 10 --output run.h5 \
  --set output.visualisation_every=5 >run.log 2>&1
check "rewind run writes the adaptive cylinder" "[ $? = 0 ] && [ -s run.h5 ]"

# The recipe, cut out of the document, then checked against the run's own log line
# ("tree        leaf cells: 16192 on level 3, 21472 on level 4, ...").
sed -n '/leaf-recipe:begin/,/leaf-recipe:end/p' "$src/docs/file-format.md" | sed '1,2d;$d' | sed '$d' >recipe.py
check "file-format.md has the leaf recipe" "grep -q 'child_rows' recipe.py"
cat recipe.py - >leaves.py <<'EOF'
import re, sys
import numpy as np
log = open("run.log").read()
expected = {int(l): int(n) for n, l in re.findall(r"(\d+) on level (\d+)", log.split("tree        leaf cells:")[1].split("\n")[0])}
with h5py.File("run.h5", "r") as f:
    step = f["simulation/step_00000010"]
    level = step["level"][()]
    cells = int(np.prod(f["common"].attrs["block_cells"]))
    got = {int(l): int(np.count_nonzero(leaf & (level == l))) * cells for l in np.unique(level[leaf])}
    per_level = step.attrs["leaf_grids_per_level"]
    counted = [int(np.count_nonzero(leaf & (level == l))) for l in range(len(per_level))]
assert got == expected, (got, expected)
assert counted == list(per_level), (counted, list(per_level))
assert u.shape[0] == int(leaf.sum()) and unit == "m/s", (u.shape, unit)
print("leaves", got)
EOF
$py leaves.py >leaves.out 2>&1
check "the recipe finds the leaf cells the run printed, per level, and leaf_grids_per_level" "[ $? = 0 ]" || cat leaves.out

"$rewind" info run.h5 --json >info.json
$py - >index.out 2>&1 <<'EOF'
import json
import h5py
info = json.load(open("info.json"))
with h5py.File("run.h5", "r") as f:
    index = f["simulation/index"]
    names = h5py.check_enum_dtype(index.dtype["kind"])
    assert names == {"visualisation": 0, "checkpoint": 1}, names
    code = {v: k for k, v in names.items()}
    kinds = {int(r["step"]): code[int(r["kind"])] for r in index[()]}
    assert kinds == {s["step"]: s["kind"] for s in info["steps"]}, (kinds, info["steps"])
    assert set(kinds.values()) == {"visualisation", "checkpoint"}, kinds
    units = dict(zip((n.decode() for n in f["common/variable_names"][()]), (u.decode() for u in f["common/variable_units"][()])))
    seen = 0
    for name, step in f["simulation"].items():
        if not name.startswith("step_"):
            continue
        for var, d in step["cell_data"].items():
            assert d.attrs["units"].decode() == units[var], (name, var, d.attrs["units"], units[var])
            seen += 1
    assert seen >= 6, seen
print("ok")
EOF
check "the index's kind is an enum {visualisation 0, checkpoint 1} that agrees with rewind info" "[ $? = 0 ]" || cat index.out
check "... and every cell_data dataset carries /common's unit as 'units'" "grep -q '^ok' index.out"

# A file as 1.6 wrote it: the index's kind a bare u8, no units attributes, version [1, 6].
cp run.h5 old.h5
$py - >old.out 2>&1 <<'EOF'
import h5py
import numpy as np
with h5py.File("old.h5", "r+") as f:
    rows = f["simulation/index"][()]
    plain = np.dtype([(n, rows.dtype[n].base if n != "kind" else np.uint8) for n in rows.dtype.names])
    del f["simulation/index"]
    f["simulation"].create_dataset("index", data=rows.astype(plain), maxshape=(None,), chunks=(64,))
    for name, step in f["simulation"].items():
        if name.startswith("step_"):
            for d in step["cell_data"].values():
                del d.attrs["units"]
    f.attrs["format_version"] = np.array([1, 6], dtype=np.int64)
print("ok")
EOF
check "a file as format 1.6 wrote it is made (h5py)" "grep -q '^ok' old.out" || cat old.out
"$rewind" verify old.h5 >old_verify.out 2>&1
check "... verifies (its index agrees with its steps)" "[ $? = 0 ]" || cat old_verify.out
"$rewind" run --restart old.h5 --steps 5 >old_continue.out 2>&1
check "... continues in place" "[ $? = 0 ] && grep -q 'continuing old.h5' old_continue.out" || tail -3 old_continue.out
"$rewind" verify old.h5 >old_verify2.out 2>&1
check "... and still verifies, the new step in the index" "[ $? = 0 ] && grep -q '^step *15 ' old_verify2.out" || cat old_verify2.out
$py -c "
import h5py
f = h5py.File('old.h5', 'r')
i = f['simulation/index']
assert h5py.check_enum_dtype(i.dtype['kind']) is None and list(i['step']) == [0, 5, 10, 15], i[()]
assert list(f.attrs['format_version']) == [1, 6]
" >old_index.out 2>&1
check "... its index keeps the u8 kind it had, and its version" "[ $? = 0 ]" || cat old_index.out
exit $fail

#!/usr/bin/env bash
# A code's named scalars (rewind_file_set_scalar: its monitors) in the file reader: a file
# the C API program capi_scalars writes on 2 ranks, opened with *Rewind Run File* in
# pvpython; at every step the output's field data holds each scalar under its name with
# the value h5py reads from the step's attributes (scalar_names / scalar_values), and no
# other step's.
#   scalars.sh REWIND PLUGIN SOURCE_DIR MPIEXEC CAPI_SCALARS
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4 prog=$(realpath "$5")
. "$src/tests/plugin/plugin_util.sh"
"$mpiexec" -n 2 "$prog" s.h5 >prog.log 2>&1
check "the C program writes its file on 2 ranks" "[ -f s.h5 ]" || { tail -5 prog.log; exit 1; }
/usr/bin/python3 - <<'PY' >expected.json
import json, h5py
out = []
with h5py.File("s.h5", "r") as f:
    g = f["simulation"]
    for k in sorted(g):
        s = g[k]
        if not k.startswith("step_") or int(s.attrs["committed"]) != 1:
            continue
        names = [n for n in s.attrs["scalar_names"].decode().rstrip("\0").split("\n") if n] if "scalar_names" in s.attrs else []
        values = [float(v) for v in (s.attrs["scalar_values"] if names else [])]
        out.append({"time": float(s.attrs["time"]), "scalars": dict(zip(names, values))})
print(json.dumps(out))
PY
cat >check.py <<'PY'
import json, sys
from paraview.simple import LoadPlugin
LoadPlugin(sys.argv[1], remote=False, ns=globals())
want = json.load(open("expected.json"))
every = set().union(*(w["scalars"] for w in want))
r = RewindRunFile(FileName="s.h5", Budget=500)  # noqa: F821
with_scalars = 0
for w in want:
    r.UpdatePipeline(w["time"])
    fd = r.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
    for name in every:
        a = fd.GetArray(name)
        if name in w["scalars"]:
            assert a is not None and a.GetValue(0) == w["scalars"][name], (w, name, a and a.GetValue(0))
        else:
            assert a is None, (w["time"], name, "shown at a step that has none")
    with_scalars += bool(w["scalars"])
assert with_scalars >= 1 and len(want) > with_scalars, (with_scalars, len(want))
print("OK", len(want), "steps,", with_scalars, "with scalars")
PY
pv check.py "$plugin" >pv.out 2>&1
check "every step's field data holds its scalars as h5py reads them, bit for bit, and no other step's" "grep -q '^OK' pv.out" ||
  tail -5 pv.out
exit $fail

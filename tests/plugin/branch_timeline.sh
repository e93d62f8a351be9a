#!/usr/bin/env bash
# A branch file in the reader: its timeline is the parent's steps up to the branch point,
# then its own (continuous across the branch), each time showing the right file's step;
# a time between steps shows the last one at or before it.
#   branch_timeline.sh REWIND PLUGIN SOURCE_DIR
set -u
rewind=$1 plugin=$2 src=$3
. "$src/tests/plugin/plugin_util.sh"
"$rewind" run "$src/cases/default.toml" --output base.h5 -q --set time.end=0.1 \
  --set output.visualisation_interval=0 --set output.checkpoint_interval=0.02 >base.log 2>&1
"$rewind" run --restart 'base.h5@#2' --output br.h5 --set physics.nu=0.002 --steps 40 -q >br.log 2>&1
check "a base run and a branch of its third step" "[ -f base.h5 ] && [ -f br.h5 ]"
[ -f br.h5 ] || { cat base.log br.log; exit 1; }
# The expected timeline, straight from the files with h5py.
/usr/bin/python3 - <<'PY' >expected.json
import json, h5py
def steps(path):
    with h5py.File(path, "r") as f:
        g = f["simulation"]
        return [(path, int(g[k].attrs["step"]) if "step" in g[k].attrs else int(k[5:]), float(g[k].attrs["time"]))
                for k in sorted(g) if k.startswith("step_") and int(g[k].attrs["committed"]) == 1]
with h5py.File("br.h5", "r") as f:
    cut = int(f["common"]["lineage"].attrs["parent_step"])
tl = [s for s in steps("base.h5") if s[1] <= cut]
for s in steps("br.h5"):
    if tl and s[2] <= tl[-1][2]:
        tl[-1] = s  # the branch's first step at the branch point replaces the parent's
    else:
        tl.append(s)
print(json.dumps({"timeline": tl, "cut": cut}))
PY
cat >check.py <<'PY'
import json, os, sys
from paraview.simple import LoadPlugin
sys.path.insert(0, sys.argv[2])
from pv_util import field
LoadPlugin(sys.argv[1], remote=False, ns=globals())
want = json.load(open("expected.json"))["timeline"]
r = RewindRunFile(FileName="br.h5", Budget=500)  # noqa: F821
times = list(r.TimestepValues)
assert times == [t for _, _, t in want], (times, want)
for i, (path, step, t) in enumerate(want):
    for probe in ([t] + ([(t + want[i + 1][2]) / 2] if i + 1 < len(want) else [])):
        r.UpdatePipeline(probe)
        mb = r.GetClientSideObject().GetOutputDataObject(0)
        got = (os.path.basename(field(mb, "rewind_file")), int(field(mb, "rewind_step")))
        assert got == (path, step), (probe, got, (path, step))
print("OK", len(times), "steps:", sum(p == "base.h5" for p, _, _ in want), "from base.h5,",
      sum(p == "br.h5" for p, _, _ in want), "from br.h5")
PY
pv check.py "$plugin" "$here" >pv.out 2>&1
check "the branch's timeline: the parent's steps to the branch point, then its own; each time shows its file's step" \
  "grep -q '^OK' pv.out"
grep -v '^ok' pv.out | tail -4
check "the timeline has steps of both files" "grep -q 'from base.h5' pv.out && ! grep -q ' 0 from' pv.out"
exit $fail

#!/usr/bin/env bash
# Both sources under `mpiexec -n 2 pvbatch` show what they show in one process: the
# reader splits the selected grids between the pieces (cells and integrals equal to the
# serial ones, nothing twice), the live source fetches once (on `rewind serve`) and an
# unreachable collector is one error message, not one per process.
#   parallel.sh REWIND PLUGIN SOURCE_DIR MPIEXEC
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4
command -v pvbatch >/dev/null 2>&1 || { echo "pvbatch not found: skipping"; exit 77; }
. "$src/tests/plugin/plugin_util.sh"
"$rewind" run "$src/cases/default.toml" --output f.h5 -q --set time.end=0.02 \
  --set 'tree.refine=[{center=[0.2,0.2,0.5],radius=0.08,level=4}]' >run.log 2>&1
start_serve f.h5
check "a run file and rewind serve" "[ -f f.h5 ] && [ -n '$port' ]"
[ -n "$port" ] || { cat run.log serve.log; exit 1; }
cat >par.py <<'PY'
import sys
from paraview.simple import LoadPlugin, IntegrateVariables
from paraview import servermanager as sm
LoadPlugin(sys.argv[1], remote=False, ns=globals())

def shown(label, src):
    src.UpdatePipeline()
    iv = IntegrateVariables(Input=src)
    iv.UpdatePipeline()
    p = sm.Fetch(iv).GetCellData().GetArray("p").GetValue(0)
    print(f"{label} cells {src.GetDataInformation().GetNumberOfCells()} p {p!r}", flush=True)

r = RewindRunFile(FileName="f.h5")  # noqa: F821
shown("whole", r)
r.MaximumLevel = 2
shown("level2", r)
r.MaximumLevel, r.UseBox, r.BoxPosition, r.BoxSize, r.Budget = -1, 1, [0.1, 0.1, 0], [0.3, 0.2, 1], 3000
shown("window", r)
live = RewindLiveSource(PortNumber=int(sys.argv[2]), Budget=3000)  # noqa: F821
shown("served", live)
gone = RewindLiveSource(PortNumber=int(sys.argv[3]), Timeout=2)  # noqa: F821
gone.UpdatePipeline()
PY
closed=$(/usr/bin/python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
timeout 60 pvbatch par.py "$plugin" "$port" "$closed" >serial.out 2>serial.err
timeout 60 "$mpiexec" -n 2 pvbatch par.py "$plugin" "$port" "$closed" >parallel.out 2>parallel.err
grep -h ' cells ' serial.out parallel.out | sed 's/^/    /'
check "serial pvbatch shows every window" "[ \$(grep -c ' cells [1-9]' serial.out) = 4 ]"
check "2 processes show the same cells and integrals as 1 (nothing twice, nothing lost)" \
  "/usr/bin/python3 -c \"
import math, sys
def rows(f):
    return {l.split()[0]: (int(l.split()[2]), float(l.split()[4])) for l in open(f) if ' cells ' in l}
s, p = rows('serial.out'), rows('parallel.out')
assert len(s) == 4 and s.keys() == p.keys(), (s, p)
for k in s:
    assert s[k][0] == p[k][0] and math.isclose(s[k][1], p[k][1], rel_tol=1e-12, abs_tol=1e-12), (k, s[k], p[k])
\""
check "an unreachable collector: one error message from 2 processes" "[ \$(grep -c 'vtkRewindLiveSource (' parallel.err) = 1 ]"
exit $fail

#!/usr/bin/env bash
# The live source and steering from pvpython, on a running job: `mpiexec -n 4 rewind run
# --listen 127.0.0.1:0` (rank 1 the collector, 2 compute ranks). pvpython pauses the run
# (rewind_steering), fetches a live window (uniform and adaptive) and a past step through
# the Rewind Live Source, browses the run's steps on ParaView's time axis, lists the parameters, sets
# one, branches, and stops the run; then every window value is checked against the
# file's same step, and the set and the branch against the files.
#   live_source.sh REWIND PLUGIN SOURCE_DIR MPIEXEC
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4
. "$src/tests/plugin/plugin_util.sh"
export REWIND_TOKEN="pv-$$-$RANDOM$RANDOM"  # the run's token; the clients (ParaView too) take it from here
start_live_run live.h5
cat >live.py <<'PY'
import os, sys, time
from paraview.simple import LoadPlugin
plugin, here, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, here)
from pv_util import dump, field
LoadPlugin(plugin, remote=False, ns=globals())
import rewind_steering  # shipped inside the plugin

live = RewindLiveSource(PortNumber=port, Budget=3000, Timeout=20, Time="#0")  # noqa: F821
steer = rewind_steering.Steering(live)
print("pause:", steer.pause())  # also refreshes (updates) the source: the first committed step
live.UpdatePropertyInformation()  # Server, RunFiles, the variables on offer
assert live.GetPropertyValue("LastError") == "", live.GetPropertyValue("LastError")
server = live.GetPropertyValue("Server")
print("server:", server, "files:", live.GetProperty("RunFiles"))
assert server.endswith("(live)"), server
variables = list(live.CellArrays.Available)
assert "p" in variables and "u" in variables, variables
live.CellArrays = ["p"]
w0 = dump(live.GetClientSideObject().GetOutputDataObject(0), ["p"], "past.json")
assert w0["step"] == 0, w0["step"]
# The run's committed steps on ParaView's time axis: a time shows the last step at or before it.
live.UseTimeAxis = 1
live.UpdatePipelineInformation()
axis = list(live.TimestepValues)
run_steps = list(live.GetProperty("RunSteps"))
steps = {float(t): int(n) for f, n, t, k in zip(*[iter(run_steps)] * 4) if f.endswith("live.h5")}
assert len(axis) >= 3 and len(axis) == len(steps), (axis, steps)
live.UpdatePipeline(0.5 * (axis[1] + axis[2]))  # Time "#0" is ignored now
shown = int(field(live.GetClientSideObject().GetOutputDataObject(0), "rewind_step"))
assert shown == steps[min(steps, key=lambda t: abs(t - axis[1]))] and shown > 0, (shown, axis, steps)
print("time axis:", len(axis), "steps; between the second and third shows step", shown)
live.UseTimeAxis = 0
names = [p["name"] for p in steer.parameters()]
print("parameters:", names)
assert "physics.nu" in names, names
applied = steer.set({"physics.nu": 0.0021})
print("set:", applied)
steer.resume()
for _ in range(200):  # run on past the next checkpoint (every 0.02), which records the set
    st = steer.status()
    if st["time"] > applied["time"] + 0.025:
        break
    time.sleep(0.1)
print("pause:", steer.pause())
assert steer.status()["state"] == "paused"
# The live state: the branch below checkpoints it into live.h5, so the file holds it.
live.Time = "live"
live.CellArrays = variables
live.UpdatePipeline()
w = dump(live.GetClientSideObject().GetOutputDataObject(0), variables, "live.json")
print("live window: step", w["step"], "level", w["level"], "cells", w["cells"])
assert 0 < w["cells"] <= 3000 and w["file"].endswith("live.h5"), (w["cells"], w["file"])
assert w["step"] > applied["step"], (w["step"], applied)
# The Level of Detail combo on the live source: adaptive, ranked by the details the
# compute ranks compute from the paused state (checked against the file's below).
live.LevelOfDetail = 1
live.UpdatePipeline()
a = dump(live.GetClientSideObject().GetOutputDataObject(0), variables, "adaptive.json")
print("adaptive live window: step", a["step"], "levels", sorted({p["level"] for p in a["pieces"]}), "cells", a["cells"])
assert a["lod"] == "adaptive" and a["step"] == w["step"], (a["lod"], a["step"], w["step"])
live.LevelOfDetail = 0
print("branch:", steer.branch("#0", {"physics.nu": 0.0015}, output=os.path.join(out, "b.h5")))
print("stop:", steer.stop())
print("OK")
PY
pv live.py "$plugin" "$here" "$port" "$tmp" >pv.out 2>&1
check "pvpython: pause, live window, past step, time axis, parameters, set, status, branch, stop" "grep -q '^OK' pv.out"
grep -v '^ok' pv.out | tail -12
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
kill "$server_pid" 2>/dev/null  # still running: pvpython did not stop it (the check below fails)
wait "$server_pid"; rc=$?
server_pid=
check "the run stopped by pvpython ends cleanly (exit 0)" "[ $rc = 0 ]" || tail -5 serve.log
for w in live past; do
  check "$w window through the live source: every value equals the file's same step" \
    "/usr/bin/python3 $src/tests/collector/check_window.py live.h5 $w.json >$w.chk 2>&1"
  cat $w.chk
done
# The adaptive window the live source showed equals `rewind window --lod adaptive` of
# the file at that step (its statistics; the branch checkpointed the paused state), over
# the box the source starts with: the case's whole channel.
astep=$(/usr/bin/python3 -c "import json; print(json.load(open('adaptive.json'))['step'])" 2>/dev/null)
avars=$(/usr/bin/python3 -c "import json; print(','.join(json.load(open('adaptive.json'))['variables']))" 2>/dev/null)
"$rewind" window "live.h5@$astep" --box 0,0,0,2.2,0.41,0 --budget 3000 --lod adaptive \
  --vars "$avars" --out fadaptive.json >fadaptive.out 2>&1
check "the live source's adaptive window equals the file's adaptive window at that step, on mixed levels" \
  "/usr/bin/python3 $src/tests/collector/check_same_window.py adaptive.json fadaptive.json --mixed --budget 3000 \
   >same.out 2>&1" || cat same.out fadaptive.out
check "the branch made from pvpython names live.h5 and the change in its lineage" \
  "\"$rewind\" lineage b.h5 >lineage.out 2>&1 && grep -q 'live.h5' lineage.out && grep -q 'physics.nu=0.0015' lineage.out"
# Steps written after the set record it (case_overrides: "key=value" lines).
cat >set_recorded.py <<'PY'
import h5py
f = h5py.File("live.h5", "r")
found = []
for g in f["simulation"]:
    x = f["simulation"][g].attrs.get("case_overrides") if g.startswith("step_") else None
    for line in (x.decode() if isinstance(x, bytes) else (x or "")).splitlines():
        key, _, value = line.partition("=")
        found.append(key == "physics.nu" and float(value) == 0.0021)
assert any(found), "no step records physics.nu=0.0021"
PY
check "the set from pvpython is recorded in the run's file" "/usr/bin/python3 set_recorded.py"
exit $fail

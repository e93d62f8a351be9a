#!/usr/bin/env bash
# Futures from pvpython, on a running job: `mpiexec -n 4 rewind run --listen`
# (2 compute ranks). pvpython forks the paused run into two futures with rewind_steering
# (one with physics.nu changed, one unchanged), lets them run, pauses them, and shows each
# in its own Rewind Live Source (File = the future's file, Time "live"); the sources'
# Futures information lists both; then the job is stopped (every future writes its final
# checkpoint). Each window must equal its own future's file (h5py, check_window.py) and
# differ from the other's; rewind_compare.compare lays out a view per future, its colour
# range that of both windows' fluid cells.
#   live_futures.sh REWIND PLUGIN SOURCE_DIR MPIEXEC
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4
. "$src/tests/plugin/plugin_util.sh"
export REWIND_TOKEN="pvf-$$-$RANDOM$RANDOM"
start_live_run p.h5
cat >futures.py <<'PY'
import os, sys, time
from paraview.simple import LoadPlugin
plugin, here, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, here)
from pv_util import dump
LoadPlugin(plugin, remote=False, ns=globals())
import rewind_steering

steer = rewind_steering.Steering(port=port, timeout=30)
for _ in range(300):  # a committed step to fork from
    if steer.status()["step"] >= 3:
        break
    time.sleep(0.1)
steer.pause()
a, b = os.path.join(out, "a.h5"), os.path.join(out, "b.h5")
fork = steer.fork("latest", [{"physics.nu": 0.004}, {}], outputs=[a, b])
print("fork:", fork)
assert fork["files"] == [a, b], fork
step0 = fork["step"]
steer.resume()
for _ in range(300):
    if all(f["step"] >= step0 + 4 for f in steer.futures()):
        break
    time.sleep(0.1)
steer.pause()
sources = {}
for name, path in (("a", a), ("b", b)):
    s = RewindLiveSource(PortNumber=port, Budget=3000, Timeout=20, File=path, Time="live")  # noqa: F821
    s.UpdatePipeline()  # connects: the variables on offer
    s.CellArrays = list(s.CellArrays.Available)
    s.UpdatePipeline()
    s.UpdatePropertyInformation()
    assert s.GetPropertyValue("LastError") == "", s.GetPropertyValue("LastError")
    sources[name] = s
listed = list(sources["a"].GetProperty("Futures"))
print("Futures:", listed)
rows = list(zip(*[iter(listed)] * 4))
assert [r[0] for r in rows] == [a, b] and all(r[2] == "paused" for r in rows), rows
windows = {}
for name, s in sources.items():
    variables = list(s.CellArrays.Available)
    w = dump(s.GetClientSideObject().GetOutputDataObject(0), variables, name + ".json")
    print(name, "window: step", w["step"], "file", w["file"], "cells", w["cells"])
    assert w["file"] == (a if name == "a" else b) and w["step"] > step0, (w["file"], w["step"])
    windows[name] = w
# Each future pauses at its own step boundary: the two may be a step apart.
if windows["a"]["step"] == windows["b"]["step"]:
    assert windows["a"]["values"] != windows["b"]["values"], "the two futures' windows are the same"
# rewind_compare from pvpython: one view per future, the colour range over both futures'
# fluid cells (numpy over the windows just dumped: velocity magnitude where cell_type != 1).
import numpy as np
import rewind_compare
c = rewind_compare.compare(sources["a"])
assert c.files == [a, b] and len(c.views) == 2 and [s.File for s in c.sources] == [a, b], c.files
mags = []
for w in windows.values():
    v = dict(zip(w["variables"], (np.array(x) for x in w["values"])))
    mag = np.sqrt(sum(v[k] ** 2 for k in ("u", "v", "w") if k in v))[np.array(w["cell_type"]) != 1]
    mags += [mag.min(), mag.max()]
print("compare range:", c.range, "windows:", min(mags), max(mags))
assert abs(c.range[0] - min(mags)) <= 1e-6 * max(mags) and abs(c.range[1] - max(mags)) <= 1e-6 * max(mags), c.range
print("stop:", steer.stop())
print("OK")
PY
pv futures.py "$plugin" "$here" "$port" "$tmp" >pv.out 2>&1
check "pvpython: fork two futures, two live sources (File), Futures listed, stop" "grep -q '^OK' pv.out"
grep -v '^ok' pv.out | tail -12
wait_job 60
check "the job stopped by pvpython ends cleanly" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
for w in a b; do
  check "future $w's live source: every value equals $w.h5's same step (h5py)" \
    "/usr/bin/python3 $src/tests/collector/check_window.py $w.h5 $w.json >$w.chk 2>&1" || cat $w.chk
done
check "future a's window is not b.h5's" "! /usr/bin/python3 $src/tests/collector/check_window.py b.h5 a.json >/dev/null 2>&1"
exit $fail

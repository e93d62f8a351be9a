#!/usr/bin/env bash
# GUI test of the steering dock's Futures group and Compare, and of what a
# person met in the dock: the paraview executable under Xvfb and a
# running `mpiexec -n 4 rewind run --listen` (2 compute ranks) paused at a committed step.
# A QtTesting script: Compare with no collector there, before any Python ran in ParaView
# (one line, the dock's wording); the Python shell makes one Rewind Live Source, left
# unselected; From live source (the only one is taken), Connect (the viscosity box shows
# its value whole), Add future twice (unchanged, then physics.nu edited), Fork, Resume,
# Compare (its layout tab comes to the front), Follow for a few seconds (the first tick
# clears the message line: it describes no older state than the Run box), Pause; a
# Python-shell script reads what Compare laid out. Checked afterwards: the job's status
# and the futures' files (h5py: lineage names the parent, the step, the change), the
# layout (one view per future, each following its own future), the cameras linked (move
# one, the other follows), one colour map whose range is the range of both futures' data
# (oracle: h5py + numpy over the fluid leaves of each file's last step, written when the
# job is stopped), and a screenshot of the comparison (plugin_gui_compare.png).
#   gui_futures.sh REWIND PLUGIN SOURCE_DIR MPIEXEC
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4
command -v paraview >/dev/null 2>&1 || { echo "paraview not found: skipping"; exit 77; }
. "$src/tests/plugin/plugin_util.sh"
py=/usr/bin/python3
export REWIND_TOKEN="pvc-$$-$RANDOM$RANDOM"
start_live_run p.h5
steer=("$rewind" steer "127.0.0.1:$port")
pause_at 3
fork_step=0  # the futures start from the first committed step (Branch from #0)
"${steer[@]}" parameters --json >params0.json
n=$($py -c "import json; print(len(json.load(open('params0.json'))['parameters']))")
nu_text=$($py -c "import json; v=[p['value'] for p in json.load(open('params0.json'))['parameters'] if p['name'] == 'physics.nu'][0]; print(format(v, '.10f').rstrip('0').rstrip('.'))")
a="$tmp/p.branch$fork_step.h5" b="$tmp/p.branch$fork_step-2.h5"
# gui.py runs in ParaView's Python shell, once the dock's Compare has started Python itself.
cat >gui.py <<PY
from paraview.simple import *
live = RewindLiveSource(PortNumber=$port, Budget=20000)
Show(live)
Render()
SetActiveSource(None)  # From live source must find it unselected
PY
# check.py runs in ParaView's Python shell after the events: what Compare laid out.
cat >check.py <<'PY'
import json
import rewind_compare
from paraview.simple import GetDisplayProperties, GetViewsInLayout, Render, SaveScreenshot
c = rewind_compare.last
out = {"files": c.files, "in_layout": len(GetViewsInLayout(c.layout)), "views": len(c.views)}
data = lambda s: s.GetClientSideObject().GetOutputDataObject(0)
out["shown"] = [{"file": s.File, "step": int(data(s).GetFieldData().GetArray("rewind_step").GetValue(0)),
                 "range": list(r)} for s, r in zip(c.sources, c.ranges)]
d = [GetDisplayProperties(s, v) for s, v in zip(c.sources, c.views)]
out["colour"] = [list(x.ColorArrayName) for x in d]
out["one_lut"] = all(x.LookupTable.SMProxy is c.lut.SMProxy for x in d)
out["lut_range"] = [c.lut.RGBPoints[0], c.lut.RGBPoints[-4]]
out["rescale_mode"] = str(c.lut.AutomaticRescaleRangeMode).strip("'")
# Move one camera, then the other: the other view follows each time.
follows = []
start = [(list(v.CameraPosition), list(v.CameraFocalPoint)) for v in c.views]
for mover, other in ((0, 1), (1, 0)):
    v, w = c.views[mover], c.views[other]
    v.CameraPosition = [p + 0.3 * (mover + 1) for p in v.CameraPosition]
    v.CameraFocalPoint = [p + 0.3 * (mover + 1) for p in v.CameraFocalPoint]
    Render(v)
    follows.append(list(w.CameraPosition) == list(v.CameraPosition) and list(w.CameraFocalPoint) == list(v.CameraFocalPoint))
out["cameras_follow"] = follows
c.views[0].CameraPosition, c.views[0].CameraFocalPoint = start[0]  # as Compare laid them out
Render(c.views[0])
SaveScreenshot("compare.png", c.layout)  # as the tab shows it
json.dump(out, open("compare.json", "w"))
PY
panel=pqClientMainWindow/pqRewindSteeringPanel/body
nu="$panel/parameters/scroll/qt_scrollarea_viewport/form/physics.nu/0"
shell=pqClientMainWindow/pythonShellDock/pythonShell/consoleWidget
events() { local f=$1; shift; { echo '<?xml version="1.0" ?>'; echo '<pqevents>'; printf '  %s\n' "$@"; echo '</pqevents>'; } >"$f"; }
ev() { echo "<pqevent object=\"$1\" command=\"$2\" arguments=\"${3:-}\" />"; }
ck() { echo "<pqcheck object=\"$1\" property=\"$2\" arguments=\"$3\" />"; }
events futures.xml \
  "$(ev pqClientMainWindow/menubar activate menu_View)" \
  "$(ev pqClientMainWindow/menubar/menu_View activate 'Rewind Steering')" \
  "$(ev "$panel/collector/port" set_int 1)" \
  "$(ev "$panel/futures/compare" activate)" \
  "$(ck "$panel/message" text 'cannot reach the Rewind collector at 127.0.0.1:1 (Connection refused)')" \
  "$(ev pqClientMainWindow/menubar activate menu_View)" \
  "$(ev pqClientMainWindow/menubar/menu_View activate 'Python Shell')" \
  "$(ev "$shell" executeCommand "exec(open('gui.py').read())")" \
  "$(ev "$panel/collector/from_source" activate)" \
  "$(ck "$panel/collector/port" value "$port")" \
  "$(ck "$panel/message" text 'settings of the live source RewindLiveSource1')" \
  "$(ev "$panel/collector/connect" activate)" \
  "$(ck "$panel/message" text "connected to rewind-run ($n parameters)")" \
  "$(ck "$panel/run/state_name" text paused)" \
  "$(ck "$nu" text "$nu_text")" \
  "$(ev "$panel/futures/add_future" activate)" \
  "$(ev "$nu" set_double 0.004)" \
  "$(ev "$panel/futures/add_future" activate)" \
  "$(ck "$panel/futures/fork_rows" text '1: unchanged&#10;2: physics.nu=0.004')" \
  "$(ev "$panel/parameters/from" set_string '#0')" \
  "$(ev "$panel/futures/fork" activate)" \
  "$(ck "$panel/message" text "forked 2 futures from step $fork_step of $tmp/p.h5: $a, $b")" \
  "$(ck "$panel/futures/fork_rows" text '(none: add one per future)')" \
  "$(ev "$panel/run/resume" activate)" \
  "$(ck "$panel/run/state_name" text running)" \
  "$(ev "$panel/futures/compare" activate)" \
  "$(ck pqClientMainWindow/centralwidget/MultiViewWidget/CoreWidget/qt_tabwidget_tabbar currentIndex 1)" \
  "$(ev "$shell" executeCommand "import json, rewind_compare; json.dump([s.GetClientSideObject().GetOutputDataObject(0).GetFieldData().GetArray('rewind_step').GetValue(0) for s in rewind_compare.last.sources], open('steps0.json', 'w'))")" \
  "$(ev "$panel/run/interval" set_double 0.5)" \
  "$(ev "$panel/run/follow" set_boolean true)" \
  "$(ev pqClientMainWindow pause 2000)" \
  "$(ck "$panel/message" text '')" \
  "$(ev "$panel/run/pause" activate)" \
  "$(ck "$panel/run/state_name" text paused)" \
  "$(ev pqClientMainWindow pause 1000)" \
  "$(ev "$panel/run/follow" set_boolean false)" \
  "$(ev "$shell" executeCommand "exec(open('check.py').read())")"
REWIND_PANEL_QUICK=60 timeout 165 "$src/scripts/headless.sh" paraview --dr --plugin-search-paths="$(dirname "$plugin")" \
  --plugins=RewindReader --test-script=futures.xml --exit >gui.log 2>&1
rc=$?
check "paraview plays the dock's script (From live source takes the only live source; the nu box shows $nu_text; two futures listed, forked from step $fork_step into $a and $b; resume; compare; follow; pause)" "[ $rc = 0 ]"
[ $rc = 0 ] || grep -v '^debug' gui.log | head -30
cat compare.json steps0.json 2>/dev/null; echo
cp compare.png "$start_dir/plugin_gui_compare.png" 2>/dev/null && echo "screenshot: $start_dir/plugin_gui_compare.png"
"${steer[@]}" status --json >status.json 2>&1
check "rewind steer status lists both futures, paused, children of p.h5, only the second changed" "$py -c \"
import json; f = {x['file']: x for x in json.load(open('status.json'))['futures']}
assert f['$a']['state'] == f['$b']['state'] == 'paused' and f['$a']['parent'] == f['$b']['parent'] == '$tmp/p.h5', f
assert not any('nu' in c for c in f['$a']['changes']) and 'physics.nu=0.004' in f['$b']['changes'], f\""
"${steer[@]}" stop >/dev/null 2>&1
wait_job 60
check "the job ends cleanly when stopped (every future writes its last step)" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
# The oracle: each future's last step from its file (h5py + numpy, fluid leaves).
cat >oracle.py <<'PY'
import json, sys
import h5py, numpy as np
a, b, fork_step = sys.argv[1], sys.argv[2], int(sys.argv[3])
shown = json.load(open("compare.json"))
steps0 = json.load(open("steps0.json"))
ranges = {}
for path, changes in ((a, []), (b, ["physics.nu=0.004"])):
    with h5py.File(path, "r") as f:
        lin = f["common/lineage"]
        assert lin.attrs["parent_file"] in ("p.h5", b"p.h5") and int(lin.attrs["parent_step"]) == fork_step, dict(lin.attrs)
        got = [x.decode() if isinstance(x, bytes) else x for x in lin["changes"][...]]
        assert got == changes, (path, got)
        steps = [s for s in f["simulation"] if s.startswith("step_") and int(f["simulation"][s].attrs["committed"]) == 1]
        last = f["simulation"][max(steps)]
        leaf = np.all(last["child_rows"][...] < 0, axis=1)
        c = last["cell_data"]
        mag = np.sqrt(sum(c[k][...].astype(np.float64) ** 2 for k in ("u", "v", "w") if k in c))
        fluid = (last["cell_type"][...] != 1) & leaf[:, None, None, None]
        ranges[path] = (int(max(steps)[5:]), float(mag[fluid].min()), float(mag[fluid].max()))
print("files:", ranges)
close = lambda x, y: abs(x - y) <= 1e-5 * max(1.0, abs(y))
assert shown["files"] == [a, b] and shown["views"] == 2 and shown["in_layout"] == 2, shown
for s, s0 in zip(shown["shown"], steps0):
    step, lo, hi = ranges[s["file"]]
    assert s["step"] == step and step > s0 >= fork_step, ("follows its future live", s, s0, step)
    assert close(s["range"][0], lo) and close(s["range"][1], hi), ("its data is its file's", s, lo, hi)
lo = min(r[1] for r in ranges.values())
hi = max(r[2] for r in ranges.values())
assert close(shown["lut_range"][0], lo) and close(shown["lut_range"][1], hi), ("one scale over both", shown["lut_range"], lo, hi)
assert shown["one_lut"] and shown["colour"] == [["CELLS", "velocity_magnitude"]] * 2, shown
assert shown["rescale_mode"] == "Never", shown
assert shown["cameras_follow"] == [True, True], shown
print("OK")
PY
$py oracle.py "$a" "$b" "$fork_step" >oracle.out 2>&1
check "h5py: both futures' files with their lineage; Compare: one view per future following it, cameras linked, one colour scale over both futures' data" \
  "grep -q '^OK' oracle.out" || cat oracle.out
$py -c "
from PIL import Image; im = Image.open('compare.png').convert('RGB'); print('screenshot', im.size, len(set(im.getdata())), 'colours')" 2>/dev/null
exit $fail

#!/usr/bin/env bash
# GUI smoke test: the paraview executable (under Xvfb) loads the plugin; a script shows a
# Rewind Live Source of a running job and saves a screenshot (checked not to be blank);
# a QtTesting script then drives the steering panel: take host and port from the live
# source, connect (the parameter widgets are built from the run's list), pause, edit
# physics.nu and apply (the rebuilt widgets show the run's new value), edit the inflow
# and branch from step 0. Asked with `rewind steer` afterwards, the run is paused and
# continues in the branch with its inflow; the branch file's lineage names the change.
# What a person sees: the dock is hidden until View → Rewind Steering opens
# it; after every command (pause, apply, resume, branch) it shows the run's state and the
# parameters in force (after the branch from step 0: the first step's nu again, the
# edited inflow); the live source says its step and time (field data: the paused run's,
# Annotate Attribute Data's text) and stays off a run file's
# time axis, and its box widget moves onto the run's domain once it has connected; a run
# file opened with File → Open shows its last step (h5py oracle).
#   gui_panel.sh REWIND PLUGIN SOURCE_DIR MPIEXEC
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4
command -v paraview >/dev/null 2>&1 || { echo "paraview not found: skipping"; exit 77; }
. "$src/tests/plugin/plugin_util.sh"
export REWIND_TOKEN="pv-$$-$RANDOM$RANDOM"  # the run's token; the clients (ParaView too) take it from here
LISTEN_WAIT=30 start_listener "$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output "$tmp/g.h5" \
  --set time.end=30 -q --listen 127.0.0.1:0
check "the run's collector prints its address" "[ -n '$port' ]"
[ -n "$port" ] || { cat serve.log; exit 1; }
"$rewind" steer 127.0.0.1:$port parameters --json >params0.json
n=$(/usr/bin/python3 -c "import json; print(len(json.load(open('params0.json'))['parameters']))")
nu0=$(/usr/bin/python3 -c "import json; print([p['value'] for p in json.load(open('params0.json'))['parameters'] if p['name'] == 'physics.nu'][0])")
# A finished run file for File → Open and for a time axis beside the live source.
"$rewind" run "$src/cases/default.toml" --output "$tmp/run.h5" --monitor run.csv -q --set time.end=0.1 \
  --set output.visualisation_interval=0.05 >run.log 2>&1
read -r last_index file_times < <(/usr/bin/python3 -c "
import h5py
with h5py.File('$tmp/run.h5', 'r') as f:
    s = [f['simulation'][g] for g in f['simulation'] if g.startswith('step_')]
    t = sorted(float(x.attrs['time']) for x in s if int(x.attrs['committed']) == 1)
print(len(t) - 1, ','.join(repr(x) for x in t))")
cat >gui.py <<PY
from paraview.simple import *
from vtkmodules.vtkIOImage import vtkPNGReader
live = RewindLiveSource(PortNumber=$port, Budget=20000)
d = Show(live)
ColorBy(d, ("CELLS", "u"))
d.RescaleTransferFunctionToDataRange(True)
v = GetActiveViewOrCreate("RenderView")
ResetCamera()
Render()
SaveScreenshot("$tmp/gui_view.png", v, ImageResolution=[800, 400])
png = vtkPNGReader()
png.SetFileName("$tmp/gui_view.png")
png.Update()
ranges = [png.GetOutput().GetPointData().GetScalars().GetRange(c) for c in range(3)]
open("$tmp/gui_done.txt", "w").write("cells %d colours %s error %r\n" % (
    live.GetDataInformation().GetNumberOfCells(), ranges, live.GetPropertyValue("LastError")))
# The live source's step and time: those of the paused run (the pause's reply), in field
# data and as the text Annotate Attribute Data shows; a run file's time axis beside it
# holds the file's steps only. The run goes on afterwards.
import rewind_steering
steer = rewind_steering.Steering(live)
paused = steer.pause()  # refreshes the live source
live.UpdatePipeline()
fd = live.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
step, t = fd.GetArray("rewind_step").GetValue(0), fd.GetArray("rewind_time").GetValue(0)
label = AnnotateAttributeData(Input=live, SelectInputArray=["FIELD", "rewind_annotation"], Prefix="")
Show(label, v)
label.UpdatePipeline()
text = label.GetClientSideObject().GetOutputDataObject(0).GetColumn(0).GetValue(0)
reader = RewindRunFile(FileName="$tmp/run.h5")
reader.UpdatePipelineInformation()
axis = ",".join(repr(x) for x in GetTimeKeeper().TimestepValues)
steer.resume()
open("$tmp/gui_done.txt", "a").write("live %d %r %d %r %r\naxis %s\n" % (paused["step"], paused["time"], step, t, text, axis))
SetActiveSource(live)
PY
panel=pqClientMainWindow/pqRewindSteeringPanel/body
# events FILE EVENT...: a QtTesting script of these events.
events() { local f=$1; shift; { echo '<?xml version="1.0" ?>'; echo '<pqevents>'; printf '  %s\n' "$@"; echo '</pqevents>'; } >"$f"; }
dock=pqClientMainWindow/pqRewindSteeringPanel
events panel.xml \
  "<pqcheck object=\"$dock\" property=\"visible\" arguments=\"false\" />" \
  "<pqevent object=\"pqClientMainWindow/menubar\" command=\"activate\" arguments=\"menu_View\" />" \
  "<pqevent object=\"pqClientMainWindow/menubar/menu_View\" command=\"activate\" arguments=\"Rewind Steering\" />" \
  "<pqcheck object=\"$dock\" property=\"visible\" arguments=\"true\" />" \
  "<pqevent object=\"$panel/collector/from_source\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/collector/port\" property=\"value\" arguments=\"$port\" />" \
  "<pqevent object=\"$panel/collector/connect\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/message\" property=\"text\" arguments=\"connected to rewind-run ($n parameters)\" />" \
  "<pqevent object=\"$panel/run/pause\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/run/state_name\" property=\"text\" arguments=\"paused\" />" \
  "<pqevent object=\"$panel/parameters/scroll/qt_scrollarea_viewport/form/physics.nu/0\" command=\"set_double\" arguments=\"0.0023\" />" \
  "<pqevent object=\"$panel/parameters/apply\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/parameters/scroll/qt_scrollarea_viewport/form/physics.nu/0\" property=\"value\" arguments=\"0.0023\" />" \
  "<pqevent object=\"$panel/run/resume\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/run/state_name\" property=\"text\" arguments=\"running\" />" \
  "<pqevent object=\"$panel/run/pause\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/run/state_name\" property=\"text\" arguments=\"paused\" />" \
  "<pqevent object=\"$panel/parameters/scroll/qt_scrollarea_viewport/form/boundary.xmin.velocity/0\" command=\"set_double\" arguments=\"1.25\" />" \
  "<pqevent object=\"$panel/parameters/from\" command=\"set_string\" arguments=\"#0\" />" \
  "<pqevent object=\"$panel/parameters/output\" command=\"set_string\" arguments=\"$tmp/gb.h5\" />" \
  "<pqevent object=\"$panel/parameters/branch\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/message\" property=\"text\" arguments=\"branch $tmp/gb.h5 from step 0 of $tmp/g.h5\" />" \
  "<pqcheck object=\"$panel/parameters/scroll/qt_scrollarea_viewport/form/physics.nu/0\" property=\"value\" arguments=\"$nu0\" />" \
  "<pqcheck object=\"$panel/parameters/scroll/qt_scrollarea_viewport/form/boundary.xmin.velocity/0\" property=\"value\" arguments=\"1.25\" />" \
  "<pqevent object=\"pqClientMainWindow/menubar/menu_File\" command=\"activate\" arguments=\"actionFileOpen\" />" \
  "<pqevent object=\"pqClientMainWindow/FileOpenDialog\" command=\"filesSelected\" arguments=\"$tmp/run.h5\" />" \
  "<pqevent object=\"pqClientMainWindow/propertiesDock/propertiesPanel/Accept\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"pqClientMainWindow/currentTimeToolbar/AnimationTimeWidget/timestepValue\" property=\"value\" arguments=\"$last_index\" />" \
  "<pqevent object=\"pqClientMainWindow/menubar/menu_File\" command=\"activate\" arguments=\"actionFileSaveServerState\" />" \
  "<pqevent object=\"pqClientMainWindow/FileSaveServerStateDialog\" command=\"filesSelected\" arguments=\"$tmp/gui.pvsm\" />"
# REWIND_PANEL_QUICK: the panel waits for each answer (up to 60 s) before QtTesting plays
# the next event, which checks it; on a busy machine a branch can take over a second.
REWIND_PANEL_QUICK=60 timeout 120 "$src/scripts/headless.sh" paraview --dr --plugin-search-paths="$(dirname "$plugin")" --plugins=RewindReader \
  --script=gui.py --test-script=panel.xml --exit >gui.log 2>&1
rc=$?
check "paraview loads the plugin and plays the panel script (dock hidden until View opens it; connect: $n parameter rows; state after pause / resume / pause; apply: the run's new nu shown; branch: its reply, nu back to $nu0, the inflow 1.25; File → Open shows the last step, index $last_index)" "[ $rc = 0 ]"
[ $rc = 0 ] || grep -v '^debug' gui.log | head -20
cat gui_done.txt 2>/dev/null || grep -v "^debug" gui.log | head -20
check "the live source shows the run in the GUI (cells, no error)" "grep -q '^cells [1-9][0-9]* .* error '\"''\"'' gui_done.txt"
check "the live source's box widget is on the run's domain once it has connected (saved state; the case's domain from h5py)" \
  "/usr/bin/python3 $here/state_box.py gui.pvsm RewindLiveSource run.h5"
check "the live source's step and time (field data) are the paused run's, its annotation says them" \
  "/usr/bin/python3 -c \"l=[x for x in open('gui_done.txt') if x.startswith('live ')][0].split(' ', 5); a,ta,s,t=int(l[1]),float(l[2]),int(l[3]),float(l[4]); txt=eval(l[5]); assert a == s and ta == t and txt == 'step %d  t = %.6g' % (s, t), l\""
check "the time axis holds the run file's steps only (not the live source's)" \
  "grep -qx 'axis $file_times' gui_done.txt"
check "the screenshot is not blank" \
  "/usr/bin/python3 -c \"import re,sys; r=[tuple(map(float,m)) for m in re.findall(r'\\(([0-9.]+), ([0-9.]+)\\)', open('gui_done.txt').read())]; sys.exit(0 if r and any(b - a > 50 for a, b in r) else 1)\""
cp gui_view.png "$start_dir/plugin_gui_view.png" 2>/dev/null && echo "screenshot: $start_dir/plugin_gui_view.png"
"$rewind" steer 127.0.0.1:$port status --json >status.json 2>&1
check "the panel paused the run" "grep -q '\"state\": *\"paused\"' status.json"
"$rewind" steer 127.0.0.1:$port parameters --json >params.json 2>&1
check "the run continues in the panel's branch, with its inflow" \
  "/usr/bin/python3 -c \"import json; p={x['name']: x['value'] for x in json.load(open('params.json'))['parameters']}; assert p['boundary.xmin.velocity'] == [1.25, 0, 0], p\""
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
check "the panel's branch from step 0 with the edited inflow: its lineage names g.h5 and the change" \
  "\"$rewind\" lineage gb.h5 >lineage.out 2>&1 && grep -q 'g.h5' lineage.out && grep -q 'boundary.xmin.velocity' lineage.out"

# A collector that accepts and never answers must not freeze ParaView: after a moment
# the panel waits with the GUI's event loop running, so QtTesting plays its next event
# (the check that the message is still empty) while the connect is pending; a frozen
# GUI would play it only after the 4 s timeout, when the message holds the error.
/usr/bin/python3 - >silent.txt <<'PY' &
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
t0 = time.time()
while time.time() - t0 < 60:
    held.append(s.accept()[0])
PY
extra_pids="$extra_pids $!"
for _ in $(seq 1 100); do [ -s silent.txt ] && break; sleep 0.1; done
silent=$(cat silent.txt)
events silent.xml \
  "<pqevent object=\"$panel/collector/port\" command=\"set_int\" arguments=\"$silent\" />" \
  "<pqevent object=\"$panel/collector/connect\" command=\"activate\" arguments=\"\" />" \
  "<pqcheck object=\"$panel/message\" property=\"text\" arguments=\"\" />"
REWIND_PANEL_TIMEOUT=4 timeout 60 "$src/scripts/headless.sh" paraview --dr --plugin-search-paths="$(dirname "$plugin")" \
  --plugins=RewindReader --test-script=silent.xml --exit >silent.log 2>&1
check "a silent collector does not freeze ParaView: the panel's next event plays while the connect waits" "[ $? = 0 ]"
[ -s silent.log ] && grep -v '^debug' silent.log | grep -i "fail\|error" | head -5
exit $fail

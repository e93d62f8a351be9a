#!/usr/bin/env bash
# What a person sees of a Rewind run in the paraview GUI, under Xvfb, with the
# plugin auto-loaded from PV_PLUGIN_PATH (no --plugins): a live source of the 2-D
# cylinder run is coloured by velocity_magnitude (its scalar bar titled with the unit),
# shown as 2-D (interaction mode 2D, the camera down z, a plane: no slab) with the
# cylinder a clean hole (pixels of the screenshot: background inside the cylinder,
# colours around it); after Refresh (what the panel's Follow does) the colour range is
# the data's new range; its Annotation port says its step and time; off the time axis it
# has no data time (the Information tab showed [1e+299, -1e+299]); after a branch in the
# job, its time axis ends in the branch's file. A run file opened with File → Open
# (QtTesting) is coloured, 2-D, and shows its Annotation text (saved state). Start-up
# messages hold no error of Rewind's Python.
#   gui_view.sh REWIND PLUGIN SOURCE_DIR MPIEXEC
set -u
rewind=$1 plugin=$2 src=$3 mpiexec=$4
command -v paraview >/dev/null 2>&1 || { echo "paraview not found: skipping"; exit 77; }
. "$src/tests/plugin/plugin_util.sh"
export REWIND_TOKEN="pv-$$-$RANDOM$RANDOM"
LISTEN_WAIT=30 start_listener "$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output "$tmp/g.h5" \
  --set time.end=30 --set output.checkpoint_interval=0.02 --set output.visualisation_interval=0 -q --listen 127.0.0.1:0
check "the run's collector prints its address" "[ -n '$port' ]"
[ -n "$port" ] || { cat serve.log; exit 1; }
# A finished run file for File → Open (the same 2-D case).
"$rewind" run "$src/cases/default.toml" --output "$tmp/run.h5" -q --set time.end=0.1 \
  --set output.visualisation_interval=0.05 >run.log 2>&1
sed -e "s|@HERE@|$here|g" -e "s|@PORT@|$port|g" -e "s|@TMP@|$tmp|g" "$here/gui_view.py" >gui.py
events() { local f=$1; shift; { echo '<?xml version="1.0" ?>'; echo '<pqevents>'; printf '  %s\n' "$@"; echo '</pqevents>'; } >"$f"; }
events open.xml \
  "<pqevent object=\"pqClientMainWindow/menubar/menu_File\" command=\"activate\" arguments=\"actionFileOpen\" />" \
  "<pqevent object=\"pqClientMainWindow/FileOpenDialog\" command=\"filesSelected\" arguments=\"$tmp/run.h5\" />" \
  "<pqevent object=\"pqClientMainWindow/propertiesDock/propertiesPanel/Accept\" command=\"activate\" arguments=\"\" />" \
  "<pqevent object=\"pqClientMainWindow/menubar/menu_File\" command=\"activate\" arguments=\"actionFileSaveServerState\" />" \
  "<pqevent object=\"pqClientMainWindow/FileSaveServerStateDialog\" command=\"filesSelected\" arguments=\"$tmp/view.pvsm\" />"
PV_PLUGIN_PATH=$(dirname "$plugin") timeout 150 "$src/scripts/headless.sh" paraview --dr \
  --script=gui.py --test-script=open.xml --exit >gui.log 2>&1
rc=$?
check "paraview auto-loads the plugin from PV_PLUGIN_PATH, runs the script and opens the run file (File → Open, Apply, save state)" \
  "[ $rc = 0 ] && [ -s view.json ] && [ -s view.pvsm ]"
[ $rc = 0 ] && [ -s view.json ] || grep -v "^debug" gui.log | tail -30
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
/usr/bin/python3 "$here/gui_view_check.py" view.json view.pvsm view.png "$src/cases/default.toml" gb.h5 >check.out 2>&1
grep -vE '^(yes|no) ' check.out
while read -r word what; do
  check "$what" "[ '$word' = yes ]"
done < <(grep -E '^(yes|no) ' check.out)
check "the checks ran (items 2, 3, 4, 5, 6 and the File → Open state)" "[ \$(grep -cE '^(yes|no) ' check.out) -ge 9 ]"
check "start-up messages hold no error from Rewind's Python (Debian's own may be there: docs/paraview.md)" \
  "! grep -iE 'traceback|error' gui.log | grep -iE 'rewind'"
for f in png json pvsm; do cp "view.$f" "$start_dir/plugin_gui_view_2d.$f" 2>/dev/null; done
cp view_text.png "$start_dir/plugin_gui_view_2d_text.png" 2>/dev/null
echo "screenshot: $start_dir/plugin_gui_view_2d.png, with the Annotation: plugin_gui_view_2d_text.png (what the view showed: .json, the File → Open state: .pvsm)"
exit $fail

#!/usr/bin/env bash
# What a ParaView user meets on opening a run file: the box widget on the
# domain, solid cells hidden and not drawn, the velocity vector and its magnitude, units
# on the arrays and in the GUI's scalar bar title -- each against the file (h5py).
# user_view.py says what it checks; the screenshot is kept as plugin_user_view.png in the
# test directory.
#   user_view.sh REWIND PLUGIN SOURCE_DIR
set -u
rewind=$1 plugin=$2 src=$3
. "$src/tests/plugin/plugin_util.sh"
"$rewind" run "$src/cases/default.toml" --output run.h5 --monitor run.csv -q \
  --set time.end=0.1 --set output.visualisation_interval=0.05 >run.log 2>&1
check "a short run of the README's case" "[ -s run.h5 ]"
pv "$here/user_view.py" "$plugin" run.h5 "$tmp/view.png" >pv.out 2>&1
cat pv.out | grep -E '^(ok|FAIL|Traceback|  File|[A-Za-z]*Error)'
check "pvpython: box on the domain, solid cells hidden and not drawn, velocity vector, units (h5py oracle)" \
  "grep -q '^OK' pv.out"
cp view.png "$start_dir/plugin_user_view.png" 2>/dev/null
command -v paraview >/dev/null 2>&1 || { echo "paraview not found: the scalar bar title is not checked"; exit $fail; }
# In the GUI: a scalar bar of u is titled with the file's unit (saved state, by content).
unit=$(/usr/bin/python3 -c "
import h5py
with h5py.File('run.h5', 'r') as f:
    n = [x.decode() if isinstance(x, bytes) else x for x in f['common/variable_names'][...]]
    u = [x.decode() if isinstance(x, bytes) else x for x in f['common/variable_units'][...]]
print(dict(zip(n, u))['u'])")
cat >bar.py <<PY
from paraview.simple import *
r = RewindRunFile(FileName="$tmp/run.h5")
d = Show(r)
ColorBy(d, ("CELLS", "u"))
d.SetScalarBarVisibility(GetActiveView(), True)
Render()
PY
{ echo '<?xml version="1.0" ?>'; echo '<pqevents>'
  echo '  <pqevent object="pqClientMainWindow/menubar/menu_File" command="activate" arguments="actionFileSaveServerState" />'
  echo "  <pqevent object=\"pqClientMainWindow/FileSaveServerStateDialog\" command=\"filesSelected\" arguments=\"$tmp/state.pvsm\" />"
  echo '</pqevents>'; } >bar.xml
timeout 60 "$src/scripts/headless.sh" paraview --dr --plugin-search-paths="$(dirname "$plugin")" --plugins=RewindReader \
  --script=bar.py --test-script=bar.xml --exit >bar.log 2>&1
grep -A1 'name="Title"' state.pvsm 2>/dev/null | grep -o 'value="[^"]*"' | head -3
check "the GUI's scalar bar of u is titled 'u [$unit]' (/common/variable_units)" \
  "grep -A1 'name=\"Title\"' state.pvsm | grep -qF 'value=\"u [$unit]\"'"
exit $fail

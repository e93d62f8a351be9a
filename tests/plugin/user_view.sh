#!/usr/bin/env bash
# What a ParaView user meets on opening a run file (issue 35): the box widget on the
# domain, solid cells hidden and not drawn, the velocity vector and its magnitude, units
# on the arrays -- each against the file (h5py). user_view.py says what it checks; the
# screenshot is kept as plugin_user_view.png in the test directory.
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
exit $fail

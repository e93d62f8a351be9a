#!/usr/bin/env bash
# Colour ranges from the steps' statistics in the paraview GUI (under Xvfb, the plugin
# auto-loaded from PV_PLUGIN_PATH): a run file's coarse, cropped window coloured by u has
# the colour range of the shown grids' non-solid cells (h5py + numpy over the file's
# cells, not Rewind's reader), follows it to a later step, keeps a range the user locked;
# a file written without statistics opens, coloured as ParaView colours it.
#   colour_range.sh REWIND PLUGIN SOURCE_DIR
set -u
rewind=$1 plugin=$2 src=$3
command -v paraview >/dev/null 2>&1 || { echo "paraview not found: skipping"; exit 77; }
. "$src/tests/plugin/plugin_util.sh"
run() { "$rewind" run "$src/cases/default.toml" -q --set time.end=0.3 --set output.visualisation_interval=0.1 "$@"; }
run --output "$tmp/run.h5" >run.log 2>&1
run --output "$tmp/plain.h5" --set output.io.statistics=false >>run.log 2>&1
check "rewind run writes both files, one with statistics, one without" \
  "/usr/bin/python3 -c \"import h5py, sys; a = h5py.File('$tmp/run.h5'); b = h5py.File('$tmp/plain.h5'); \
sys.exit(not (all('statistics' in a['simulation'][k] for k in a['simulation'] if k.startswith('step_')) and \
not any('statistics' in b['simulation'][k] for k in b['simulation'] if k.startswith('step_'))))\""
sed -e "s|@HERE@|$here|g" -e "s|@TMP@|$tmp|g" "$here/colour_range.py" >gui.py
PV_PLUGIN_PATH=$(dirname "$plugin") timeout 100 "$src/scripts/headless.sh" paraview --dr --script=gui.py --exit >gui.log 2>&1
rc=$?
check "paraview runs the script (the plugin from PV_PLUGIN_PATH)" "[ $rc = 0 ] && [ -s colour.json ]"
[ -s colour.json ] || { grep -v "^debug" gui.log | tail -30; exit 1; }
/usr/bin/python3 "$here/colour_range_check.py" colour.json run.h5 >check.out 2>&1
grep -vE '^(yes|no) ' check.out
while read -r word what; do
  check "$what" "[ '$word' = yes ]"
done < <(grep -E '^(yes|no) ' check.out)
check "the checks ran (9)" "[ \$(grep -cE '^(yes|no) ' check.out) -eq 9 ]"
exit $fail

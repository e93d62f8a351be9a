#!/usr/bin/env bash
# What a user meets opening a run's views in stock ParaView 5.11 (pvpython, no Rewind
# plugin): in *Surface* the solid cells are hidden, the arrays carry their units, and at
# each time of the time toolbar the data, its `time` field array and the Information tab's
# data time are that step's — against the run file (h5py / numpy), with a screenshot (the
# cylinder's centre shows the background), kept as views_stock.png in the test directory;
# then the same once regenerate_views rebuilt the views offline. The steps share one
# geometry file; the same checks in the paraview GUI (its Information tab's data time). Exit
# 77 (skipped) without pvpython or Xvfb.
#   views_stock.sh REWIND SOURCE_DIR MPIEXEC REGEN_VIEWS
start_dir=$PWD
regen=$(realpath "$4")
source "$(dirname "$0")/lib.sh" "$@"
command -v pvpython >/dev/null 2>&1 || { echo "SKIPPED: pvpython not found"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || { echo "SKIPPED: Xvfb not found"; exit 77; }
# The README's case on 1 server + 2 compute ranks; steps at t = 0, 0.05, 0.1.
run_compute 2 "$src/cases/default.toml" --output run.h5 --monitor run.csv -q \
  --set time.end=0.1 --set output.visualisation_interval=0.05
check "a run of the README's case on 2 compute ranks writes its views" "[ -s run.views/run.hdf.series ]"
check "its steps (the same grids) share one geometry file, and a view is small (< 64 KiB)" \
  "[ \$(ls run.views/mesh_*.h5 | wc -l) = 1 ] && [ -z \"\$(find run.views -name 'step_*.hdf' -size +64k)\" ]"
timeout 120 "$src/scripts/headless.sh" pvpython "$(dirname "$0")/views_stock.py" run.h5 "$tmp/view.png" >pv.out 2>&1
grep -E '^(ok|FAIL|note|Traceback|  File|[A-Za-z]*Error)' pv.out
check "stock pvpython: solid cells hidden, units in the names, each step's time and data (h5py oracle)" \
  "grep -q '^OK' pv.out"
cp view.png "$start_dir/views_stock.png" 2>/dev/null
# The same in the paraview GUI (no plugin: PV_PLUGIN_PATH empty), whose Information tab
# reads the data information these checks read: the time toolbar's times, the data time.
if command -v paraview >/dev/null 2>&1; then
  VIEWS_STOCK="run.h5 $tmp/gui.png $tmp/gui.txt" PV_PLUGIN_PATH= timeout 150 "$src/scripts/headless.sh" paraview --dr \
    --script="$(dirname "$0")/views_stock.py" --exit >gui.log 2>&1
  grep -E '^(FAIL|Traceback|  File|[A-Za-z]*Error)' gui.txt gui.log
  check "the paraview GUI: the same checks, the data time following the time toolbar" "grep -q '^OK' gui.txt"
  cp gui.png "$start_dir/views_stock_gui.png" 2>/dev/null
fi
# A crash while writing a view loses nothing: the views rebuilt from the file alone.
mv run.views live.views
"$regen" run.h5 >regen.log 2>&1
check "regenerate_views rebuilds a view per step" \
  "[ \$(ls run.views/*.hdf | wc -l) = \$(ls live.views/*.hdf | wc -l) ] && [ -s run.views/run.hdf.series ]"
timeout 120 "$src/scripts/headless.sh" pvpython "$(dirname "$0")/views_stock.py" run.h5 "$tmp/regen.png" >pv2.out 2>&1
grep -E '^(FAIL|Traceback|  File|[A-Za-z]*Error)' pv2.out
check "the rebuilt views: the same checks" "grep -q '^OK' pv2.out"
exit $fail

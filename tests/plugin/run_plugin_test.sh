#!/usr/bin/env bash
# The reader: write a short 2-D run, compute what it holds with h5py, check the plugin in
# pvpython (level cut, window box / budget / variables, slice, contour, glyph, stream
# tracer), every window value against the file (check_window.py) and what its leaves
# imply, the level cut of a uniform tree against its leaves, and the step shown at a time
# against the kernel's rule (`rewind window --time t=T`).
#   run_plugin_test.sh REWIND PLUGIN SOURCE_DIR
set -u
rewind=$1 plugin=$2 src=$3
. "$src/tests/plugin/plugin_util.sh"
"$rewind" run "$src/cases/default.toml" --output run.h5 --monitor run.csv -q \
  --set time.end=0.1 --set output.visualisation_interval=0.03 --set 'tree.refine=[{center=[0.2,0.2,0.5],radius=0.08,level=4}]' >run.log 2>&1
/usr/bin/python3 "$here/expected.py" run.h5 expected.json
# Probe times: every step, between steps, before the first and after the last.
/usr/bin/python3 -c "
import json; t = json.load(open('expected.json'))['times']
print(*(t + [(a + b) / 2 for a, b in zip(t, t[1:])] + [t[-1] + 1, t[0] - 1]))" >probes.txt
pv "$here/check_plugin.py" "$plugin" run.h5 expected.json probes.txt >pv.out 2>&1
check "pvpython: times, variables, level cut, window box / budget / variables, slice, contour, glyph, stream tracer" \
  "grep -q '^OK' pv.out"
grep -v '^ok' pv.out | tail -5
# A uniform tree (no refinement region): its coarse levels are no by-product of the
# adaptive exchange; the level cut at every level against what the leaves imply.
"$rewind" run "$src/cases/default.toml" --output uniform.h5 --monitor uniform.csv -q --set time.end=0.05 >>run.log 2>&1
/usr/bin/python3 "$here/expected.py" uniform.h5 expected_uniform.json
pv "$here/level_cut.py" "$plugin" uniform.h5 expected_uniform.json >cut.out 2>&1
cat cut.out | grep -E '^(ok|FAIL)'
check "uniform tree: the level cut at every MaximumLevel = its leaves' average (h5py oracle)" \
  "! grep -q '^FAIL' cut.out && [ \$(grep -c '^ok' cut.out) = 4 ]"
for w in w_whole w_zoom w_small w_tiny w_step1; do
  check "$w: every value and cell type equals the file's (h5py)" \
    "/usr/bin/python3 $src/tests/collector/check_window.py run.h5 $w.json >$w.chk 2>&1"
  cat $w.chk
done
first=$("$rewind" window run.h5 --time '#0' --box 0,0,0,0.1,0.1,0 --budget 1 --vars u | sed -n 's/^step \([0-9]*\) .*/\1/p')
last=$("$rewind" window run.h5 --time '#-1' --box 0,0,0,0.1,0.1,0 --budget 1 --vars u | sed -n 's/^step \([0-9]*\) .*/\1/p')
while read -r t step; do
  want=$("$rewind" window run.h5 --time "t=$t" --box 0,0,0,0.1,0.1,0 --budget 1 --vars u 2>/dev/null | sed -n 's/^step \([0-9]*\) .*/\1/p')
  # Before the first step and after the last the kernel has none (no_such_step); the
  # reader, on ParaView's time axis, shows the first and the last.
  if [ -z "$want" ]; then
    why=$("$rewind" window run.h5 --time "t=$t" --box 0,0,0,0.1,0.1,0 --budget 1 --vars u 2>&1)
    case $why in *"no committed step at or before"*) want=$first ;; *"has not been reached"*) want=$last ;; esac
  fi
  check "t=$t shows step $step, as the kernel's rule (step $want)" "[ '$step' = '$want' ]"
done <picked.txt
exit $fail

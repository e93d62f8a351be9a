#!/usr/bin/env bash
# A live window's coarse levels at a step nobody has looked at beyond its leaves (issue
# 36). A window of leaves alone skips the restriction of a uniform tree's coarse levels
# (live::Host::sync_parents): so a window above the leaves asked next at the same step,
# and one asked after a leaf window at the step before, must still show the current
# step's averages, not those of the last step written. The run writes nothing between
# its initial and its final checkpoint; it is paused a few steps in, two leaf windows and
# a coarse one are taken there, and the run is stopped (its final checkpoint is that
# step): every window equals the file's cells, and the coarse one also what numpy
# computes from the file's leaves (check_window.py, lod_oracle.py); the run's closing
# live: line counts the windows above the leaves. An adaptive window at the paused step
# (ranked by the live state's details and octants' shares) equals `rewind window FILE@STEP
# --lod adaptive` on the final checkpoint (its statistics and shares): the same grids, cells
# and values, some grid shown in part (the octant walk on both sides). On 2 processes (the
# collector a thread of the compute rank) and 4 (a collector rank, 2 compute ranks).
#   cli_live_lod.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # in_tmpdir, check, start_listener, wait_job
in_tmpdir
export REWIND_TOKEN="lod-$$-$RANDOM$RANDOM"  # the runs' token; the clients take it from here too

box="--box 0,0,0,2.2,0.41,0 --vars p,u"
leaves="$box --budget 22528"  # every leaf cell of the 352 x 64 channel
coarse="$box --budget 3000"   # levels above the leaves only
levels() {                    # levels WINDOW.json: the distinct levels of its pieces
  $py -c "import json,sys; print(' '.join(sorted({str(p['level']) for p in json.load(open(sys.argv[1]))['pieces']})))" "$1"
}
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
for np in 2 4; do
  start_listener "$mpiexec" -n $np "$rewind" run "$src/cases/default.toml" --output lod$np.h5 --set time.end=30 \
    --set output.checkpoint_interval=0 --set output.visualisation_interval=0 --set monitor.interval=1000 \
    --listen 127.0.0.1:0  # not -q: the closing live: line
  check "np $np: the live run listens" "[ -n '$port' ]" || { cat serve.log; continue; }
  steer="$rewind steer 127.0.0.1:$port"
  win="$rewind window 127.0.0.1:$port"
  # A leaf window while it runs, then paused a few steps past the initial checkpoint.
  for _ in $(seq 1 600); do
    [ "$($steer status --json 2>/dev/null | $py -c 'import json,sys; print(json.load(sys.stdin)["step"])' 2>/dev/null)" \
      -ge 3 ] 2>/dev/null && break
    sleep 0.1
  done
  $win $leaves --out before$np.json >before$np.out 2>&1
  $steer pause >pause$np.out 2>&1
  $win $leaves --out leaves$np.json >leaves$np.out 2>&1 && $win $coarse --out coarse$np.json >coarse$np.out 2>&1 &&
    $win $leaves --out again$np.json >again$np.out 2>&1 &&
    $win $coarse --lod adaptive --out adaptive$np.json >adaptive$np.out 2>&1
  check "np $np: a leaf window, a coarse one, a leaf one again and an adaptive one at the paused step" \
    "[ $? = 0 ] && grep -q paused pause$np.out" ||
    cat pause$np.out leaves$np.out coarse$np.out again$np.out adaptive$np.out
  check "np $np: the leaf window holds the leaves alone (level 3), the coarse one none of them" \
    "[ '$(levels leaves$np.json)' = 3 ] && ! levels coarse$np.json | grep -q 3"
  s=$(field leaves$np.json step)
  check "np $np: the three windows are of one step ($s), not before the step of the leaf window asked while it ran" \
    "[ '$(field coarse$np.json step)' = '$s' ] && [ '$(field again$np.json step)' = '$s' ] &&
     [ '$(field before$np.json step)' -le '$s' ] && [ '$s' -gt 0 ]"
  $steer stop >/dev/null 2>&1
  wait_job 120
  check "np $np: stop ends the run cleanly" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
  check "np $np: its live: line counts 5 windows, 2 of them above the leaves (the others restricted nothing)" \
    "grep -Eq '^live: +5 windows .*; windows above the leaves: 2 \([0-9.]+ s restricting' serve.log" || grep live: serve.log
  check "np $np: the coarse window after a leaf window equals the file and its leaves' averages (numpy)" \
    "$py $src/tests/collector/check_window.py lod$np.h5 coarse$np.json >chk$np.out 2>&1" || cat chk$np.out
  # The live state's details (computed by the compute ranks with the writer's
  # code) equal the file's statistics at that step, so the adaptive selections agree:
  # the same grids, cropped alike, the same values -- on mixed levels, not uniform.
  "$rewind" window "lod$np.h5@$s" $coarse --lod adaptive --out fadaptive$np.json >fadaptive$np.out 2>&1
  check "np $np: the live adaptive window equals the file's adaptive window at the paused step, on mixed levels" \
    "$py $src/tests/collector/check_same_window.py adaptive$np.json fadaptive$np.json --mixed --in-part --budget 3000 \
     >same$np.out 2>&1" || cat same$np.out fadaptive$np.out
  check "np $np: the live adaptive window equals the file's cells and its leaves' averages (numpy)" \
    "$py $src/tests/collector/check_window.py lod$np.h5 adaptive$np.json >>chk$np.out 2>&1" || cat chk$np.out
  check "np $np: the leaf windows equal the file's cells" \
    "$py $src/tests/collector/check_window.py lod$np.h5 leaves$np.json again$np.json >>chk$np.out 2>&1" || cat chk$np.out
done
exit $fail

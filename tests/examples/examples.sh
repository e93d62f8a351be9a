#!/usr/bin/env bash
# The two codes Rewind never saw (examples/heat-c: C, adaptive quadtree; examples/heat-f:
# Fortran, uniform 3-D blocks), built against an installed Rewind, run the way their
# users run them, and checked with the stock tools and Rewind's own:
#  - the same steps on 1-4 ranks, bit for bit; a run continued from its checkpoint on
#    another rank count equals the uninterrupted one, bit for bit;
#  - rewind info / verify / lineage read their files (info says nothing of a rewind
#    run's unused T about the codes' own T); every parent the codes gave no
#    array is the average of its leaves (the h5py oracle);
#  - live: a window of the paused state equals the file (its last step, written at stop)
#    value by value, and the leaves' averages; `rewind steer set` shows in the code's own
#    output; a branch inside the job starts from its parent's step, bit for bit, and
#    names its change; the parameters go back to what that step had; a code that allows
#    one future (heat3d: the default) refuses a fork of two;
#  - stock ParaView opens the views of their files.
#   examples.sh HEAT_C HEAT3D_F REWIND SOURCE_DIR MPIEXEC
set -u
heat_c=$(realpath "$1") heat_f=$(realpath "$2")
shift 2
source "$(dirname "$0")/../apps/lib.sh" "$@"
py=/usr/bin/python3
steps_of() { "$rewind" info "$1" --json | $py -c "import json,sys; print(*[s['step'] for s in json.load(sys.stdin)['steps']])"; }
all_same() {  # every step of $1 is in $2, bit for bit
  local s
  for s in $(steps_of "$1"); do same "$1@$s" "$2@$s" || return 1; done
}
# The token the library generated for a code that gave none, as its listening process printed it.
live_token() { sed -n 's/^rewind live: token \([0-9a-f]*\) (generated.*/\1/p' "$1" | head -1; }
# live_token_checks LABEL LOG PORT: the token is there, 48 hex digits; a client without it is refused.
live_token_checks() {
  export REWIND_TOKEN=$(live_token "$2")
  check "$1: no token given, the library generated one and printed it" "[ \${#REWIND_TOKEN} = 48 ]"
  REWIND_TOKEN= "$rewind" steer 127.0.0.1:$3 status >notoken.out 2>&1
  check "$1: a client without the token is refused (unauthorized)" "[ $? != 0 ] && grep -q unauthorized notoken.out"
}

for entry in "heat|$heat_c|40" "heat3d|$heat_f|40"; do
  IFS='|' read -r name prog steps <<<"$entry"
  opts=(--vis 10 --cp 20)
  for np in 1 2 3 4; do
    "$mpiexec" -n $np "$prog" $name.np$np.h5 $steps "${opts[@]}" >$name.np$np.log 2>&1
    check "$name np=$np: runs ($steps steps)" "[ $? = 0 ] && [ -f $name.np$np.h5 ]"
    [ $np = 1 ] || check "$name np=$np: every step equal to one rank's, bit for bit" "all_same $name.np1.h5 $name.np$np.h5"
  done
  "$mpiexec" -n 2 "$prog" $name.half.h5 $((steps / 2)) "${opts[@]}" >$name.half.log 2>&1
  "$mpiexec" -n 3 "$prog" unused $steps --restart $name.half.h5 "${opts[@]}" >$name.cont.log 2>&1
  check "$name: run to half on 2 ranks, continued on 3, equals the uninterrupted run" "[ $? = 0 ] && all_same $name.np1.h5 $name.half.h5"
  check "$name: rewind verify passes" "$rewind verify $name.np3.h5 >/dev/null"
  check "$name: rewind info lists its steps and variable" "$rewind info $name.np1.h5 | grep -q '^variables   T \[K\]'"
  check "$name: ... its T is the code's own, not 'unused (no heat)' as in a rewind run without heat" \
    "$rewind info $name.np1.h5 | grep '^variables' | grep -qv 'unused'"
  check "$name: parents without arrays hold the average of their leaves (h5py oracle)" "lod_ok $name.np4.h5"

  # Live, on 2 ranks: the collector is a thread of rank 0.
  unset REWIND_TOKEN  # the code gives none and has none in its environment: the library generates one
  "$mpiexec" -n 2 "$prog" $name.live.h5 100000000 --vis 50 --cp 500 --listen 127.0.0.1:0 >$name.live.log 2>&1 &
  job=$!
  port=$(listen_port $name.live.log $name)
  check "$name live: the code says where it listens" "[ -n '$port' ]"
  [ -n "$port" ] || { kill $job; continue; }
  live_token_checks "$name live" $name.live.log $port
  steer() { "$rewind" steer 127.0.0.1:$port "$@"; }
  steer pause >/dev/null 2>&1
  steer set q=20 >set.out 2>&1
  check "$name live: set q=20 is accepted" "[ $? = 0 ]"
  steer set q=1000 >bad.out 2>&1
  check "$name live: a value outside the declared range: one error line" "[ $? != 0 ] && [ \$(wc -l <bad.out) = 1 ] && grep -q 'outside' bad.out"
  "$rewind" window 127.0.0.1:$port --box 0,0,0,1,1,1 --budget 600 --out $name.w1.json >w1.out 2>&1
  check "$name live: a coarse window of the paused state" "[ $? = 0 ] && [ -s $name.w1.json ]"
  if [ $name = heat3d ]; then  # heat-c allows 16 futures (tests/api/futures.sh); heat3d keeps the default
    steer branch --from '#0' --future 'kappa=0.02' --future '' >futures.out 2>&1
    check "$name live: a code that allows one future refuses a fork of two, saying why; nothing is created" \
      "[ $? != 0 ] && grep -q 'computes one future at a time, not 2' futures.out && [ ! -e $name.live.branch0.h5 ]"
  fi
  steer branch --from '#0' --set kappa=0.05 --output $name.branch.h5 >branch.out 2>&1
  check "$name live: a branch from the first step inside the job" "[ $? = 0 ] && grep -q 'branched $name.branch.h5' branch.out"
  steer resume >/dev/null 2>&1
  sleep 1
  steer pause >/dev/null 2>&1
  "$rewind" window 127.0.0.1:$port --box 0,0,0,1,1,1 --budget 600 --out $name.w2.json >w2.out 2>&1
  steer stop >/dev/null 2>&1
  wait $job
  check "$name live: stop ends the job cleanly (exit 0)" "[ $? = 0 ]"
  check "$name live: the set shows in the code's own output" "grep -q '$name: q = *2' $name.live.log"
  check "$name live: the branch took the step-0 parameters back (q = 5) with its change (kappa = 0.05)" \
    "sed -n '/$name: branched/,\$p' $name.live.log | grep -Eq '$name: kappa = *(0\.05|5\.00000E-02)' &&
     sed -n '/$name: branched/,\$p' $name.live.log | grep -Eq '$name: q = *(5|5\.00000E\+00) '"
  check "$name live: the branch's window equals its file's last step and the leaves' averages" \
    "$py $src/tests/collector/check_window.py $name.branch.h5 $name.w2.json >chk.out 2>&1 || { tail -2 chk.out; false; }"
  check "$name live: the branch's first step is its parent's step 0, bit for bit" "same $name.live.h5@0 $name.branch.h5@#0"
  "$rewind" lineage $name.branch.h5 >lineage.out 2>&1
  check "$name live: rewind lineage names the parent and the change" "grep -q '$name.live.h5' lineage.out && grep -q 'kappa=0.05' lineage.out"
  check "$name live: the BRANCH event says which future of how many, on how many ranks (its comm), and its change" \
    "grep -q '$name: branched $name.branch.h5 from .*step 0 (future 1 of 1 on 2 ranks: kappa=0.05)' $name.live.log"
  check "$name live: the branch verifies, its parents are averages" "$rewind verify $name.branch.h5 >/dev/null && lod_ok $name.branch.h5"
done

# The collector on a rank of its own (the Damaris model): 3 processes, the last one taken.
unset REWIND_TOKEN
"$mpiexec" -n 3 "$heat_c" rank.h5 100000000 --vis 50 --cp 500 --listen 127.0.0.1:0 --collector rank >rank.log 2>&1 &
job=$!
port=$(listen_port rank.log heat)
check "heat, collector rank: its rank says where it listens" "[ -n '$port' ]"
if [ -n "$port" ]; then
  live_token_checks "heat, collector rank" rank.log $port
  "$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
  "$rewind" steer 127.0.0.1:$port status >status.out 2>&1
  check "heat, collector rank: status counts the 2 compute ranks" "grep -q '2 compute ranks' status.out"
  "$rewind" steer 127.0.0.1:$port set kappa=0.02 >/dev/null 2>&1
  "$rewind" window 127.0.0.1:$port --box 0,0,0,1,1,0 --budget 2000 --out rank.json >/dev/null 2>&1
  "$rewind" window 127.0.0.1:$port --box 0,0,0,1,1,0 --budget 2000 --lod adaptive --out rank.adaptive.json \
    >/dev/null 2>&1
  "$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
  wait $job
  check "heat, collector rank: the job ends cleanly" "[ $? = 0 ]"
  check "heat, collector rank: the set shows in the code's output" "grep -q 'heat: kappa = 0.02' rank.log"
  check "heat, collector rank: the window equals the file and the leaves' averages" \
    "$py $src/tests/collector/check_window.py rank.h5 rank.json >chk.out 2>&1 || { tail -2 chk.out; false; }"
  # Its adaptive window at the paused step: ranked by the details the C API's compute
  # ranks computed, the same as the file's (its statistics) at that step.
  "$rewind" window "rank.h5@$($py -c "import json; print(json.load(open('rank.adaptive.json'))['step'])")" \
    --box 0,0,0,1,1,0 --budget 2000 --lod adaptive --out rank.fadaptive.json >/dev/null 2>&1
  check "heat, collector rank: the live adaptive window equals the file's at that step, on mixed levels" \
    "$py $src/tests/collector/check_same_window.py rank.adaptive.json rank.fadaptive.json --mixed --budget 2000 \
     >same.out 2>&1 || { tail -2 same.out; false; }"
else
  kill $job
fi

# Stock ParaView (no Rewind plugin) opens the views the kernel wrote beside the files.
if command -v pvpython >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
  cat >views.py <<'EOF'
import sys
import h5py
import numpy as np
from paraview.simple import OpenDataFile
for name in sys.argv[1:]:
    r = OpenDataFile(f"{name}.views/{name}.hdf.series")
    t = list(r.TimestepValues)
    r.UpdatePipeline(t[-1])
    d = r.GetClientSideObject().GetOutputDataObject(0)
    with h5py.File(f"{name}.h5", "r") as f:  # the step shown: levels and grids (h5py)
        g = next(f["simulation"][s] for s in f["simulation"] if s.startswith("step_")
                 and abs(float(f["simulation"][s].attrs["time"]) - t[-1]) < 1e-12)
        lv, n = len(g["level_offsets"]) - 1, len(g["level"])
        every = n * int(np.prod(f["common"].attrs["block_cells"])) == d.GetNumberOfCells()
    print(f"{name}: {d.GetClassName()} levels {lv} blocks {n} every cell {every} times {len(t)}")
EOF
  timeout 120 "$src/scripts/headless.sh" pvpython views.py heat.np2 heat3d.np2 >pv.out 2>&1
  check "stock ParaView opens the C code's views (3 levels, 9 + 21 blocks)" "grep -q '^heat.np2: vtkUnstructuredGrid levels 4 .* every cell True' pv.out"
  check "stock ParaView opens the Fortran code's views (3 levels, 73 blocks)" "grep -q '^heat3d.np2: vtkUnstructuredGrid levels 3 blocks 73 every cell True' pv.out"
  grep -E '^heat' pv.out
else
  echo "skip: stock ParaView (pvpython, Xvfb) not installed"
fi
exit $fail

#!/usr/bin/env bash
# The level of detail against an oracle that does not trust Rewind: for files written by
# `rewind run` — every write strategy, uniform and adaptive trees, 2-D and 3-D, one
# process and under mpirun with 1-4 compute ranks, compressed, continued, branched, and
# restarted from a step whose coarse levels were stale — tests/support/lod_oracle.py
# (h5py + numpy only) rebuilds every parent grid from its leaves through the stored
# bounding boxes and child rows and requires parent = average of its children (relative
# error <= 1e-12 for f64 steps, float32 rounding for f32 ones), on every committed step.
# Offline windows at coarse levels are checked against the same oracle. (A uniform
# tree's coarse levels once kept the initial state while only the leaves moved.)
#   cli_lod_oracle.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
# run N OUT CASE [args]: `rewind run` on N compute ranks (1: one process; "m1": one compute
# rank under mpirun; dedicated adds the I/O ranks itself), must succeed.
run() {
  local n=$1 out=$2 case_file=$3 extra=0; shift 3
  case "$*" in *dedicated*) extra=1 ;; esac
  case $n in
    1) "$rewind" run "$case_file" -o "$out" -q --force "$@" >"$out.log" 2>&1 ;;
    m*) "$mpiexec" -n $((${n#m} + 1 + extra)) "$rewind" run "$case_file" -o "$out" -q --force "$@" >"$out.log" 2>&1 ;;
  esac || { tail -3 "$out.log"; return 1; }
}
cyl="$src/cases/default.toml"                                     # uniform 2-D, 352 x 64 cells
short=(--steps 4 --set output.checkpoint_every=2 --set output.visualisation_every=1)  # f32 visualisation steps
# Every strategy; one process and 1-4 compute ranks under mpirun.
for entry in "1 auto" "1 collective" "m1 auto" "m2 auto" "m3 auto" "m4 auto" "m3 collective" \
             "m2 independent" "m4 aggregated" "m1 dedicated" "m3 dedicated"; do
  read -r n s <<<"$entry"
  f=cyl_${s}_$n.h5
  where="one process"; [ "$n" = 1 ] || where="${n#m} compute rank(s) under mpirun"
  run "$n" "$f" "$cyl" "${short[@]}" --set "output.io.strategy=\"$s\""
  check "uniform 2-D, $s on $where: every parent = average of its leaves, every step" "lod_ok $f"
done
run m2 cyl_ded2.h5 "$cyl" "${short[@]}" --set 'output.io.strategy="dedicated"' --set output.io.steps_in_flight=2
check "uniform 2-D, dedicated with 2 steps in flight: parents = averages" "lod_ok cyl_ded2.h5"
run m2 cyl_deflate.h5 "$cyl" "${short[@]}" --set 'output.io.compression="deflate"'
check "uniform 2-D, deflate-compressed: parents = averages" "lod_ok cyl_deflate.h5"

# Uniform 3-D (the lid-driven cavity at 32^3), adaptive 2-D and 3-D.
cav=(--set 'tree.s=[8,8,8]' --steps 3 --set output.checkpoint_every=1)
run 1 cav_1.h5 "$src/cases/cavity-3d.toml" "${cav[@]}"
check "uniform 3-D on one process: parents = averages" "lod_ok cav_1.h5"
run m2 cav_m2.h5 "$src/cases/cavity-3d.toml" "${cav[@]}" --set 'output.io.strategy="collective"'
check "uniform 3-D, collective on 2 compute ranks: parents = averages" "lod_ok cav_m2.h5"
run m3 cav_ded.h5 "$src/cases/cavity-3d.toml" "${cav[@]}" --set 'output.io.strategy="dedicated"'
check "uniform 3-D, dedicated on 3 compute ranks: parents = averages" "lod_ok cav_ded.h5"
run m3 ada2.h5 "$src/cases/cylinder-2d1-adaptive.toml" "${short[@]}"
check "adaptive 2-D on 3 compute ranks: parents = averages" "lod_ok ada2.h5"
run m2 ada3.h5 "$src/cases/tree-demo.toml" --steps 2 --set output.checkpoint_every=1 --set 'tree.s=[4,4,4]' \
  --set time.end=1 --set physics.nu=0.01 --set 'boundary.xmin.type="inflow"' --set 'boundary.xmin.velocity=[1,0,0]' \
  --set 'boundary.xmax.type="outflow"'
check "adaptive 3-D on 2 compute ranks: parents = averages" "lod_ok ada3.h5"

# Continued in place and branched (on other rank counts).
cp cyl_auto_1.h5 cont.h5
"$mpiexec" -n 4 "$rewind" run --restart cont.h5 --steps 3 -q --monitor cont.csv >cont.log 2>&1
check "a run continued under mpirun: parents = averages on every step" "lod_ok cont.h5"
"$mpiexec" -n 3 "$rewind" run --restart cyl_auto_1.h5@2 --set 'boundary.xmin.velocity=[1.2,0,0]' --steps 3 \
  -o branch.h5 -q >branch.log 2>&1
check "a branch under mpirun: parents = averages on every step" "lod_ok branch.h5"

# A restart from a step whose coarse levels are wrong (as files written before the fix
# hold them): the continued steps' parents are the averages again, and the leaves are
# bit-identical to a restart from the intact step.
run 1 stale.h5 "$cyl" "${short[@]}" --set output.io.checksums=false
cp stale.h5 intact.h5
$py - stale.h5 <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as h5:
    last = max(k for k in h5["/simulation"] if k.startswith("step_"))
    g = h5["/simulation"][last]
    parents = np.any(g["child_rows"][:] >= 0, axis=1)
    for name, ds in g["cell_data"].items():
        a = ds[:]
        a[parents] = 123.0          # nothing like the flow
        ds[...] = a
EOF
check "the damaged step fails the oracle (the oracle sees stale parents)" "! lod_ok stale.h5"
"$rewind" run --restart stale.h5 --steps 2 -q --monitor s.csv >stale.log 2>&1
"$rewind" run --restart intact.h5 --steps 2 -q --monitor i.csv >intact.log 2>&1
check "restart from stale parents: the continued steps' parents = averages" "lod_ok stale.h5 --step 5 --step 6"
check "restart from stale parents: the continued leaves equal a restart from the intact step" \
  "$py - stale.h5 intact.h5 <<'EOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
for s in ('step_00000005', 'step_00000006'):
    ga, gb = a['simulation'][s], b['simulation'][s]
    leaf = np.all(ga['child_rows'][:] < 0, axis=1)
    for v in ga['cell_data']:
        assert np.array_equal(ga['cell_data'][v][:][leaf], gb['cell_data'][v][:][leaf]), (s, v)
EOF"

# Offline windows at every level of detail equal the oracle (a window compared with the
# file alone agreed while both were wrong).
for budget in 300 1500 6000 25000; do
  "$rewind" window cyl_auto_m3.h5@4 --box 0,0,0,2.2,0.41,0 --budget $budget --out w$budget.json >/dev/null 2>&1
  check "offline window at budget $budget: every value = its leaves' average" "lod_ok cyl_auto_m3.h5 --window w$budget.json"
done
exit $fail

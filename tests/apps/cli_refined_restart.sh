#!/usr/bin/env bash
# A restart onto a refined tree through `rewind run --restart FILE@STEP --set 'tree.refine=[...]'`,
# under mpiexec as users run it:
#  - the branch starts from the parent's step on the case's deeper tree: the stored grids
#    bit for bit, the added ones (two levels down) the parent's finest level interpolated
#    (h5py + numpy from the parent's cells, refined_restart.py: no Rewind code), conservative;
#  - the same branch on 1, 2 and 3 compute ranks is bit-identical, and it runs on: its steps
#    are finite and divergence-free to the solver's tolerance;
#  - it records its parent and the change; the parent file is untouched;
#  - restarting the branch continues on its refined tree bit for bit (3 + 3 == 6 steps);
#  - a tree that would lose stored grids (fewer regions, a shallower depth) is refused with one
#    line naming the file and step, no file made; a whole [tree] table is refused as before
#    (an override of a table no longer passes unnoticed);
#  - the memory estimate is the refined tree's.
source "$(dirname "$0")/lib.sh" "$@"
case_file=$src/cases/default.toml
run() { run_compute "$@"; }
oracle() { /usr/bin/python3 "$src/tests/apps/refined_restart.py" "$@" >oracle.out 2>&1; }

run 2 "$case_file" --output parent.h5 --set time.end=0.1 --set output.checkpoint_interval=0.05 \
  --set output.visualisation_interval=0 -q --monitor parent.csv
sum_before=$(md5sum parent.h5 | cut -d' ' -f1)
step=$(/usr/bin/python3 -c "
import h5py
f = h5py.File('parent.h5', 'r')
print([int(r['step']) for r in f['/simulation/index'][:] if abs(r['time'] - 0.05) < 1e-12][0])")
check "the parent wrote a checkpoint at t = 0.05 (step $step)" "[ -n \"$step\" ]"

# Level 4 in a disc around the cylinder, level 5 in a box in its wake (depth 3 elsewhere).
regions='tree.refine=[{center=[0.2, 0.2, 0.5], radius=0.07, level=4}, {lo=[0.3, 0.12, 0.0], hi=[0.45, 0.28, 1.0], level=5}]'
branch() {  # ranks, output, steps
  run $1 --restart parent.h5@t=0.05 --set "$regions" --output $2 --steps $3 --monitor $2.csv
}
for n in 1 2 3; do
  branch $n b$n.h5 3
  check "branch onto the refined tree on $n compute rank(s)" "[ -f b$n.h5 ]"
done
check "... the first step: stored grids as stored, added grids interpolated from the parent, conservative (h5py oracle)" \
  "oracle parent.h5 b2.h5 $step disc:0.2,0.2,0.07,4 box:0.3,0.45,0.12,0.28,5"
cat oracle.out
check "2 and 3 ranks == 1 rank, bit for bit" "same b1.h5 b2.h5 && same b1.h5 b3.h5"
check "... the refined tree: leaves on levels 3, 4 and 5" \
  "$rewind info b2.h5 | grep -Eq '^tree .* on level 3, .* on level 4, .* on level 5$'"
check "... every parent grid the average of its leaves in every step (h5py oracle)" "lod_ok b2.h5"
check "... its steps stay finite and divergence-free (last max_divergence < 1e-3)" \
  "tail -1 b2.h5.csv | awk -F, '{ exit !(\$6 < 1e-3 && \$9 == \$9 + 0) }'"
check "the branch records its parent and the change" \
  "$rewind info b2.h5 | grep -q 'branch of' && $rewind info b2.h5 | grep -q 'tree.refine'"
check "the parent file is untouched" "[ \"\$(md5sum parent.h5 | cut -d' ' -f1)\" = $sum_before ]"
check "the memory estimate is the refined tree's (more grids than the parent's 85)" \
  "grep -E '^estimate' log | tail -1 | grep -Eq '<= (1[0-9][0-9]|[2-9][0-9][0-9]|[0-9]{4,}) grids'"

# Restart the branch: it goes on on its own refined tree, as if run in one go.
branch 2 b6.h5 6
run 3 --restart b2.h5 --steps 3 -q --monitor cont.csv
check "branch 3 steps + restart 3 more (2 -> 3 ranks) == 6 steps straight, bit for bit" "same b6.h5 b2.h5"

bad() {  # label, expected text, args...
  local label=$1 want=$2; shift 2
  rm -f bad.out
  "$mpiexec" -n 3 "$rewind" run "$@" --output bad.h5 >bad.out 2>&1
  local rc=$?
  check "$label: refused (exit $rc), one line naming it, no file made" \
    "[ $rc -ne 0 ] && grep -q \"$want\" bad.out && [ \$(grep -c 'error' bad.out) -eq 1 ] && [ ! -e bad.h5 ]"
}
bad "a branch whose tree drops the stored level-5 box" "never coarsens it" --restart b6.h5 \
  --set 'tree.refine=[{center=[0.2, 0.2, 0.5], radius=0.07, level=4}]'
bad "a shallower base depth" "lacks .* of the stored grids" --restart parent.h5@t=0.05 --set tree.depth=2
bad "a whole [tree] table" "the tree cannot change" --restart parent.h5@t=0.05 \
  --set 'tree={r=[2, 2, 1], s=[44, 8, 1], depth=3}'
exit $fail

#!/usr/bin/env bash
# Adaptive trees through the real `rewind run`, the way a user runs it: on one process
# and under mpirun with the neighbourhood server (np = 2, 3, 4), a case with refine
# regions must give the same tree (printed in the run's first lines and recorded in the
# file) and bit-identical steps, and so must a restart and a branch of that run.
# Regression test: under mpirun the server once built its tree from a moved-from case,
# and every [[tree.refine]] region silently vanished.
source "$(dirname "$0")/lib.sh" "$@"
run() {  # np, log, args...
  local np=$1 log=$2; shift 2
  if [ "$np" = 1 ]; then "$rewind" run "$@" >"$log" 2>&1
  else "$mpiexec" -n "$np" "$rewind" run "$@" >"$log" 2>&1; fi
}
tree_of() { grep -m1 '^tree ' "$1"; }
same_tree() { local a b; a=$(tree_of "$1"); b=$(tree_of "$2"); [ -n "$a" ] && [ "$a" = "$b" ]; }
same_info_tree() {
  local a b; a=$("$rewind" info "$1" | grep '^tree '); b=$("$rewind" info "$2" | grep '^tree ')
  [ -n "$a" ] && [ "$a" = "$b" ]
}
same() { "$rewind" diff --all-cells "$1" "$2" >diff.out 2>&1 && grep -q '^identical' diff.out; }

# name | case file | extra settings (small and fast, with flow so the fields are not trivial)
cases=(
  "cylinder|$src/cases/cylinder-2d1-adaptive.toml|"
  "tree-demo|$src/cases/tree-demo.toml|--set physics.nu=0.01 --set time.end=1 --set tree.s=[4,4,4] --set boundary.xmin.type=\"inflow\" --set boundary.xmin.velocity=[1,0,0] --set boundary.xmax.type=\"outflow\""
)
for entry in "${cases[@]}"; do
  IFS='|' read -r name case_file extra <<<"$entry"
  # shellcheck disable=SC2086 # $extra holds several words on purpose
  common=($extra --set output.checkpoint_every=2 --force)  # not -q: the run's report lines are checked
  # shellcheck disable=SC2086
  expected=$("$rewind" tree "$case_file" $extra --json 2>/dev/null |
             /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["leaf_cells"], len(j["grids_per_level"]))')
  for np in 1 2 3 4; do
    run $np $name.np$np.log "$case_file" "${common[@]}" --steps 4 --output $name.np$np.h5 --monitor $name.np$np.csv
    check "$name: run on np=$np" "[ -f $name.np$np.h5 ]"
    check "$name np=$np: the run states the case's tree ($expected: leaf cells, levels)" \
      "grep -q \"rewind run: .-D, ${expected% *} leaf cells, ${expected#* } levels\" $name.np$np.log"
    check "$name np=$np: same tree as on one process" "same_tree $name.np$np.log $name.np1.log"
    check "$name np=$np: the file records the same tree" \
      "same_info_tree $name.np$np.h5 $name.np1.h5"
    check "$name np=$np: last step bit-identical to one process" "same $name.np1.h5 $name.np$np.h5"
    check "$name np=$np: every parent is the average of its leaves (h5py oracle)" "lod_ok $name.np$np.h5"
    check "$name np=$np: step 2 bit-identical to one process" "same $name.np1.h5@2 $name.np$np.h5@2"
  done
  # Restart: half the run, then continue in the same file (1 -> 3 compute ranks).
  run 1 $name.half.log "$case_file" "${common[@]}" --steps 2 --output $name.half.h5 --monitor $name.half.csv
  run 4 $name.cont.log --restart $name.half.h5 --steps 2 --monitor $name.cont.csv
  check "$name: restart under mpirun states the same tree" "same_tree $name.cont.log $name.np1.log"
  check "$name: run + restart under mpirun == uninterrupted run" "same $name.np1.h5 $name.half.h5"
  # Branch from step 2 with a faster inflow, on one process and under mpirun.
  for np in 1 3; do
    run $np $name.branch$np.log --restart $name.np1.h5@2 --set 'boundary.xmin.velocity=[1.3,0,0]' --steps 2 \
      --output $name.branch$np.h5 --monitor $name.branch$np.csv
    check "$name: branch on np=$np states the same tree" "same_tree $name.branch$np.log $name.np1.log"
  done
  check "$name: branch under mpirun == branch on one process" "same $name.branch1.h5 $name.branch3.h5"
  check "$name: the branch differs from its parent" "[ -f $name.branch1.h5 ] && ! same $name.np1.h5 $name.branch1.h5"
done
exit $fail

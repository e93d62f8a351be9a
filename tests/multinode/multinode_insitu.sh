#!/usr/bin/env bash
# The in-situ hook on dedicated I/O ranks, one per simulated node (scripts/simnodes.sh):
#  - on 2 and 3 nodes the vorticity example writes the same CSV, byte for byte, as on the
#    compute ranks of a one-node run, with analysis-only steps (every 2, output every 3);
#  - only the I/O ranks load the library, one on each node, and the hook's communicator
#    is theirs (the test hook logs its members);
#  - the file equals the one-node collective run's, bit for bit.
#   multinode_insitu.sh REWIND SOURCE_DIR TEST_HOOK VORTICITY_HOOK
source "$(dirname "$0")/lib.sh" "$@"
hook=$(realpath "$3") vort=$(realpath "$4")
case_file=$src/cases/taylor-green.toml
small=(--set tree.depth=2 --set 'tree.s=[8,8,1]' --set monitor.progress=0 --set solver.tolerance=1e-8 --steps 7
       --set output.visualisation_every=3 --set output.float32=false)
v=(--set insitu.library="$vort" --set insitu.every=2)
ded=(--set 'output.io.strategy="dedicated"')

# 2 nodes: nodeA = nbserver, 1 compute, 1 I/O rank; nodeB = 2 compute, 1 I/O rank.
# 3 nodes: nodeA as before; nodeB = 1 compute + I/O; nodeC = 1 compute + I/O.
for hosts in nodeA:3,nodeB:3 nodeA:3,nodeB:2,nodeC:2; do
  nodes=$(echo ${hosts//,/ } | wc -w)
  compute=$(($(slots $hosts) - 1 - nodes))
  # The same case text (the CSV's name included) in two folders: the files can be the same.
  mkdir col$nodes ded$nodes
  (cd col$nodes && one $((compute + 1)) run "$case_file" "${small[@]}" "${v[@]}" --set insitu.args=v.csv -o r.h5 \
    --set 'output.io.strategy="collective"' >log 2>&1) || cat col$nodes/log
  (cd ded$nodes && on $hosts run "$case_file" "${small[@]}" "${v[@]}" --set insitu.args=v.csv -o r.h5 "${ded[@]}" \
    >log 2>&1) || cat ded$nodes/log
  check "$nodes nodes: the vorticity CSV (steps 0 2 4 6; 2 and 4 analysis-only) equals the one-node run's, byte for byte" \
    "[ \"\$(grep -E '^[0-9]' ded$nodes/v.csv | cut -d, -f1 | tr '\n' ' ')\" = '0 2 4 6 ' ] && cmp -s col$nodes/v.csv ded$nodes/v.csv"
  check "$nodes nodes: the summary says the hook ran on the $nodes I/O ranks" \
    "grep -q \"^insitu      $vort: 4 steps handed over, every 2, run on the $nodes I/O ranks\$\" ded$nodes/log"
  check "$nodes nodes: the file equals the one-node collective run's, bit for bit" "same_file col$nodes/r.h5 ded$nodes/r.h5"
done

# Who loads the test hook, where, and whose communicator it gets (3 nodes: world ranks 2,
# 4 and 6 are the I/O ranks, one per node).
REWIND_TEST_HOOK_HOSTS=$PWD/hosts.txt on nodeA:3,nodeB:2,nodeC:2 run "$case_file" "${small[@]}" \
  --set insitu.library="$hook" --set insitu.every=2 --set "insitu.args=\"log=w.hook\"" -o w.h5 "${ded[@]}" \
  >w.log 2>&1 || cat w.log
check "3 nodes: only the I/O ranks load the hook, one on each node" \
  "[ \"\$(sort hosts.txt | tr '\n' ' ')\" = 'world rank 2 on nodeA world rank 4 on nodeB world rank 6 on nodeC ' ]"
check "3 nodes: the hook's communicator is theirs (size 3, world ranks 2, 4, 6), every step, then finalize" \
  "grep -q '^init every=2 dim=2 comm_size=3 world_ranks=2,4,6\$' w.hook && [ \"\$(grep -v '^init' w.hook | tr '\n' ' ')\" = 'step 0 grids=21 step 2 grids=21 step 4 grids=21 step 6 grids=21 finalize ' ]"
exit $fail

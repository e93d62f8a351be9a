#!/usr/bin/env bash
# Every write strategy on simulated nodes (scripts/simnodes.sh), as a user runs them:
#  - auto, collective, independent, aggregated (one writer per node), dedicated (one I/O
#    rank per node; 1 and 2 steps in flight), spare_cpus on ranks bound to cores (the
#    spare CPU planned per node; on 2 nodes) and off, uncompressed on 2 nodes and
#    deflate-compressed on 3 (independent is refused with compression, so not run
#    there): each file equals, bit for bit, the file of a collective run of the same
#    compute ranks on one node (tests/multinode/same_file.py: every dataset and
#    attribute, h5py);
#  - the I/O ranks are one per node (the run says how many);
#  - a restart from a file written on several nodes, on one node, and the reverse,
#    continue bit for bit as the uninterrupted run.
# 2 nodes: the 2-D cylinder (an obstacle, 4 levels), 1 and 2 compute ranks on the nodes;
# 3 nodes: the 3-D cavity (32^3 cells), 1, 2 and 1 compute ranks. Ranks bound to cores
# (both node counts): 1 and 1 compute ranks on 2 nodes.
#   multinode_strategies.sh REWIND SOURCE_DIR NODES
source "$(dirname "$0")/lib.sh" "$@"
nodes=$3
if [ "$nodes" = 2 ]; then
  case_file=$src/cases/cylinder-2d1.toml size=()
  plain=nodeA:2,nodeB:2 ded=nodeA:3,nodeB:3   # rank 0 the nbserver; 3 compute ranks (+ 2 I/O ranks)
else
  case_file=$src/cases/cavity-3d.toml size=(--set 'tree.s=[8,8,8]')
  plain=nodeA:2,nodeB:2,nodeC:1 ded=nodeA:3,nodeB:3,nodeC:2   # 4 compute ranks (+ 3 I/O ranks)
fi
compute=$(($(slots $plain) - 1))
opts=(run "$case_file" "${size[@]}" --steps 10 --set output.checkpoint_every=5 --set output.visualisation_every=5)
z=(--set 'output.io.compression="deflate"')
strategy() { echo --set "output.io.strategy=\"$1\""; }

check "the harness gives every node its own host name" "names_are $plain"

# Within ~1 min per node count on 2 busy cores: 2 nodes write uncompressed, 3 nodes
# deflate-compressed (both: every strategy, dedicated with 1 and 2 steps in flight).
if [ "$nodes" = 2 ]; then z=() kind=uncompressed; else kind=deflate; fi
# The reference: one node, the same compute ranks, collective.
one $((compute + 1)) "${opts[@]}" -o ref.h5 -q $(strategy collective) "${z[@]}" >ref.log 2>&1 || cat ref.log

runs=()
for s in auto collective independent aggregated; do
  # independent transfers and compression are refused together
  if [ $s = independent ] && [ ${#z[@]} -gt 0 ]; then continue; fi
  on $plain "${opts[@]}" -o $s.h5 $(strategy $s) "${z[@]}" >$s.log 2>&1 || cat $s.log
  runs+=($s.h5)
done
for k in 1 2; do
  on $ded "${opts[@]}" -o ded$k.h5 $(strategy dedicated) --set output.io.steps_in_flight=$k "${z[@]}" >ded$k.log 2>&1 ||
    cat ded$k.log
  runs+=(ded$k.h5)
done
# Ranks bound to one core each: a node whose ranks leave a CPU free hashes rows there.
# Two compute ranks on nodeA:2,nodeB:1 (nodeA: the nbserver on core 0, a compute rank on
# core 1; nodeB: its rank on core 0, core 1 spare): one busy rank per CPU, as
# docs/cluster.md ("Simulated nodes", "Binding") asks — two on one CPU froze jobs for
# 40-90 s. A one-node collective run of the same two compute ranks is their reference.
one 3 "${opts[@]}" -o ref2.h5 -q $(strategy collective) "${z[@]}" >ref2.log 2>&1 || cat ref2.log
bound=()
for sp in true false; do
  OMPI_MCA_hwloc_base_binding_policy=core on nodeA:2,nodeB:1 "${opts[@]}" -o spare-$sp.h5 \
    --set output.io.spare_cpus=$sp "${z[@]}" >spare-$sp.log 2>&1 || cat spare-$sp.log
  bound+=(spare-$sp.h5)
done
check "$kind, on $nodes nodes (${runs[*]}): each file bit for bit the one-node collective run's" \
  "same_file ref.h5 ${runs[*]}"
check "$kind, ranks bound to cores on 2 nodes, spare CPUs used or not (${bound[*]}): bit for bit the one-node run's" \
  "same_file ref2.h5 ${bound[*]}"
check "dedicated: one I/O rank per node, $nodes in all, wrote the steps" \
  "grep -q '^io ranks    $nodes I/O rank(s) wrote 3 steps' ded1.log && grep -q '^io ranks    $nodes I/O rank(s) wrote 3 steps' ded2.log"
check "every file written on $nodes nodes verifies" "all_verify ${runs[*]} ${bound[*]}"

# Restarts across: from the file the I/O ranks of $nodes nodes wrote, on one node; from
# the one-node file, on $nodes nodes with their I/O ranks. Step 10 as if uninterrupted.
one $((compute + 1)) run --restart ded2.h5@5 --steps 5 -o back1.h5 -q $(strategy collective) >back1.log 2>&1 ||
  cat back1.log
on $ded run --restart ref.h5@5 --steps 5 -o backn.h5 -q $(strategy dedicated) >backn.log 2>&1 || cat backn.log
check "a restart on one node from the $nodes-node file: step 10 bit for bit the uninterrupted run's" \
  "same ref.h5@10 back1.h5@10"
check "a restart on $nodes nodes (I/O ranks) from the one-node file: step 10 bit for bit" \
  "same ref.h5@10 backn.h5@10 && $rewind verify backn.h5 >/dev/null"
exit $fail

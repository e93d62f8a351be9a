#!/usr/bin/env bash
# Exact restart and branching through the real `rewind` command and the real solver.
#
#  - the same run on 1, 2 and 4 compute ranks writes bit-identical fields;
#  - run to T, restart, run to 2T == run to 2T straight, bit for bit, for restarts on
#    the same number of ranks (1, 2, 4) and on another (4 -> 2, 2 -> 3);
#  - a branch with changed boundary conditions goes to a new file that records its
#    parent, step and change; the parent file is not modified;
#  - a restart from a file evicted from the page cache reads it past the cache (O_DIRECT)
#    and continues bit for bit;
#  - bad restarts give one error line, a non-zero exit, and leave files untouched.
# Under mpiexec, world rank 0 is the neighbourhood server: np = compute ranks + 1.
source "$(dirname "$0")/lib.sh" "$@"
case_file=$src/cases/default.toml
# T = 0.1: outputs every 0.05 (visualisation) and 0.1 (checkpoint).
sched=(--set output.checkpoint_interval=0.1 --set output.visualisation_interval=0.05 -q)
run() { run_compute "$@"; }

for n in 1 2 4; do
  run $n "$case_file" --output full$n.h5 --set time.end=0.2 "${sched[@]}" --monitor full$n.csv
  check "run to 2T on $n compute rank(s)" "[ -f full$n.h5 ]"
done
check "2 ranks == 1 rank, bit for bit" "same full1.h5 full2.h5"
check "4 ranks == 1 rank, bit for bit" "same full1.h5 full4.h5"
check "... and every parent of every step is the average of its leaves (h5py oracle)" "lod_ok full1.h5 && lod_ok full4.h5"

restart() {  # ranks-before, ranks-after, label
  local a=$1 b=$2
  run $a "$case_file" --output half$a$b.h5 --set time.end=0.1 "${sched[@]}" --monitor half$a$b.csv
  run $b --restart half$a$b.h5 --set time.end=0.2 -q --monitor cont$a$b.csv
  check "restart $a -> $b ranks continues in the same file" "$rewind info half$a$b.h5 | grep -q 'lineage     original run'"
  check "run to T + restart ($a -> $b ranks) == run to 2T, bit for bit" "same full1.h5 half$a$b.h5"
}
restart 1 1
restart 2 2
restart 4 4
restart 4 2
restart 2 3

# A restart from a file that is no longer in memory, as after a while on a real machine
# (the restarts above read files written moments before, from the page cache; and a file
# of a few MB is pulled into the cache whole by the readahead of its metadata reads): a
# 3-D case with 19 MB per field, 2 steps, evicted, restarted for 2 more == 4 steps
# straight. Where the file system takes O_DIRECT, the checkpoint is read from the disk
# past the page cache (Linux AIO) — looked at with h5py + mincore(2), not by asking Rewind.
pc() { /usr/bin/python3 "$src/tests/support/page_cache.py" "$@"; }
below() { /usr/bin/python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$1" "$2"; }
big=("$src/cases/cavity-3d.toml" --set 'tree.s=[32, 32, 32]' --set output.checkpoint_every=2
     --set output.visualisation_every=0 --set output.initial=false --set output.final=false -q)
run 2 "${big[@]}" --output big4.h5 --steps 4 --monitor big4.csv
restart_evicted() {  # ranks
  local n=$1 f=evicted$1.h5
  run $n "${big[@]}" --output $f --steps 2 --monitor $f.csv
  pc evict $f
  local step; step=$(pc checkpoint $f)
  check "evicted ($n ranks): under 5 % of the checkpoint's fields left in the page cache" \
    "below \"\$(pc cached $f $step)\" 0.05"
  run $n --restart $f --steps 2 -q --monitor $f.2.csv
  check "2 steps, evicted, restart on $n rank(s), 2 more == 4 steps straight, bit for bit" "same big4.h5 $f"
  if pc direct_ok .; then
    check "... the restart read its checkpoint past the page cache (under 20 % of it cached after)" \
      "below \"\$(pc cached $f $step)\" 0.2"
  else
    echo "note: this file system refuses O_DIRECT reads; the restart read through the page cache"
  fi
  rm -f $f
}
restart_evicted 1
restart_evicted 2
restart_evicted 3

# A branch: from t = 0.1 of the 1-rank run, with a faster inflow.
sha_before=$(sha256sum full1.h5 | cut -d' ' -f1)
run 2 --restart full1.h5@t=0.1 --set 'boundary.xmin.velocity=[2.0,0,0]' --output branch.h5 -q --monitor branch.csv
check "branch file written" "[ -f branch.h5 ]"
check "parent file not modified by branching" "[ \"$(sha256sum full1.h5 | cut -d' ' -f1)\" = $sha_before ]"
"$rewind" info branch.h5 --json >info.json
check "branch records parent, step and change" "/usr/bin/python3 -c '
import json,sys,os
j=json.load(open(\"info.json\")); l=j[\"lineage\"]
ok = os.path.basename(l[\"parent_file\"])==\"full1.h5\" and l[\"parent_step\"]>0 and any(\"boundary.xmin.velocity\" in c for c in l[\"changes\"])
sys.exit(0 if ok else 1)'"
"$rewind" lineage branch.h5 >lineage.out 2>&1
check "lineage shows the branch under its parent" "grep -q 'full1.h5' lineage.out && grep -q 'branch.h5' lineage.out"
check "branch differs from its parent after the change" "! same full1.h5 branch.h5"
check "branch starts from the parent's state" "$rewind diff full1.h5@t=0.1 branch.h5@#0 | grep -q '^identical'"
check "the branch's parents are the averages of its leaves (h5py oracle)" "lod_ok branch.h5"

# Bad restarts and outputs: one line, non-zero exit, nothing damaged.
bad() {  # label, expected text, args...
  local label=$1 want=$2; shift 2
  local before; before=$(sha256sum full1.h5 | cut -d' ' -f1)
  "$rewind" run "$@" >out 2>err; local rc=$?
  check "$label: non-zero exit" "[ $rc != 0 ]"
  check "$label: one error line naming '$want'" "[ \$(wc -l <err) = 1 ] && grep -qF -- \"$want\" err"
  check "$label: parent untouched" "[ \"$(sha256sum full1.h5 | cut -d' ' -f1)\" = $before ]"
}
bad "restart from a visualisation step" "is a visualisation output" --restart full1.h5@#1
bad "output exists" "exists; use --force" "$case_file" --output full1.h5
bad "tree change on restart" "the tree cannot change" --restart full1.h5 --set 'tree.s=[22, 8, 1]'
bad "branch into its parent" "never writes into its parent" --restart full1.h5@t=0.1 --set time.end=0.3 --output full1.h5
bad "not a Rewind file" "full1.csv" --restart full1.csv
bad "case and restart together" "not both" "$case_file" --restart full1.h5
exit $fail

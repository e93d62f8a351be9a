#!/usr/bin/env bash
# Continuing and branching runs, as a user does it under mpirun:
#  - the Strouhal column of the monitor CSV is finite right after a restart when it
#    was before (the estimator's state is in the checkpoint): the continued CSV equals
#    the uninterrupted run's, and a branch's first row has it;
#  - a run killed with -9 after a checkpoint (and a visualisation step after it),
#    restarted with --restart k.h5 and nothing changed, continues k.h5 (no
#    k.branchN.h5 "changed: (nothing)") and its CSV, and ends as an uninterrupted run;
#  - a branch in another directory is found: `run -o parent.h5 --force` refuses to
#    orphan it, `rewind lineage` lists it; a stale registry entry is ignored.
#   cli_continue.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
run() { "$mpiexec" -n 2 "$rewind" run "$@"; }  # one server rank, one compute rank
st_column() { rows_after "$1" "$2" strouhal; }
rows_after() {  # CSV T [COLUMN] -> the rows (or one column) after time T, one per line
  /usr/bin/python3 -c "
import csv, sys
rows = csv.DictReader(l for l in open('$1') if not l.startswith('#'))
print('\n'.join(r['${3:-}'] if '${3:-}' else ','.join(r.values()) for r in rows if float(r['time']) > $2))"
}
increasing() {  # CSV: every row's step after the one before (none written twice)
  /usr/bin/python3 -c "
import csv, sys
s = [int(r['step']) for r in csv.DictReader(l for l in open('$1') if not l.startswith('#'))]
sys.exit(0 if all(a < b for a, b in zip(s, s[1:])) else 1)"
}

# Strouhal after a restart.
run "$case_file" --output full.h5 --set time.end=0.1 --set output.checkpoint_interval=0.05 -q >full.log 2>&1
run "$case_file" --output half.h5 --set time.end=0.05 --set output.checkpoint_interval=0.05 -q >half.log 2>&1
check "before the restart point the Strouhal number is known" "st_column half.monitor.csv 0.04 | grep -qv nan"
run --restart half.h5 --set time.end=0.1 >cont.log 2>&1
check "the restart continues half.h5 and its monitor CSV" \
  "[ $? = 0 ] && grep -q '^output      continuing half.h5' cont.log && grep -q '^monitors: half.monitor.csv' cont.log"
check "strouhal is finite from the first row after the restart" \
  "[ -n \"\$(st_column half.monitor.csv 0.05)\" ] && ! st_column half.monitor.csv 0.05 | grep -q nan"
check "... and the continued CSV equals the uninterrupted run's, row for row" \
  "[ \"\$(rows_after full.monitor.csv 0.05)\" = \"\$(rows_after half.monitor.csv 0.05)\" ]"
run --restart full.h5@t=0.05 --set physics.nu=0.0011 --set time.end=0.06 --output br.h5 -q >br.log 2>&1
check "a branch's monitor CSV has the Strouhal number from its first row" \
  "[ $? = 0 ] && ! st_column br.monitor.csv 0 | grep -q nan"

# A run killed after a checkpoint and a visualisation step after it.
sched=(--set output.checkpoint_interval=0.05 --set output.visualisation_interval=0.01)
run "$case_file" --output ref.h5 --set time.end=0.3 "${sched[@]}" -q >ref.log 2>&1
setsid "$mpiexec" -n 2 "$rewind" run "$case_file" --output k.h5 --set time.end=5 "${sched[@]}" >kill.log 2>&1 &
group=$!
# Watch the monitor CSV (rank 0 writes it directly; mpirun forwards stdout late).
for _ in $(seq 600); do awk -F, '$1 ~ /^[0-9]+$/ && $2 + 0 >= 0.07 { found = 1 } END { exit !found }' k.monitor.csv 2>/dev/null && break; sleep 0.1; done
# Like a crashed node: every process of the job at once. Open MPI gives each rank its
# own process group, so take the session setsid made: mpirun and its ranks.
kill -9 $(ps -o pid= -s "$group")
wait "$group" 2>/dev/null
for _ in $(seq 100); do [ -z "$(ps -o pid= -s "$group")" ] && break; sleep 0.1; done
check "the run was killed after checkpoint t = 0.05 and visualisation t = 0.07" \
  "\"$rewind\" info k.h5 | grep -Eq ' 0.07 +visualisation' && ! grep -q '^done' kill.log"
run --restart k.h5 --set time.end=0.3 >k.log 2>&1
check "--restart k.h5 (nothing changed) continues k.h5, writes no branch" \
  "[ $? = 0 ] && grep -q '^output      continuing k.h5' k.log && ! ls k.branch*.h5 >/dev/null 2>&1"
check "... k.h5 is still an original run" "\"$rewind\" info k.h5 | grep -q '^lineage     original run'"
check "... and ends as the uninterrupted run does, bit for bit" \
  "\"$rewind\" diff --all-cells k.h5 ref.h5 >kdiff.out 2>&1 && grep -q '^identical' kdiff.out"
check "... its monitor CSV too: no row written twice, the rows after the restart as the uninterrupted run's" \
  "increasing k.monitor.csv && [ \"\$(rows_after k.monitor.csv 0.05)\" = \"\$(rows_after ref.monitor.csv 0.05)\" ]"

# Branches in other directories.
mkdir -p elsewhere
run --restart full.h5@t=0.05 --set physics.nu=0.0012 --set time.end=0.06 --output elsewhere/b.h5 -q >b.log 2>&1
sha_before=$(sha256sum full.h5 | cut -d' ' -f1)
run "$case_file" --output full.h5 --force --set time.end=0.01 -q >over.log 2>&1
check "run -o parent.h5 --force refuses to orphan a branch in another directory" \
  "[ $? != 0 ] && grep -q 'full.h5 has branches (.*elsewhere/b.h5' over.log && [ \$(sha256sum full.h5 | cut -d' ' -f1) = $sha_before ]"
"$rewind" lineage full.h5 >lin.out 2>&1
check "rewind lineage lists it under its parent" "[ $? = 0 ] && grep -q 'elsewhere/b.h5' lin.out"
check "the parent file was not written to: the branch is recorded beside it (full.h5.branches)" \
  "grep -qx 'elsewhere/b.h5' full.h5.branches"
rm elsewhere/b.h5
"$rewind" lineage full.h5 >lin2.out 2>&1
check "a stale registry entry is ignored" "[ $? = 0 ] && ! grep -q 'elsewhere/b.h5' lin2.out"
exit $fail

#!/usr/bin/env bash
# Continuing and branching runs, as a user does it under mpirun:
#  - the Strouhal column of the monitor CSV is finite right after a restart when it
#    was before (the estimator's state is in the checkpoint): the continued CSV equals
#    the uninterrupted run's, and a branch's first row has it;
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

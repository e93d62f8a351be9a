#!/usr/bin/env bash
# Error lines and exit codes, through the commands a user types:
#  - under mpirun a bad case or a missing file gives one error line from one rank, a
#    non-zero exit, no MPI_ABORT banner (with `mpirun -q`: that line and nothing else);
#  - a typo in a key names the key it misspells; an unknown key on a restart is called
#    unknown (not "the tree cannot change"); `tree --ranks 0` reads as a sentence;
#  - `rewind diff` exits 0 equal, 1 differ, 2 error;
#  - `-q` prints nothing (and still writes the file); a run without an output file
#    says so; the I/O options in force are printed.
#   cli_errors_and_exits.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
lines() { wc -l <"$1" | tr -d ' '; }
last_time_of() { "$rewind" info "$1" --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['time'])"; }

"$mpiexec" -n 3 "$rewind" run "$case_file" --set tree.depht=3 >bad.out 2>&1
rc=$?
check "mpirun, a bad key: non-zero exit, one error line, no MPI_ABORT banner" \
  "[ $rc != 0 ] && [ \$(grep -c 'error:' bad.out) = 1 ] && ! grep -q 'MPI_ABORT' bad.out"
check "... the line names the typo and the key it misspells" \
  "grep -q \"unknown key 'tree.depht'.*did you mean 'tree.depth'\" bad.out"
"$mpiexec" -q -n 3 "$rewind" halo missing.toml >missing.out 2>&1
rc=$?
check "mpirun -q, a missing case file: exactly one line, non-zero exit" \
  "[ $rc != 0 ] && [ \$(lines missing.out) = 1 ] && grep -q 'missing.toml' missing.out"

sed 's/^depth = 3 /depht = 3 /' "$case_file" >typo.toml
"$rewind" tree typo.toml >typo.out 2>&1
check "a typo in the case file (depth missing): 'did you mean' instead of 'missing'" \
  "[ $? != 0 ] && grep -q \"unknown key 'tree.depht'.*did you mean 'tree.depth'\" typo.out && ! grep -q 'missing' typo.out"
"$rewind" tree "$case_file" --ranks 0 >ranks.out 2>&1
check "tree --ranks 0: one readable line" \
  "[ $? != 0 ] && [ \$(lines ranks.out) = 1 ] && grep -q '0 is not a positive integer' ranks.out"

"$rewind" run "$case_file" --steps 2 --output a.h5 -q >quiet.out 2>&1
check "-q: nothing printed, the file written" "[ $? = 0 ] && [ ! -s quiet.out ] && [ -s a.h5 ]"
"$rewind" run --restart a.h5 --set time.end=0.0001 >end.out 2>&1
check "a restart whose time.end is not after the step: refused with one line (not 'done: 0 steps')" \
  "[ $? != 0 ] && [ \$(lines end.out) = 1 ] && grep -q 'nothing to run' end.out"
"$rewind" run --restart a.h5 --set physics.nu=0.001 --steps 1 >same.out 2>&1
check "a restart that sets a value to what it was continues the same file (no branch, nothing recorded)" \
  "[ $? = 0 ] && grep -q '^output      continuing a.h5' same.out && ! ls a.branch*.h5 >/dev/null 2>&1"
"$rewind" run --restart a.h5 --set tree.foo=2 >restart.out 2>&1
check "an unknown key on a restart is called unknown" \
  "[ $? != 0 ] && grep -q \"unknown key 'tree.foo'\" restart.out"
check "the monitor CSV lands beside --output (a.monitor.csv)" "[ -s a.monitor.csv ]"
cp a.monitor.csv keep.csv
"$rewind" run "$case_file" --steps 2 --output a2.h5 --monitor a.monitor.csv -q >mon.out 2>&1
check "an existing monitor CSV is not overwritten without --force" \
  "[ $? != 0 ] && grep -q 'monitor file a.monitor.csv exists' mon.out && cmp -s a.monitor.csv keep.csv && [ ! -e a2.h5 ]"
"$rewind" run "$src/cases/cavity-re100.toml" --steps 1 >nofile.out 2>&1
check "a run without an output file says so" "[ $? = 0 ] && grep -q '^output      none' nofile.out"
"$rewind" run "$case_file" --steps 1 --output b.h5 --set output.io.cb_nodes=1 >io.out 2>&1
check "the I/O options in force are printed" "[ $? = 0 ] && grep -q '^output      io: cb_nodes = 1' io.out"

"$rewind" diff a.h5@#0 b.h5@#0 >d0.out 2>&1
check "diff: equal steps exit 0" "[ $? = 0 ]"
"$rewind" diff a.h5 b.h5 >d1.out 2>&1
check "diff: different steps exit 1" "[ $? = 1 ]"
"$rewind" diff a.h5 nope.h5 >d2.out 2>&1
check "diff: an error (a missing file) exits 2, one line" "[ $? = 2 ] && [ \$(lines d2.out) = 1 ]"
"$rewind" diff a.h5 b.h5 --tol -1 >d3.out 2>&1
check "diff: a bad option exits 2, one readable line" "[ $? = 2 ] && grep -q 'not a number >= 0' d3.out"

# Step selectors: malformed ones refused, a time between outputs noted, a time after the
# last committed step its last step for diff (with a note) and refused for a restart (not
# reached); a restart at a time on a visualisation step takes the checkpoint before it.
for sel in '#' 't=' 't=x' '#1x'; do
  "$rewind" diff "a.h5@$sel" b.h5 >sel.out 2>&1
  check "the selector '$sel' is refused (exit 2, one line)" "[ $? = 2 ] && [ \$(lines sel.out) = 1 ] && grep -q 'bad' sel.out"
done
"$rewind" diff a.h5@t=99 b.h5@t=99 >late.out 2>&1
check "diff t=99, after the last step: each file's last step (the plugin's rule), with a note naming it (exit 1: they differ)" \
  "[ $? = 1 ] && [ \$(grep -c 'note: .*t=99 is after the last committed step; using it' late.out) = 2 ]"
"$rewind" run --restart a.h5@t=99 --output late.h5 >late_restart.out 2>&1
check "a restart at t=99 is refused the same way, and writes nothing" \
  "[ $? != 0 ] && grep -q 't=99 has not been reached' late_restart.out && [ ! -e late.h5 ]"
"$rewind" run "$case_file" --output v.h5 --set time.end=0.3 --set output.checkpoint_interval=0.2 -q >v.log 2>&1
"$rewind" run --restart v.h5@t=0.15 --output vb.h5 --set time.end=0.2 >vb.log 2>&1
check "restart at t=0.15 (a visualisation step in force): from the checkpoint before it, with a note" \
  "[ $? = 0 ] && grep -q 'note: t=0.15: step .* is a visualisation output; restarting from the last checkpoint' vb.log && grep -q 'restart     from v.h5 step 0 ' vb.log"
"$rewind" diff v.h5@t=0.2 vb.h5@t=0.2 >vb.diff 2>&1
check "... and continues bit-identically to the original" "[ $? = 0 ]"

# Lineage that survives real use: a run moved together with its branch keeps its
# chain (parents stored relative), a branch moved alone finds its parent (the absolute
# hint); a file with branches is not overwritten by --force alone; a broken chain is
# a warning and exit 1.
mkdir -p runs/b runs/moved
"$rewind" run --restart v.h5@t=0.2 --set physics.nu=0.002 --output vbr.h5 -q
mv vbr.h5 runs/b/
"$rewind" lineage runs/b/vbr.h5 >alone.out 2>&1
check "a branch moved alone still finds its parent (the absolute path it recorded)" "[ $? = 0 ] && grep -q 'v.h5  ' alone.out"
mv runs/b/vbr.h5 runs/moved/ && mv v.h5 runs/moved/
"$rewind" lineage runs/moved/vbr.h5 >moved.out 2>&1
check "a run moved together with its branch keeps its chain (parents stored relative)" \
  "[ $? = 0 ] && grep -q 'runs/moved/v.h5' moved.out"
"$rewind" run "$case_file" --output runs/moved/v.h5 --steps 1 --force -q >over.out 2>&1
check "--force alone refuses to overwrite a file that has branches, and leaves it as it was" \
  "[ $? != 0 ] && grep -q 'has branches' over.out && [ \"\$(last_time_of runs/moved/v.h5)\" = 0.3 ]"
"$rewind" run "$case_file" --output runs/moved/v.h5 --steps 1 --force --orphan-branches -q >over2.out 2>&1
check "... and overwrites it with --orphan-branches" "[ $? = 0 ]"
"$rewind" lineage runs/moved/vbr.h5 >broken.out 2>&1
check "lineage then warns and exits 1: the parent no longer holds the branch step" \
  "[ $? = 1 ] && grep -q 'warning: .*no longer holds it' broken.out"

# rewind plot: one clear line for a bad column, an HDF5 file given for a CSV, an
# unwritable output; several CSVs share one set of axes.
"$rewind" plot a.monitor.csv -o p.png --columns nope >p1.out 2>&1
check "plot, a bad column: one line naming it and the columns there are" \
  "[ $? != 0 ] && [ \$(lines p1.out) = 1 ] && grep -q \"no column 'nope' (have: step, time\" p1.out"
"$rewind" plot a.h5 -o p.png >p2.out 2>&1
check "plot, an HDF5 file instead of the CSV: one line saying so" "[ $? != 0 ] && [ \$(lines p2.out) = 1 ] && grep -q 'is an HDF5 file' p2.out"
"$rewind" plot a.monitor.csv -o /nonexistent/dir/p.png >p3.out 2>&1
check "plot, an unwritable output: one line" "[ $? != 0 ] && [ \$(lines p3.out) = 1 ] && grep -q 'cannot write /nonexistent/dir/p.png' p3.out"
"$rewind" plot a.monitor.csv b.monitor.csv --columns cd,cl --labels A,B -o two.png >p4.out 2>&1
check "plot of two runs on shared axes" "[ $? = 0 ] && [ -s two.png ]"
exit $fail

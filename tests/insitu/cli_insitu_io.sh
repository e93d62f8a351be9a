#!/usr/bin/env bash
# The in-situ hook on the dedicated I/O ranks (output.io.strategy = "dedicated"), through
# `rewind run` under mpirun as a user runs it:
#  - the vorticity example writes the same CSV, byte for byte, when it runs on the I/O
#    ranks as when it runs on the compute ranks (collective), with 2 and 3 compute ranks
#    and `every` not dividing the output interval (analysis-only steps 2 and 4), in 2-D
#    and 3-D, and after a restart (the restart point is handed over again);
#  - the file of such a run has exactly the steps, bit for bit, of the run without a hook;
#  - only the I/O ranks load the library, and the hook's communicator is theirs (two I/O
#    ranks: both, and nobody else);
#  - a hook failing on an I/O rank is reported once, in one line, the run completes and
#    its file is intact; an init that fails likewise; a bad library is refused with one
#    line; a dedicated hook without an output file is refused with one line.
#   cli_insitu_io.sh REWIND SOURCE_DIR MPIEXEC TEST_HOOK VORTICITY_HOOK
source "$(dirname "$0")/../apps/lib.sh" "$@"
hook=$(realpath "$4") vort=$(realpath "$5")
case_file="$src/cases/taylor-green.toml"
ded=(--set 'output.io.strategy="dedicated"')
small=(--set tree.depth=2 --set 'tree.s=[8,8,1]' --set monitor.progress=0 --set solver.tolerance=1e-8 --steps 7
       --set output.visualisation_every=3 --set output.float32=false)
shape3=(--set tree.depth=1 --set 'tree.r=[2,2,2]' --set 'tree.s=[8,8,8]' --set 'domain.periodic=[true,true,true]'
        --set 'domain.hi=[6.283185307179586,6.283185307179586,6.283185307179586]' --set monitor.progress=0
        --set solver.tolerance=1e-8 --steps 5 --set output.visualisation_every=3)
steps_in() { "$rewind" info "$1" --json | /usr/bin/python3 -c "import json,sys; s=json.load(sys.stdin)['steps']; print(' '.join(str(x['step']) for x in s if x['committed']))"; }
same_file() {  # same_file A B: the same committed steps, each bit-identical
  local s
  [ "$(steps_in "$1")" = "$(steps_in "$2")" ] || return 1
  for s in $(steps_in "$1"); do same "$1@$s" "$2@$s" || return 1; done
}
run() {  # run NP LOG ARGS...: `rewind run ARGS` on NP processes, output in LOG
  local np=$1 log=$2; shift 2
  "$mpiexec" -n "$np" "$rewind" run "$case_file" "$@" >"$log" 2>&1
}

# --- the vorticity example: the same CSV on the compute ranks and on the I/O ranks ------
for nc in 2 3; do
  v=(--set insitu.library="$vort" --set insitu.every=2)
  run $((nc + 1)) col$nc.log "${small[@]}" "${v[@]}" --set insitu.args=col$nc.csv -o col$nc.h5 || cat col$nc.log
  run $((nc + 2)) ded$nc.log "${small[@]}" "${v[@]}" --set insitu.args=ded$nc.csv -o ded$nc.h5 "${ded[@]}" || cat ded$nc.log
  run $((nc + 2)) none$nc.log "${small[@]}" -o none$nc.h5 "${ded[@]}" || cat none$nc.log
  check "$nc compute + 1 I/O rank: the CSV has steps 0 2 4 6 (2 and 4 are not output steps)" \
    "[ \"\$(grep -E '^[0-9]' ded$nc.csv | cut -d, -f1 | tr '\n' ' ')\" = '0 2 4 6 ' ] && [ \"\$(steps_in ded$nc.h5)\" = '0 3 6 7' ]"
  check "$nc compute + 1 I/O rank: the CSV equals the collective run's, byte for byte" "cmp -s col$nc.csv ded$nc.csv"
  check "$nc compute + 1 I/O rank: the file has the steps of the run without a hook, bit for bit" \
    "same_file none$nc.h5 ded$nc.h5"
  check "$nc compute + 1 I/O rank: the summary says 4 steps, run on the I/O rank; no error" \
    "grep -q \"^insitu      $vort: 4 steps handed over, every 2, run on the 1 I/O rank\$\" ded$nc.log && ! grep -q 'error' ded$nc.log"
done

# 3-D (halos in every direction), 2 compute ranks.
v=(--set insitu.library="$vort" --set insitu.every=2)
run 3 col3d.log "${shape3[@]}" "${v[@]}" --set insitu.args=col3d.csv -o col3d.h5 || cat col3d.log
run 4 ded3d.log "${shape3[@]}" "${v[@]}" --set insitu.args=ded3d.csv -o ded3d.h5 "${ded[@]}" || cat ded3d.log
check "3-D, 2 compute + 1 I/O rank: the CSV (steps 0 2 4) equals the collective run's" \
  "[ \"\$(grep -E '^[0-9]' ded3d.csv | cut -d, -f1 | tr '\n' ' ')\" = '0 2 4 ' ] && cmp -s col3d.csv ded3d.csv"

# A restart continuing the file (only [insitu] changes): the restart point (step 7, in
# the file already) goes to the hook as an analysis-only step, then 8, 9, 10.
"$mpiexec" -n 3 "$rewind" run --restart col2.h5 --steps 3 --set insitu.every=1 --set insitu.args=col2r.csv >col2r.log 2>&1 || cat col2r.log
"$mpiexec" -n 4 "$rewind" run --restart ded2.h5 --steps 3 --set insitu.every=1 --set insitu.args=ded2r.csv "${ded[@]}" \
  >ded2r.log 2>&1 || cat ded2r.log
check "a restart on I/O ranks: the CSV (steps 7 8 9 10) equals the collective restart's" \
  "[ \"\$(grep -E '^[0-9]' ded2r.csv | cut -d, -f1 | tr '\n' ' ')\" = '7 8 9 10 ' ] && cmp -s col2r.csv ded2r.csv"

# --- who loads it, whose communicator -------------------------------------------------------
# 6 processes, 2 I/O ranks: rank 0 the server, 1-3 compute, 4-5 the I/O ranks.
REWIND_TEST_HOOK_LOADS=$PWD/loads.txt run 6 w.log "${small[@]}" --set insitu.library="$hook" --set insitu.every=2 \
  --set "insitu.args=\"log=w.log.hook\"" -o w.h5 "${ded[@]}" --set output.io.io_ranks_per_node=2 \
  --set output.io.steps_in_flight=2 || cat w.log
check "2 I/O ranks: only they load the library (world ranks 4 and 5)" \
  "[ \"\$(sort loads.txt | tr '\n' ' ')\" = 'loaded by world rank 4 loaded by world rank 5 ' ]"
check "... the hook's communicator is theirs: size 2, world ranks 4 and 5" \
  "grep -q '^init every=2 dim=2 comm_size=2 world_ranks=4,5\$' w.log.hook"
check "... it gets every grid at steps 0 2 4 6, then finalize" \
  "[ \"\$(grep -v '^init' w.log.hook | tr '\n' ' ')\" = 'step 0 grids=21 step 2 grids=21 step 4 grids=21 step 6 grids=21 finalize ' ]"
check "... the summary names the 2 I/O ranks" "grep -q 'insitu      .*: 4 steps handed over, every 2, run on the 2 I/O ranks' w.log"
run 5 w0.log "${small[@]}" -o w0.h5 "${ded[@]}" --set output.io.io_ranks_per_node=2 --set output.io.steps_in_flight=2 || cat w0.log
check "... and the file equals the one without a hook" "same_file w0.h5 w.h5"

# --- errors ----------------------------------------------------------------------------------
# Step 2 is analysis-only; the second I/O rank of two fails there.
run 6 f.out "${small[@]}" --set insitu.library="$hook" --set "insitu.args=\"log=f.log fail_at=2 rank=1\"" -o f.h5 \
  "${ded[@]}" --set output.io.io_ranks_per_node=2
rc=$?
check "a hook failing at step 2 on an I/O rank: the run exits 0" "[ $rc = 0 ]"
check "... one error line naming the library, the step and the I/O rank" \
  "[ \$(grep -c 'insitu      error' f.out) = 1 ] && grep -q \"^insitu      error: $hook: step 2: test hook: fails on purpose at step 2 second line (on 1 of 2 ranks, first rank 1); the hook is disabled, the run goes on\$\" f.out"
check "... called at steps 0, 1, 2 only, then finalised; the summary says 3 steps" \
  "[ \"\$(grep -v '^init' f.log | tr '\n' ' ')\" = 'step 0 grids=21 step 1 grids=21 step 2 grids=21 finalize ' ] && grep -q ': 3 steps handed over, every 1, run on the 2 I/O ranks' f.out"
check "... the file is intact: the steps of the run without a hook, bit for bit, and it verifies" \
  "same_file w0.h5 f.h5 && $rewind verify f.h5 >/dev/null 2>&1"

run 4 i.out "${small[@]}" --set insitu.library="$hook" --set "insitu.args=\"log=i.log mode=init\"" -o i.h5 "${ded[@]}"
rc=$?
check "a hook whose init fails on the I/O rank: one line, never called, the run completes with its file" \
  "[ $rc = 0 ] && [ \$(grep -c 'insitu      error' i.out) = 1 ] && grep -q 'rewind_insitu_init: test hook: init fails on purpose' i.out && ! grep -q 'step\|finalize' i.log && same_file none2.h5 i.h5"

run 4 r1.out "${small[@]}" --set insitu.library=./nope/missing.so -o r1.h5 "${ded[@]}"
check "a library that does not exist, for the I/O ranks: one error line, no abort, no file" \
  "[ $? != 0 ] && [ \$(grep -c 'error:' r1.out) = 1 ] && grep -q \"insitu.library: in-situ library './nope/missing.so' does not exist\" r1.out && ! grep -q MPI_ABORT r1.out && [ ! -e r1.h5 ]"
run 4 r2.out "${small[@]}" --set insitu.library="$hook" "${ded[@]}"
check "a hook on the I/O ranks without an output file: one error line naming output.file" \
  "[ $? != 0 ] && [ \$(grep -c 'error:' r2.out) = 1 ] && grep -q 'runs the hook on the I/O ranks.*output.file' r2.out"
exit $fail

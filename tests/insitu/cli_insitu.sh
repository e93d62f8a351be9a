#!/usr/bin/env bash
# [insitu] through `rewind run`, as a user meets it:
#  - bad values are refused before the run with one line and a non-zero exit (a
#    library that does not exist, every = 0, a library without the entry points, one
#    built for another ABI version), on one process and under mpirun;
#  - a hook that fails (returns an error, throws, fails its init) is reported with one
#    line naming the library and the step, is not called again, is still finalised,
#    and the run completes with every output step committed and verified;
#  - a hook written in C runs; `rewind keys insitu` lists the keys; a restart that only
#    changes [insitu] continues the same file.
#   cli_insitu.sh REWIND SOURCE_DIR MPIEXEC TEST_HOOK ABI99_HOOK NOT_A_HOOK C_HOOK ABI1_HOOK
source "$(dirname "$0")/../apps/lib.sh" "$@"
hook=$(realpath "$4") abi99=$(realpath "$5") not_hook=$(realpath "$6") c_hook=$(realpath "$7") abi1=$(realpath "$8")
lines() { wc -l <"$1" | tr -d ' '; }
case_file="$src/cases/taylor-green.toml"
small=(--set tree.depth=1 --set monitor.progress=0 --set output.visualisation_every=1)
steps_in() { "$rewind" info "$1" --json | /usr/bin/python3 -c "import json,sys; s=json.load(sys.stdin)['steps']; print(' '.join(str(x['step']) for x in s if x['committed']))"; }

# --- refused before the run: one line, non-zero exit ------------------------------
"$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.library=./nope/missing.so >r1.out 2>&1
check "a library path that does not exist: one line naming it, no file written" \
  "[ $? != 0 ] && [ \$(lines r1.out) = 1 ] && grep -q \"insitu.library: in-situ library './nope/missing.so' does not exist\" r1.out && [ ! -e a.h5 ]"
"$mpiexec" -n 3 "$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.library=./nope/missing.so >r2.out 2>&1
check "... under mpirun -n 3: one error line, no MPI_ABORT" \
  "[ $? != 0 ] && [ \$(grep -c 'error:' r2.out) = 1 ] && grep -q 'does not exist' r2.out && ! grep -q MPI_ABORT r2.out"
"$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.library="$hook" --set insitu.every=0 >r3.out 2>&1
check "every = 0: one line naming insitu.every" \
  "[ $? != 0 ] && [ \$(lines r3.out) = 1 ] && grep -q 'insitu.every' r3.out && grep -q 'must be' r3.out"
"$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.every=x >r3b.out 2>&1
check "every = x (not an integer): one line naming insitu.every" \
  "[ $? != 0 ] && [ \$(lines r3b.out) = 1 ] && grep -q 'insitu.every' r3b.out"
"$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.libary=x.so >r3c.out 2>&1
check "a typo in a key: 'did you mean insitu.library'" "[ $? != 0 ] && grep -q \"did you mean 'insitu.library'\" r3c.out"
"$mpiexec" -n 2 "$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.library="$not_hook" >r4.out 2>&1
check "a library without the entry points: one line naming the library and the symbol" \
  "[ $? != 0 ] && [ \$(grep -c 'error:' r4.out) = 1 ] && grep -q \"is not a Rewind in-situ hook: it has no symbol 'rewind_insitu_init'\" r4.out"
"$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.library="$abi99" >r5.out 2>&1
check "a hook built for another ABI version: one line with both versions" \
  "[ $? != 0 ] && [ \$(lines r5.out) = 1 ] && grep -q 'built for hook ABI version 99, this rewind loads versions 1 to 2' r5.out"
# Version 2 only appended a field: a hook built for version 1 still loads and runs.
"$rewind" run "$case_file" "${small[@]}" --output v1.h5 --set insitu.library="$abi1" --set "insitu.args=log=v1.log" \
  --set output.visualisation_every=2 >r5b.out 2>&1
check "a hook built for ABI version 1 loads and is called (steps 0, 1, 2, ...)" \
  "[ $? = 0 ] && grep -q '^step 0 grids=' v1.log && grep -q '^step 2 grids=' v1.log && grep -q finalize v1.log"
"$rewind" run "$case_file" "${small[@]}" --output a.h5 --set insitu.library=librewind_no_such_hook.so >r6.out 2>&1
check "a bare library name dlopen cannot find: one line with dlopen's reason" \
  "[ $? != 0 ] && [ \$(lines r6.out) = 1 ] && grep -q \"cannot load in-situ library 'librewind_no_such_hook.so'\" r6.out"

# --- a failing hook never kills the run ------------------------------------------
# 3 processes: a server and two compute ranks; rank 1 of the hook's communicator fails
# at step 2 (after the hook's own collective, so no rank is left behind).
"$mpiexec" -n 3 "$rewind" run "$case_file" "${small[@]}" --steps 5 --output f.h5 --set insitu.library="$hook" \
  --set "insitu.args=\"log=f.log fail_at=2 rank=1\"" >f.out 2>f.err
rc=$?
check "a hook returning an error at step 2 (one rank of two): the run exits 0" "[ $rc = 0 ]"
check "... one error line naming the library, the step, the message and the ranks" \
  "[ \$(grep -c 'insitu      error' f.err) = 1 ] && grep -q \"insitu      error: $hook: step 2: test hook: fails on purpose at step 2 second line (on 1 of 2 ranks, first rank 1); the hook is disabled, the run goes on\" f.err"
check "... the hook was called at steps 0, 1, 2 only, then finalised" \
  "[ \"\$(grep -v '^init' f.log | tr '\n' ' ')\" = 'step 0 grids=5 step 1 grids=5 step 2 grids=5 finalize ' ]"
check "... the output file holds every step 0..5, committed" "[ \"\$(steps_in f.h5)\" = '0 1 2 3 4 5' ]"
"$rewind" verify f.h5 >fv.out 2>&1
check "... and verifies" "[ $? = 0 ]"

"$rewind" run "$case_file" "${small[@]}" --steps 4 --output t.h5 --set insitu.library="$hook" \
  --set "insitu.args=\"log=t.log fail_at=1 mode=throw\"" >t.out 2>t.err
rc=$?
check "a hook throwing a C++ exception at step 1: caught, one line, the run exits 0 with all steps" \
  "[ $rc = 0 ] && [ \$(grep -c 'insitu      error' t.err) = 1 ] && grep -q 'step 1: threw: test hook: throws on purpose at step 1' t.err && [ \"\$(steps_in t.h5)\" = '0 1 2 3 4' ]"
check "... not called after it threw" "! grep -q 'step 2' t.log && grep -q finalize t.log"

"$mpiexec" -n 3 "$rewind" run "$case_file" "${small[@]}" --steps 3 --output i.h5 --set insitu.library="$hook" \
  --set "insitu.args=\"log=i.log mode=init\"" >i.out 2>i.err
rc=$?
check "a hook whose init fails: one line, never called, no finalize, the run completes" \
  "[ $rc = 0 ] && [ \$(grep -c 'insitu      error' i.err) = 1 ] && grep -q 'rewind_insitu_init: test hook: init fails on purpose (on 2 of 2 ranks, first rank 0)' i.err && ! grep -q 'step\|finalize' i.log && [ \"\$(steps_in i.h5)\" = '0 1 2 3' ]"

# --- the good paths ------------------------------------------------------------------
"$mpiexec" -n 2 "$rewind" run "$case_file" "${small[@]}" --steps 4 --output c.h5 --set insitu.library="$c_hook" \
  --set insitu.every=2 >c.out 2>&1
check "a hook written in C runs (steps 0, 2, 4)" "[ $? = 0 ] && grep -q 'insitu      .*: 3 steps handed over, every 2' c.out"
"$rewind" run "$case_file" "${small[@]}" --steps 4 --output e.h5 --set insitu.library="$hook" \
  --set insitu.every=3 --set "insitu.args=\"log=e.log\"" -q >e.out 2>&1
check "every = 3 from --set: steps 0 and 3; -q prints nothing" \
  "[ $? = 0 ] && [ ! -s e.out ] && [ \"\$(grep '^step' e.log | cut -d' ' -f2 | tr '\n' ' ')\" = '0 3 ' ]"
"$rewind" run --restart e.h5 --set time.end=5 --steps 2 --set insitu.library="$hook" --set insitu.every=1 \
  --set "insitu.args=\"log=e2.log\"" >e2.out 2>&1
check "a restart that changes only [insitu] continues the same file; the hook gets the new steps" \
  "[ $? = 0 ] && grep -q '^output      continuing e.h5' e2.out && ! ls e.branch*.h5 >/dev/null 2>&1 && [ \"\$(grep '^step' e2.log | cut -d' ' -f2 | tr '\n' ' ')\" = '4 5 6 ' ]"
"$rewind" keys insitu >keys.out 2>&1
check "rewind keys insitu lists library, every, args" \
  "[ $? = 0 ] && grep -q 'insitu.library' keys.out && grep -q 'insitu.every' keys.out && grep -q 'insitu.args' keys.out"
exit $fail

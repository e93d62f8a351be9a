#!/usr/bin/env bash
# Several futures from one step of a live run (docs/collector-protocol.md revision 1.8,
# "Futures"), the way a user runs it: `mpiexec -n 6 rewind run ... --listen` (the
# neighbourhood server, the collector, 4 compute ranks), then
# `rewind steer ADDR branch --from latest --future ... --future ...`:
#  - two futures from one step, one changed and one not: `status` lists both; each writes
#    its own file, lineage (parent, step, its changes) and monitor CSV;
#  - one future paused alone takes no step while the other goes on;
#  - a future forked again (`branch --file a.h5 --future ... x2`): three futures;
#    one of them stopped alone while the others run on;
#  - every future's steps equal, bit for bit (h5py: same_steps.py, grids matched by UID),
#    those of `rewind run --restart PARENT@STEP --set ...` of the same changes, on the
#    same (4) and on another (1) compute rank count; the unchanged future equals the
#    parent continued;
#  - with 4 compute ranks, two futures compute on 2 ranks each (status says which), a
#    future forked again into two splits its group (1 rank each); into three, more futures
#    than its ranks, is refused, saying how many processes to start, the run unchanged;
#  - four futures from one step (1 rank each), the run's `fork` line when all four have computed a step;
#    an adaptive live window of one of them equals the file's adaptive window at that step;
#    live windows of two of them (--file) equal their files' final checkpoints; then kill
#    -9 of one compute rank: every file's committed steps verify (`rewind verify`), read
#    with h5py and, for the two killed futures, equal their branches alone as far as both
#    reach;
#  - uneven groups (3 compute ranks, two futures: 2 + 1 ranks), each equal to its branch
#    alone on another rank count;
#  - misuse (one line each, the run goes on): --output count not --future count, two
#    futures into one file, a fork of a file no future writes, --file of no future, a
#    fork of two futures from a step with a damaged row (read once by the four ranks).
#   cli_futures.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # check, start_live, pause_at, status, one_error, wait_job
in_tmpdir
export REWIND_TOKEN="futures-$$-$RANDOM$RANDOM"
case_file=$src/cases/default.toml
run=(--set time.end=30 --set output.checkpoint_every=4 --set output.visualisation_interval=0 -q)
# future FILE FIELD: a field of the future writing FILE in `status --json` ("" if none).
future() {
  "${steer[@]}" status --json 2>/dev/null | $py -c "
import json, sys
d = json.load(sys.stdin)
print(next((str(f['$2']) for f in d.get('futures', []) if f['file'].endswith('$1')), ''))"
}
wait_future_step() {  # wait_future_step FILE STEP: until that future is at STEP or later (60 s)
  for _ in $(seq 1 600); do [ "$(future "$1" step)" -ge "$2" ] 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
same() {  # same FUTURE SOLO PARENT STEP CHANGES [--subset]
  $py "$src/tests/collector/same_steps.py" "$1" "$2" --parent "$3" --step "$4" --changes "$5" "${@:6}"
}

# --- Two futures, one forked again ------------------------------------------------------
start_live 6 p.h5 "$case_file" --steps 40 "${run[@]}"
pause_at 5
s=$(status | cut -d' ' -f2)
check "misuse: two --future and one --output" \
  "one_error ${steer[*]} branch --from latest --future '' --future '' --output x.h5 && grep -q 'one --output per future' err.out"
check "misuse: a future on a refined tree (the job's futures share its grids: not a steerable key)" \
  "one_error ${steer[*]} branch --from latest --future tree.depth=4 --future '' --output x.h5 --output y.h5 && grep -q 'tree.depth is not a steerable parameter' err.out && [ ! -e x.h5 ]"
check "misuse: two futures into one file" \
  "one_error ${steer[*]} branch --from latest --future '' --future 'physics.nu=0.002' --output x.h5 --output x.h5 && grep -q 'two futures cannot write one file' err.out"
check "misuse: two futures into one file under two names (x.h5, ./x.h5)" \
  "one_error ${steer[*]} branch --from latest --future '' --future 'physics.nu=0.002' --output x.h5 --output ./x.h5 && grep -q 'two futures cannot write one file' err.out"
check "misuse: --file of no future" "one_error ${steer[*]} pause --file nothing.h5 && grep -q 'not a future of this job' err.out"
check "... and the run is where it was" "[ \"\$(status | cut -d' ' -f2)\" = '$s' ] && [ ! -e x.h5 ]"
"${steer[@]}" branch --from latest --future 'boundary.xmin.velocity=[1.2, 0, 0]' --future '' \
  --output a.h5 --output b.h5 >fork.out 2>&1
check "fork: two futures from step $s" "grep -q \"^forked 2 futures from step $s .*: a.h5, b.h5\" fork.out" || cat fork.out
"${steer[@]}" status >status2.out 2>&1
check "status lists both futures, the changed one with its change" \
  "grep -q '^2 futures:' status2.out && grep -q 'a.h5  paused at step $s.*boundary.xmin.velocity=' status2.out && grep -q 'b.h5  paused at step $s' status2.out" ||
  cat status2.out
check "each computes on a group of its own: 2 of the 4 compute ranks" \
  "grep -q 'a.h5  .*, on compute ranks 0-1' status2.out && grep -q 'b.h5  .*, on compute ranks 2-3' status2.out" ||
  cat status2.out
"${steer[@]}" resume >/dev/null 2>&1
check "pause one future alone" "${steer[*]} pause --file b.h5 >/dev/null 2>&1"
sb=$(future b.h5 step)
wait_future_step a.h5 $((sb + 3))
check "the other future goes on (a.h5 at step $(future a.h5 step))" "[ \"\$(future a.h5 step)\" -ge $((sb + 3)) ]"
check "the one paused alone has not moved (b.h5 at step $sb, $(future b.h5 state))" \
  "[ \"\$(future b.h5 step)\" = $sb ] && [ \"\$(future b.h5 state)\" = paused ]"
"${steer[@]}" resume --file b.h5 >/dev/null 2>&1
check "a fork of three futures of a future on 2 ranks is refused: start 7 processes" \
  "one_error ${steer[*]} branch --file a.h5 --from latest --future '' --future '' --future '' --output a1.h5 --output a2.h5 --output a3.h5 && grep -q '3 futures need 3 compute ranks, one group each; a.h5 computes on 2: start the run on 7 or more processes' err.out && [ ! -e a1.h5 ] && ${steer[*]} status | grep -q '^2 futures:'" ||
  cat err.out
"${steer[@]}" branch --file a.h5 --from latest --future 'physics.nu=0.002' --future 'physics.nu=0.004' \
  --output a1.h5 --output a2.h5 >fork2.out 2>&1
check "a future forked again, one rank each" \
  "grep -q '^forked 2 futures from step .* of a.h5: a1.h5, a2.h5' fork2.out" || cat fork2.out
f=$(sed -n 's/^forked 2 futures from step \([0-9]*\) .*/\1/p' fork2.out)
"${steer[@]}" status >status3.out 2>&1
check "status lists three futures, a's two ranks one each for a1 and a2" \
  "grep -q '^3 futures:' status3.out && grep -q 'a1.h5  .*, on compute rank 0' status3.out && grep -q 'a2.h5  .*, on compute rank 1' status3.out && grep -q 'b.h5  .*, on compute ranks 2-3' status3.out" ||
  cat status3.out
wait_future_step a2.h5 $((f + 5))  # past a regular checkpoint
check "stop one future alone" "${steer[*]} stop --file a2.h5 >/dev/null 2>&1"
wait_future_step a1.h5 $((f + 2))
for _ in $(seq 1 100); do [ "$(future a2.h5 state)" = finished ] && break; sleep 0.1; done
check "the others run on after it stopped ($(future a2.h5 state))" \
  "[ \"\$(future a2.h5 state)\" = finished ] && [ \"\$(future a1.h5 step)\" -ge $((f + 2)) ]"
wait_job 180
check "the job ends by itself when every future has ended" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
for x in p a b a1 a2; do
  check "$x.h5 verifies" "\"$rewind\" verify -q $x.h5"
done
check "each future writes its own monitor CSV" \
  "[ \$(grep -c '^[0-9]' a1.monitor.csv) -ge 3 ] && [ \$(grep -c '^[0-9]' b.monitor.csv) -ge 3 ]"

# The same computations alone: restarts of the same step with the same changes.
"$mpiexec" -n 5 "$rewind" run --restart "p.h5@$s" --set 'boundary.xmin.velocity=[1.2, 0, 0]' -o a_solo.h5 --steps 40 -q >solo.log 2>&1
"$mpiexec" -n 2 "$rewind" run --restart "p.h5@$s" -o b_solo.h5 --steps 40 -q >>solo.log 2>&1
"$mpiexec" -n 2 "$rewind" run --restart "a.h5@$f" --set physics.nu=0.002 -o a1_solo.h5 --steps 40 -q >>solo.log 2>&1
"$mpiexec" -n 5 "$rewind" run --restart "a.h5@$f" --set physics.nu=0.004 -o a2_solo.h5 --steps 40 -q >>solo.log 2>&1
check "the solo branches run" "[ -s a1_solo.h5 ] && [ -s a2_solo.h5 ]" || cat solo.log
check "future a (until it forked) = its branch alone on 4 compute ranks" \
  "same a.h5 a_solo.h5 p.h5 $s 'boundary.xmin.velocity=[1.2, 0, 0]' --subset >same_a.out 2>&1" || cat same_a.out
check "future b (no changes) = the parent continued, alone on 1 compute rank" \
  "same b.h5 b_solo.h5 p.h5 $s '' >same_b.out 2>&1" || cat same_b.out
check "future a1 (forked from a) = its branch alone on 1 compute rank" \
  "same a1.h5 a1_solo.h5 a.h5 $f 'physics.nu=0.002' >same_a1.out 2>&1" || cat same_a1.out
check "future a2 (stopped early) = its branch alone on 4 compute ranks, up to the stop" \
  "same a2.h5 a2_solo.h5 a.h5 $f 'physics.nu=0.004' --subset >same_a2.out 2>&1" || cat same_a2.out

# --- Four futures, live windows, kill -9 ------------------------------------------------
start_live 6 q.h5 "$case_file" --steps 400 "${run[@]:0:6}"  # not -q: the run's fork line
pause_at 3
# A row of step 0 damaged on disk (one byte of u, in the third of four stretches the fork's
# ranks read): a fork from it fails on every rank, in one line naming the damage, creates
# no file and leaves the run as it was; the byte is then put back.
flip() {  # flip FILE: xor one byte of step 0's u in the middle of its rows
  HDF5_USE_FILE_LOCKING=FALSE $py -c "
import h5py, sys
with h5py.File(sys.argv[1], 'r') as f:
    d = f['simulation/step_00000000/cell_data/u']
    at = d.id.get_offset() + (d.shape[0] * 5 // 8) * d.dtype.itemsize * d[0].size + 8
with open(sys.argv[1], 'r+b') as g:
    g.seek(at); b = g.read(1); g.seek(at); g.write(bytes([b[0] ^ 0x40]))" "$1"
}
flip q.h5
check "a fork of two futures from a damaged step is refused on every rank; no file made, one future runs" \
  "one_error ${steer[*]} branch --from 0 --future '' --future '' --output d1.h5 --output d2.h5 && grep -q 'checksum' err.out && [ ! -e d1.h5 ] && [ ! -e d2.h5 ] && ! ${steer[*]} status | grep -q 'futures:'" ||
  cat err.out
flip q.h5
futures=()
for v in 1.0 1.1 1.2 1.3; do futures+=(--future "boundary.xmin.velocity=[$v, 0, 0]" --output "q$v.h5"); done
"${steer[@]}" branch --from latest "${futures[@]}" >fork4.out 2>&1
check "four futures from one step" "grep -q '^forked 4 futures' fork4.out && ${steer[*]} status | grep -q '^4 futures:'" ||
  cat fork4.out
"${steer[@]}" resume >/dev/null 2>&1
wait_future_step q1.3.h5 $(($(status | cut -d' ' -f2) + 5))
check "the run says when every future had computed its first step (docs/benchmarks.md, Futures)" \
  "grep -Eq '^fork +4 futures from step [0-9]+ on 4 groups of compute ranks: every one.s first step computed [0-9.e+-]+ s after the fork began \(solvers made [0-9.e+-]+ s, branch point read once, handed to each group, and restored [0-9.e+-]+ s, first boundaries written [0-9.e+-]+ s\)$' serve.log" ||
  grep -E '^fork|^forked' serve.log
"${steer[@]}" pause >/dev/null 2>&1
box=(--box 0,0,0,2.2,0.41,0 --budget 4000)
"$rewind" window "127.0.0.1:$port" --time live --file q1.0.h5 "${box[@]}" --out w10.json >w.out 2>&1
"$rewind" window "127.0.0.1:$port" --time live --file q1.3.h5 "${box[@]}" --out w13.json >>w.out 2>&1
"$rewind" window "127.0.0.1:$port" --time live --file q1.3.h5 "${box[@]}" --lod adaptive --out a13.json >>w.out 2>&1
check "live windows of two futures (--file), one of them adaptive" "[ -s w10.json ] && [ -s w13.json ] && [ -s a13.json ]" ||
  cat w.out
"${steer[@]}" stop --file q1.0.h5 >/dev/null 2>&1
"${steer[@]}" stop --file q1.3.h5 >/dev/null 2>&1
"${steer[@]}" resume >/dev/null 2>&1
sleep 1
check "each window equals its future's final checkpoint (written where it stopped), value by value" \
  "$py $src/tests/collector/check_window.py q1.0.h5 w10.json >chk.out 2>&1 && $py $src/tests/collector/check_window.py q1.3.h5 w13.json >>chk.out 2>&1" ||
  tail -4 chk.out
# The adaptive window of a future on one rank of four: ranked by the details its rank
# computed of its own state, the same as the file's statistics at that step.
s13=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" a13.json)
"$rewind" window "q1.3.h5@$s13" "${box[@]}" --lod adaptive --out fa13.json >fa13.out 2>&1
check "its adaptive window equals the file's adaptive window at that step (step $s13), on mixed levels" \
  "$py $src/tests/collector/check_same_window.py a13.json fa13.json --mixed --budget 4000 >same13.out 2>&1" ||
  cat same13.out fa13.out
wait_future_step q1.1.h5 $(($(future q1.1.h5 step) + 4))
victim=$(ps -o pid= --ppid "$server_pid" | tail -1)
kill -9 $victim
wait_job 60
check "kill -9 of one compute rank ends the job" "[ -n '$ended' ]"
for x in q q1.0 q1.1 q1.2 q1.3; do
  check "$x.h5: every committed step verifies" "\"$rewind\" verify -q $x.h5"
done
check "h5py reads every committed step of every future's file" "$py - <<'EOF'
import h5py
for name in ['q1.0.h5', 'q1.1.h5', 'q1.2.h5', 'q1.3.h5']:
    with h5py.File(name, 'r') as f:
        n = 0
        for g in f['simulation'].values():
            if isinstance(g, h5py.Group) and g.attrs.get('committed', True):
                for v in g['cell_data'].values():
                    v[()]
                n += 1
        assert n >= 2, (name, n)
EOF"
q0=$(sed -n 's/^forked 4 futures from step \([0-9]*\) .*/\1/p' fork4.out)
for v in 1.1 1.2; do
  "$mpiexec" -n 2 "$rewind" run --restart "q.h5@$q0" --set "boundary.xmin.velocity=[$v, 0, 0]" -o "q${v}_solo.h5" --steps 12 -q >>solo.log 2>&1
  check "killed future q$v.h5 = its branch alone on 1 compute rank, as far as both reach" \
    "same q$v.h5 q${v}_solo.h5 q.h5 $q0 'boundary.xmin.velocity=[$v, 0, 0]' --common >same_q$v.out 2>&1" || cat same_q$v.out
done

# --- Uneven groups: two futures of a job on 3 compute ranks ------------------------------
# Groups of 2 and 1 rank: the branch point's rows are read once by the three ranks (those
# holding the same rows share them) and handed across; each future still equals its branch
# alone, bit for bit.
start_live 5 u.h5 "$case_file" --steps 12 "${run[@]}"
pause_at 3
"${steer[@]}" branch --from latest --future 'physics.nu=0.002' --future '' --output u1.h5 --output u2.h5 >fork5.out 2>&1
"${steer[@]}" status >status5.out 2>&1
check "two futures of 3 compute ranks: groups of 2 and 1" \
  "grep -q 'u1.h5  .*, on compute ranks 0-1' status5.out && grep -q 'u2.h5  .*, on compute rank 2' status5.out" ||
  cat fork5.out status5.out
u0=$(sed -n 's/^forked 2 futures from step \([0-9]*\) .*/\1/p' fork5.out)
"${steer[@]}" resume >/dev/null 2>&1
wait_job 120
check "the job ends when both futures have" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
"$mpiexec" -n 2 "$rewind" run --restart "u.h5@$u0" --set physics.nu=0.002 -o u1_solo.h5 --steps 12 -q >>solo.log 2>&1
"$mpiexec" -n 4 "$rewind" run --restart "u.h5@$u0" -o u2_solo.h5 --steps 12 -q >>solo.log 2>&1
check "future u1 (on 2 ranks) = its branch alone on 1 compute rank" \
  "same u1.h5 u1_solo.h5 u.h5 $u0 'physics.nu=0.002' >same_u1.out 2>&1" || cat same_u1.out
check "future u2 (on 1 rank) = the parent continued alone on 3 compute ranks" \
  "same u2.h5 u2_solo.h5 u.h5 $u0 '' >same_u2.out 2>&1" || cat same_u2.out
exit $fail

#!/usr/bin/env bash
# Several futures of a C code, forked inside its running job (examples/heat-c over the C
# API: rewind_event's future, futures, changes and comm; the code re-partitions its
# leaves onto the communicator of its future), run the way its users run it:
#  - 4 ranks, collector on a thread: two futures from step 500, each on 2 ranks; status
#    lists them with their ranks; one paused alone takes no step while the other goes on
#    (its window answered meanwhile), then resumes; a live window of each (--file) equals
#    its file's step and the leaves' averages; one is stopped while the other is forked again onto one
#    rank each; three futures of a 2-rank future are refused, naming the ranks needed;
#  - 3 processes, collector on its own rank (2 compute ranks, the tree sent over MPI):
#    two futures from step 0 on one rank each, windows of each;
#  - kill -9 of one rank of one future's group ends the job; every committed step of
#    every file verifies;
#  - the h5py oracle (same_steps.py, no Rewind code): every step each future wrote after
#    its branch point equals, bit for bit, the code restarted alone from that step with
#    the same change (--restart PARENT@STEP --kappa K) on another rank count; the
#    lineage names its parent, step and change; `rewind verify` passes on every file.
#   futures.sh HEAT_C REWIND SOURCE_DIR MPIEXEC
set -u
heat=$(realpath "$1")
shift
source "$(dirname "$0")/../apps/lib.sh" "$@"
py=/usr/bin/python3
export REWIND_TOKEN="futures-$$-$RANDOM$RANDOM"

steer() { "$rewind" steer "127.0.0.1:$port" "$@"; }
# field FILE KEY: a field of the future writing FILE in `status --json` ("" if none;
# FILE "": the job's own).
field() {
  steer status --json 2>/dev/null | $py -c "
import json, sys
d = json.load(sys.stdin)
if not '$1':
    print(d.get('$2', ''))
else:
    print(next((str(f['$2']) for f in d.get('futures', []) if f['file'].endswith('$1')), ''))"
}
wait_step() {  # wait_step FILE STEP: until that future (or the job) is at STEP or later (60 s)
  for _ in $(seq 600); do [ "$(field "$1" step)" -ge "$2" ] 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
same() { $py "$src/tests/collector/same_steps.py" "$@" >same.out 2>&1 || { head -5 same.out; return 1; }; }
window_ok() { $py "$src/tests/collector/check_window.py" "$1" "$2" >chk.out 2>&1 || { tail -2 chk.out; false; }; }
last_step() { "$rewind" info "$1" --json | $py -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['step'])"; }

# --- 4 ranks, collector thread: two futures, one stopped, the other forked again -------
"$mpiexec" -n 4 "$heat" run.h5 100000000 --vis 50 --cp 500 --listen 127.0.0.1:0 >run.log 2>&1 &
job=$!
port=$(listen_port run.log heat)
check "heat on 4 ranks says where it listens" "[ -n '$port' ]" || { cat run.log; exit 1; }
wait_step "" 600
steer pause >/dev/null 2>&1
steer branch --from 500 --future 'kappa=0.02' --future 'kappa=0.005' --output a.h5 --output b.h5 >fork.out 2>&1
check "two futures from step 500 of the running C code (one command)" \
  "[ $? = 0 ] && grep -q 'forked 2 futures from step 500' fork.out" || cat fork.out
steer status >status.out 2>&1
check "status lists both, each on its own 2 of the 4 compute ranks, with its change" \
  "grep -q 'a.h5 .*on compute ranks 0-1, changes kappa=0.02' status.out &&
   grep -q 'b.h5 .*on compute ranks 2-3, changes kappa=0.005' status.out" || cat status.out
steer resume >/dev/null 2>&1
steer pause --file b.h5 >pauseb.out 2>&1
check "pause --file pauses one future" "[ $? = 0 ] && grep -q paused pauseb.out" || cat pauseb.out
sb=$(field b.h5 step)
wait_step a.h5 $((sb + 200))
check "... which takes no step while the other goes on (b at $sb, a at $(field a.h5 step)), status says so" \
  "[ \"\$(field b.h5 step)\" = '$sb' ] && [ \"\$(field b.h5 state)\" = paused ] && [ \"\$(field a.h5 state)\" = running ]"
"$rewind" window "127.0.0.1:$port" --file b.h5 --box 0,0,0,1,1,1 --budget 2000 >wpb.out 2>&1
check "... and whose window is answered while it waits, at its step" "grep -q \"^step $sb .*of b.h5\" wpb.out" || cat wpb.out
steer resume --file b.h5 >/dev/null 2>&1
wait_step b.h5 $((sb + 100))
check "resume --file lets it go on" "[ \"\$(field b.h5 step)\" -gt '$sb' ]"
wait_step a.h5 800
steer pause >/dev/null 2>&1
p1=$(field a.h5 step)
p1b=$(field b.h5 step)
check "the job paused: both futures hold (a at $p1, b at $p1b)" "[ -n '$p1' ] && [ -n '$p1b' ]"
"$rewind" window "127.0.0.1:$port" --file a.h5 --box 0,0,0,1,1,1 --budget 20000 --out wa.json >wa.out 2>&1
"$rewind" window "127.0.0.1:$port" --file b.h5 --box 0,0,0,1,1,1 --budget 20000 --out wb.json >wb.out 2>&1
check "a live window of each future (--file) shows that future's state" \
  "grep -q 'of a.h5' wa.out && grep -q 'of b.h5' wb.out && ! cmp -s wa.json wb.json"
# Steering mistakes while the job is paused: one line each, nothing changes.
steer set kappa=1000 --file a.h5 >badset.out 2>&1
check "a value outside the declared range for one future: refused, one line" \
  "[ $? != 0 ] && [ \$(wc -l <badset.out) = 1 ] && grep -q outside badset.out" || cat badset.out
steer pause --file nothing.h5 >badfile.out 2>&1
check "--file of no future: refused, naming the futures there are" \
  "[ $? != 0 ] && grep -q 'nothing.h5 is not a future of this run (a.h5, b.h5)' badfile.out" || cat badfile.out
steer branch --file a.h5 --from latest --future '' --future '' --output x.h5 --output ./x.h5 >same.out 2>&1
check "two futures into one file under two names: refused, nothing created" \
  "[ $? != 0 ] && grep -q 'two futures would write' same.out && [ ! -e x.h5 ]" || cat same.out
check "... and the job is where it was" "[ \"\$(field a.h5 step)\" = '$p1' ] && [ \"\$(field a.h5 state)\" = paused ]"
steer stop --file b.h5 >stopb.out 2>&1
check "stop --file stops one future" "[ $? = 0 ] && grep -q stopping stopb.out"
steer branch --file a.h5 --from latest --future 'kappa=0.03' --future 'kappa=0.04' --future 'kappa=0.05' >three.out 2>&1
check "three futures of a future on 2 ranks are refused, naming the ranks they need" \
  "[ $? != 0 ] && grep -q '3 futures need 3 compute ranks' three.out && grep -q 'start the code on 5 or more' three.out" ||
  cat three.out
steer branch --file a.h5 --from latest --future 'kappa=0.03' --future 'kappa=0.04' --output a1.h5 --output a2.h5 \
  >fork2.out 2>&1
check "a future forked again from its current state (latest: written first), its 2 ranks split" \
  "[ $? = 0 ] && grep -q \"forked 2 futures from step $p1 .*of a.h5\" fork2.out" || cat fork2.out
steer resume >/dev/null 2>&1
wait_step a1.h5 $((p1 + 300))
steer status >status2.out 2>&1
check "status: the new futures on one rank each, the stopped one finished" \
  "grep -q 'a1.h5 .*on compute rank 0, changes kappa=0.03' status2.out &&
   grep -q 'a2.h5 .*on compute rank 1, changes kappa=0.04' status2.out && grep -q 'b.h5  finished' status2.out" ||
  cat status2.out
steer stop >/dev/null 2>&1
wait $job
check "stop ends the job cleanly (exit 0)" "[ $? = 0 ]" || tail -5 run.log
check "each future's ranks say which future they compute, on how many ranks" \
  "grep -q 'future 1 of 2 on 2 ranks: kappa=0.02' run.log && grep -q 'future 2 of 2 on 2 ranks: kappa=0.005' run.log &&
   grep -q 'future 2 of 2 on 1 ranks: kappa=0.04' run.log"
check "a paused future's window equals its file at that step and the leaves' averages (h5py)" \
  "window_ok a.h5 wa.json && window_ok b.h5 wb.json"
for f in run.h5 a.h5 b.h5 a1.h5 a2.h5; do
  check "rewind verify $f" "$rewind verify $f >verify.out 2>&1" || cat verify.out
done
# The oracle: each future against the code restarted alone with the same change.
"$mpiexec" -n 1 "$heat" as.h5 "$p1" --vis 50 --cp 500 --restart run.h5@500 --kappa 0.02 >as.log 2>&1
check "future a (2 ranks) = heat --restart run.h5@500 --kappa 0.02 on 1 rank, bit for bit (h5py)" \
  "same a.h5 as.h5 --parent run.h5 --step 500 --changes kappa=0.02 --after 500"
"$mpiexec" -n 3 "$heat" bs.h5 "$p1b" --vis 50 --cp 500 --restart run.h5@500 --kappa 0.005 >bs.log 2>&1
check "future b (2 ranks, paused alone, then stopped) = the same restart with kappa 0.005 on 3 ranks, bit for bit" \
  "same b.h5 bs.h5 --parent run.h5 --step 500 --changes kappa=0.005 --after 500"
p2=$(last_step a1.h5)
cp a.h5 a1s.h5 && cp a.h5 a2s.h5  # a.h5's last checkpoint: a restart continues in its file
"$mpiexec" -n 2 "$heat" unused "$p2" --vis 50 --cp 500 --restart a1s.h5 --kappa 0.03 >a1s.log 2>&1
check "future a1 (rank 0 of a's) = a restart of a at step $p1 with kappa 0.03 on 2 ranks, bit for bit" \
  "same a1.h5 a1s.h5 --parent a.h5 --step $p1 --changes kappa=0.03 --after $p1"
"$mpiexec" -n 3 "$heat" unused "$p2" --vis 50 --cp 500 --restart a2s.h5 --kappa 0.04 >a2s.log 2>&1
check "future a2 (rank 1 of a's) = the same with kappa 0.04 on 3 ranks, bit for bit" \
  "same a2.h5 a2s.h5 --parent a.h5 --step $p1 --changes kappa=0.04 --after $p1"

# --- 3 processes, collector rank: two futures on one compute rank each -----------------
"$mpiexec" -n 3 "$heat" r.h5 100000000 --vis 50 --cp 500 --listen 127.0.0.1:0 --collector rank >r.log 2>&1 &
job=$!
port=$(listen_port r.log heat)
check "heat with its collector on a rank says where it listens" "[ -n '$port' ]" || { cat r.log; exit 1; }
wait_step "" 100
steer pause >/dev/null 2>&1
steer branch --from '#0' --future 'kappa=0.02' --future '' --output ra.h5 --output rb.h5 >rfork.out 2>&1
check "collector rank: two futures from step 0, one compute rank each" \
  "[ $? = 0 ] && steer status | grep -q 'rb.h5 .*on compute rank 1'" || cat rfork.out
steer resume >/dev/null 2>&1
wait_step ra.h5 300
steer pause >/dev/null 2>&1
q=$(field ra.h5 step)
"$rewind" window "127.0.0.1:$port" --file ra.h5 --box 0,0,0,1,1,1 --budget 20000 --out wra.json >/dev/null 2>&1
"$rewind" window "127.0.0.1:$port" --file rb.h5 --box 0,0,0,1,1,1 --budget 20000 --out wrb.json >/dev/null 2>&1
steer stop >/dev/null 2>&1
wait $job
check "collector rank: stop ends the job cleanly (exit 0)" "[ $? = 0 ]" || tail -5 r.log
check "collector rank: each future's window (tree sent by its rank) equals its file at step $q" \
  "window_ok ra.h5 wra.json && window_ok rb.h5 wrb.json"
"$mpiexec" -n 2 "$heat" rbs.h5 "$q" --vis 50 --cp 500 --restart r.h5@0 >rbs.log 2>&1
check "collector rank: the future without changes = a plain restart from step 0 on 2 ranks, bit for bit" \
  "same rb.h5 rbs.h5 --parent r.h5 --step 0 --after 0"
# --- kill -9 of one rank of one future's group --------------------------------------------
"$mpiexec" -n 4 "$heat" k.h5 100000000 --vis 50 --cp 100 --listen 127.0.0.1:0 >k.log 2>&1 &
job=$!
port=$(listen_port k.log heat)
wait_step "" 150
steer branch --from 100 --future 'kappa=0.02' --future 'kappa=0.04' --output ka.h5 --output kb.h5 >kfork.out 2>&1
wait_step kb.h5 450
victim=$(ps -o pid= --ppid "$job" | sed -n 4p)  # rank 3: future kb's second rank
[ -n "$victim" ] && kill -9 $victim
for _ in $(seq 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
check "kill -9 of one rank of a future's group ends the job" "! kill -0 $job 2>/dev/null && [ -n '$victim' ]"
wait $job 2>/dev/null
for f in k.h5 ka.h5 kb.h5; do
  check "after the kill, every committed step of $f verifies" "$rewind verify -q $f >verify.out 2>&1" || cat verify.out
done
ka=$(last_step ka.h5) kb=$(last_step kb.h5)
# The restarts alone run on to the next checkpoint (a killed future's last step may be a
# visualisation step, which a run ending there would write as a checkpoint).
"$mpiexec" -n 2 "$heat" kas.h5 $((ka / 100 * 100 + 100)) --vis 50 --cp 100 --restart k.h5@100 --kappa 0.02 >kas.log 2>&1
"$mpiexec" -n 3 "$heat" kbs.h5 $((kb / 100 * 100 + 100)) --vis 50 --cp 100 --restart k.h5@100 --kappa 0.04 >kbs.log 2>&1
check "... and what both futures committed equals their restarts alone, bit for bit (to steps $ka, $kb)" \
  "same ka.h5 kas.h5 --parent k.h5 --step 100 --changes kappa=0.02 --after 100 --common &&
   same kb.h5 kbs.h5 --parent k.h5 --step 100 --changes kappa=0.04 --after 100 --common"
exit "$fail"

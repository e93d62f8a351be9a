#!/usr/bin/env bash
# One writing job per run file (docs/file-format.md §5, "One writing job"), as users meet it:
#  - two runs started together into one file with different settings: one writes it, the
#    other is refused with one line naming the first (host, process, since), before it
#    touches the file; the file is the winner's run, step for step and bit for bit (3 tries);
#  - while a run writes w.h5: `rewind info` reads it and names the writer, `rewind window`
#    reads a step of it (asking again after the documented busy answer when the writer
#    was stopped in the middle of a step); a continue in
#    place (`--restart w.h5`) and a `--force` run over it (under mpirun) are refused
#    naming the writer;
#  - that run killed with -9: its claim is recognised as stale and taken over by the
#    continue, which ends as an uninterrupted run does; a claim left by a job on another
#    host is refused until --break-lock;
#  - an in-job branch (`rewind steer ... branch`) into a file another job writes is
#    refused naming that job, and the live job goes on;
#  - a job killed while paused right after an in-job branch leaves a branch file without
#    a committed step: `rewind info` and a restart say what it is, and a new branch of the
#    same step writes over it without --force.
#   cli_single_writer.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
pids=()
session=
stop_all() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -n "$session" ] && kill -9 $(ps -o pid= -s "$session") 2>/dev/null
  rm -rf "$tmp"
}
trap stop_all EXIT
case_file="$src/cases/default.toml"
sched=(--set output.checkpoint_interval=0.05 --set output.visualisation_interval=0 -q)
steps_of() { "$rewind" info "$1" --json | python3 -c "import json,sys; print(' '.join(f\"{s['step']}@{s['time']:.6g}\" for s in json.load(sys.stdin)['steps'] if s['committed']))"; }
committed() { "$rewind" info "$1" --json 2>/dev/null | python3 -c "import json,sys; print(sum(s['committed'] for s in json.load(sys.stdin)['steps']))" 2>/dev/null || echo 0; }
wait_steps() { for _ in $(seq 600); do [ "$(committed "$1")" -ge "$2" ] && return 0; sleep 0.1; done; return 1; }
# one_line_naming FILE PID: FILE is exactly one error line naming process PID on this host.
one_line_naming() { [ "$(wc -l <"$1")" = 1 ] && grep -q "error: .*is being written by another job: .*(process $2 on host $(hostname), since " "$1"; }

"$rewind" run "$case_file" -o ref_a.h5 --set time.end=0.1 "${sched[@]}" >/dev/null 2>&1
"$rewind" run "$case_file" -o ref_b.h5 --set time.end=0.15 --set physics.nu=0.002 "${sched[@]}" >/dev/null 2>&1
ok_tries=0
for try in 1 2 3; do
  rm -rf s.h5 s.h5.lock s.monitor.csv s.views
  "$rewind" run "$case_file" -o s.h5 --set time.end=0.1 "${sched[@]}" >a.log 2>&1 &
  pa=$!
  "$rewind" run "$case_file" -o s.h5 --set time.end=0.15 --set physics.nu=0.002 "${sched[@]}" >b.log 2>&1 &
  pb=$!
  wait $pa; ra=$?
  wait $pb; rb=$?
  if [ $ra = 0 ] && [ $rb != 0 ] && one_line_naming b.log $pa; then winner=ref_a.h5
  elif [ $rb = 0 ] && [ $ra != 0 ] && one_line_naming a.log $pb; then winner=ref_b.h5
  else echo "  try $try: exits $ra and $rb"; cat a.log b.log; continue; fi
  [ "$(steps_of s.h5)" = "$(steps_of $winner)" ] && same s.h5 $winner && "$rewind" verify -q s.h5 >/dev/null &&
    [ ! -e s.h5.lock ] && ok_tries=$((ok_tries + 1))
done
check "two runs into one file: one writes it, the other is refused naming it; the file is the winner's (3 of 3)" \
  "[ $ok_tries = 3 ]"

# A run that keeps writing w.h5.
"$rewind" run "$case_file" -o w.h5 --set time.end=30 "${sched[@]}" >w.log 2>&1 &
pw=$!
pids+=($pw)
wait_steps w.h5 2
# Stopped (alive, its claim held, wherever it is in a step) so that it is still before
# t = 0.3 when it is killed below, however slow the checks in between are.
kill -STOP $pw
"$rewind" info w.h5 >info.out 2>&1
check "rewind info reads the file being written and names its writer" \
  "[ $? = 0 ] && grep -q '^writer      being written by .*(process $pw on host' info.out"
# A read waits for a writer in the middle of a step and answers busy (try again) when the
# step takes over 5 s (docs/collector-protocol.md), as it does when the writer was stopped
# inside one (CI met it once): then the writer goes on until that step is committed, is
# stopped again, and the read is asked again, as the message says.
window_of_w() {
  local n
  for _ in 1 2 3; do
    "$rewind" window w.h5 --box 0,0,0,2.2,0.41,0 --budget 2000 --out win.json >win.log 2>&1 && [ -s win.json ] && return 0
    grep -q 'a step has been being written for over 5 s; try again' win.log || return 1
    n=$(committed w.h5)
    kill -CONT $pw
    wait_steps w.h5 $((n + 1))
    kill -STOP $pw
  done
  return 1
}
window_of_w
check "... and rewind window reads a committed step of it (asked again after a busy answer)" "[ $? = 0 ]"
"$rewind" run --restart w.h5 --set time.end=31 >cont.log 2>&1
check "a continue in place while the run writes is refused, naming the run" "[ $? != 0 ] && one_line_naming cont.log $pw"
"$mpiexec" -q -n 3 "$rewind" run "$case_file" -o w.h5 --force --set time.end=0.1 "${sched[@]}" >force.log 2>&1
check "a --force run over it under mpirun (2 compute ranks) is refused too, every rank exits" \
  "[ $? != 0 ] && one_line_naming force.log $pw"
kill -9 $pw
wait $pw 2>/dev/null
check "the file the refused jobs did not touch verifies (every committed step)" "\"$rewind\" verify -q w.h5"
check "the killed run left its claim behind" "grep -q '^pid=$pw\$' w.h5.lock"
"$rewind" run "$case_file" -o ref_w.h5 --set time.end=0.3 "${sched[@]}" >/dev/null 2>&1
"$rewind" run --restart w.h5 --set time.end=0.3 >cont2.log 2>&1
check "a continue takes the dead run's claim over, saying so" \
  "[ $? = 0 ] && grep -q 'note: took over the claim of .*process $pw on host .*: that process has ended' cont2.log"
check "... and ends as the uninterrupted run does, bit for bit; its claim is gone" \
  "same w.h5 ref_w.h5 && [ ! -e w.h5.lock ]"
printf 'rewind file claim\nhost=elsewhere.example\npid=4242\nsince=2025-01-01 00:00:00 UTC\ncommand=rewind run x.toml\n' >w.h5.lock
"$rewind" run --restart w.h5 --set time.end=0.35 >other.log 2>&1
check "a claim from another host is refused: it cannot be checked from here" \
  "[ $? != 0 ] && [ \$(wc -l <other.log) = 1 ] && grep -q 'claimed by a job on another host: rewind run x.toml (process 4242 on host elsewhere.example, .*--break-lock' other.log"
"$rewind" run --restart w.h5 --set time.end=0.35 --break-lock >break.log 2>&1
check "--break-lock takes it over" "[ $? = 0 ] && grep -q 'note: broke the claim of rewind run x.toml (process 4242 on host elsewhere.example' break.log"

# A live job on two compute ranks, and another job writing held.h5.
"$rewind" run "$case_file" -o held.h5 --set time.end=30 "${sched[@]}" >held.log 2>&1 &
ph=$!
pids+=($ph)
setsid "$mpiexec" -n 3 "$rewind" run "$case_file" -o l.h5 --set time.end=30 "${sched[@]}" --listen 127.0.0.1:0 >live.log 2>&1 &
session=$!
port=
for _ in $(seq 300); do
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' live.log)
  [ -n "$port" ] && break
  sleep 0.1
done
check "the live job listens" "[ -n '$port' ]"
steer() { "$rewind" steer l.h5 "$@"; }  # through its contact file (which holds the job's token)
wait_steps l.h5 2
wait_steps held.h5 1
steer pause >/dev/null 2>&1
steer branch --from '#0' --set physics.nu=0.002 --output held.h5 >held_branch.out 2>&1
check "an in-job branch into a file another job writes is refused, naming that job" \
  "[ $? != 0 ] && grep -q 'held.h5: is being written by another job: .*(process $ph on host' held_branch.out"
check "... and the live job goes on" "steer status 2>/dev/null | grep -q '^paused at step'"
steer branch --from '#0' --set physics.nu=0.002 --output lb.h5 >lb.out 2>&1
check "a branch into a free file is taken" "[ $? = 0 ] && grep -q 'branched lb.h5' lb.out"
# The job is killed; an in-job branch writes its first step before it answers, so a
# branch whose job ended before its first step was committed (killed inside that write)
# is made from this one: its steps marked uncommitted, as a crash leaves them.
sleep 1
kill -9 $(ps -o pid= -s "$session") 2>/dev/null
for _ in $(seq 100); do [ -z "$(ps -o pid= -s "$session")" ] && break; sleep 0.1; done
session=
rm -f lb.h5.lock  # the killed job's claim: its holder is gone (taken over, else)
/usr/bin/python3 - lb.h5 <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    sim = f["simulation"]
    for name in sim:
        if name.startswith("step_"):
            sim[name].attrs["committed"] = sim[name].attrs["committed"] * 0
    index = sim["index"][...]
    index["committed"] = 0
    sim["index"][...] = index
PYEOF
"$rewind" info lb.h5 >lb_info.out 2>&1
check "rewind info says what the branch without a committed step is" \
  "grep -q '^steps       0 committed' lb_info.out && grep -q '^note        no committed step: a branch whose job ended before' lb_info.out"
"$rewind" run --restart lb.h5 --set time.end=1 >lb_restart.log 2>&1
check "a restart from it says it is an unfinished branch of l.h5 at step 0" \
  "[ $? != 0 ] && [ \$(wc -l <lb_restart.log) = 1 ] && grep -q 'lb.h5: no committed step to restart from: it is a branch of l.h5 at step 0 whose job ended' lb_restart.log"
"$rewind" run --restart l.h5@0 --set physics.nu=0.002 --set time.end=0.05 -o lb.h5 >lb_again.log 2>&1
check "a new branch of the same step writes over it without --force, saying so" \
  "[ $? = 0 ] && grep -q 'note: lb.h5 has no committed step (its job ended before writing one): writing over it' lb_again.log && [ \$(committed lb.h5) -ge 1 ]"
exit $fail

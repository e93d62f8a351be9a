#!/usr/bin/env bash
# One rule for t=T after the last step (docs/collector-protocol.md, "Times not reached
# yet"): refused with the last step named, except that the clients
# wait, up to their timeout, for a running job to reach T.
#  - `rewind window --time t=1` right after `rewind run --listen` starts (the README's
#    live block) prints the step at t = 1 once the job has written it, and Python's
#    Client.window does the same for a later T; both windows equal the file's step in
#    force at T, read with h5py (check_window.py), not another step;
#  - a paused job is refused at once; a T the job does not reach within the timeout is
#    refused with how long the client waited; the server answers other clients meanwhile;
#  - a file (`rewind window FILE@t=T`, `rewind serve`) is refused at once.
#   cli_live_reach.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"
in_tmpdir
export REWIND_TOKEN="reach-$$-$RANDOM$RANDOM"
whole="--box 0,0,0,2.2,0.41,0 --budget 3000"
# one_line OUT: the command's output is one line
one_line() { [ "$(wc -l <"$1")" = 1 ]; }
# in_force FILE JSON T: the window's step is FILE's last step with time <= T (h5py).
in_force() {
  $py - "$@" <<'EOF'
import json, sys
import h5py
path, dump, t = sys.argv[1], sys.argv[2], float(sys.argv[3])
with h5py.File(path, "r") as f:
    times = {int(k[5:]): float(g.attrs["time"]) for k, g in f["simulation"].items() if k.startswith("step_")}
best = max((s for s, x in times.items() if x <= t * (1 + 1e-12)), key=lambda s: times[s])
w = json.load(open(dump))
sys.exit(0 if w["step"] == best and abs(times[best] - t) < 1e-9 else f"window step {w['step']}, in force {best} {times}")
EOF
}

# 3 processes: the neighbourhood server, the collector rank, one compute rank.
start_live 3 reach.h5 "$src/cases/default.toml" --set time.end=3 -q

# Right after the start: the job is far from t = 1.
"$rewind" window 127.0.0.1:$port $whole --time t=1 --timeout 240 --out t1.json >t1.out 2>&1
check "window --time t=1 right after the start waits and prints the step at t=1" \
  "grep -q '^step [0-9]* (t=1) of reach.h5' t1.out" || cat t1.out
# Meanwhile-free: another client is answered at once while nobody waits.
"$rewind" steer 127.0.0.1:$port status --json >st.json 2>&1
t_now=$($py -c "import json; print(json.load(open('st.json'))['time'])" 2>/dev/null)
check "... and the job was still running (at t=${t_now:-?} < 3)" "$py -c 'import sys; sys.exit(not 1 <= float(\"${t_now:-9}\") < 3)'"

# Python: the next visualisation time after where the job is.
$py - "$src/python" $port reach.h5 >py.out 2>&1 <<'EOF'
import json, math, sys, time
sys.path.insert(0, sys.argv[1])
import rewind
c = rewind.Client("127.0.0.1", int(sys.argv[2]), timeout=240)
t = math.floor(c.status()["time"] * 10 + 2) / 10  # 0.1-0.2 ahead: a step not written yet
start = time.monotonic()
w = c.window(((0, 0, 0), (2.2, 0.41, 0)), 3000, time=f"t={t:.1f}")
print(f"T {t:.1f} step {w.step} time {w.time} after {time.monotonic() - start:.1f} s")
json.dump({"step": w.step, "time": w.time}, open("py.json", "w"))
EOF
pyt=$(sed -n 's/^T \([0-9.]*\) .*/\1/p' py.out)
check "Python Client.window(time='t=T') just ahead of the job waits and gets the step at T" \
  "[ -n '$pyt' ] && in_force reach.h5 py.json $pyt" || cat py.out
check "rewind window's step at t=1 is the file's step at t=1 (h5py), its values the file's (check_window.py)" \
  "in_force reach.h5 t1.json 1 && $py $src/tests/collector/check_window.py reach.h5 t1.json >chk.out 2>&1" || cat chk.out

# Paused: T will not come by itself: refused at once, one line.
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
t0=$(date +%s)
"$rewind" window 127.0.0.1:$port $whole --time t=2.9 --timeout 60 >paused.out 2>&1
rc=$? t1=$(date +%s)
check "a paused job: t not reached refused at once with one line" \
  "[ $rc != 0 ] && one_line paused.out && grep -q 't=2.9 has not been reached' paused.out && [ $((t1 - t0)) -lt 10 ]" ||
  cat paused.out
"$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1

# Running, but not within the timeout: refused after it, saying so; others are served meanwhile.
"$rewind" window 127.0.0.1:$port $whole --time t=50 --timeout 4 >late.out 2>&1 &
late_pid=$!
sleep 1
"$rewind" window 127.0.0.1:$port $whole --time live --timeout 2 >other.out 2>&1
check "another client's window is answered while one waits" "grep -q '^step' other.out" || cat other.out
wait $late_pid
rc=$?
check "a time not reached within --timeout: one line, the last step named, how long it waited" \
  "[ $rc != 0 ] && one_line late.out && grep -q 't=50 has not been reached: the last committed step is .*waited [0-9] s' late.out" ||
  cat late.out

"${steer[@]}" stop >/dev/null 2>&1
wait_job 60
check "the job ends cleanly" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log

# A file: refused at once, by rewind window and by rewind serve (no job to wait for).
t0=$(date +%s)
"$rewind" window reach.h5@t=50 $whole >file.out 2>&1
rc=$?
check "window FILE@t=50: refused at once, one line naming the last step" \
  "[ $rc != 0 ] && one_line file.out && grep -q 't=50 has not been reached: the last committed step is' file.out"
start_serve reach.h5
"$rewind" window 127.0.0.1:$port $whole --time t=50 --timeout 60 >served.out 2>&1
rc=$? t1=$(date +%s)
check "rewind serve, t=50: refused at once, one line" \
  "[ $rc != 0 ] && one_line served.out && grep -q 't=50 has not been reached' served.out && [ $((t1 - t0)) -lt 20 ]" ||
  cat served.out
exit "$fail"

#!/usr/bin/env bash
# The end of a live run, and clients that misbehave, the way a user meets them:
#  - the Python client drives a live run (pause, window, parameters, set, branch);
#    its window equals the file's cells value by value;
#  - a client that sends a large window request and never reads the reply, and one
#    that connects and stays idle, block neither the run, nor other clients, nor the
#    job's exit;
#  - an in-job branch honours --steps like `rewind run --restart ... --steps` (counted
#    from the branch point), and the job ends by itself when the branch is done;
#  - the Python example plots windows of the job;
#  - --pause-at-end: paused at the end with the last step written, a later time.end
#    continues the timeline, resume lets the job finish.
#   cli_live_end.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # check, start_listener, wait_job
tmp=$(mktemp -d)
server_pid= slow_pid= idle_pid=
cleanup() { for p in $server_pid $slow_pid $idle_pid; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp"
# The runs listen with this token, which the clients below take from the environment too.
export REWIND_TOKEN="end-$$-$RANDOM$RANDOM"
last_step() { "$rewind" info "$1" --json | $py -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['step'])"; }

start_listener "$mpiexec" -n 4 "$rewind" run "$src/cases/default.toml" --output e.h5 --steps 40 --set time.end=30 \
  --set output.checkpoint_interval=0.05 --set output.visualisation_interval=0 -q --listen 127.0.0.1:0
check "the collector prints its address" "[ -n '$port' ]"
[ -n "$port" ] || { cat serve.log; exit 1; }

# Pause a few steps in (well before the step limit), so the window is not the
# initial state: pause at once, then let it run in short bursts.
step_now() { "$rewind" steer 127.0.0.1:$port status --json 2>/dev/null | $py -c "import json,sys; print(json.load(sys.stdin)['step'])" 2>/dev/null; }
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
for _ in $(seq 1 100); do
  [ "$(step_now)" -ge 5 ] 2>/dev/null && break
  "$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1
  "$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
done
# A slow client: a whole-domain window request (every variable, the finest level),
# never read. And an idle client that only connects.
$py - "$port" "$src/python" >slow.out 2>&1 <<'PYEOF' &
import os, socket, sys, time
sys.path.insert(0, sys.argv[2])
from rewind.client import PROTOCOL_VERSION, encode
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(encode("hello", 1, {"protocol": PROTOCOL_VERSION, "client": "slow", "token": os.environ["REWIND_TOKEN"]}))
s.sendall(encode("window_request", 2, {"box": {"lo": [0, 0, 0], "hi": [2.2, 0.41, 1]}, "budget": 10**7,
                                       "time": "live", "variables": ["u", "v", "p"]}))
time.sleep(300)  # never reads
PYEOF
slow_pid=$!
$py -c "import socket,sys,time; s=socket.create_connection(('127.0.0.1', int(sys.argv[1]))); time.sleep(300)" "$port" &
idle_pid=$!
sleep 1
"$rewind" window 127.0.0.1:$port --box 0,0,0,2.2,0.41,0 --budget 500 --out w.json >w.out 2>&1
check "another client is served while one never reads its reply" "[ $? = 0 ] && [ -s w.json ]"

$py "$src/tests/collector/python_live_client.py" "$port" "$tmp" >py.out 2>&1
rc=$?
cat py.out
check "the Python client pauses, windows, sets and branches a live run" "[ $rc = 0 ]"

PYTHONPATH="$src/python" $py "$src/examples/python/window_plot.py" 127.0.0.1:$port --box 0,0,0,2.2,0.41,0 --budget 4000 --var u \
  --out live.png --frames 2 --every 0.5 >plot.out 2>&1
check "the Python example follows the job (two pictures, titled with its state)" \
  "[ $? = 0 ] && [ -s live-000.png ] && [ -s live-001.png ] && grep -q paused plot.out"
"$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1

# The branch (from step 0, --steps 40) ends at step 40 by itself; the slow and idle
# clients are still connected and must not keep the job alive.
wait_job 90
check "the job ends by itself at the branch's step limit, with clients still connected" "[ -n '$ended' ]"
check "... and exits 0" "[ '$rc' = 0 ]"
tail -2 serve.log
check "the in-job branch stops after --steps steps from its branch point (step 40)" "[ '$(last_step eb.h5)' = 40 ]"
check "the Python client's window equals the file's cells, value by value" \
  "$py $src/tests/collector/check_window.py e.h5 py.json"
check "the first file ends with the paused state the branch saved" \
  "[ '$(last_step e.h5)' = \"\$($py -c \"import json; print(json.load(open('py.json'))['step'])\")\" ]"

# --pause-at-end: the run pauses at its end with its last step written; a later
# time.end and resume continue the same timeline (to pause again at the new end);
# resume at the end lets the job finish.
check "--pause-at-end without --listen: one error line" \
  "one_error '$rewind' run '$src/cases/default.toml' --pause-at-end --output x.h5"
status_of() { "$rewind" steer 127.0.0.1:$port status --json 2>/dev/null | $py -c "import json,sys; s=json.load(sys.stdin); print(s['state'], s['time'])"; }
wait_paused_at() {  # wait_paused_at T: until the run reports paused at time T (60 s at most)
  for _ in $(seq 1 600); do
    read -r state t <<<"$(status_of)"
    [ "$state" = paused ] && $py -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - $1) < 1e-9 else 1)" "$t" && return 0
    sleep 0.1
  done
  return 1
}
start_listener "$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output pe.h5 --set time.end=0.02 \
  --set output.checkpoint_interval=0.01 --set output.visualisation_interval=0 --pause-at-end -q --listen 127.0.0.1:0
check "the run pauses at its end time" "wait_paused_at 0.02"
last_time() { "$rewind" info "$1" --json | $py -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['time'])"; }
check "... with its last step written" "[ \"\$(last_time pe.h5)\" = 0.02 ]"
"$rewind" steer 127.0.0.1:$port set time.end=0.04 >/dev/null 2>&1 && "$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1
check "a later time.end and resume continue the same timeline to the new end" "wait_paused_at 0.04"
"$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1
ended=
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || { ended=1; break; }; sleep 0.1; done
wait "$server_pid"; rc=$?
server_pid=
check "resume at the end lets the job finish (exit 0), the file ending at t = 0.04" \
  "[ -n '$ended' ] && [ $rc = 0 ] && [ \"\$(last_time pe.h5)\" = 0.04 ]"
exit $fail

#!/usr/bin/env bash
# The live path, the way a user runs it: `mpiexec -n P rewind run CASE --listen
# 127.0.0.1:0` (rank 0 neighbourhood server, rank 1 collector, 1..4 compute ranks; on 1
# and 2 processes the collector is a thread of the compute rank),
# queried and steered with `rewind window` / `rewind steer` while it runs.
#  - every live window value equals the same cells of the same step in the file and
#    what the file's leaves imply at its level (check_window.py: h5py oracle);
#  - a window or a branch at a time the run has not reached is refused with one line;
#  - two clients at once, a client that vanishes mid-request, the run keeps going;
#  - windows written from the collector's memory shared with the compute ranks equal
#    those received over MPI (codec zstd, and a rank that cannot map it), and slow
#    clients holding that memory leave the others served through the MPI path;
#  - pause / resume / stop (a clean final checkpoint, exit 0);
#  - set: recorded in the file; a restart from a checkpoint after it keeps the value,
#    and the steered steps equal a `--restart ... --set` branch of the same step;
#  - branch inside the job: the branch file's lineage and data equal a CLI branch.
#   cli_live.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
fail=0
tmp=$(mktemp -d)
run_pid=
cleanup() { [ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp"
. "$src/tests/support/check.sh"  # check LABEL CONDITION
case_file="$src/cases/default.toml"
# Every run listens with this token (a run without one generates its own: cli_live_token.sh);
# the clients below take it from the environment too.
export REWIND_TOKEN="live-$$-$RANDOM$RANDOM"
whole="--box 0,0,0,2.2,0.41,0 --budget 3000"
zoom="--box 0.1,0.1,0,0.4,0.3,0 --budget 2000 --vars p,u"

launch() {  # launch LOG MPIEXEC_ARGS...: `mpiexec MPIEXEC_ARGS` in the background; sets run_pid and port
  local log=$1
  shift
  "$mpiexec" "$@" >"$log" 2>&1 &
  run_pid=$!
  port=
  for _ in $(seq 1 300); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log")
    [ -n "$port" ] && break
    sleep 0.1
  done
}
start_run() {  # start_run NP LOG ARGS...: `rewind run ARGS -q --listen 127.0.0.1:0` on NP processes
  local np=$1 log=$2
  shift 2
  launch "$log" -n "$np" "$rewind" run "$@" -q --listen 127.0.0.1:0
}
wait_run() {  # wait_run LOG: the run's exit code, after at most 120 s
  for _ in $(seq 1 1200); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  wait "$run_pid"; local rc=$?
  run_pid=
  return $rc
}
wait_time() {  # wait_time T: until the live run's status reports time > T (at most 120 s)
  local t
  for _ in $(seq 1 1200); do
    t=$("$rewind" steer 127.0.0.1:$port status --json 2>/dev/null | $py -c "import json,sys; print(json.load(sys.stdin)['time'])" 2>/dev/null)
    $py -c "import sys; sys.exit(0 if float(sys.argv[1] or 0) > float(sys.argv[2]) else 1)" "$t" "$1" && return
    sleep 0.1
  done
}
step_of() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$1"; }
last_step() { "$rewind" info "$1" --json | $py -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['step'])"; }

# np 1 and 2: the collector is a thread of the compute rank (no rank of its own).
for np in 1 2 3 4 5 6; do
  n=$((np - 2)); [ $np -le 2 ] && n=1
  start_run $np run$np.log "$case_file" --output live$np.h5 --set time.end=30
  check "np $np ($n compute): the collector prints its address" "[ -n '$port' ]"
  [ -n "$port" ] || { cat run$np.log; continue; }
  "$rewind" steer live$np.h5 pause >pause$np.out 2>&1
  check "np $np: pause, connecting by the run's name (its contact file, owner only)" \
    "grep -q paused pause$np.out && [ \$(stat -c %a live$np.h5.contact) = 600 ]"
  # Two clients at once, and one that vanishes in the middle of a request.
  "$rewind" window 127.0.0.1:$port $whole --out a$np.json >a$np.out 2>&1 &
  pa=$!
  "$rewind" window 127.0.0.1:$port $zoom --out b$np.json >b$np.out 2>&1 &
  pb=$!
  $py - "$port" <<'EOF'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"RWCL" + struct.pack("<HHII", 1, 7, 1, 0) + struct.pack("<Q", 500) + b"\x00" * 40)  # half a request
s.close()
EOF
  wait $pa; ra=$?
  wait $pb; rb=$?
  check "np $np: two clients at once get their windows" "[ $ra = 0 ] && [ $rb = 0 ]"
  # A window of a variable the run does not have: one error line, and the next window
  # is whole.
  "$rewind" window 127.0.0.1:$port --box 0,0,0,2.2,0.41,0 --budget 3000 --vars p,bogus >bad$np.out 2>&1
  check "np $np: a window of an unknown variable is refused with one line" \
    "[ $? != 0 ] && [ \$(wc -l <bad$np.out) = 1 ] && grep -q bogus bad$np.out"
  "$rewind" window 127.0.0.1:$port $whole --out c$np.json >c$np.out 2>&1
  check "np $np: the collector serves on after a client vanished" "[ $? = 0 ] && [ -s c$np.json ]"
  # Codec none is written from the memory the compute ranks share with the collector,
  # zstd from arrays received over MPI: the same window both ways, the same bytes.
  check "np $np: a window sent from shared memory (codec none) equals one received over MPI (zstd)" \
    "$py $src/tests/collector/same_window_codecs.py $port >codecs$np.out 2>&1"
  "$rewind" steer 127.0.0.1:$port stop >stop$np.out 2>&1
  wait_run
  check "np $np: stop ends the run cleanly (exit 0), its contact file removed" "[ $? = 0 ] && [ ! -e live$np.h5.contact ]"
  s=$(step_of a$np.json)
  check "np $np: the final checkpoint is the paused step the windows saw ($s)" "[ '$(last_step live$np.h5)' = '$s' ]"
  check "np $np: live windows equal the file's cells, value by value" \
    "$py $src/tests/collector/check_window.py live$np.h5 a$np.json c$np.json >chk$np.out 2>&1 && $py $src/tests/collector/check_window.py live$np.h5 b$np.json >>chk$np.out 2>&1"
  grep -h '^ok' chk$np.out || cat chk$np.out
done

# A compute rank that cannot map the collector's memory (as one of another node) sends
# its values over MPI into it: 3 compute ranks, the last with the switch off.
args=("$case_file" --output mixed.h5 --set time.end=30 --listen 127.0.0.1:0)
launch mixed.log -n 4 "$rewind" run "${args[@]}" : -n 1 env REWIND_LIVE_SHARED_MEMORY=0 "$rewind" run "${args[@]}"
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
"$rewind" window 127.0.0.1:$port $whole --out m1.json >m1.out 2>&1 && "$rewind" window 127.0.0.1:$port $zoom --out m2.json >m2.out 2>&1
check "mixed: windows with a rank that sends over MPI" "[ $? = 0 ]"
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
wait_run
check "mixed: the run ends cleanly" "[ $? = 0 ]"
check "mixed: two of the three compute ranks wrote into the collector's memory, one did not" \
  "grep -q '2 of 3 compute ranks wrote into the collector' mixed.log"
check "mixed: the windows equal the file's cells, value by value" \
  "$py $src/tests/collector/check_window.py mixed.h5 m1.json >chkm.out 2>&1 && $py $src/tests/collector/check_window.py mixed.h5 m2.json >>chkm.out 2>&1"

# Two slow clients (codec none, whole-domain windows of ~9 MB each, never read) hold
# both of the collector's shared slots: another client's window then goes through the
# collector's own arrays, still equal to the file, and once they are gone the next one
# is sent from shared memory again. A finer tree, so the replies outgrow the sockets; the
# checked windows are of every leaf (~360 000 cells: each compute rank sends several runs,
# link.hpp), the first over MPI, the second in place.
launch slots.log -n 4 "$rewind" run "$case_file" --output slots.h5 --set time.end=30 --set 'tree.s=[176, 32, 1]' \
  --listen 127.0.0.1:0  # not -q: the collector's closing line
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
$py - "$port" "$src/python" >slow.out 2>&1 <<'PYEOF' &
import os, socket, sys, time
sys.path.insert(0, sys.argv[2])
from rewind.client import PROTOCOL_VERSION, encode
held = []
for k in range(2):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(encode("hello", 1, {"protocol": PROTOCOL_VERSION, "client": "slow", "token": os.environ["REWIND_TOKEN"],
                                 "codecs": ["none"]}))
    s.sendall(encode("window_request", 2, {"box": {"lo": [0, 0, 0], "hi": [2.2, 0.41, 1]}, "budget": 10**7,
                                           "time": "live", "variables": ["u", "v", "p"]}))
    held.append(s)
time.sleep(4)  # never reads; then vanishes
PYEOF
slow_pid=$!
sleep 1.5
leaves="--box 0,0,0,2.2,0.41,0 --budget 10000000 --vars p,u"
"$rewind" window 127.0.0.1:$port $leaves --out s1.json >s1.out 2>&1
check "slots: a window while two slow clients hold the shared memory" "[ $? = 0 ]"
wait $slow_pid
"$rewind" window 127.0.0.1:$port $leaves --out s2.json >s2.out 2>&1
check "slots: a window after they vanished" "[ $? = 0 ]"
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
wait_run
check "slots: the run ends cleanly" "[ $? = 0 ]"
check "slots: windows went both through the collector's own arrays and through shared memory" \
  "grep -q 'collector   4 live windows: [1-3] sent from memory shared with the compute ranks, [1-3] through' slots.log"
check "slots: the windows equal the file's cells, value by value" \
  "$py $src/tests/collector/check_window.py slots.h5 s1.json >chks.out 2>&1 && $py $src/tests/collector/check_window.py slots.h5 s2.json >>chks.out 2>&1"
check "slots: they hold more than 4 runs' cells (65536 each): a compute rank sent several" \
  "$py -c 'import json, sys; sys.exit(json.load(open(\"s2.json\"))[\"cells\"] <= 4 * 65536)'"
grep collector slots.log | tail -1

# Steering on 2 compute ranks: set, then branch inside the job.
start_run 4 steer.log "$case_file" --output s.h5 --set time.end=30 --set output.checkpoint_interval=0.05 \
  --set output.visualisation_interval=0
"$rewind" steer 127.0.0.1:$port parameters >params.out 2>&1
check "parameters lists viscosity and the inflow velocity with ranges" \
  "grep -q 'physics.nu' params.out && grep -q 'boundary.xmin.velocity' params.out"
# Paused early (the steered checkpoints below follow from here). A time the run has not
# reached (time.end is 30): refused with one line, not the latest step (a running job
# is waited for first, up to --timeout: cli_live_reach.sh).
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
"$rewind" window 127.0.0.1:$port $whole --time t=25 --timeout 20 >late.out 2>&1
check "a window at a time not reached: one error line saying where the running job is" \
  "[ $? != 0 ] && [ \$(wc -l <late.out) = 1 ] && grep -q 'has not been reached.*the running job is at step' late.out"
"$rewind" steer 127.0.0.1:$port branch --from t=25 >lateb.out 2>&1
check "a branch from a time not reached: one error line" \
  "[ $? != 0 ] && [ \$(wc -l <lateb.out) = 1 ] && grep -q 't=25 has not been reached' lateb.out"
"$rewind" steer 127.0.0.1:$port set physics.nu=-1 >bad.out 2>&1
check "set outside the range: one error line, non-zero exit" "[ $? != 0 ] && [ \$(wc -l <bad.out) = 1 ] && grep -q 'physics.nu' bad.out"
"$rewind" steer 127.0.0.1:$port set physics.nu=0.002 'boundary.xmin.velocity=[1.2, 0, 0]' >set.out 2>&1
check "set applies at the next boundary" "[ $? = 0 ]"
"$rewind" steer 127.0.0.1:$port status --json >status.json 2>&1
"$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1
wait_time 0.16  # three steered checkpoints (0.05, 0.10, 0.15) for the restart check below
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
"$rewind" steer 127.0.0.1:$port branch --from '#1' --set physics.nu=0.0015 --output b.h5 >branch.out 2>&1
check "branch from a committed step inside the job" "[ $? = 0 ] && grep -q 'b.h5' branch.out"
"$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1
wait_time 0.11  # the branch is past its first checkpoint after the branch point (t = 0.1)
"$rewind" window 127.0.0.1:$port $whole --out br.json >br.out 2>&1
check "windows of the branch's live state" "[ $? = 0 ] && grep -q 'b.h5' br.out"
"$rewind" window 127.0.0.1:$port $whole --time '#0' --out old.json >old.out 2>&1
check "the first timeline stays queryable after the branch" "[ $? = 0 ]"
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
wait_run
check "the steered job ends cleanly" "[ $? = 0 ]"
cat steer.log | grep -v '^output' | tail -3
check "steps after the set record it (case_overrides)" \
  "$py -c \"import h5py; f=h5py.File('s.h5'); a=[f['simulation'][g].attrs.get('case_overrides') for g in f['simulation']]; assert any(x is not None and b'physics.nu=0.002' in (x if isinstance(x, bytes) else x.encode()) for x in a)\""
# The CLI branch of the same step with the same change must equal the in-job branch.
"$rewind" run --restart 's.h5@#1' --set physics.nu=0.0015 --output cli.h5 --steps 60 -q >cli.log 2>&1
check "a CLI branch of the same step runs" "[ $? = 0 ]"
check "the in-job branch's lineage names s.h5 and the change, like the CLI branch" \
  "\"$rewind\" lineage b.h5 | grep -q 's.h5' && \"$rewind\" lineage b.h5 | grep -q 'physics.nu=0.0015'"
check "the in-job branch's steps equal the CLI branch's, bit for bit" \
  "\"$rewind\" diff --all-cells b.h5@#0 cli.h5@#0 >diff0.out 2>&1 && \"$rewind\" diff --all-cells b.h5@#1 cli.h5@#1 >diff1.out 2>&1"
# A restart from a checkpoint after the set continues with the steered value: its
# next checkpoint equals the steered run's, bit for bit.
read -r k t_next <<<"$($py - <<'EOF'
import h5py
f = h5py.File("s.h5", "r")
steps = [f["simulation"][g] for g in sorted(f["simulation"]) if g.startswith("step_")]
def steered(g):
    v = g.attrs.get("case_overrides", b"")
    return b"physics.nu=0.002" in (v if isinstance(v, bytes) else v.encode())
for a, b in zip(steps, steps[1:]):  # two regular checkpoints (0.05 apart), both after the set
    ta, tb = float(a.attrs["time"]), float(b.attrs["time"])
    if steered(a) and steered(b) and abs(tb - ta - 0.05) < 1e-9:
        print(int(a.attrs["step"]), repr(tb))
        break
EOF
)"
check "the steered run has two regular checkpoints after the set" "[ -n '$k' ]"
"$rewind" run --restart "s.h5@$k" --output r.h5 --set "time.end=$t_next" >r.log 2>&1
check "a restart from a checkpoint after the set runs with the steered viscosity" \
  "[ $? = 0 ] && grep -q 'nu = 0.002' r.log"
check "... and its next checkpoint equals the steered run's, bit for bit" \
  "\"$rewind\" diff --all-cells s.h5@t=$t_next r.h5@t=$t_next >diffr.out 2>&1"

# A job whose checkpoints a dedicated I/O rank writes: a branch inside the job keeps its
# I/O rank (the branch's writer hands its steps to it too) and equals a CLI branch.
start_run 4 ded.log "$case_file" --output d.h5 --set time.end=30 --set output.checkpoint_interval=0.05 \
  --set output.visualisation_interval=0 --set 'output.io.strategy="dedicated"'
check "dedicated + collector: the run starts (1 compute rank, 1 I/O rank)" "[ -n '$port' ]"
wait_time 0.06
"$rewind" steer 127.0.0.1:$port pause >/dev/null 2>&1
"$rewind" steer 127.0.0.1:$port branch --from '#1' --set physics.nu=0.0015 --output db.h5 >dbranch.out 2>&1
check "dedicated: branch from a committed step inside the job" "[ $? = 0 ] && grep -q 'db.h5' dbranch.out"
"$rewind" steer 127.0.0.1:$port resume >/dev/null 2>&1
wait_time 0.11
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
wait_run
check "dedicated: the branched job ends cleanly" "[ $? = 0 ]"
"$rewind" run --restart 'd.h5@#1' --set physics.nu=0.0015 --set 'output.io.strategy="collective"' --output dcli.h5 \
  --steps 60 -q >dcli.log 2>&1  # one process: no room for an I/O rank
check "dedicated: the in-job branch's first checkpoints equal a CLI branch's, bit for bit" \
  "\"$rewind\" diff --all-cells db.h5@#0 dcli.h5@#0 >ddiff0.out 2>&1 && \"$rewind\" diff --all-cells db.h5@#1 dcli.h5@#1 >ddiff1.out 2>&1"
exit $fail

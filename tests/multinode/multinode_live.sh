#!/usr/bin/env bash
# A live run with compute ranks on several simulated nodes (scripts/simnodes.sh), reached
# through its contact file (rewind window RUN.h5 --time live, rewind steer RUN.h5):
#  - 2 nodes, the collector on the first with 1 compute rank, 2 on the second: the
#    contact file names the collector's node; pause, set, branch inside the job, stop;
#    live windows equal the file's cells value by value (check_window.py, h5py), of the
#    run and of the branch; only the rank on the collector's node writes into its shared
#    memory (1 of 3), the others send over MPI; the set is recorded, and the in-job branch
#    equals a one-node `rewind run --restart ... --set` bit for bit;
#  - 3 nodes, a compute rank on the collector's node that cannot map its memory (started
#    in a PID namespace of its own, as a container would): it says so once, in one line,
#    its values go over MPI, and the windows still equal the file.
#   multinode_live.sh REWIND SOURCE_DIR
source "$(dirname "$0")/lib.sh" "$@"
case_file=$src/cases/default.toml
whole=(--box 0,0,0,2.2,0.41,0 --budget 3000)
zoom=(--box 0.1,0.1,0,0.4,0.3,0 --budget 2000 --vars p,u)
job=
trap '[ -n "$job" ] && kill "$job" 2>/dev/null; rm -rf "$tmp"' EXIT

start() {  # start LOG RUN_FILE COMMAND...: COMMAND in the background; waits (60 s) for RUN_FILE.contact
  local log=$1 run=$2; shift 2
  "$@" >"$log" 2>&1 &
  job=$!
  for _ in $(seq 1 600); do [ -e "$run.contact" ] && return 0; kill -0 $job 2>/dev/null || break; sleep 0.1; done
  cat "$log"
  return 1
}
finish() {  # finish: the job's exit code, after at most 60 s
  for _ in $(seq 1 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  wait "$job"; local rc=$?
  job=
  return $rc
}
time_of() { "$rewind" steer "$1" status --json 2>/dev/null | $py -c "import json,sys; print(json.load(sys.stdin)['time'])"; }
wait_past() {  # wait_past RUN T: until the job's status time passes T (at most 60 s)
  for _ in $(seq 1 600); do
    $py -c "import sys; sys.exit(0 if float(sys.argv[1] or 0) > float(sys.argv[2]) else 1)" "$(time_of "$1")" "$2" && return
    sleep 0.1
  done
}
windows_ok() {  # windows_ok FILE W.json...: each window equals FILE's cells (its last step)
  local w
  for w in "${@:2}"; do $py "$src/tests/collector/check_window.py" "$1" "$w" >>chk.out 2>&1 || { tail -3 chk.out; return 1; }; done
}
last_step() { "$rewind" info "$1" --json | $py -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['step'])"; }
step_of() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$1"; }

# --- 2 nodes: nodeA = nbserver, collector, 1 compute rank; nodeB = 2 compute ranks -------
start run.log live.h5 on nodeA:3,nodeB:2 run "$case_file" -o live.h5 --set time.end=30 \
  --set output.checkpoint_interval=0.05 --set output.visualisation_interval=0 --listen 127.0.0.1:0
check "2 nodes: the collector writes live.h5.contact (mode 600) naming its node, nodeA" \
  "[ \"\$(stat -c %a live.h5.contact)\" = 600 ] && $py -c \"import json; c=json.load(open('live.h5.contact')); assert c['node']=='nodeA' and c['version']==1 and c['port']>0, c\""
"$rewind" steer live.h5 pause >pause.out 2>&1
check "2 nodes: pause through the contact file" "grep -q '^paused at step' pause.out"
PYTHONPATH=$src/python $py -c "import rewind
with rewind.connect('live.h5', timeout=20) as c: print(c.status()['state'])" >py.out 2>&1
check "2 nodes: the Python client connects by naming the run file (rewind.connect('live.h5'))" "grep -qx paused py.out"
"$rewind" steer live.h5 set physics.nu=0.002 >set.out 2>&1
check "2 nodes: set" "grep -q 'physics.nu = 0.002 from step' set.out"
"$rewind" steer live.h5 resume >/dev/null 2>&1
wait_past live.h5 0.11  # two checkpoints after the set
"$rewind" steer live.h5 pause >/dev/null 2>&1
"$rewind" window live.h5 --time live "${whole[@]}" --out a.json >a.out 2>&1 &&
  "$rewind" window live.h5 --time live "${zoom[@]}" --out b.json >b.out 2>&1
check "2 nodes: live windows through the contact file" "[ $? = 0 ] && [ -s a.json ] && [ -s b.json ]"
paused=$(step_of a.json)
"$rewind" steer live.h5 branch --from '#1' --set physics.nu=0.0015 --output br.h5 >branch.out 2>&1
check "2 nodes: branch inside the job" "grep -q '^branched .*br.h5' branch.out"
"$rewind" steer live.h5 resume >/dev/null 2>&1
wait_past live.h5 0.08
"$rewind" steer live.h5 pause >/dev/null 2>&1
"$rewind" window live.h5 --time live "${whole[@]}" --out c.json >c.out 2>&1
check "2 nodes: a live window of the branch" "[ $? = 0 ] && grep -q 'br.h5' c.out"
"$rewind" steer live.h5 stop >/dev/null 2>&1
finish
check "2 nodes: stop ends the job cleanly (exit 0), and the contact file is gone" "[ $? = 0 ] && [ ! -e live.h5.contact ]"
check "2 nodes: 1 of 3 compute ranks (the one on the collector's node) wrote into its shared memory" \
  "grep -q '1 of 3 compute ranks wrote into the collector' run.log"
check "2 nodes: the windows before the branch equal live.h5's step $paused, value by value" \
  "[ \"\$(\"$rewind\" info live.h5 --json | $py -c \"import json,sys; print(any(s['step']==$paused for s in json.load(sys.stdin)['steps']))\")\" = True ] && windows_ok live.h5 a.json b.json"
check "2 nodes: the window of the branch equals br.h5's last step, value by value" \
  "[ \"\$(step_of c.json)\" = \"\$(last_step br.h5)\" ] && windows_ok br.h5 c.json"
check "2 nodes: the steps after the set record it (case_overrides)" \
  "$py -c \"import h5py; f=h5py.File('live.h5'); a=[f['simulation'][g].attrs.get('case_overrides') for g in f['simulation'] if g.startswith('step_')]; assert any(x is not None and b'physics.nu=0.002' in (x if isinstance(x, bytes) else x.encode()) for x in a)\""
# The CLI branch runs as many steps as the in-job branch did to its second step (t = 0.1,
# or the checkpoint `stop` wrote before it), so both files' steps #0 and #1 are the same
# steps (number and time).
steps_of() { "$rewind" info "$1" --json | $py -c "import json,sys; s=[x['step'] for x in json.load(sys.stdin)['steps'] if x['committed']]; print(s[1] - s[0])"; }
one 3 run --restart 'live.h5@#1' --set physics.nu=0.0015 --steps "$(steps_of br.h5)" --output cli.h5 -q >cli.log 2>&1 ||
  cat cli.log
same_step() { same "$1" "$2" && [ "$(sed -n 's/^A  [^ ]* //p' diff.out)" = "$(sed -n 's/^B  [^ ]* //p' diff.out)" ]; }
check "2 nodes: the in-job branch equals a one-node CLI branch of the same step, bit for bit" \
  "same_step 'br.h5@#0' 'cli.h5@#0' && same_step 'br.h5@#1' 'cli.h5@#1' || { head -3 diff.out; tail -4 diff.out; tail -3 cli.log; false; }"

# --- 3 nodes; on nodeA a compute rank in a PID namespace of its own -----------------------
if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
  echo "SKIP (part): unshare --pid needs root; the fallback of a rank that cannot map the collector's memory is not run"
  exit $fail
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # no cross-memory attach into the other PID namespace
args=(run "$case_file" -o fb.h5 --set time.end=30 --listen 127.0.0.1:0)
start fb.log fb.h5 timeout -k 5 90 "$sim" mpirun nodeA:4,nodeB:1,nodeC:1 -np 3 "$rewind" "${args[@]}" \
  : -np 1 unshare --pid --fork --mount-proc "$rewind" "${args[@]}" : -np 2 "$rewind" "${args[@]}"
"$rewind" steer fb.h5 pause >/dev/null 2>&1
for k in 1 2 3; do "$rewind" window fb.h5 --time live "${whole[@]}" --out f$k.json >f$k.out 2>&1 || cat f$k.out; done
"$rewind" steer fb.h5 stop >/dev/null 2>&1
finish
check "3 nodes: the job ends cleanly" "[ $? = 0 ]"
check "3 nodes: the rank that cannot map the collector's memory says so once, in one line, naming why" \
  "[ \$(grep -c 'cannot map the collector' fb.log) = 1 ] && grep -q 'rewind run: note: a compute rank on nodeA cannot map the collector.s shared memory (open /proc/.*); its live window values go over MPI' fb.log"
check "3 nodes: 1 of 4 compute ranks wrote into the collector's memory (the other on its node fell back to MPI)" \
  "grep -q '1 of 4 compute ranks wrote into the collector' fb.log"
check "3 nodes: the three windows equal the file's last step, value by value" \
  "[ \"\$(step_of f1.json)\" = \"\$(last_step fb.h5)\" ] && windows_ok fb.h5 f1.json f2.json f3.json"
exit $fail

#!/usr/bin/env bash
# A node lost in the middle of a dedicated write (scripts/simnodes.sh kill: kill -9 of
# every process of one simulated node, its Open MPI daemon and its ranks):
#  - the job ends, within 30 s (no hang), with a non-zero exit;
#  - the file's committed steps verify (`rewind verify`);
#  - a restart continues the file on the nodes again, and its last step equals, bit for
#    bit, the step of a run on one node that was never interrupted.
# The write in flight: every step is a checkpoint and 2 steps may wait in the I/O ranks'
# memory, so the I/O ranks write without pause (the log shows the compute ranks waiting
# for a free slot: the writes are the bottleneck) when node B is killed.
#   multinode_faults.sh REWIND SOURCE_DIR
source "$(dirname "$0")/lib.sh" "$@"
case_file=$src/cases/cylinder-2d1.toml
hosts=nodeA:3,nodeB:3  # nodeA = nbserver, 1 compute, 1 I/O rank; nodeB = 2 compute, 1 I/O rank
every=(--set output.checkpoint_every=1 --set output.visualisation_every=0)
ded=(--set 'output.io.strategy="dedicated"' --set output.io.steps_in_flight=2)
committed() { "$rewind" info "$1" --json 2>/dev/null | $py -c "import json,sys; print(sum(1 for s in json.load(sys.stdin)['steps'] if s['committed']))" 2>/dev/null || echo 0; }
last_step() {  # the last committed step (the kill may leave a step half-written)
  "$rewind" info "$1" --json | $py -c "import json,sys; print([s['step'] for s in json.load(sys.stdin)['steps'] if s['committed']][-1])"
}

on $hosts run "$case_file" -o k.h5 --steps 5000 "${every[@]}" "${ded[@]}" >k.log 2>&1 &
job=$!
trap 'kill $job 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 600); do [ "$(committed k.h5)" -ge 8 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
check "the run has committed 8 steps and goes on" "kill -0 $job 2>/dev/null && [ \$(committed k.h5) -ge 8 ]"
check "the I/O ranks are the bottleneck: the compute ranks waited for a free slot" \
  "grep -q 'waited 0\.0*[1-9][0-9]* s for a free slot' k.log"
"$sim" kill nodeB >kill.out 2>&1
killed=$(date +%s.%N)
for _ in $(seq 1 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
ended=$(date +%s.%N)
kill -0 $job 2>/dev/null
check "node B killed (its daemon and its 3 ranks at least): the job ends within 30 s" \
  "[ $? != 0 ] && [ \$(sed -n 's/.*killed \([0-9]*\) processes of node nodeB.*/\1/p' kill.out) -ge 4 ]"
wait $job
check "... with a non-zero exit" "[ $? != 0 ]"
echo "     (the job ended $($py -c "print(round($ended - $killed, 1))") s after the kill)"
k=$(last_step k.h5)
check "the file's committed steps (0..$k) verify" \
  "$rewind verify k.h5 >verify.out 2>&1 && grep -q \"k.h5: $((k + 1)) steps verified\" verify.out || { tail -4 verify.out; false; }"
# The same file, continued on the nodes (a step torn by the kill is dropped, the latest
# checkpoint continued), against a run on one node straight to step k + 5.
# The job's processes on node A hold its claim until they are gone (mpirun ended first):
# a user restarts once they are.
holder=$(sed -n 's/^pid=//p' k.h5.lock 2>/dev/null)
for _ in $(seq 1 300); do { [ -z "$holder" ] || ! kill -0 "$holder" 2>/dev/null; } && break; sleep 0.1; done
check "the job's processes on node A are gone within 30 s (its claim with them)" \
  "[ -z \"$holder\" ] || ! kill -0 $holder 2>/dev/null"
on $hosts run --restart k.h5 --steps 5 "${ded[@]}" -q >restart.log 2>&1 || cat restart.log
one 4 run "$case_file" -o ref.h5 --steps $((k + 5)) "${every[@]}" -q >ref.log 2>&1 || cat ref.log
check "a restart on the nodes continues the file: step $((k + 5)) bit for bit the uninterrupted run's" \
  "[ \$(last_step k.h5) = $((k + 5)) ] && same ref.h5@$((k + 5)) k.h5@$((k + 5)) && $rewind verify k.h5 >/dev/null"
exit $fail

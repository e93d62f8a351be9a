# Sourced by the collector's shell tests.
# in_tmpdir: cd into a fresh directory, removed on exit (and the server stopped, if any).
in_tmpdir() {
  tmp=$(mktemp -d)
  server_pid=
  trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
  cd "$tmp" || exit 1
}
# check NAME COMMAND: tests/support/check.sh.
fail=0
. "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"  # check LABEL CONDITION
# start_listener COMMAND...: runs COMMAND in the background (output in serve.log); sets
# server_pid, and port (empty if it printed no "listening on 127.0.0.1:PORT" within
# LISTEN_WAIT seconds, default 30: mpirun on a loaded machine can take a while).
start_listener() {
  # Emptied here, not by the background command's redirection: that runs after `&`
  # returns, so the loop below could read the last listener's line (its port) first.
  : >serve.log
  "$@" >>serve.log 2>&1 &
  server_pid=$!
  port=
  for _ in $(seq 1 $((${LISTEN_WAIT:-30} * 10))); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' serve.log)
    [ -n "$port" ] && break
    sleep 0.1
  done
}
# start_serve FILE [OPTIONS...]: `rewind serve FILE --listen 127.0.0.1:0 OPTIONS` (needs $rewind).
start_serve() {
  local file=$1
  shift
  start_listener "$rewind" serve "$file" --listen 127.0.0.1:0 "$@"
}
# one_error COMMAND...: true if COMMAND fails with exactly one line, an "error:" line.
one_error() { "$@" >err.out 2>&1; local rc=$?; [ $rc != 0 ] && [ "$(wc -l <err.out)" = 1 ] && grep -q 'error:' err.out; }
# wait_job SECONDS: waits up to SECONDS for $server_pid to end; sets ended (1 or empty)
# and rc (its exit code, once it ended), and clears server_pid when it ended.
wait_job() {
  ended= rc=
  for _ in $(seq 1 $(($1 * 10))); do kill -0 "$server_pid" 2>/dev/null || { ended=1; break; }; sleep 0.1; done
  [ -n "$ended" ] || return 0
  wait "$server_pid"; rc=$?
  server_pid=
}
# status: "STATE STEP TIME FILE" of the live run "${steer[@]}" steers (its `status --json`;
# needs $py); empty if it does not answer.
status() { "${steer[@]}" status --json 2>/dev/null | $py -c "
import json, sys; d = json.load(sys.stdin); print(d['state'], d['step'], repr(d['time']), d['file'])"; }
# start_live NP FILE RUN-ARGS...: `rewind run RUN-ARGS --output FILE --listen 127.0.0.1:0`
# under mpiexec -n NP in the background (needs $rewind, $mpiexec); checks that its
# collector listens (else prints serve.log and exits 1), sets steer=(rewind steer ADDR).
start_live() {
  local np=$1 file=$2
  shift 2
  start_listener "$mpiexec" -n "$np" "$rewind" run "$@" --output "$file" --listen 127.0.0.1:0
  check "the collector prints its address" "[ -n '$port' ]"
  [ -n "$port" ] || { cat serve.log; exit 1; }
  steer=("$rewind" steer "127.0.0.1:$port")
}
# pause_at STEP: the live run paused at STEP or later (short bursts of resume / pause).
pause_at() {
  "${steer[@]}" pause >/dev/null 2>&1
  for _ in $(seq 1 200); do
    [ "$(status | cut -d' ' -f2)" -ge "$1" ] 2>/dev/null && return 0
    "${steer[@]}" resume >/dev/null 2>&1
    "${steer[@]}" pause >/dev/null 2>&1
  done
}

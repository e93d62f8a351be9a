#!/usr/bin/env bash
# Hostile clients against the collector, the way a user meets them (docs/collector-
# protocol.md, "Limits and what a client may hold"): tests/collector/attack.py against
# `rewind serve` of a run file whose whole-domain window is ~60 MB, without and with a
# token (given in a file), and against the collector of `rewind run --listen`. Each
# attack -- connections that send nothing, sessions that say hello and sit idle, clients
# that ask for the largest window and never read -- must leave a good client served
# within a second, the server's resident memory (/proc) bounded during the attack and
# back near its baseline after; attack.py prints the figures.
#   cli_attack.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"
in_tmpdir
attack() { $py "$src/tests/collector/attack.py" "$src" "$port" "$@"; }
stop() {
  kill -TERM "$server_pid" 2>/dev/null
  wait "$server_pid"
  server_pid=
  tail -1 serve.log
}

"$rewind" run "$src/cases/default.toml" --output big.h5 --set tree.depth=6 --steps 1 -q >run.log 2>&1
check "a run file of 1.4 million leaf cells" "[ -f big.h5 ]"
[ -f big.h5 ] || { cat run.log; exit 1; }

start_serve big.h5
check "rewind serve listens" "[ -n '$port' ]"
check "rewind serve: 80 silent connections, 16 idle sessions, 14 clients that never read" \
  "attack --label serve --attack idle:80 --attack hello:16 --attack slow:14"
stop

(umask 077 && echo "s3cret-$$" >token)
start_serve big.h5 --token-file token
check "rewind serve with a token: 80 silent connections (before authentication)" \
  "attack --label serve-token --token-file token --attack idle:80"
stop

start_listener "$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output live.h5 --set tree.depth=6 --steps 1 \
  --set output.checkpoint_interval=0 --set output.visualisation_interval=0 --pause-at-end -q --listen 127.0.0.1:0 \
  --token-file token
check "rewind run --listen listens" "[ -n '$port' ]"
paused() { "$rewind" steer 127.0.0.1:$port status --token-file token 2>/dev/null | grep -q '^paused'; }
for _ in $(seq 1 300); do paused && break; sleep 0.2; done
check "the live run is paused at its end" "paused"
check "rewind run --listen (live windows): 80 silent connections, 8 clients that never read" \
  "attack --label live --time live --token-file token --attack idle:80 --attack slow:8"
"$rewind" steer 127.0.0.1:$port stop --token-file token >/dev/null 2>&1
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
wait "$server_pid"
check "... and the job ends when told to stop" "[ $? = 0 ]"
server_pid=
exit $fail

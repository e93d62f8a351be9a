#!/usr/bin/env bash
# The collector's token from a private file (--token-file) or the environment
# (REWIND_TOKEN, REWIND_TOKEN_FILE), the way a user gives it to `rewind serve`,
# `rewind window`, `rewind steer`, `rewind run --listen` and the Python client: a token
# file group or others may read is refused with one line, and the token appears in no
# command line (ps) and no output.
#   cli_token.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"
in_tmpdir
secret="tok-$$-$RANDOM$RANDOM"
(umask 077 && echo "$secret" >token)
echo "$secret" >open_token && chmod 644 open_token
"$rewind" run "$src/cases/default.toml" --output f.h5 --set time.end=0.02 -q >run.log 2>&1
box="--box 0,0,0,2.2,0.41,0 --budget 500"
not_shown() { ! grep -rqs -- "$secret" "$@"; }
stop_server() {
  kill -TERM "$server_pid" 2>/dev/null
  wait "$server_pid"
  server_pid=
}

check "serve: a token file others may read is refused, one line naming it and chmod 600" \
  "one_error $rewind serve f.h5 --token-file open_token && grep -q 'open_token may be read by group or others (mode 0644): chmod 600' err.out && not_shown err.out"
check "window: the same" "one_error $rewind window 127.0.0.1:9 $box --token-file open_token && grep -q 'chmod 600' err.out"
check "steer: a REWIND_TOKEN_FILE others may read, the same" \
  "REWIND_TOKEN_FILE=open_token one_error $rewind steer 127.0.0.1:9 status && grep -q 'chmod 600' err.out && not_shown err.out"
check "--token and --token-file together: one error line" "one_error $rewind serve f.h5 --token x --token-file token"
check "a missing token file: one error line" "one_error $rewind serve f.h5 --token-file nothere && grep -q 'nothere cannot be opened' err.out"

start_serve f.h5 --token-file token
check "rewind serve --token-file listens and requires the token" "[ -n '$port' ] && grep -q 'token required' serve.log"
check "... which is in no command line (ps)" "! tr '\\0' ' ' </proc/$server_pid/cmdline | grep -q -- '$secret'"
check "a client without the token is refused" "one_error $rewind window 127.0.0.1:$port $box && grep -q unauthorized err.out"
check "rewind window --token-file" "$rewind window 127.0.0.1:$port $box --token-file token >w1.out 2>&1"
check "rewind window with REWIND_TOKEN" "REWIND_TOKEN='$secret' $rewind window 127.0.0.1:$port $box >w2.out 2>&1"
check "rewind window with REWIND_TOKEN_FILE" "REWIND_TOKEN_FILE=token $rewind window 127.0.0.1:$port $box >w3.out 2>&1"
check "rewind steer with REWIND_TOKEN_FILE gets past the token (an offline server: unsupported)" \
  "REWIND_TOKEN_FILE=token one_error $rewind steer 127.0.0.1:$port status && grep -q unsupported err.out"
cat >client.py <<'PY'
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
from rewind import client as rc
port = int(sys.argv[2])
with rc.Client("127.0.0.1", port, token_file="token") as c:
    assert c.info()["variables"]
os.environ["REWIND_TOKEN_FILE"] = "token"
with rc.Client("127.0.0.1", port) as c:
    assert c.steps()
del os.environ["REWIND_TOKEN_FILE"]
try:
    rc.Client("127.0.0.1", port, token_file="open_token")
    raise SystemExit("a token file others may read was used")
except ValueError as e:
    assert "chmod 600" in str(e) and open("token").read().strip() not in str(e), e
try:
    rc.Client("127.0.0.1", port)
    raise SystemExit("no token, yet served")
except rc.CollectorError as e:
    assert e.code == "unauthorized", e
print("ok")
PY
check "the Python client: token_file, REWIND_TOKEN_FILE, a refused file, none" "$py client.py $src $port >py.out 2>&1"
stop_server
check "no output names the token" "not_shown serve.log w1.out w2.out w3.out py.out err.out"

REWIND_TOKEN="$secret" start_serve f.h5
check "rewind serve takes its token from REWIND_TOKEN" \
  "grep -q 'token required' serve.log && one_error $rewind window 127.0.0.1:$port $box && grep -q unauthorized err.out" ||
  { echo "port '$port'; the window said:"; cat err.out; echo "serve.log:"; cat serve.log; }
stop_server

# A live run: the token file is read on rank 0 and reaches the collector rank.
"$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output x.h5 -q --listen 127.0.0.1:0 --token-file open_token \
  >err.out 2>&1
check "rewind run --listen with a token file others may read: one error line (from rank 0), a non-zero exit" \
  "[ $? != 0 ] && [ \$(grep -c '^rewind run: error: token file open_token may be read' err.out) = 1 ] && [ ! -e x.h5 ]"
start_listener "$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output live.h5 --set time.end=0.02 \
  --pause-at-end -q --listen 127.0.0.1:0 --token-file token
check "rewind run --listen --token-file listens" "[ -n '$port' ]"
check "... refuses a client without the token" "one_error $rewind steer 127.0.0.1:$port status && grep -q unauthorized err.out"
check "... and answers one with it (REWIND_TOKEN_FILE)" "REWIND_TOKEN_FILE=token $rewind steer 127.0.0.1:$port status >st.out 2>&1"
REWIND_TOKEN_FILE=token "$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
wait "$server_pid"
check "... and stops when told to (exit 0)" "[ $? = 0 ]"
server_pid=
check "the run's output names no token" "not_shown serve.log st.out"
exit $fail

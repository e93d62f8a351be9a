#!/usr/bin/env bash
# A live run has a token by default (docs/collector-protocol.md, "Security"): loopback is
# shared by every user of a node, so `rewind run --listen` without a token generates one
# and puts it in the run's contact file (mode 600), where the clients naming the run find
# it, as Jupyter does:
#  - on 1 process (the collector a thread) and 3 (a collector rank): clients that do not
#    present the token (`rewind steer HOST:PORT`, a wrong token, the Python client) are
#    refused `unauthorized`; `rewind steer RUN.h5`, `rewind window RUN.h5 --time live` and
#    `rewind.connect("RUN.h5")` are served; the contact file (mode 600) holds 48 hex
#    digits that appear in no output; the live window equals the file (check_window.py);
#  - a run without an output file (no contact file) prints its generated token;
#  - `--token ''`: one warning line, clients without a token are served, no token in the
#    contact file; refused off loopback;
#  - a token of white space only (--token, REWIND_TOKEN, a token file): one error line, no
#    file; a token file group or others may change: refused in those words.
#   cli_live_token.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # in_tmpdir, check, start_listener, one_error, wait_job
in_tmpdir
unset REWIND_TOKEN REWIND_TOKEN_FILE
run=("$rewind" run "$src/cases/default.toml" --set time.end=30 --set output.checkpoint_interval=0
     --set output.visualisation_interval=0 -q)
box="--box 0,0,0,2.2,0.41,0 --budget 500"
contact_token() { $py -c "import json, sys; print(json.load(open(sys.argv[1])).get('token', ''))" "$1"; }

for np in 1 3; do
  start_listener "$mpiexec" -n $np "${run[@]}" --output t$np.h5 --listen 127.0.0.1:0
  check "np $np: a run without a token listens" "[ -n '$port' ]" || { cat serve.log; continue; }
  token=$(contact_token t$np.h5.contact)
  check "np $np: its contact file, mode 600, holds a generated token of 48 hex digits" \
    "[ \$(stat -c %a t$np.h5.contact) = 600 ] && echo '$token' | grep -Eqx '[0-9a-f]{48}'"
  check "np $np: the run says the contact file holds the token, and prints the token nowhere" \
    "grep -q 'contact file t$np.h5.contact .*holds the token generated for this run' serve.log && ! grep -q '$token' serve.log"
  check "np $np: rewind steer HOST:PORT without the token: one line, unauthorized" \
    "one_error $rewind steer 127.0.0.1:$port pause && grep -q unauthorized err.out"
  check "np $np: ... with a wrong one, the same" \
    "one_error $rewind steer 127.0.0.1:$port stop --token wrong && grep -q unauthorized err.out"
  "$rewind" steer t$np.h5 pause >pause.out 2>&1
  check "np $np: rewind steer RUN.h5 (the contact file's token) pauses it" "[ $? = 0 ] && grep -q '^paused' pause.out"
  "$rewind" window t$np.h5 --time live $box --out w$np.json >w.out 2>&1
  check "np $np: rewind window RUN.h5 --time live" "[ $? = 0 ] && [ -s w$np.json ]"
  PYTHONPATH="$src/python" $py - t$np.h5 "$port" >py.out 2>&1 <<'PYEOF'
import sys
import rewind
from rewind import client as rc
with rewind.connect(sys.argv[1], timeout=20) as c:
    assert c.status()["state"] == "paused"
try:
    rc.Client("127.0.0.1", int(sys.argv[2]), timeout=20)
    raise SystemExit("a client without the token was served")
except rc.CollectorError as e:
    assert e.code == "unauthorized", e
print("ok")
PYEOF
  check "np $np: the Python client: served through the run file, refused without the token" "grep -qx ok py.out || { cat py.out; false; }"
  check "np $np: the job is still paused, where the window saw it" \
    "$rewind steer t$np.h5 status >st.out 2>&1 && grep -q '^paused' st.out"
  "$rewind" steer t$np.h5 stop >/dev/null 2>&1
  wait_job 60
  check "np $np: stop through the run file ends it (exit 0), its contact file removed" \
    "[ -n '$ended' ] && [ '$rc' = 0 ] && [ ! -e t$np.h5.contact ]" || tail -3 serve.log
  check "np $np: the live window equals the file's last step, value by value (h5py)" \
    "$py $src/tests/collector/check_window.py t$np.h5 w$np.json >chk.out 2>&1 || { cat chk.out; false; }"
done

# No output file, so no contact file: the run prints its generated token (nothing else could tell).
start_listener "${run[@]}" --set 'output.file=""' --listen 127.0.0.1:0
token=$(sed -n 's/^collector   token \([0-9a-f]*\) (generated; no contact file.*/\1/p' serve.log)
check "no output file: the run prints the token it generated" "echo '$token' | grep -Eqx '[0-9a-f]{48}'" || cat serve.log
check "... which clients give (--token-file)" \
  "(umask 077 && echo '$token' >tok) && $rewind steer 127.0.0.1:$port status --token-file tok >st.out 2>&1"
check "... and without which they are refused" "one_error $rewind steer 127.0.0.1:$port stop && grep -q unauthorized err.out"
"$rewind" steer 127.0.0.1:$port stop --token-file tok >/dev/null 2>&1
wait_job 60

# --token '': no token, said once on stderr; loopback only.
start_listener "${run[@]}" --output open.h5 --listen 127.0.0.1:0 --token ''
check "--token '': one warning line, naming the risk" \
  "[ \$(grep -c \"^rewind run: warning: --token '': no token; any user of this machine can steer\" serve.log) = 1 ]"
check "... a client without a token is served" "$rewind steer 127.0.0.1:$port status >st.out 2>&1 && grep -q running st.out"
check "... and the contact file holds no token" "[ -z \"\$(contact_token open.h5.contact)\" ]"
"$rewind" steer 127.0.0.1:$port stop >/dev/null 2>&1
wait_job 60
check "... it stops when told to (exit 0)" "[ -n '$ended' ] && [ '$rc' = 0 ]"
check "--token '' off loopback: one error line, no file" \
  "one_error ${run[*]} --output far.h5 --listen 0.0.0.0:0 --token '' && grep -q 'non-loopback address needs a token' err.out && [ ! -e far.h5 ]"

# Tokens anyone can guess.
check "--token of white space only: one error line, no file" \
  "one_error ${run[*]} --output ws.h5 --listen 127.0.0.1:0 --token '   ' && grep -q 'white space only' err.out && [ ! -e ws.h5 ]"
check "REWIND_TOKEN of white space only: the same" \
  "REWIND_TOKEN=' ' one_error ${run[*]} --output ws.h5 --listen 127.0.0.1:0 && grep -q 'REWIND_TOKEN is white space only' err.out && [ ! -e ws.h5 ]"
(umask 077 && printf '  \t\nsecret on line two\n' >blank)
check "a token file whose first line is white space: the same, naming the file" \
  "one_error ${run[*]} --output ws.h5 --listen 127.0.0.1:0 --token-file blank && grep -q 'token file blank holds a token of white space only' err.out && [ ! -e ws.h5 ]"
echo "s3cret-$$" >gw && chmod 620 gw
check "a token file group may write: refused as changeable, not as readable" \
  "one_error ${run[*]} --output ws.h5 --listen 127.0.0.1:0 --token-file gw && grep -q 'gw may be changed by group or others (mode 0620): chmod 600 gw' err.out"
exit $fail

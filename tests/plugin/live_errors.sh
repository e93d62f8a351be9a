#!/usr/bin/env bash
# The live source's errors: each is one readable message (vtkErrorMacro, and LastError),
# none hangs ParaView: a closed port, a listener that never answers (the Timeout), a
# server of another protocol version, a refused token, a token file others may read;
# then the same source with the right token -- given as Token, as TokenFile, or in the
# environment (REWIND_TOKEN_FILE), or from a contact file (ContactFile: host, port and
# token of the job writing a run file; a missing one is one error) -- fetches a window
# from `rewind serve` (the live source reads served files too).
#   live_errors.sh REWIND PLUGIN SOURCE_DIR
set -u
rewind=$1 plugin=$2 src=$3
. "$src/tests/plugin/plugin_util.sh"
"$rewind" run "$src/cases/default.toml" --output f.h5 -q --set time.end=0.02 >run.log 2>&1
check "a small run file" "[ -f f.h5 ]"
[ -f f.h5 ] || { cat run.log; exit 1; }
start_serve f.h5 --token secret
(umask 077 && echo secret >tok_good)
echo secret >tok_open && chmod 644 tok_open
# Fake servers: one that accepts and stays silent, one that answers in protocol version 2.
/usr/bin/python3 - >fakes.txt <<'PY' &
import socket, struct, sys, threading, time
def listener():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); return s
silent, other = listener(), listener()
closed = listener(); closed_port = closed.getsockname()[1]; closed.close()
print(silent.getsockname()[1], other.getsockname()[1], closed_port, flush=True)
def keep(s):
    held = []
    while True:
        held.append(s.accept()[0])
def version2(s):
    while True:
        c = s.accept()[0]
        c.recv(1 << 16)
        body = b'{"server":"future","protocol":2,"capabilities":[]}'
        payload = struct.pack("<I", len(body)) + body
        c.sendall(b"RWCL" + struct.pack("<HHIIQ", 2, 2, 1, 0, len(payload)) + payload)
threading.Thread(target=keep, args=(silent,), daemon=True).start()
threading.Thread(target=version2, args=(other,), daemon=True).start()
time.sleep(120)
PY
extra_pids=$!
for _ in $(seq 1 100); do [ -s fakes.txt ] && break; sleep 0.1; done
read -r silent other closed <fakes.txt
check "rewind serve and the fake servers listen" "[ -n '$port' ] && [ -n '$closed' ]"
[ -n "$port" ] && [ -n "$closed" ] || exit 1
# A live job's contact file (docs/collector-protocol.md, "Contact file") pointing at the
# server, with its token: ContactFile connects by naming the run file.
(umask 077 && /usr/bin/python3 -c "import json, socket, sys; json.dump({'version': 1, 'host': '127.0.0.1', 'port': int(sys.argv[1]), 'token': 'secret', 'node': socket.gethostname(), 'pid': int(sys.argv[2]), 'started': '2026-11-26T07:00:00Z'}, open('srv.h5.contact', 'w'))" "$port" "$server_pid")
cat >errors.py <<'PY'
import sys, time
from paraview.simple import LoadPlugin
plugin, port, silent, other, closed = sys.argv[1], *map(int, sys.argv[2:6])
LoadPlugin(plugin, remote=False, ns=globals())

def attempt(label, **props):
    t0 = time.time()
    s = RewindLiveSource(Timeout=2, Budget=500, **props)  # noqa: F821
    s.UpdatePipeline()
    s.UpdatePropertyInformation()
    took = time.time() - t0
    cells = s.GetClientSideObject().GetOutputDataObject(0).GetNumberOfCells()
    err = s.GetPropertyValue("LastError")
    print(f"{label}: {took:.1f} s, {cells} cells, LastError: {err}", flush=True)
    sys.stderr.write(f"--- end of {label}\n")
    sys.stderr.flush()
    return err, took, cells

err, took, _ = attempt("closed", PortNumber=closed)
assert "cannot reach" in err and took < 5, err
err, took, _ = attempt("silent", PortNumber=silent)
assert "no answer" in err and took < 8, (err, took)
err, took, _ = attempt("version", PortNumber=other)
assert "protocol version" in err and took < 5, err
err, took, _ = attempt("token", PortNumber=port, Token="wrong")
assert "refused the token" in err and took < 5, err
err, took, cells = attempt("served", PortNumber=port, Token="secret")
assert err == "" and cells > 0, (err, cells)
err, took, cells = attempt("tokenfile", PortNumber=port, TokenFile="tok_good")
assert err == "" and cells > 0, (err, cells)
err, took, _ = attempt("opentokenfile", PortNumber=port, TokenFile="tok_open")
assert "tok_open may be read by group or others" in err and "chmod 600" in err and "secret" not in err, err
err, took, cells = attempt("contact", ContactFile="srv.h5")  # host, port and token from srv.h5.contact
assert err == "" and cells > 0, (err, cells)
err, took, _ = attempt("nocontact", ContactFile="none.h5")
assert "no contact file none.h5.contact: the run is not live" in err and took < 5, err
import os
os.environ["REWIND_TOKEN_FILE"] = "tok_good"
err, took, cells = attempt("tokenenv", PortNumber=port)
assert err == "" and cells > 0, (err, cells)
print("OK")
PY
PV_TIMEOUT=60 pv errors.py "$plugin" "$port" "$silent" "$other" "$closed" >pv.out 2>pv.err
check "pvpython: every error is caught in time, and the right token gets a window" "grep -q '^OK' pv.out"
cat pv.out
# ParaView's output (stderr) per attempt: the error messages before each "--- end of" line.
awk '/^--- end of /{print $4, n+0; n=0; next} /vtkRewindLiveSource \(/{n++}' pv.err >counts.txt
for label in closed silent version token opentokenfile nocontact; do
  check "$label: exactly one error message in ParaView's output" "grep -qx '$label 1' counts.txt"
done
for label in served tokenfile contact tokenenv; do
  check "$label: no error message" "grep -qx '$label 0' counts.txt"
done
sed -n '/vtkRewindLiveSource (/p' pv.err | sed 's/^/    /'
exit $fail

#!/usr/bin/env bash
# `rewind window` from a file and from `rewind serve`, checked against h5py, value by
# value; `rewind serve` with a token; `--out .vtm`; one error line on bad input.
#   cli_window.sh REWIND SOURCE_DIR PYTHON
set -u
rewind=$1 src=$2 py=$3
. "$src/tests/collector/serve_util.sh"
in_tmpdir
checker="$py $src/tests/collector/check_window.py f.h5"

"$rewind" run "$src/cases/default.toml" --output f.h5 --set time.end=0.05 --set output.visualisation_interval=0.025 -q >run.log 2>&1
check "rewind run wrote a file" "[ -f f.h5 ]"

# Windows: whole domain, a zoom (finer level), a budget below the root (stride), other steps.
windows=(
  "--box 0,0,0,2.2,0.41,1 --budget 100000"
  "--box 0,0,0,2.2,0.41,1 --budget 3000 --vars p,u"
  "--box 0.1,0.1,0,0.4,0.3,0 --budget 2000 --vars p,v"
  "--box 0,0,0,2.2,0.41,0 --budget 40 --vars v"
  "--box 0.15,0.15,0,0.25,0.25,0 --budget 100000 --vars p --time #0"
  "--box 0.5,0,0,2.2,0.41,0 --budget 800 --vars u --time t=0.03"
)
start_server() {  # args: extra options; sets server_pid and port
  start_serve f.h5 "$@"
  check "rewind serve prints the address it listens on" "[ -n '$port' ]"
}
stop_server() {
  kill -TERM "$server_pid"
  for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  wait "$server_pid"; local rc=$?
  server_pid=
  check "rewind serve stops on SIGTERM with exit 0" "[ $rc = 0 ] && grep -q 'stopped by SIGTERM' serve.log"
}

start_server
i=0
for w in "${windows[@]}"; do
  i=$((i + 1))
  "$rewind" window f.h5 $w --out file$i.json >file$i.out 2>&1
  "$rewind" window 127.0.0.1:$port $w --out net$i.json >net$i.out 2>&1
  check "window $i ($w): file and server agree with h5py, every value" "$checker file$i.json net$i.json >check$i.out 2>&1"
  grep -h '^ok' check$i.out
  check "window $i prints level, cells and time" "grep -Eq 'level [0-9]+.* cells per variable .* ms' file$i.out"
done
check "a budget below the root's cells subsamples it" "grep -q 'stride' file4.out"
# A cold window reads only the topology rows its walk visits: a small window
# of a copy with a far leaf's bounding_box damaged answers (= a brute force in numpy,
# values = h5py); a whole-domain window over that row is refused naming the checksum.
check "a cold window reads only the rows it visits, equal to the brute force" \
  "$py $src/tests/collector/check_partial_topology.py $rewind f.h5 $py >partial.out 2>&1"
grep -h '^ok\|^FAIL' partial.out
check "--time #0 picks the first step" "grep -q '^step 0 ' file5.out"

"$rewind" window f.h5 --box 0.1,0.1,0,0.4,0.3,0 --budget 2000 --out w.vtm >vtm.out 2>&1
check "--out .vtm writes a multiblock of .vti pieces" \
  "grep -c '<DataSet ' w.vtm | grep -q '^[1-9]' && [ \$(ls w_pieces/*.vti | wc -l) = \$(grep -c '<DataSet ' w.vtm) ]"
check ".vti pieces are well-formed XML with their cell data" \
  "$py -c \"import glob,xml.etree.ElementTree as E; fs=glob.glob('w_pieces/*.vti'); assert fs; [E.parse(f).find('.//CellData/DataArray[@Name=\\\"p\\\"]').text.split() for f in fs]\""

if command -v pvpython >/dev/null && command -v Xvfb >/dev/null; then
  cells=$(sed -n 's/.* \([0-9]*\) cells per variable.*/\1/p' vtm.out)
  echo "from paraview.simple import *; r = OpenDataFile('w.vtm'); r.UpdatePipeline(); print('CELLS', r.GetDataInformation().GetNumberOfCells())" >pv.py
  timeout 120 "$src/scripts/headless.sh" pvpython pv.py >pv.out 2>&1
  check "stock ParaView opens the .vtm with every cell ($cells)" "grep -q '^CELLS $cells\$' pv.out"
fi

# No --vars: every variable the step holds — a visualisation step its written few (u, v,
# p in the default case), a checkpoint every one the case solves — from the file and through the server;
# a name the step lacks is refused naming the ones it has.
vis=$($py -c "import h5py; f=h5py.File('f.h5'); print(next(f['simulation'][g].attrs['step'] for g in f['simulation'] if g.startswith('step_') and f['simulation'][g].attrs['kind'] in (b'visualisation', 'visualisation')))")
"$rewind" window "f.h5@$vis" --box 0,0,0,2.2,0.41,0 --budget 3000 --out vis.json >vis.out 2>&1
check "no --vars on visualisation step $vis: its 3 variables (the case writes u, v, p)" \
  "grep -q '(3 variables)' vis.out && $py -c \"import json; assert json.load(open('vis.json'))['variables'] == ['u', 'v', 'p']\""
"$rewind" window 127.0.0.1:$port --time "$vis" --box 0,0,0,2.2,0.41,0 --budget 3000 >visnet.out 2>&1
check "... and through rewind serve" "grep -q '(3 variables)' visnet.out"
"$rewind" window f.h5@#0 --box 0,0,0,2.2,0.41,0 --budget 3000 >cp.out 2>&1
check "no --vars on a checkpoint: every variable the case solves (2-D, no heat: u, v, p)" \
  "grep -q '(3 variables)' cp.out"
check "a variable the run does not solve (w in 2-D): one error line naming the ones there are" \
  "one_error $rewind window f.h5@$vis --box 0,0,0,1,1,0 --budget 5 --vars w && grep -q 'there are u, v, p)' err.out"
# A time not reached: refused, naming the last committed step (not silently the last), as
# rewind serve and Python's run.at refuse it (one rule; the ParaView reader still differs).
check "--time t=99 (after the last step): one error line naming the last step" \
  "one_error $rewind window f.h5 --time t=99 --box 0,0,0,1,1,0 --budget 5 && grep -q 'has not been reached: the last committed step is' err.out"
check "... through rewind serve too" \
  "one_error $rewind window 127.0.0.1:$port --time t=99 --box 0,0,0,1,1,0 --budget 5 && grep -q 'has not been reached' err.out"

# Bad input: one error line, non-zero exit (one_error: serve_util.sh).
check "unknown variable: one error line" "one_error $rewind window f.h5 --box 0,0,0,1,1,1 --budget 5 --vars rho"
check "unknown variable through the server: one line listing the variables there are" \
  "one_error $rewind window 127.0.0.1:$port --box 0,0,0,1,1,1 --budget 5 --vars rho && grep -q 'there are u, v, p)' err.out"
check "unknown step: one error line" "one_error $rewind window f.h5@77 --box 0,0,0,1,1,1 --budget 5"
check "box with lo > hi: one error line" "one_error $rewind window f.h5 --box 1,0,0,0,1,1 --budget 5"
check "missing file: one error line" "one_error $rewind window nothere.h5 --box 0,0,0,1,1,1 --budget 5"
check "serving 0.0.0.0 without a token is refused" "one_error $rewind serve f.h5 --listen 0.0.0.0:0"
check "bad --listen is refused" "one_error $rewind serve f.h5 --listen nowhere"
check "rewind steer against rewind serve: unsupported, one error line" \
  "one_error $rewind steer 127.0.0.1:$port status && grep -q unsupported err.out"
stop_server

start_server --token s3cret
check "a server with a token refuses a client without it" \
  "one_error $rewind window 127.0.0.1:$port --box 0,0,0,1,1,1 --budget 5 && grep -q unauthorized err.out"
check "... and a wrong one" "one_error $rewind window 127.0.0.1:$port --box 0,0,0,1,1,1 --budget 5 --token nope"
"$rewind" window 127.0.0.1:$port --box 0,0,0,2.2,0.41,1 --budget 3000 --vars p --token s3cret --out tok.json >tok.out 2>&1
check "... and serves the right token" "$checker tok.json >/dev/null"
stop_server

exit $fail

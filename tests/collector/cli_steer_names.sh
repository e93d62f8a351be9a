#!/usr/bin/env bash
# What a user reads from `rewind steer` on a real run:
#  - `steer parameters` shows each range as the run checks it, open ends included:
#    physics.nu is (0, 10], as `rewind keys physics.nu` says — not [0, 10];
#  - the Python client reads the same ends (min_open / max_open);
#  - `steer set` of a misspelt name is one error line naming the parameter it misspells.
#   cli_steer_names.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # in_tmpdir, check, start_listener, one_error, wait_job
in_tmpdir

start_listener "$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output s.h5 --set time.end=30 \
  --set output.checkpoint_interval=0 --set output.visualisation_interval=0 -q --listen 127.0.0.1:0
check "the live run listens" "[ -n '$port' ]"
[ -n "$port" ] || { cat serve.log; exit 1; }
steer="$rewind steer s.h5"  # through its contact file, which holds the run's generated token

$steer parameters >params.out 2>&1
"$rewind" keys physics.nu >key.out 2>&1
check "steer parameters: physics.nu's range is (0, 10], zero excluded" \
  "grep -Eq '^physics.nu +[0-9.e-]+ +\(0, 10\] +m\^2/s' params.out"
check "... the range rewind keys gives for the key" "grep -q 'range (0, 10\]' key.out"
check "... closed ends stay brackets (the inflow velocity)" \
  "grep -Eq '^boundary.xmin.velocity +\[.*\] +\[-?[0-9.e+]+, [0-9.e+]+\] +m/s' params.out"
PYTHONPATH="$src/python" $py - >py.out 2>&1 <<'PYEOF'
import rewind
with rewind.connect("s.h5", timeout=10) as c:
    p = {q["name"]: q for q in c.parameters()}
    nu = p["physics.nu"]
    assert (nu["min"], nu["max"], nu["min_open"], nu["max_open"]) == (0, 10, True, False), nu
    v = p["boundary.xmin.velocity"]
    assert not v["min_open"] and not v["max_open"], v
print("ok")
PYEOF
check "the Python client: physics.nu min_open, max closed" "grep -qx ok py.out || { cat py.out; false; }"

check "steer set physics.nuu=…: one error line, did you mean physics.nu" \
  "one_error $steer set physics.nuu=0.002 && grep -q 'physics.nuu is not a steerable parameter of this run; did you mean physics.nu?' err.out"
check "... a name far from every parameter gets no guess" \
  "one_error $steer set physics.rho=1 && ! grep -q 'did you mean' err.out"
$steer stop >/dev/null 2>&1
wait_job 120
check "the run ends cleanly after stop" "[ -n '$ended' ] && [ '$rc' = 0 ]"
exit $fail

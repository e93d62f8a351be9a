#!/usr/bin/env bash
# `rewind steer` against the collector test server (a fake steerable run): every
# command, human and --json output, one error line for every bad input and server
# error; and `unsupported` from a server that steers nothing.
#   cli_steer.sh REWIND TEST_SERVER SOURCE_DIR PYTHON
set -u
rewind=$1 test_server=$2 src=$3 py=$4
. "$src/tests/collector/serve_util.sh"
in_tmpdir
json() { $py -c "import json, sys; d = json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

start_listener "$test_server" --token tok
check "the test server listens" "[ -n '$port' ]"
steer="$rewind steer 127.0.0.1:$port --token tok"

$steer status >status.out 2>&1
check "status: state, step, time, speed, ranks, clients, file" \
  "grep -qx 'running at step 100 (t = 1), 12.5 steps/s, 2 compute ranks, 1 client' status.out && grep -qx 'writing fake.h5' status.out"
$steer pause >pause.out 2>&1
check "pause: paused at the next step boundary" "grep -qx 'paused at step 101 (t = 1.01)' pause.out"
$steer --json status >status.json 2>&1
check "--json status is the reply's JSON" "json status.json 'd[\"state\"] == \"paused\" and d[\"step\"] == 101 and d[\"ranks\"] == 2'"
$steer set physics.nu=2e-2 'boundary.xmin.velocity = [2, 0, 0.5]' >set.out 2>&1
check "set: KEY=VALUE in --set syntax, numbers and vectors" \
  "grep -qx 'boundary.xmin.velocity = \[2, 0, 0.5\], physics.nu = 0.02 from step 102 (t = 1.02) on' set.out"
$steer parameters >params.out 2>&1
check "parameters: a table with the values just set" \
  "grep -Eq '^physics.nu +0.02 +\[1e-09, 10\] +m\^2/s +kinematic viscosity$' params.out && grep -q '^boundary.xmin.velocity  *\[2, 0, 0.5\]' params.out"
$steer parameters --json >params.json 2>&1
check "parameters --json (option after the command)" \
  "json params.json '[p[\"type\"] for p in d[\"parameters\"]] == [\"vector\", \"number\"] and d[\"parameters\"][1][\"value\"] == 0.02'"
$steer branch --from t=0.05 --set physics.nu=0.5 --output fast.h5 >branch.out 2>&1
check "branch: the new file, the step and the parent" "grep -qx 'branched fast.h5 from step 5 (t = 0.05) of fake.h5' branch.out"
$steer --json branch --from latest --file fake.h5 >branch.json 2>&1
check "branch --json with the server's file name" "json branch.json 'd[\"file\"] == \"fake.branch10.h5\" and d[\"step\"] == 10'"
$steer resume >resume.out 2>&1
check "resume" "grep -q '^running at step' resume.out"

# Bad input and server errors: one line, non-zero exit.
check "a value out of range (server): one error line naming it" "one_error $steer set physics.nu=-1 && grep -q 'bad_argument: physics.nu is outside' err.out"
check "a parameter the run does not steer" "one_error $steer set physics.rho=1 && grep -q 'cannot steer physics.rho' err.out"
check "a value that is not a number" "one_error $steer set physics.nu=abc"
check "a value that is not finite" "one_error $steer set physics.nu=nan && grep -q finite err.out"
check "a vector of 2" "one_error $steer set 'boundary.xmin.velocity=[1,2]'"
check "no '='" "one_error $steer set physics.nu"
check "a key given twice" "one_error $steer set physics.nu=1 physics.nu=2"
check "set without values" "one_error $steer set"
check "no command" "one_error $steer"
check "an unknown command" "one_error $steer frobnicate"
check "branch without --from" "one_error $steer branch"
check "branch from live" "one_error $steer branch --from live"
check "branch from a step that does not exist (server)" "one_error $steer branch --from 99 && grep -q no_such_step err.out"
check "branch from an unknown file (server)" "one_error $steer branch --from latest --file other.h5 && grep -q 'no file' err.out"
check "a bad address" "one_error $rewind steer nowhere status"
check "a wrong token" "one_error $rewind steer 127.0.0.1:$port --token nope status && grep -q unauthorized err.out"
check "nobody listening" "one_error $rewind steer 127.0.0.1:1 status"
$steer stop >stop.out 2>&1
check "stop" "grep -q '^stopping at step' stop.out"
check "set after stop: conflict" "one_error $steer set physics.nu=1 && grep -q conflict err.out"
check "stop again is a no-op" "$steer stop | grep -q '^stopping'"
kill "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=

start_listener "$test_server" --offline
check "an offline server: status is unsupported, one error line" \
  "one_error $rewind steer 127.0.0.1:$port status && grep -q 'unsupported.*does not offer status' err.out"
check "... and so is pause" "one_error $rewind steer 127.0.0.1:$port pause && grep -q unsupported err.out"
exit $fail

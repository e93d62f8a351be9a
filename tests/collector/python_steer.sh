#!/usr/bin/env bash
# python/rewind/client.py's steering methods against the collector test server.
#   python_steer.sh TEST_SERVER SOURCE_DIR PYTHON
set -u
test_server=$1 src=$2 py=$3
. "$src/tests/collector/serve_util.sh"
in_tmpdir
start_listener "$test_server" --token pytok
live=$port live_pid=$server_pid
start_listener "$test_server" --offline
[ -n "$live" ] && [ -n "$port" ] || { echo "FAIL the test servers did not start"; kill "$live_pid"; exit 1; }
"$py" "$src/tests/collector/python_steer_check.py" "$src" "$live" pytok "$port"
rc=$?
kill "$live_pid"
exit $rc

# Sourced by the plugin tests (needs $src): skip (77) without pvpython / Xvfb; then the
# collector tests' helpers (check, start_listener, start_serve, in_tmpdir: a fresh
# directory, removed on exit with the server stopped) and pv SCRIPT ARGS...: pvpython
# under Xvfb with a time limit; start_dir, where the test started (for artifacts). Background helpers whose pids are in extra_pids are
# killed on exit too.
command -v pvpython >/dev/null 2>&1 || { echo "pvpython not found: skipping"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || { echo "Xvfb not found: skipping"; exit 77; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
start_dir=$PWD  # where ctest runs the test: artifacts (screenshots) are copied there
. "$src/tests/collector/serve_util.sh"
in_tmpdir
extra_pids=
trap 'for p in $server_pid $extra_pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
pv() { timeout "${PV_TIMEOUT:-60}" "$src/scripts/headless.sh" pvpython "$@"; }
# start_live_run FILE: `mpiexec -n 4 rewind run --listen 127.0.0.1:0` of the default case
# (2 compute ranks, a checkpoint every 0.02) writing $tmp/FILE; sets port and server_pid
# (start_listener), or fails the test (needs rewind and mpiexec set).
start_live_run() {
  LISTEN_WAIT=30 start_listener "$mpiexec" -n 4 "$rewind" run "$src/cases/default.toml" --output "$tmp/$1" \
    --set time.end=30 --set output.checkpoint_interval=0.02 --set output.visualisation_interval=0 -q --listen 127.0.0.1:0
  check "the run's collector prints its address" "[ -n '$port' ]"
  [ -n "$port" ] || { cat serve.log; exit 1; }
}

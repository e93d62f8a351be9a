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

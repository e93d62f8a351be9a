# Shared by the tests/apps/cli_*.sh scripts: `source "$(dirname "$0")/lib.sh" "$@"`.
# Arguments: the rewind binary, the source tree and (for MPI tests) mpiexec. Sets
# $rewind, $src, $mpiexec, $fail; works in a temporary folder removed on exit;
# check LABEL CONDITION prints ok/FAIL and remembers a failure (exit $fail at the end).
set -u
rewind=$(realpath "$1") src=$(realpath "$2") mpiexec=${3:-mpiexec}
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
. "$src/tests/support/check.sh"  # check LABEL CONDITION
# run_compute N ARGS...: `rewind run ARGS` on N compute ranks (alone for 1, else under
# mpiexec with N + 1 processes: rank 0 is the neighbourhood server), output appended to ./log.
run_compute() {
  local n=$1; shift
  if [ "$n" = 1 ]; then "$rewind" run "$@" >>log 2>&1
  else "$mpiexec" -n $((n + 1)) "$rewind" run "$@" >>log 2>&1; fi
}
# same A B: `rewind diff --all-cells A B` finds every value bit-for-bit equal, solid cells too.
same() { "$rewind" diff --all-cells "$1" "$2" >diff.out 2>&1 && grep -q '^identical' diff.out; }
# lod_ok FILE [--step N | --window W.json ...]: the h5py + numpy oracle (no Rewind code)
# finds every parent grid of every committed step equal to the average of its leaves —
# `same` alone compares Rewind with Rewind, which agree even when both are stale.
lod_ok() { /usr/bin/python3 "$src/tests/support/lod_oracle.py" "$@" >oracle.out 2>&1 || { head -3 oracle.out; return 1; }; }
# listen_port LOG NAME: the port a code adopting the C API (or its collector rank) printed
# ("NAME: listening on port P", "rewind live: listening on HOST:P"), waiting up to 30 s.
listen_port() {
  local p
  for _ in $(seq 300); do
    p=$(sed -n -e "s/.*$2: listening on port \([0-9]*\).*/\1/p" -e "s/.*rewind live: listening on [^:]*:\([0-9]*\).*/\1/p" "$1")
    [ -n "$p" ] && { echo "$p"; return; }
    sleep 0.1
  done
}

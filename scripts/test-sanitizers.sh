#!/usr/bin/env bash
# The fast unit and MPI tests again under sanitizers (scripts/test.sh runs it after the
# suite; REWIND_SANITIZERS=0 skips it there):
#   asan-ubsan  AddressSanitizer + UndefinedBehaviorSanitizer: the kernel's tests (its
#               helper threads, dedicated I/O ranks), the collector's corpus and codec, the
#               live link's, and the pure modules' (window, spacetree, config, and wire
#               through the neighbourhood server's messages), on 1 and 2 ranks (not
#               collector_server_tests, whose resident memory check fails under ASan's quarantine)
#   tsan        ThreadSanitizer: the kernel tests whose code starts threads (hash and
#               writeback helpers, dedicated I/O ranks) on 1 rank (the collector's server
#               test is left out: its sub-second latency checks fail at TSan's speed)
#   scripts/test-sanitizers.sh [asan-ubsan|tsan]...   (default: both)
# Each is a preset of CMakePresets.json (build-asan-ubsan/, build-tsan/): its build preset
# names the test programs, its test preset the tests and the sanitizers' options;
# suppressions for the uninstrumented MPI and HDF5 libraries are in tests/sanitizers/.
# REWIND_CMAKE_ARGS is added to the configure step (e.g. a ccache launcher).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/mpi-env.sh

run() {
  local p=$1 t0=$SECONDS
  echo "test-sanitizers: $p: configure and build (build-$p)"
  cmake --preset "$p" ${REWIND_CMAKE_ARGS:-} >"build-$p.configure.log" 2>&1 \
    || { cat "build-$p.configure.log"; echo "test-sanitizers: $p: cmake configure failed (log above)"; exit 1; }
  cmake --build --preset "$p" -j "$(nproc)"
  echo "test-sanitizers: $p: built in $((SECONDS - t0)) s"
  ctest --preset "$p" -j "$(nproc)" ${REWIND_CTEST_ARGS:-}
  echo "test-sanitizers: $p: built and tested in $((SECONDS - t0)) s"
}

which=("$@")
[ ${#which[@]} -gt 0 ] || which=(asan-ubsan tsan)
for w in "${which[@]}"; do
  case $w in
    asan-ubsan | tsan) run "$w" ;;
    *) echo "test-sanitizers: unknown pass '$w' (asan-ubsan or tsan)"; exit 2 ;;
  esac
done

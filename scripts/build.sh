#!/usr/bin/env bash
# Configure and build Rewind into ${REWIND_BUILD_DIR:-build} (Release, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${REWIND_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} ${REWIND_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; echo "build: cmake configure failed (log above)"; exit 1; }
grep -E 'ParaView|plugin' "$build.configure.log" || true
cmake --build "$build" -j "$(nproc)"

#!/usr/bin/env bash
# One command: install what is missing, build, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
. scripts/mpi-env.sh
ctest --test-dir "${REWIND_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" ${REWIND_CTEST_ARGS:-}

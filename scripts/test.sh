#!/usr/bin/env bash
# One command: install what is missing, build (warnings are errors), run the whole test
# suite, the fast tests again under ASan+UBSan and TSan (scripts/test-sanitizers.sh;
# REWIND_SANITIZERS=0 skips them), and report how the last commit's lines differ from
# .clang-format (scripts/check-format.sh --report: it never fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
REWIND_CMAKE_ARGS="-DREWIND_WARNINGS_AS_ERRORS=ON ${REWIND_CMAKE_ARGS:-}" scripts/build.sh
. scripts/mpi-env.sh
ctest --test-dir "${REWIND_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" ${REWIND_CTEST_ARGS:-}
if [ "${REWIND_SANITIZERS:-1}" != 0 ]; then scripts/test-sanitizers.sh; fi  # ~8 min on 2 cores
if git rev-parse -q --verify HEAD~1 >/dev/null 2>&1; then scripts/check-format.sh --report HEAD~1; fi

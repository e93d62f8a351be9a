#!/usr/bin/env bash
# One command: install what is missing, build (warnings are errors), check the change's
# lines against .clang-format and .clang-tidy (BASE from scripts/change-base.sh; a few
# seconds and a few minutes), run the whole test suite (which checks function and file
# sizes: scripts/check-sizes.py), then the fast tests again under ASan+UBSan and TSan
# (scripts/test-sanitizers.sh; REWIND_SANITIZERS=0 skips them). A failed check fails the
# run at its end, after the tests have run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
REWIND_CMAKE_ARGS="-DREWIND_WARNINGS_AS_ERRORS=ON ${REWIND_CMAKE_ARGS:-}" scripts/build.sh
failed=()
if base=$(scripts/change-base.sh); then
  scripts/check-format.sh "$base" || failed+=(check-format)
  scripts/check-tidy.py "$base" || failed+=(check-tidy)
else
  echo "test: no commit before HEAD: the format and tidy checks of a change are skipped"
fi
. scripts/mpi-env.sh
ctest --test-dir "${REWIND_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" ${REWIND_CTEST_ARGS:-}
if [ "${REWIND_SANITIZERS:-1}" != 0 ]; then scripts/test-sanitizers.sh; fi  # ~8 min on 2 cores
if [ ${#failed[@]} -gt 0 ]; then echo "test: failed: ${failed[*]} (output above)"; exit 1; fi

#!/usr/bin/env bash
# Reports C/C++ code that differs from .clang-format.
#   scripts/check-format.sh BASE      the lines changed since BASE (a commit or branch,
#                                     e.g. main): prints the reformatting diff; exit 1 if any
#                                     (what scripts/test.sh runs: the tree predates .clang-format
#                                     and is not reformatted in one go, so only changed lines count)
#   scripts/check-format.sh           every tracked file: lists the files that differ; exit 1 if any
# Fix what it reports with `git clang-format-14 --binary clang-format-14 BASE` (only the lines you changed).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-}
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then echo "check-format: clang-format not installed (apt-get install clang-format-14)"; exit 2; fi
ext='\.(c|h|cpp|hpp)$'
bad=0
if [ -n "$base" ]; then
  if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
    echo "check-format: '$base' is not a commit here"; exit 2
  fi
  gcf=$(command -v git-clang-format-14 || command -v git-clang-format)
  out=$("$gcf" --binary "$cf" --extensions c,h,cpp,hpp --diff "$base" -- 2>&1) || true
  if printf '%s\n' "$out" | grep -q '^@@'; then
    printf '%s\n' "$out"
    n=$(printf '%s\n' "$out" | grep -c '^+++ ' || true)
    echo "check-format: lines changed since $base differ from .clang-format in $n file(s) (diff above; fix: git clang-format-14 --binary clang-format-14 $base)"
    bad=1
  else
    echo "check-format: the lines changed since $base follow .clang-format"
  fi
else
  mapfile -t files < <(git ls-files | grep -E "$ext" || true)
  differ=()
  for f in "${files[@]}"; do
    "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || differ+=("$f")
  done
  if [ ${#differ[@]} -gt 0 ]; then
    printf '  %s\n' "${differ[@]}"
    echo "check-format: ${#differ[@]} of ${#files[@]} files differ from .clang-format (listed above)"
    bad=1
  else
    echo "check-format: all ${#files[@]} files follow .clang-format"
  fi
fi
exit "$bad"

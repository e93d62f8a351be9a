#!/usr/bin/env bash
# Prints the commit a change is checked against (scripts/check-format.sh, check-tidy.py):
#   REWIND_CHANGE_BASE if set; else the merge-base with origin/main when HEAD is not on it
#   (a branch); else HEAD~1 (main itself, or a clone without origin/main: the last commit,
#   a merge's first parent). Exit 1, printing nothing, when there is none (one commit).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${REWIND_CHANGE_BASE:-}" ]; then echo "$REWIND_CHANGE_BASE"; exit 0; fi
if mb=$(git merge-base HEAD origin/main 2>/dev/null) && [ "$mb" != "$(git rev-parse HEAD)" ]; then
  echo "$mb"; exit 0
fi
git rev-parse -q --verify HEAD~1 || exit 1

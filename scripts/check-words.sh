#!/usr/bin/env bash
# Source and test comments name things by what they are, not by the issue or review
# round that asked for them ("issue 55, item 8" means nothing to a newcomer and rots when
# the tracker moves): fails on an issue number in a tracked source, script or CMake file.
# Docs and bench histories may cite issues. Exit 77 (skipped) outside a git work tree.
#   scripts/check-words.sh           (the ctest `words_check` runs this)
set -u
cd "$(dirname "$0")/.." || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "check-words: not a git work tree: skipped"; exit 77; }
hits=$(git grep -nIE '\b[Ii]ssues? #?[0-9]+' -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cxx' '*.f90' '*.py' '*.sh' \
  '*.cmake' '*CMakeLists.txt' '*.toml' '*.xml' ':!scripts/check-words.sh')
if [ -n "$hits" ]; then
  echo "$hits"
  echo "check-words: $(echo "$hits" | wc -l) line(s) cite an issue number: say what the code or test is instead"
  exit 1
fi
echo "check-words: no source line cites an issue number"

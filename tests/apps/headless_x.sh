#!/usr/bin/env bash
# scripts/headless.sh keeps pvpython's X connection when renders start together: 3 at a
# time, twice, every one renders on its first server (no "lost the X connection"
# retry). Without -noreset ParaView's probe connection let the server reset under the
# real one: 7 of 12 such renders lost it (and xvfb-run -a 2 in 12 one at a time).
#   headless_x.sh REWIND SOURCE_DIR   (exit 77: skipped without pvpython or Xvfb)
command -v pvpython >/dev/null && command -v Xvfb >/dev/null || { echo "skip: no pvpython/Xvfb"; exit 77; }
source "$(dirname "$0")/lib.sh" "$@"
cat >pv.py <<'PY'
import sys
from paraview.simple import Render, SaveScreenshot, Show, Sphere
Show(Sphere())
Render()
SaveScreenshot(sys.argv[1], ImageResolution=[200, 100])
PY
for round in 1 2; do
  for j in 1 2 3; do
    ( timeout 120 "$src/scripts/headless.sh" pvpython pv.py r$round$j.png >r$round$j.out 2>&1; echo $? >r$round$j.rc ) &
  done
  wait
done
check "6 renders, 3 at a time: all exit 0 with their PNG" \
  "[ \$(cat r*.rc | grep -cx 0) = 6 ] && [ \$(ls r*.png | wc -l) = 6 ]"
check "... none lost its X connection (no retry)" "! grep -l 'lost the X connection\|bad X server' r*.out"
exit $fail

#!/usr/bin/env bash
# The README's main command, scripts/demo.sh (the paper's Fig. 8 story), run the way a
# user runs it but short: branches at t = 0.1 from a run to t = 0.2, and without the
# install and build steps. Checks what the user is shown and what the files hold:
#  - live windows while the run goes (the zoom comes back on a finer level);
#  - both branches made inside the job: lineage names base.h5, the step and the change;
#    their first step is base.h5's at the branch time, bit for bit, and the faster
#    inflow's last step equals a `rewind run --restart ... --set` branch of the same step;
#  - the drag/lift plot of the three timelines, and Fig. 8 through the plugin (when
#    the plugin is built), whose t = 0.1 panels are identical and t = 0.2 ones not.
#   demo_fig8.sh REWIND SOURCE_DIR MPIEXEC [PLUGIN.so]
source "$(dirname "$0")/lib.sh" "$@"
plugin=${4:-}
py=/usr/bin/python3
REWIND_DEMO_SETUP=0 REWIND_DEMO_TIMES="0.1 0.2" REWIND_DEMO_DIR="$tmp/demo" REWIND_BIN="$rewind" \
  REWIND_PLUGIN="$plugin" bash "$src/scripts/demo.sh" >demo.log 2>&1
rc=$?
check "scripts/demo.sh runs the story to the end (exit 0)" "[ $rc = 0 ]"
[ $rc = 0 ] || tail -30 demo.log
cd demo || exit 1
check "it shows live windows while the run goes, the zoom on a finer level" \
  "$py - ../demo.log <<'PYEOF'
import re, sys
levels = [int(m) for m in re.findall(r'of base.h5: level (\d+)', open(sys.argv[1]).read())]
assert len(levels) >= 2 and levels[1] > levels[0], levels
PYEOF"
# The whole channel comes back on a coarse level (2): it must show the flow of that
# step, not the initial state (u = 1 everywhere, p = 0) that coarse levels once kept.
check "the whole-channel live window (level 2) shows the developing flow: u above the initial 1, p not 0" \
  "$py - ../demo.log <<'PYEOF'
import re, sys
log = open(sys.argv[1]).read()
m = re.search(r'of base.h5: level 2, .*\n\s*range over fluid cells: u (\S+)\.\.(\S+), v \S+, p (\S+)\.\.(\S+)', log)
assert m, 'no level-2 window with its ranges in the log'
u_hi, p_lo, p_hi = float(m.group(2)), float(m.group(3)), float(m.group(4))
assert u_hi > 1.05 and p_hi - p_lo > 0.1, m.group(0)
PYEOF"
"$rewind" lineage base.h5 >lineage.out 2>&1
check "lineage: both branches from base.h5 at t = 0.1 with their changes" \
  "grep -q 'fast.h5.*t=0.1.*boundary.xmin.velocity=\[2.25, 0, 0\]' lineage.out && grep -q 'tilted.h5.*t=0.1.*boundary.xmin.velocity=\[1.5, 0.45, 0\]' lineage.out"
check "each branch starts from base.h5's step at t = 0.1, bit for bit" \
  "'$rewind' diff base.h5@t=0.1 fast.h5@#0 >d1.out && '$rewind' diff base.h5@t=0.1 tilted.h5@#0 >d2.out"
"$rewind" diff base.h5@t=0.2 fast.h5@t=0.2 >d3.out 2>&1
check "... and ends elsewhere (the change took effect)" "[ $? = 1 ] && grep -q '^A  base.h5' d3.out"
"$rewind" run --restart base.h5@t=0.1 --set 'boundary.xmin.velocity=[2.25, 0, 0]' --output cli-fast.h5 -q >cli.log 2>&1
check "the in-job branch equals a command-line branch of the same step, bit for bit" \
  "'$rewind' diff fast.h5@t=0.2 cli-fast.h5@t=0.2 >d4.out 2>&1"
check "... and both could be stale: every parent of the three timelines is its leaves' average (h5py oracle)" \
  "lod_ok base.h5 && lod_ok fast.h5 && lod_ok tilted.h5"
check "the drag/lift plot of the three timelines is written" "[ -s fig8-monitors.png ]"
if [ -n "$plugin" ]; then
  check "Fig. 8 is written: three timelines x two times" \
    "$py -c \"import matplotlib.pyplot as plt, sys; h, w, _ = plt.imread('fig8.png').shape; sys.exit(0 if h > 600 and w > 1200 else 1)\""
  # The panels as ParaView rendered them (one colour scale): at the branch time the
  # three timelines are one state; at the end the faster inflow looks different.
  "$src/scripts/headless.sh" pvpython "$src/scripts/render_fig8.py" "$plugin" -o again.png --panels panels \
    --files base.h5 fast.h5 tilted.h5 --times 0.1,0.2 >render.out 2>&1
  check "Fig. 8 through the plugin: identical panels at t = 0.1, a different one for the faster inflow at t = 0.2" \
    "$py - <<'PYEOF'
import matplotlib.pyplot as plt
import numpy as np
p = {(r, c): plt.imread(f'panels/{r}-{c}.png') for r in range(3) for c in range(2)}
assert np.array_equal(p[0, 0], p[1, 0]) and np.array_equal(p[0, 0], p[2, 0]), 'branch-time panels differ'
assert np.abs(p[0, 1] - p[1, 1]).mean() > 0.01, 'the faster inflow looks like the base run'
assert p[0, 0][..., :3].std() > 0.05, 'a blank panel'
PYEOF"
else
  echo "skip Fig. 8 (no plugin built)"
fi
exit $fail

#!/usr/bin/env bash
# The README's main command, scripts/demo.sh (the paper's Fig. 8 story), run the way a
# user runs it but short: two futures forked at t = 0.1 from a run to t = 0.2, and
# without the install and build steps. Checks what the user is shown and what the files
# hold:
#  - live windows while the run goes (the zoom comes back on a finer level);
#  - ONE steering command forked both futures and ONE job computed them together: one
#    "forked 2 futures" line; both files' lineage (h5py) names base.h5 and that step,
#    each with its change; the job's log restarts both from that step and reports
#    their steps; their live windows were taken while both were under way, and drawn;
#  - each future equals, bit for bit (h5py, grids by UID), `rewind run --restart
#    base.h5@t=0.1 --set ...` of its change on another rank count (1, not 2);
#  - the drag/lift plot from the futures' own CSVs, whose kinetic energy at every
#    checkpoint is what h5py + numpy compute from that step's leaves, and Fig. 8 through
#    the plugin (when built), whose t = 0.1 panels are identical and t = 0.2 ones not.
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
check "lineage: both futures from base.h5 at t = 0.1 with their changes" \
  "grep -q 'fast.h5.*t=0.1.*boundary.xmin.velocity=\[2.25, 0, 0\]' lineage.out && grep -q 'tilted.h5.*t=0.1.*boundary.xmin.velocity=\[1.5, 0.45, 0\]' lineage.out"
fork=$(sed -n 's/^forked 2 futures from step \([0-9]*\) (t = 0.1) of base.h5: fast.h5, tilted.h5$/\1/p' ../demo.log)
check "one steering command forked both futures (one 'forked 2 futures' line, no lone branch)" \
  "[ -n '$fork' ] && [ \$(grep -c '^forked ' ../demo.log) = 1 ] && ! grep -q '^branched ' ../demo.log"
check "both files' lineage (h5py) names base.h5 and the one step the fork said ($fork, t = 0.1)" \
  "$py - $fork <<'PYEOF'
import sys
import h5py
for name, change in [('fast.h5', 'boundary.xmin.velocity=[2.25, 0, 0]'), ('tilted.h5', 'boundary.xmin.velocity=[1.5, 0.45, 0]')]:
    with h5py.File(name, 'r') as f:
        l = f['common/lineage']
        changes = [c.decode() if isinstance(c, bytes) else c for c in l['changes'][()]]
        assert l.attrs['parent_file'] in (b'base.h5', 'base.h5'), (name, l.attrs['parent_file'])
        assert int(l.attrs['parent_step']) == int(sys.argv[1]) and l.attrs['parent_time'] == 0.1, (name, dict(l.attrs))
        assert changes == [change], (name, changes)
PYEOF"
check "one job computed both: its log restarts both from step $fork, writes steps of each, then one 'done:'" \
  "$py - $fork <<'PYEOF'
import re, sys
log = open('run.log').read().splitlines()
restarts = [l for l in log if l.startswith('restart ')]
assert restarts == [f'restart     from base.h5 step {sys.argv[1]} (t = 0.1)'] * 2, restarts
# each future's output lines: its branch point and its step at t = 0.2 (progress lines
# come every few seconds, so how many there are depends on the machine's speed)
who = [m.group(1) for l in log if (m := re.match(r'output +\w+ step \d+ t = [\d.]+ -> (fast|tilted)\.h5: ', l))]
assert who.count('fast') >= 2 and who.count('tilted') >= 2, who
assert sum(l.startswith('done:') for l in log) == 1
PYEOF"
check "the futures' live windows were taken while both were under way, and drawn side by side" \
  "$py - $fork <<'PYEOF'
import json, sys
import matplotlib.pyplot as plt
w = {n: json.load(open(f'live-{n}.json')) for n in ('fast', 'tilted')}
for n, x in w.items():
    assert x['file'].endswith(n + '.h5') and int(sys.argv[1]) < x['step'] and 0.1 < x['time'] < 0.2, (n, x['step'], x['time'])
assert w['fast']['values'] != w['tilted']['values']
h, wd, _ = plt.imread('futures-live.png').shape
assert wd > 800 and h > 400, (h, wd)
PYEOF"
"$rewind" run --restart base.h5@t=0.1 --set 'boundary.xmin.velocity=[2.25, 0, 0]' --output cli-fast.h5 -q >cli.log 2>&1
"$rewind" run --restart base.h5@t=0.1 --set 'boundary.xmin.velocity=[1.5, 0.45, 0]' --output cli-tilted.h5 -q >>cli.log 2>&1
check "each future starts from base.h5's step at t = 0.1, bit for bit" \
  "'$rewind' diff base.h5@t=0.1 fast.h5@#0 >d1.out && '$rewind' diff base.h5@t=0.1 tilted.h5@#0 >d2.out"
same_steps() { $py "$src/tests/collector/same_steps.py" "$1" "$2" --parent base.h5 --step "$fork" --changes "$3" >>same.out 2>&1; }
check "each future equals its branch alone on 1 rank, every step bit for bit (h5py)" \
  "same_steps fast.h5 cli-fast.h5 'boundary.xmin.velocity=[2.25, 0, 0]' && same_steps tilted.h5 cli-tilted.h5 'boundary.xmin.velocity=[1.5, 0.45, 0]'" ||
  { tail -3 same.out; tail -3 cli.log; }
"$rewind" diff base.h5@t=0.2 fast.h5@t=0.2 >d3.out 2>&1
check "... and ends elsewhere than the base run (the change took effect)" "[ $? = 1 ] && grep -q '^A  base.h5' d3.out"
check "... and both could be stale: every parent of the three timelines is its leaves' average (h5py oracle)" \
  "lod_ok base.h5 && lod_ok fast.h5 && lod_ok tilted.h5"
check "the drag/lift plot of the run and its futures is written" "[ -s fig8-monitors.png ]"
# The plot's data: each timeline's own CSV (the futures' start at the fork) holds, at
# each checkpoint of its file, the kinetic energy of that step's leaves (h5py + numpy:
# 1/2 |u|^2 over fluid cells times the cell area).
check "... from each future's own CSV: at every checkpoint, the kinetic energy of its file's step (h5py)" \
  "$py - $fork <<'PYEOF'
import csv, sys
import h5py
import numpy as np
def energy(g):
    children, box, types = g['child_rows'][:], g['bounding_box'][:], g['cell_type'][:]
    u, v = g['cell_data/u'][:], g['cell_data/v'][:]
    e = 0.0
    for r in np.flatnonzero((children < 0).all(axis=1)):
        _, ny, nx = u[r].shape
        area = (box[r][1] - box[r][0]) / nx * (box[r][3] - box[r][2]) / ny
        e += 0.5 * ((u[r] ** 2 + v[r] ** 2) * (types[r] != 1)).sum() * area
    return e
for h5, name in [('base.h5', 'base.csv'), ('fast.h5', 'fast.monitor.csv'), ('tilted.h5', 'tilted.monitor.csv')]:
    rows = list(csv.DictReader(l for l in open(name) if not l.startswith('#')))
    ke = {int(r['step']): float(r['kinetic_energy']) for r in rows}
    with h5py.File(h5, 'r') as f:
        steps = [g for k, g in f['simulation'].items() if k.startswith('step_') and g.attrs['kind'] in (b'checkpoint', 'checkpoint')]
        assert len(steps) >= 2, h5
        for g in steps:
            s = int(g.attrs['step'])
            assert abs(ke[s] - energy(g)) <= 1e-8 * ke[s], (name, s, ke.get(s), energy(g))
    if h5 != 'base.h5':
        assert int(rows[0]['step']) == int(sys.argv[1]), (name, rows[0]['step'])
PYEOF"
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

#!/usr/bin/env bash
# Per-grid statistics (format 1.9, docs/file-format.md §3 "Statistics") and per-octant
# shares (1.10), as a user's run writes them under mpirun: every step's statistics/<var>
# and shares/<var> equal what h5py and numpy compute from the stored cells
# (tests/support/statistics_oracle.py: min and max over non-solid cells, the detail from
# the children and their prolonged parent, each child's octants' shares of it; the blocks
# here, 44x8x1 and 16^3, have shares) on a uniform 2-D tree,
# an adaptive one and a 3-D one, on 1, 2 and 3 compute ranks (children and parents on other
# ranks than each other), with float32 visualisation steps, written by dedicated I/O ranks
# and with deflate — by default (output.io.statistics = true); with it false none are
# written and the file still reads;
# the statistics and shares are no variable (info, diff, Python) and are checksummed (verify
# finds a flipped byte in them); Python's Step.range is numpy's range of the cells.
#   cli_statistics.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
oracle() { /usr/bin/python3 "$src/tests/support/statistics_oracle.py" "$@" >stats.out 2>&1 || { head -5 stats.out; return 1; }; }
base=(--steps 10 --set output.checkpoint_every=5 --set output.visualisation_every=5)
short=("${base[@]}")  # statistics by default

for n in 1 2 3; do
  run_compute $n "$src/cases/cylinder-2d1.toml" -o uni$n.h5 "${short[@]}" --set output.float32=true -q || { tail -5 log; exit 1; }
  check "uniform 2-D tree on $n compute rank(s): the statistics and shares of every step are numpy's" "oracle uni$n.h5 --min-parents 5"
  run_compute $n "$src/cases/cylinder-2d1-adaptive.toml" -o ada$n.h5 "${short[@]}" -q || { tail -5 log; exit 1; }
  check "adaptive 2-D tree on $n compute rank(s): the same" "oracle ada$n.h5 --min-parents 5"
done
run_compute 2 "$src/cases/cavity-3d.toml" -o cube.h5 --steps 4 --set output.checkpoint_every=2 --set output.visualisation_every=2 \
  -q ||
  { tail -5 log; exit 1; }
check "3-D tree on 2 compute ranks: the same" "oracle cube.h5 --min-parents 2"
"$mpiexec" -n 4 "$rewind" run "$src/cases/cylinder-2d1.toml" -o ded.h5 "${short[@]}" -q \
  --set 'output.io.strategy="dedicated"' --set 'output.io.compression="deflate"' >>log 2>&1 || { tail -5 log; exit 1; }
check "dedicated I/O rank with deflate: the same" "oracle ded.h5 --min-parents 5"
# The writer takes the statistics as it packs a grid's rows (above), as it hashes them for a
# zero-copy write, or, where nothing reads them (zero copy without checksums), after the data.
run_compute 2 "$src/cases/cylinder-2d1-adaptive.toml" -o zc.h5 "${short[@]}" --set output.io.zero_copy_halo=true -q ||
  { tail -5 log; exit 1; }
check "zero-copy write on 2 compute ranks (statistics taken as the rows are hashed): the same" "oracle zc.h5 --min-parents 5"
run_compute 3 "$src/cases/cylinder-2d1-adaptive.toml" -o zcn.h5 "${short[@]}" --set output.io.zero_copy_halo=true \
  --set output.io.checksums=false -q || { tail -5 log; exit 1; }
check "zero-copy write without checksums on 3 compute ranks (statistics taken after the data): the same" \
  "oracle zcn.h5 --min-parents 5"

run_compute 2 "$src/cases/cylinder-2d1.toml" -o off.h5 "${base[@]}" --set output.float32=true --set output.io.statistics=false -q ||
  { tail -5 log; exit 1; }
check "output.io.statistics = false: no statistics stored" "oracle off.h5 --expect-none"
check "... the cells are those of the run with statistics, and both verify" \
  "same uni2.h5@10 off.h5@10 && $rewind verify off.h5 >/dev/null && $rewind verify uni2.h5 >/dev/null"
box_of() { /usr/bin/python3 -c "
import h5py, sys
s = h5py.File(sys.argv[1], 'r')['/simulation']
b = s[[k for k in s if k.startswith('step_')][0]]['bounding_box'][0]  # the root's box: the domain
print(','.join(repr(float(v)) for v in (b[0], b[2], b[4], b[1], b[3], b[5])))" "$1"; }
check "... and a window of it reads, adaptive asked: answered uniform (no statistics), says so" \
  "$rewind window off.h5 --box $(box_of off.h5) --budget 2000 --lod adaptive --out off.json >off.out &&
   ! grep -q adaptive off.out && grep -q '\"lod\": *\"uniform\"' off.json"

# Adaptive windows from the statistics (rewind window --lod adaptive): over a sweep of
# budgets, within the budget, the file's cells bit for bit, and an error against the
# leaves (h5py + numpy, tests/support/window_error_oracle.py) never above the uniform one's.
sweep() {  # sweep FILE [STEP [BOX [BUDGETS]]]: each budget, the box (default: the whole domain), variable u
  local f=$1 at=${2:-10} box=${3:-$(box_of "$1")} b
  for b in ${4:-300 600 1200 2400 4800 9600 19200}; do
    "$rewind" window "$f@$at" --box "$box" --budget $b --vars u --out u$b.json >/dev/null &&
      "$rewind" window "$f@$at" --box "$box" --budget $b --vars u --lod adaptive --out a$b.json >/dev/null &&
      /usr/bin/python3 "$src/tests/support/window_error_oracle.py" "$f" u$b.json a$b.json $b "$box" >>sweep.out 2>&1 ||
      { tail -3 sweep.out; return 1; }
  done
}
wake=0.25,0.1,0,1.25,0.31,0  # behind the cylinder (docs/benchmarks.md's quality table)
check "adaptive windows of the uniform tree: within budget, the file's cells, never worse than uniform" "sweep uni2.h5"
grep budget sweep.out | sed 's/^/uniform tree, whole domain: /'
check "... the same in the wake box" "sweep uni2.h5 10 $wake"
grep budget sweep.out | tail -7 | sed 's/^/uniform tree, wake: /'
check "adaptive windows of the adaptive tree: the same" "sweep ada2.h5"
grep budget sweep.out | tail -7 | sed 's/^/adaptive tree, whole domain: /'
# Python computes its own adaptive windows from the file (Step.window, RunFile.window):
# the pieces and values rewind window answered (the last sweep's), cold (row by row) and
# with the topology read.
python_same() {  # python_same BOX
  PYTHONPATH=$src/python /usr/bin/python3 - ada2.h5 "$1" <<'PY'
import json, sys, numpy as np, rewind
run = rewind.open(sys.argv[1])
box = np.array([float(v) for v in sys.argv[2].split(',')]).reshape(2, 3)
for b in (1200, 4800, 9600, 19200):
    want = json.load(open(f'a{b}.json'))
    for warm in (False, True):
        step = run.step(10)
        if warm:
            step.topology
        w = run.window(box, b, ['u'], step=step, lod='adaptive') if warm else step.window(box, b, ['u'], lod='adaptive')
        assert w.lod == 'adaptive', w.lod
        rows = [p['row'] for p in w.pieces]
        assert rows == [p['row'] for p in want['pieces']], (b, warm, rows[:8])
        assert np.array_equal(w.values['u'], np.asarray(want['values'][0])), (b, warm)
    assert run.step(10).window(box, b, ['u']).lod == 'uniform'
try:
    run.step(10).window(box, 100, ['u'], lod='fine')
    raise SystemExit('lod=fine accepted')
except rewind.InvalidArgument as e:
    assert 'fine' in str(e), e
PY
}
check "Python Step.window(lod=\"adaptive\"): rewind window's pieces and values, cold and warm; bad lod refused" \
  "python_same $(box_of ada2.h5)"
check "... the same in the wake box" "sweep ada2.h5 10 $wake && python_same $wake"
grep budget sweep.out | tail -7 | sed 's/^/adaptive tree, wake: /'
check "adaptive windows of the 3-D tree: the same" "sweep cube.h5 4 '' '500 1000 2000 4000 8000 16000 32000 64000'"
grep budget sweep.out | tail -8 | sed 's/^/3-D tree, whole domain: /'
check "the statistics and shares are no variable: info lists u, v, p only" \
  "$rewind info uni2.h5 --json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); s=json.dumps(d); assert \"statistics\" not in s and \"shares\" not in s, s[:300]'"

# Checksummed: one value of a statistics or shares row changed by one ulp is found by verify, named.
flip() {  # flip OUT DATASET ROW COLUMN: a copy of uni2.h5 with that value one ulp up
  /usr/bin/python3 - uni2.h5 "$@" <<'PY'
import h5py, shutil, sys, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    d, row, col = f["/simulation/step_00000010/" + sys.argv[3]], int(sys.argv[4]), int(sys.argv[5])
    v = d[row]
    v[col] = np.nextafter(v[col], np.inf)
    d[row] = v
PY
}
flip flipped.h5 statistics/u 3 2
"$rewind" verify flipped.h5 >verify.out 2>&1
check "a statistics row changed by one ulp: verify fails and names it" \
  "[ $? != 0 ] && grep -q 'statistics/u' verify.out"
flip flipped-shares.h5 shares/p 5 1
"$rewind" verify flipped-shares.h5 >verify.out 2>&1
check "a shares row changed by one ulp: verify fails and names it" \
  "[ $? != 0 ] && grep -q 'shares/p' verify.out && ! grep -q 'statistics/' verify.out"

check "Python: Step.statistics is the stored array, Step.range numpy's range of the non-solid cells" \
  "PYTHONPATH=$src/python /usr/bin/python3 - uni2.h5 <<'PY'
import sys, h5py, numpy as np, rewind
run = rewind.open(sys.argv[1])
for step in (run.step(5), run.step(10)):
    g = h5py.File(sys.argv[1], 'r')[f'/simulation/step_{step.number:08d}']
    for var in ('u', 'p'):
        cells = g[f'cell_data/{var}'][()].astype(float)[g['cell_type'][()] != 1]
        assert step.range(var) == (cells.min(), cells.max()), (step.range(var), cells.min(), cells.max())
        assert np.array_equal(step.statistics(var), g[f'statistics/{var}'][()], equal_nan=True)
    assert 'statistics' not in step.fields and 'shares' not in step.fields, step.fields
off = rewind.open('off.h5').step(10)
assert off.statistics('u') is None
g = h5py.File('off.h5', 'r')['/simulation/step_00000010']
cells = g['cell_data/u'][()][g['cell_type'][()] != 1]
assert off.range('u') == (cells.min(), cells.max())
PY"
# rewind info --json: each step's range of every variable from its statistics, equal to
# numpy's range of the stored non-solid cells (h5py); null for a step that stores none.
check "info --json: every step's ranges are numpy's range of its non-solid cells; none without statistics" \
  "$rewind info uni2.h5 --json >info.json && $rewind info off.h5 --json >off-info.json && /usr/bin/python3 - <<'PY'
import json, h5py, numpy as np
info = json.load(open('info.json'))
f = h5py.File('uni2.h5', 'r')
assert len(info['steps']) >= 3, len(info['steps'])
for s in info['steps']:
    g = f[f'/simulation/step_{s[\"step\"]:08d}']
    assert sorted(s['ranges']) == sorted(s['variables']), (s['ranges'], s['variables'])
    for var, (lo, hi) in s['ranges'].items():
        cells = g[f'cell_data/{var}'][()].astype(float)[g['cell_type'][()] != 1]
        assert (lo, hi) == (cells.min(), cells.max()), (s['step'], var, lo, hi, cells.min(), cells.max())
assert all(s['ranges'] is None for s in json.load(open('off-info.json'))['steps'])
PY"
exit $fail

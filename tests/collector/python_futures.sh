#!/usr/bin/env bash
# The Python client forks a live run into two futures (python_futures_check.py: fork,
# futures(), per-future set, pause, stop and live windows by file), then, after the job:
# each window equals its future's final checkpoint value by value (check_window.py,
# h5py), and the file of the future set alone records the change, the other not (h5py).
#   python_futures.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # check, start_live, pause_at, wait_job
in_tmpdir
export REWIND_TOKEN="pyfutures-$$-$RANDOM$RANDOM"
start_live 4 p.h5 "$src/cases/default.toml" --steps 40 --set time.end=30 --set output.checkpoint_every=4 \
  --set output.visualisation_interval=0 -q
pause_at 5
$py "$src/tests/collector/python_futures_check.py" "$port" "$tmp" >py.out 2>&1
rc=$?
cat py.out
check "the Python client forks, lists, sets, windows and stops two futures" "[ $rc = 0 ]"
wait_job 120
check "the job ends when both futures have stopped" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
for x in a b; do
  check "future $x: its live window equals its file's final checkpoint (h5py)" \
    "$py $src/tests/collector/check_window.py $x.h5 w$x.json >chk$x.out 2>&1" || tail -3 chk$x.out
done
check "b.h5 records physics.nu=0.002 in its last step, a.h5 does not (h5py)" "$py - <<'EOF'
import h5py
def last_overrides(name):  # docs/file-format.md: a string, one key=value per line; absent if none
    with h5py.File(name, 'r') as f:
        last = sorted(k for k in f['simulation'] if k.startswith('step_'))[-1]
        v = f['simulation'][last].attrs.get('case_overrides', b'')
        return (v.decode() if isinstance(v, bytes) else str(v)).splitlines()
assert 'physics.nu=0.002' in last_overrides('b.h5'), last_overrides('b.h5')
assert not any(x.startswith('physics.nu') for x in last_overrides('a.h5')), last_overrides('a.h5')
EOF"
check "rewind.open('p.h5').timelines(): the parent's and each future's, through the parent (h5py)" "$py - '$src/python' <<'EOF'
import os, sys
import h5py
sys.path.insert(0, sys.argv[1])
import rewind
def own(name):  # (step, time) of a file's committed steps: its index, read with h5py alone
    with h5py.File(name, 'r') as f:
        ix = f['simulation/index'][()]
        return sorted((int(r['step']), float(r['time'])) for r in ix if r['committed'])
with h5py.File('a.h5', 'r') as f:
    fork = int(f['common/lineage'].attrs['parent_step'])
t = rewind.open('p.h5').timelines()
assert sorted(os.path.basename(p) for p in t) == ['a.h5', 'b.h5', 'p.h5'], list(t)
assert [(int(s), float(x)) for s, x in zip(t['p.h5'].steps, t['p.h5'].times)] == own('p.h5')
for name in ('a.h5', 'b.h5'):
    tl = t[next(p for p in t if os.path.basename(p) == name)]
    files = [os.path.basename(p) for p in tl.paths]
    n = files.index(name)
    assert set(files[:n]) == {'p.h5'} and set(files[n:]) == {name}, files
    assert [(int(s), float(x)) for s, x in zip(tl.steps[n:], tl.times[n:])] == own(name), name
    assert [(int(s), float(x)) for s, x in zip(tl.steps[:n], tl.times[:n])] == [e for e in own('p.h5') if e[0] < own(name)[0][0]], name
    assert own(name)[0][0] == fork, (name, fork)
EOF"
exit $fail

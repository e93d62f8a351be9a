#!/usr/bin/env bash
# The in-situ hook in a job forked into futures (`rewind steer ADDR branch --future ...`),
# run as a user runs it: a live job under mpirun with the test hook, paused, forked into
# two futures, resumed to its end. The hook is initialised and finalised once; it gets
# every `every`-th step of each timeline — the same step numbers once per future, each
# with its own file (rewind_insitu_step_desc::file, ABI 2) — and the parent's steps
# before the fork with the parent's file. The pause lands on step 3 or 4 (the job runs
# on while `pause_at` asks): the fork takes the paused step's boundary before any other
# observer, so the fork step itself is the futures' first, never the parent's.
#   futures.sh REWIND SOURCE_DIR MPIEXEC TEST_HOOK
set -u
rewind=$1 src=$2 mpiexec=$3 hook=$(realpath "$4")
py=/usr/bin/python3
. "$src/tests/collector/serve_util.sh"  # check, start_live, pause_at, status, wait_job
in_tmpdir
export REWIND_TOKEN="insitu-futures-$$-$RANDOM$RANDOM"
start_live 4 p.h5 "$src/cases/default.toml" --steps 16 -q --set output.checkpoint_every=4 \
  --set output.visualisation_interval=0 --set insitu.library="$hook" --set insitu.every=2 \
  --set "insitu.args=log=$PWD/hook.log files=1"
pause_at 3
s=$(status | cut -d' ' -f2)
"${steer[@]}" branch --from latest --future '' --future 'physics.nu=0.002' --output a.h5 --output b.h5 >fork.out 2>&1
check "fork: two futures from step $s" "grep -q '^forked 2 futures from step $s .*: a.h5, b.h5' fork.out" || cat fork.out
"${steer[@]}" resume >/dev/null 2>&1
wait_job 120
check "the job ends (exit 0)" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
check "the hook is initialised once and finalised once" \
  "[ \$(grep -c '^init' hook.log) = 1 ] && [ \$(grep -c '^finalize' hook.log) = 1 ]"
check "each future's steps, every 2nd from the fork to the end, with its own file; the parent's before" \
  "$py - $s <<'PYEOF'
import re, sys
fork = int(sys.argv[1])
seen = {}
for line in open('hook.log'):
    m = re.match(r'step (\d+) grids=\d+ file=(\S+)$', line.strip())
    if m:
        seen.setdefault(m.group(2), []).append(int(m.group(1)))
import h5py
with h5py.File('a.h5', 'r') as f:
    last = max(int(g.attrs['step']) for k, g in f['simulation'].items() if k.startswith('step_') and int(g.attrs['committed']))
want = list(range(fork + fork % 2, last + 1, 2))  # the first boundary of a future counts when due
assert seen.get('a.h5') == want and seen.get('b.h5') == want, (want, seen)
assert seen.get('p.h5') == list(range(0, fork, 2)), (fork, seen)
PYEOF"

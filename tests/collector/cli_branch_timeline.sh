#!/usr/bin/env bash
# A branch's timeline runs through its parents (docs/file-format.md,
# "Lineage"), for what a user touches:
#  - `rewind serve BRANCH`: steps_reply lists the parent's steps up to the branch point
#    (each with the file holding it), then the branch's; `rewind window --time t=T` for
#    a T before the branch point answers the parent's step; `--file BRANCH` still means
#    that file's own steps only;
#  - a live run writing a branch file: `rewind steer ... branch --from t=T` (no --file)
#    for a T only its parent holds branches from the parent's step.
# The expected steps come from h5py reads of the files (/simulation/index,
# /common/lineage), not from Rewind.
#   cli_branch_timeline.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # in_tmpdir, check, start_serve, one_error, wait_job
in_tmpdir
opts=(--set output.checkpoint_interval=0.003 --set output.visualisation_interval=0 -q)
"$rewind" run "$src/cases/default.toml" "${opts[@]}" --steps 12 --output base.h5 >log 2>&1
"$rewind" run "${opts[@]}" --restart base.h5@6 --set physics.nu=0.002 --steps 6 --output br.h5 >>log 2>&1
check "a base run and a branch of it at step 6" "[ -f base.h5 ] && [ -f br.h5 ]" || { cat log; exit 1; }

# The oracle (h5py): the branch's timeline, and the step in force at T = between the
# parent's second step and the branch point.
$py - >oracle.txt <<'PY'
import h5py
with h5py.File("br.h5", "r") as b:
    cut = int(b["common/lineage"].attrs["parent_step"])
    own = [(int(s), float(t)) for s, t in zip(b["simulation/index"]["step"], b["simulation/index"]["time"])]
with h5py.File("base.h5", "r") as p:
    parent = [(int(s), float(t)) for s, t in zip(p["simulation/index"]["step"], p["simulation/index"]["time"])]
before = [e for e in parent if e[0] <= cut]
t = (before[1][1] + before[2][1]) / 2  # strictly between two parent steps before the cut
print(repr(t), before[1][0], repr(before[1][1]))
print(" ".join(f"base.h5:{s}" for s, _ in before) + " " + " ".join(f"br.h5:{s}" for s, _ in own))
PY
read -r T step_t time_t < <(sed -n 1p oracle.txt)
timeline=$(sed -n 2p oracle.txt)
check "the oracle read the files" "[ -n '$T' ] && [ -n '$timeline' ]" || exit 1

start_serve br.h5
check "rewind serve br.h5 listens" "[ -n '$port' ]" || { cat serve.log; exit 1; }
listed=$(PYTHONPATH="$src/python" $py -c "
import os, rewind.client as c
cl = c.connect('127.0.0.1:$port')
print(' '.join(f\"{os.path.basename(s['file'])}:{s['step']}\" for s in cl.steps()))")
check "steps_reply: the parent's steps to the branch point, then the branch's ($timeline)" "[ '$listed' = '$timeline' ]"
"$rewind" window "127.0.0.1:$port" --box 0,0,0,2.2,0.41,0 --budget 4000 --vars u --time "t=$T" --out w.json >w.log 2>&1
check "window --time t=$T: the parent's step $step_t (t = $time_t) of base.h5" \
  "$py -c \"import json, os, sys; d = json.load(open('w.json')); sys.exit(not (d['step'] == $step_t and d['time'] == $time_t and os.path.basename(d['file']) == 'base.h5'))\""
"$rewind" window "base.h5@$step_t" --box 0,0,0,2.2,0.41,0 --budget 4000 --vars u --out p.json >>w.log 2>&1
check "... the same cells and values as that step of base.h5 read from the file" \
  "$py -c \"import json, sys; a, b = json.load(open('w.json')), json.load(open('p.json')); sys.exit(not a['values'] or (a['values'], a['pieces']) != (b['values'], b['pieces']))\""
second=$(echo "$timeline" | cut -d' ' -f2)  # "#1": the timeline's second step, the parent's
"$rewind" window "127.0.0.1:$port" --box 0,0,0,2.2,0.41,0 --budget 4000 --vars u --time '#1' --out w1.json >>w.log 2>&1
got=$($py -c "import json, os; d = json.load(open('w1.json')); print(os.path.basename(d['file']) + ':' + str(d['step']))" 2>&1)
check "window --time '#1': the timeline's second step, $second (got $got)" "[ '$got' = '$second' ]"
check "--file br.h5 still means br.h5's own steps" \
  "one_error $rewind window 127.0.0.1:$port --box 0,0,0,2.2,0.41,0 --budget 4000 --time t=$T --file br.h5 && grep -q no_such_step err.out"
kill "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=
check "rewind window br.h5@t=T (a file named) still means br.h5's own steps" \
  "one_error $rewind window br.h5@t=$T --box 0,0,0,2.2,0.41,0 --budget 4000 && grep -q 'no committed step at or before' err.out"

# A live run on a branch file (2 compute ranks), paused; a branch by time with no --file.
start_listener "$mpiexec" -n 3 "$rewind" run "${opts[@]}" --restart br.h5@latest --steps 100000 --set time.end=30 \
  --output live.h5 --listen 127.0.0.1:0
check "the live run on a branch listens" "[ -n '$port' ]" || { cat serve.log; exit 1; }
steer=("$rewind" steer live.h5)  # through its contact file (which holds the run's token)
"${steer[@]}" pause >pause.out 2>&1
"${steer[@]}" branch --from "t=$T" --set physics.nu=0.003 --output b2.h5 >branch.out 2>&1
check "steer branch --from t=$T (no --file): from step $step_t of base.h5 ($(cat branch.out))" \
  "grep -Eq '^branched b2.h5 from step $step_t \\(t = [0-9.e-]+\\) of (\\./)?base.h5$' branch.out"
"${steer[@]}" stop >/dev/null 2>&1
wait_job 60
check "the run ends" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -5 serve.log
check "b2.h5's lineage (h5py): base.h5 at step $step_t, t = $time_t" "$py -c \"
import h5py, os, sys
l = h5py.File('b2.h5', 'r')['common/lineage'].attrs
f = l['parent_file']; f = f.decode() if isinstance(f, bytes) else f
sys.exit(not (int(l['parent_step']) == $step_t and float(l['parent_time']) == $time_t and os.path.basename(f) == 'base.h5'))\""
exit $fail

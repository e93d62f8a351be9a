#!/usr/bin/env bash
# Steered settings, served file names, counts and usage errors, through the commands a user types:
#  - settings steered into a live run (step attribute case_overrides) are shown by
#    `rewind info` (from which step, what changed) and `rewind lineage` along a branch's
#    timeline through its parent, as h5py reads them from the steps;
#  - `rewind info` rounds a branch's time as every command does (6 significant digits);
#  - `rewind window HOST:PORT --file NAME`: a served file's unique basename finds it; a
#    name that matches none, or several, is one line listing what is served;
#  - counts read as words ("1 variable", not "1 variables");
#  - every command's usage error exits 2 with one line.
#   cli_overrides_and_usage.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
. "$src/tests/collector/serve_util.sh"  # start_live, pause_at, start_serve, wait_job, one_error
export REWIND_TOKEN="overrides-$$-$RANDOM$RANDOM"

# A live run on 1 compute rank, steered twice, then stopped (its final checkpoint written).
start_live 3 s.h5 "$src/cases/default.toml" --steps 100000 --set time.end=30 --set output.checkpoint_every=2 \
  --set output.visualisation_interval=0 -q
# Each change a few steps (two checkpoints or more) after the step the job paused at: a
# busy machine may pause it later than asked.
pause_at 4
s1=$(status | cut -d' ' -f2)
"${steer[@]}" set physics.nu=0.002 >set1.out 2>&1
pause_at $((${s1:-4} + 6))
s2=$(status | cut -d' ' -f2)
"${steer[@]}" set physics.nu=0.003 'boundary.xmin.velocity=[2, 0, 0]' >set2.out 2>&1
pause_at $((${s2:-10} + 6))
"${steer[@]}" stop >stop.out 2>&1
wait_job 120
check "the steered run stops cleanly (exit 0)" "[ -n '$ended' ] && [ '$rc' = 0 ] || { tail -5 serve.log; cat set1.out set2.out; false; }"

# overrides_h5py FILE: "STEP TIME|k=v;k=v" of each committed step, by h5py alone.
cat >overrides.py <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for r in f["/simulation/index"][:]:
        if int(r["committed"]) != 1:
            continue
        g = f[f"/simulation/step_{int(r['step']):08d}"]
        o = g.attrs.get("case_overrides", b"")
        o = o.decode() if isinstance(o, bytes) else str(o)
        print(int(r["step"]), "%.6g" % float(r["time"]), ";".join(sorted(l for l in o.split("\n") if l)))
PY
# changes: "STEP TIME: k=v, k=v" where the overrides differ from the step before (keys sorted).
cat >changes.py <<'PY'
import sys
before = {}
for line in open(sys.argv[1]):
    step, time, *rest = line.split(" ", 2)
    now = dict(kv.split("=", 1) for kv in (rest[0].strip().split(";") if rest and rest[0].strip() else []))
    ch = [f"{k}={v}" for k, v in sorted(now.items()) if before.get(k) != v]
    ch += [f"{k} back to the case's value" for k in sorted(before) if k not in now]
    if ch:
        print(f"{step} {time}: {', '.join(ch)}")
    before = now
PY
$py overrides.py s.h5 >s.overrides
$py changes.py s.overrides >want.txt
"$rewind" info s.h5 >info.out 2>&1
# (info lists a step's changes by key, as changes.py does)
sed -n 's/^ *\(steered \)\? *from step \([0-9]*\) (t=\([^)]*\)): \(.*\)/\2 \3: \4/p' info.out >got.txt
check "h5py: two steered changes recorded in the steps (physics.nu, then nu and the inflow)" \
  "[ \$(wc -l <want.txt) = 2 ] && grep -q 'physics.nu=0.002' want.txt && grep -q 'boundary.xmin.velocity' want.txt || { cat want.txt s.overrides; false; }"
check "rewind info: from which step and what was steered, as h5py reads the steps" \
  "grep -q '^steered     from step' info.out && diff want.txt got.txt >/dev/null || { cat want.txt got.txt; false; }"
check "rewind info of a rewind run without heat lists no T (examples.sh: a code's own T is listed)" \
  "grep -q '^variables ' info.out && ! grep -q '^variables.* T \[' info.out"
"$rewind" info s.h5 --json | $py -c "
import json, sys
for s in json.load(sys.stdin)['steps']:
    print(s['step'], '%.6g' % s['time'], ';'.join(sorted(s['case_overrides'])))" >json.overrides
check "rewind info --json: each step's case_overrides, as h5py reads them" "diff s.overrides json.overrides >/dev/null"

# A branch from a step after the first change: its lineage shows the parent's steering up
# to the branch point (the second change too when it was recorded at or before that step).
first=$(head -1 want.txt | cut -d' ' -f1)
from=$(awk -v f="$first" '$1 > f { print $1; exit }' s.overrides)
"$rewind" run --restart "s.h5@$from" --set 'boundary.xmin.velocity=[1.2, 0, 0]' --steps 2 --output b.h5 -q >b.log 2>&1
check "a branch of the steered run" "[ -s b.h5 ] || { cat b.log; false; }"
"$rewind" lineage b.h5 >lineage.out 2>&1
check "rewind lineage: the settings steered along the branch's timeline, in the parent's file" \
  "grep -q \"^steered along b.h5's timeline:\" lineage.out && grep -q \"^  \\(./\\)\\?s.h5 step $first (t=[^)]*): physics.nu=0.002\$\" lineage.out && [ \$(grep -c '^  ' lineage.out) = $(awk -v f="$from" '$1 + 0 <= f + 0' want.txt | wc -l) ] || { cat lineage.out; false; }"
pt=$($py -c "import h5py; print(repr(float(h5py.File('b.h5', 'r')['/common/lineage'].attrs['parent_time'])))")
"$rewind" info b.h5 >binfo.out 2>&1
check "rewind info: the branch time rounded as elsewhere (t=$($py -c "print('%.6g' % $pt)"), not t=$pt)" \
  "grep -q \"^lineage     branch of s.h5 at step $from (t=$($py -c "print('%.6g' % $pt)"));\" binfo.out || { grep lineage binfo.out; false; }"

# Served files by their basename; the error lists what is served.
mkdir -p out/demo out/other && cp s.h5 out/demo/fast.h5 && cp b.h5 out/other/slow.h5
start_serve out/demo/fast.h5 out/other/slow.h5
win=("$rewind" window "127.0.0.1:$port" --box 0,0,0,2.2,0.41,0 --budget 2000 --time '#0')
"${win[@]}" --file slow.h5 --vars u >base.out 2>&1
check "window --file slow.h5 (served as out/other/slow.h5): found by its unique basename" \
  "[ $? = 0 ] && grep -q 'of out/other/slow.h5' base.out || { cat base.out; false; }"
check "... and one variable reads '(1 variable)'" "grep -q '(1 variable)' base.out && ! grep -q '1 variables' base.out"
check "window --file nope.h5: one line listing what is served (exit 2: a usage error)" \
  "one_error ${win[*]} --file nope.h5 && grep -q 'served: out/demo/fast.h5, out/other/slow.h5' err.out && { ${win[*]} --file nope.h5 >/dev/null 2>&1; [ \$? = 2 ]; } || { cat err.out; false; }"
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
cp s.h5 out/other/fast.h5
start_serve out/demo/fast.h5 out/other/fast.h5
win=("$rewind" window "127.0.0.1:$port" --box 0,0,0,2.2,0.41,0 --budget 2000 --time '#0')
check "window --file fast.h5 with two served fast.h5: one line naming both" \
  "one_error ${win[*]} --file fast.h5 && grep -q 'more than one served file has that name (served: out/demo/fast.h5, out/other/fast.h5)' err.out || { cat err.out; false; }"
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=

# Usage errors: exit 2, one line, for every command (CLI11's own codes were 105-115).
for sub in $("$rewind" --help | sed -n '/^Subcommands:/,$s/^  \([a-z]*\) .*/\1/p'); do
  "$rewind" $sub --no-such-option >usage.out 2>&1
  check "rewind $sub --no-such-option: exit 2, one line" "[ $? = 2 ] && [ \$(wc -l <usage.out) = 1 ] || cat usage.out"
done
# ... and those a command finds after parsing: options that contradict each other, a value
# of the wrong form.
for args in "window s.h5@#0 --time t=0 --box 0,0,0,1,1,0 --budget 5" "window s.h5 --box 1,2 --budget 5" \
            "keys nosuch" "serve s.h5 --listen nonsense" "diff s.h5@#0 b.h5 --time 0"; do
  "$rewind" $args >usage.out 2>&1
  check "rewind $args: exit 2, one line" "[ $? = 2 ] && [ \$(wc -l <usage.out) = 1 ] || cat usage.out"
done
"$rewind" >none.out 2>&1
check "rewind without a subcommand: exit 2" "[ $? = 2 ]"
exit $fail

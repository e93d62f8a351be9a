#!/usr/bin/env bash
# Comparing two futures (branches) of one run, as a user does:
#  - `rewind diff A B --time T` compares the step in force at T in each file (the last
#    at or before T) and says which steps; `A@t=T B@t=T` is the same;
#  - by default only non-solid cells count (cell_type != 1 in either file) and the output
#    says so; --all-cells counts every cell;
#  - per variable max |A-B|, the cells that differ, L2 and relative L2 of the difference
#    (the leaf cells, volume-weighted) equal an h5py + numpy oracle's;
#  - misuse (--time with FILE@STEP, a bad time) is one line, exit 2.
# The files: a run on 2 compute ranks, branched at t = 0.1 with two inflows, one branch on
# 1 compute rank and the other on 2, their outputs at different times.
#   cli_compare.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
py=/usr/bin/python3
oracle="$src/tests/support/diff_oracle.py"
"$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output P.h5 --set time.end=0.1 \
  --set output.checkpoint_interval=0.1 --set output.visualisation_interval=0.05 -q >log 2>&1
"$mpiexec" -n 2 "$rewind" run --restart P.h5@t=0.1 --set 'boundary.xmin.velocity=[2.25, 0, 0]' --set time.end=0.2 \
  --set output.visualisation_interval=0.03 --output A.h5 -q >>log 2>&1
"$mpiexec" -n 3 "$rewind" run --restart P.h5@t=0.1 --set 'boundary.xmin.velocity=[1.2, 0, 0]' --set time.end=0.2 \
  --output B.h5 -q >>log 2>&1
check "the run and its two branches are written (mpirun -n 3, -n 2, -n 3)" "[ -s P.h5 ] && [ -s A.h5 ] && [ -s B.h5 ] || { cat log; false; }"

# same_as_oracle OUT [--all-cells]: diff's steps, cell count and every variable's norms are the oracle's.
same_as_oracle() {
  $py "$oracle" A.h5 B.h5 0.19 "${@:2}" >oracle.json && $py - "$1" <<'PY'
import json, re, sys
out = open(sys.argv[1]).read()
lines = [json.loads(l) for l in open("oracle.json")]
head, rows = lines[0], lines[1:]
steps = [int(s) for s in re.findall(r"^[AB]  \S+ step (\d+) ", out, re.M)]
assert steps == head["step"], (steps, head)
m = re.search(r"^cells .* (\d+) of (\d+) cells", out, re.M) or re.search(r"^cells .*\((\d+) cells\)", out, re.M)
assert m and int(m.group(1)) == head["cells"][0], (m and m.group(0), head)
close = lambda a, b: abs(a - b) <= 2e-6 * max(abs(a), abs(b)) + 1e-300
for r in rows:
    f = re.search(rf"^{r['var']} +(\S+) +(\S+) +(\S+) +(\d+)$", out, re.M)
    assert f, f"no line for {r['var']}"
    mx, l2, rel, differ = float(f.group(1)), float(f.group(2)), f.group(3), int(f.group(4))
    assert close(mx, r["max"]) and close(l2, r["l2"]) and differ == r["differ"], (f.group(0), r)
    assert (rel == "0" if r["rel"] is None else close(float(rel), r["rel"])), (f.group(0), r)
print("ok", len(rows), "variables")
PY
}

"$rewind" diff A.h5 B.h5 --time 0.19 >d.out 2>&1
rc=$?
check "diff --time 0.19 of two futures: exit 1 (they differ)" "[ $rc = 1 ] || { cat d.out; false; }"
check "... in each file the step in force at 0.19: A's at t = 0.18, B's at t = 0.15, said" \
  "grep -q '^A  A.h5 step [0-9]* (t = 0.18)' d.out && grep -q '^B  B.h5 step [0-9]* (t = 0.15)' d.out && grep -q 'at t=0.19: the step in force in each file' d.out"
check "... says it compares the non-solid cells, and how many" \
  "grep -q '^cells       the non-solid cells (cell_type != 1 in A and in B) of the 85 grids in both: [0-9]* of 29920 cells' d.out"
check "... steps, non-solid cell count, max |A-B|, L2, relative L2 and cells differ per variable = the h5py oracle's" \
  "same_as_oracle d.out >o.out 2>&1 || { cat o.out d.out; false; }"
"$rewind" diff A.h5 B.h5 --time 0.19 --all-cells >all.out 2>&1
check "--all-cells: every cell counted, the oracle's norms over every cell" \
  "grep -q '^cells       every cell of the 85 grids in both, solid ones included (29920 cells)' all.out && same_as_oracle all.out --all-cells >o2.out 2>&1 || { cat o2.out all.out; false; }"
check "... and solid cells changed the answer (u: more cells differ with them)" \
  "[ \$(awk '\$1 == \"u\" { print \$5 }' all.out) -gt \$(awk '\$1 == \"u\" { print \$5 }' d.out) ]"
"$rewind" diff A.h5@t=0.19 B.h5@t=0.19 >sel.out 2>&1
check "A@t=T B@t=T compares the same steps with the same norms as --time T" \
  "diff <(grep -v '^at t=' d.out) <(grep -v '^at t=' sel.out) >/dev/null || diff d.out sel.out"
"$rewind" diff P.h5 A.h5 --time 0.1 >same.out 2>&1
check "a branch's first step against its parent's at the branch time: identical, exit 0, relative L2 0" \
  "[ $? = 0 ] && grep -q '^identical' same.out && awk '\$1 == \"u\" { exit !(\$4 == \"0.000000e+00\") }' same.out"
"$rewind" diff A.h5@#0 B.h5 --time 0.19 >both.out 2>&1
check "--time with FILE@STEP: one line, exit 2" "[ $? = 2 ] && [ \$(wc -l <both.out) = 1 ] && grep -q 'either as FILE@STEP or as --time' both.out"
"$rewind" diff A.h5 B.h5 --time soon >bad.out 2>&1
check "--time soon: one line naming it, exit 2" "[ $? = 2 ] && [ \$(wc -l <bad.out) = 1 ] && grep -q 'soon is not a time' bad.out"
exit $fail

#!/usr/bin/env bash
# What the commands report, through what a user reads:
#  - --budget has one definition everywhere (README, --help, the ParaView
#    property, the protocol, the Python docstrings): at most N cells, N values of each
#    variable — and a window keeps it (5632 cells of 2 variables fit --budget 5632);
#  - `rewind tree` and `rewind run` give the same memory estimate for the same
#    compute ranks, saying what it covers (per compute rank; the tree on rank 0);
#  - `rewind info` says which variables each step holds (h5py lists them), which
#    of the file's carry nothing (2-D: w; no heat: T), and a compressed step's size on
#    disk with its ratio (h5py's storage sizes);
#  - `rewind lineage` draws siblings with ├─ and the last with └─, prints times
#    as people read them (6 significant digits), and says what `*` marks;
#  - drag and lift coefficients are scaled by the run's own inflow (a branch with
#    a faster inflow: its own, u_ref in the CSV) unless the case fixes
#    monitor.reference_velocity; the same flow scaled by 1 instead of 2 reads 4x the c_D.
#   cli_reports.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
budget_words='at most N cells (N values of each variable)'

# one definition of the budget.
"$rewind" window --help >window_help.out 2>&1
check "rewind window --help defines --budget as: $budget_words" "grep -qi -- '--budget.*$budget_words' window_help.out"
check "... the README's synopsis says the same" "tr -s ' \n' ' ' <'$src/README.md' | grep -q '$budget_words'"
for f in docs/paraview.md paraview-plugin/RewindReader/RewindReader.xml python/rewind/reader.py python/rewind/client.py; do
  check "... and $f" "tr -s ' \n' ' ' <'$src/$f' | grep -qi '$budget_words'"
done
check "... and docs/collector-protocol.md" "tr -s ' \n' ' ' <'$src/docs/collector-protocol.md' | grep -q 'at most N cells: N values of each variable'"
check "no other definition left (values per variable, fits N values)" \
  "! grep -rniE 'fits N values|most (cell )?values per variable' '$src/README.md' '$src/docs/paraview.md' '$src/docs/collector-protocol.md' '$src/apps/rewind' '$src/python/rewind' '$src/paraview-plugin/RewindReader/RewindReader.xml'"
"$rewind" run "$case_file" --steps 2 --output a.h5 -q >run.out 2>&1
cells_of() { /usr/bin/python3 -c "import json,sys; d = json.load(open('$1')); print(d['cells'], d['level'], *[len(v) for v in d['values']])"; }
"$rewind" window a.h5@latest --box 0,0,0,2.2,0.41,0 --budget 5632 --vars u,p --out fit.json >/dev/null 2>&1
"$rewind" window a.h5@latest --box 0,0,0,2.2,0.41,0 --budget 5631 --vars u,p --out over.json >/dev/null 2>&1
check "--budget 5632, 2 variables: level 2's 5632 cells, 5632 values of each (11264 values in all)" \
  "[ \"\$(cells_of fit.json)\" = '5632 2 5632 5632' ]"
check "--budget 5631: one cell too many, the coarser level" "[ \"\$(cells_of over.json | cut -d' ' -f2)\" = 1 ]"

# one memory estimate, saying what it covers.
"$rewind" tree "$case_file" --ranks 2 >tree.out 2>&1
"$mpiexec" -n 3 "$rewind" run "$case_file" --steps 1 --output b.h5 >run3.out 2>&1
memory_of() { sed -n 's/^estimate *\(.*\) ([0-9.]* [KMGT]*i*B available).*/\1/p' "$1"; }
check "rewind tree: the estimate per compute rank on 2 compute ranks, and the tree's on rank 0" \
  "grep -Eq '^estimate .*~[0-9.]+ [KMG]iB per compute rank on 2 compute ranks, the tree ~[0-9.]+ [KMG]iB on rank 0' tree.out"
check "... the figure mpirun -np 3 rewind run prints for the same case" \
  "[ -n \"\$(memory_of tree.out)\" ] && [ \"\$(memory_of tree.out)\" = \"\$(memory_of run3.out)\" ] || { grep estimate tree.out run3.out; false; }"
check "... and tree says so" "grep -q 'mpirun -np 3 rewind run. prints the same' tree.out"
"$rewind" run "$case_file" --steps 1 --output c.h5 >run1.out 2>&1
check "a run of one process: tree and fields in that process" "grep -Eq '^estimate .*~[0-9.]+ [KMG]iB in the one process \(tree and fields\)' run1.out"

# what each step holds, and what it takes on disk.
"$rewind" run "$case_file" --steps 2 --output v.h5 --set output.visualisation_every=1 --set output.checkpoint_every=2 \
  --set 'output.io.compression="deflate"' --set 'output.variables=["u","p"]' -q >v.out 2>&1
"$rewind" info v.h5 >info.out 2>&1
"$rewind" info v.h5 --json >info.json 2>&1
check "info: a 2-D run without heat lists u, v, p: no w, no T" \
  "grep -q '^variables   u \[m/s\], v \[m/s\], p \[' info.out && ! grep -q '^variables.* [wT] \[' info.out"
/usr/bin/python3 - v.h5 info.json >oracle3.out 2>&1 <<'PYEOF'
import json, sys
import h5py
info = json.load(open(sys.argv[2]))
with h5py.File(sys.argv[1], "r") as f:
    for s in info["steps"]:
        g = f[f"/simulation/step_{s['step']:08d}/cell_data"]
        names = sorted(g.keys())
        assert sorted(s["variables"]) == names, (s["step"], s["variables"], names)
        data = sum(g[n].size * g[n].dtype.itemsize for n in names)
        stored = sum(g[n].id.get_storage_size() for n in names)
        assert stored < data, (s["step"], stored, data)  # deflate shrinks the cell data
        assert abs(s["compression_ratio"] - data / stored) < 1e-9 * data / stored, (s, data / stored)
        assert s["bytes_on_disk"] == s["bytes"] - data + stored, s
        print(s["step"], s["kind"], " ".join(s["variables"]), f"{data / stored:.1f}x")
PYEOF
check "info --json: each step's variables and compression ratio as h5py finds them" \
  "grep -q 'visualisation u p ' oracle3.out && grep -q 'checkpoint u v p ' oracle3.out || { cat oracle3.out; false; }"
check "info: the table shows each step's variables and its size on disk with the ratio" \
  "grep -Eq '^ +1 .* visualisation .*[KMG]iB \([0-9.]+x\) +u p +yes$' info.out && grep -Eq '^ +2 .* checkpoint .*[KMG]iB \([0-9.]+x\) +u v p +yes$' info.out || { cat info.out; false; }"

# the branch tree, readable.
"$rewind" run "$case_file" --steps 3 --output l.h5 --set output.checkpoint_every=1 -q >l.out 2>&1
"$rewind" run --restart l.h5@1 --set physics.nu=0.002 --steps 1 -q >>l.out 2>&1
"$rewind" run --restart l.h5@2 --set physics.nu=0.003 --steps 1 -q >>l.out 2>&1
"$rewind" lineage l.branch2.h5 >lineage.out 2>&1
check "lineage: the first of two branches drawn with ├─, the last with └─" \
  "grep -q '^├─ \(./\)\?l.branch1.h5 ' lineage.out && grep -q '^└─ \(./\)\?l.branch2.h5 ' lineage.out || { cat lineage.out; false; }"
check "... times to 6 significant digits (t=0.00105263, not 0.00105263157894737)" \
  "grep -q 't=0.00105263;' lineage.out && ! grep -Eq '[0-9]{11}' lineage.out"
check "... the file asked about marked '* (this file)'" "grep -q '^└─ \(./\)\?l.branch2.h5  \* (this file)' lineage.out"

# whose velocity scales the coefficients.
"$rewind" run "$case_file" --steps 10 --output r.h5 --set output.checkpoint_every=5 -q >r.out 2>&1
"$rewind" run --restart r.h5@5 --set 'boundary.xmin.velocity=[3,0,0]' --steps 5 --output fast.h5 -q >>r.out 2>&1
"$rewind" run --restart r.h5@5 --set 'boundary.xmin.velocity=[3,0,0]' --set monitor.reference_velocity=1 --steps 5 \
  --output fixed.h5 -q >>r.out 2>&1
/usr/bin/python3 - >oracle8.out 2>&1 <<'PYEOF'
import csv
def rows(f):
    return {int(r["step"]): r for r in csv.DictReader(l for l in open(f) if not l.startswith("#"))}
base, fast, fixed = rows("r.monitor.csv"), rows("fast.monitor.csv"), rows("fixed.monitor.csv")
assert all(float(r["u_ref"]) == 1.0 for r in base.values()), base   # 2/3 of the parabola's 1.5
assert all(float(r["u_ref"]) == 2.0 for r in fast.values()), fast   # 2/3 of 3: the branch's own
assert all(float(r["u_ref"]) == 1.0 for r in fixed.values()), fixed  # the case fixes it
s = 10
ratio = float(fixed[s]["cd"]) / float(fast[s]["cd"])
assert abs(ratio - 4.0) < 1e-6, ratio  # the same force, scaled by 1/2 rho U^2 L
print("ok", ratio)
PYEOF
check "coefficients use the run's own inflow (u_ref 1, a faster branch 2), or the case's fixed one; c_D scales as 1/u_ref^2" \
  "grep -q '^ok' oracle8.out || { cat oracle8.out r.out | tail -5; false; }"
exit $fail

#!/usr/bin/env bash
# `rewind plot` as a user reads the figure, checked without eyes through --describe
# (each panel's label, scale, y limits and tick labels, as matplotlib drew them):
#  - a start-up spike at t = 0 leaves the frame of EVERY panel (it would flatten them);
#  - axes carry units; a log axis spanning less than a decade still labels ticks;
#  - the title is the case name the CSV records ("# case: NAME").
#   cli_plot.sh REWIND SOURCE_DIR
source "$(dirname "$0")/lib.sh" "$@"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "skip: no matplotlib for /usr/bin/python3"; exit 0; }
/usr/bin/python3 - <<'PY'
import math
with open("spike.csv", "w") as f:
    f.write("# case: cylinder-spike\n")
    f.write("step,time,dt,kinetic_energy,max_velocity,max_divergence,pressure_cycles,pressure_residual,cd,cl,cl_z,dp,strouhal\n")
    for i in range(100):
        t = i / 99
        s = 1 if i == 0 else 0  # the impulsive start: huge in every column
        f.write(f"{i},{t},0.01,{1000 * s + 1 + 0.01 * t},{1.5 + 50 * s},{10 * s + 2e-5 + 1e-5 * math.sin(9 * t)},"
                f"{50 * s + 3},{1e-5 + s},{100 * s + 3 + 0.1 * math.sin(9 * t)},{80 * s + math.sin(9 * t)},0,"
                f"{40 * s + 2},{0.3 if i > 20 else 'nan'}\n")
PY
"$rewind" plot spike.csv -o spike.png --describe >d.out 2>&1
check "rewind plot --describe: exit 0, the PNG written" "[ $? = 0 ] && [ -s spike.png ]"
check "the title is the case name from the CSV" "grep -qx 'title: cylinder-spike' d.out"
check "every automatic panel is drawn (energy, cd, cl, cycles, divergence)" "[ \$(grep -c '^panel:' d.out) = 5 ]"
check "the start-up spike leaves the frame of every panel (no y limit above 10)" \
  "! awk -F' [|] ' '/^panel:/ { split(\$3, l, \" \"); if (l[2] + 0 > 10) bad = 1 } END { exit !bad }' d.out"
check "axes carry units" \
  "grep -q '^panel: kinetic energy \[m⁵/s²\] |' d.out && grep -q '^panel: max |div u| \[1/s\] | log |' d.out && grep -qx 'xlabel: time \[s\]' d.out"
check "a log axis within a decade labels at least 2 ticks" \
  "[ \$(grep '^panel: max |div u|' d.out | awk -F' [|] ' '{ print \$4 }' | wc -w) -ge 2 ]"
check "--describe prints tick labels as plain text (10^-5, not \$\\mathdefault{10^{-5}}\$)" \
  "grep '^panel: max |div u|' d.out | grep -q '10^-' && ! grep -q '[\$\\]' d.out || { grep '^panel' d.out; false; }"
"$rewind" plot spike.csv -o t.png --title 'My title' --describe >t.out 2>&1
check "--title wins over the case name" "grep -qx 'title: My title' t.out"
"$rewind" run "$src/cases/cavity-re100.toml" --steps 20 --monitor cav.csv -q >run.out 2>&1
"$rewind" plot cav.csv -o cav.png --describe >cav.out 2>&1
check "a run's own CSV: titled with its case name" "[ $? = 0 ] && grep -q '^title: cavity' cav.out"
"$rewind" run "$src/cases/default.toml" --steps 10 --output base.h5 --set output.checkpoint_every=5 -q >>run.out 2>&1
"$rewind" run --restart base.h5@5 --set physics.nu=0.002 --steps 5 --output nu.h5 -q >>run.out 2>&1
"$rewind" plot base.monitor.csv nu.monitor.csv -o two.png --describe >two.out 2>&1
check "the legend names each run and the change a branch made (from its file)" \
  "grep -qx 'legend: base.monitor.csv | nu.monitor.csv (physics.nu=0.002)' two.out || { grep legend two.out; false; }"
exit $fail

#!/usr/bin/env bash
# `rewind plot` as a user reads the figure, checked without eyes through --describe
# (each panel's label, scale, y limits and tick labels, as matplotlib drew them):
#  - a start-up spike at t = 0 leaves the frame of EVERY panel (it would flatten them);
#  - axes carry units; a log axis spanning less than a decade still labels ticks;
#  - the title is the case name the CSV records ("# case: NAME");
#  - --follow redraws several CSVs as they grow (futures of one run while they compute):
#    a redraw per growth, a half-written last line not read, every file in the legend,
#    and it stops by itself once no file has grown for --follow-seconds; a CSV not there
#    yet (a future's, before its run creates it) is waited for.
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
# --follow: two CSVs grow in three batches of 10 rows; each batch waits for the redraw of
# the one before (a half-written row ends batch 2, completed in batch 3).
/usr/bin/python3 - <<'PY' &
import math, os, time
files = ["fast.monitor.csv", "slow.monitor.csv"]
hdr = "step,time,dt,kinetic_energy,max_velocity,max_divergence,pressure_cycles,pressure_residual,cd,cl\n"
def row(i, k):
    t = i * 0.1
    return f"{i},{t},0.1,{1 + k + 0.01 * i},1.5,1e-5,3,1e-5,{3 + 0.1 * math.sin(t)},{math.sin(t + k)}\n"
for k, n in enumerate(files):
    with open(n, "w") as f:
        f.write("# case: futures\n" + hdr)
def redraws():
    try:
        return sum(l.startswith("plot: f.png (") for l in open("follow.out"))
    except OSError:
        return 0
for batch in range(3):
    for k, n in enumerate(files):
        with open(n, "a") as f:
            text = "".join(row(i, k) for i in range(10 * batch, 10 * batch + 10))
            if batch == 1:
                text += row(20, k)[:7]  # half of row 20: its writer has not finished it
            elif batch == 2:
                text = text[7:]
            f.write(text)
    deadline = time.time() + 60
    while redraws() < batch + 1 and time.time() < deadline:
        time.sleep(0.1)
PY
writer=$!
sleep 0.5
t0=$(date +%s)
"$rewind" plot fast.monitor.csv slow.monitor.csv -o f.png --follow --follow-seconds 4 --describe >follow.out 2>&1
rc=$? t1=$(date +%s)
wait $writer
check "plot --follow of two growing CSVs: exit 0, the PNG written" "[ $rc = 0 ] && [ -s f.png ] || { cat follow.out; false; }"
check "... redrawn as they grew: at least 3 redraws, the last with all 30 rows of each" \
  "[ \$(grep -c '^plot: f.png (' follow.out) -ge 3 ] && grep '^plot: f.png (' follow.out | tail -1 | grep -qx 'plot: f.png (fast.monitor.csv 30 rows, slow.monitor.csv 30 rows)'"
check "... a half-written last row is not read (every redraw counts whole batches of 10)" \
  "! grep '^plot: f.png (' follow.out | grep -q '[1-9] rows'"
check "... the legend names every file" "grep -qx 'legend: fast.monitor.csv | slow.monitor.csv' follow.out"
check "... and it stopped by itself once no file grew for --follow-seconds" \
  "grep -qx 'plot: followed 2 files, [0-9]* redraws; stopped: no file grew for 4 s' follow.out && [ \$((t1 - t0)) -lt 60 ]"
# A future's CSV its run has not created yet is waited for, then drawn with the others.
( for _ in $(seq 600); do grep -q 'waiting for' later.out 2>/dev/null && break; sleep 0.1; done
  cp slow.monitor.csv later.monitor.csv ) &
"$rewind" plot fast.monitor.csv later.monitor.csv -o l.png --follow --follow-seconds 6 --describe >later.out 2>&1
rc=$?
wait
check "plot --follow of a CSV not there yet: waits for it, then draws it with the others" \
  "[ $rc = 0 ] && grep -qx 'plot: waiting for later.monitor.csv (not there yet)' later.out && grep -qx 'legend: fast.monitor.csv | later.monitor.csv' later.out || { cat later.out; false; }"
"$rewind" plot spike.csv nope.csv -o n.png >nope.out 2>&1
check "without --follow a missing CSV is one error line" "[ $? != 0 ] && [ \$(wc -l <nope.out) = 1 ] && grep -q 'nope.csv: no such file' nope.out"
"$rewind" plot spike.csv --describe >noout.out 2>&1
check "a usage error (no -o) exits 2 with one line, not CLI11's 106" "[ $? = 2 ] && [ \$(wc -l <noout.out) = 1 ]"
exit $fail

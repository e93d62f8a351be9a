#!/usr/bin/env bash
# One command: install what is missing, build, and run the paper's application (Ertl,
# Frisch, Mundani, section V, Fig. 8): time reversible steering of a von Karman vortex
# street, from a running job.
#
#  1. Schaefer-Turek 2D-2 (cylinder in a channel, Re 100, parabolic inflow) runs to
#     t = 2 s into one shared HDF5 file, with the collector on (mpirun -np 4: rank 0
#     neighbourhood server, rank 1 collector, ranks 2-3 compute); while it runs, live
#     windows are queried (whole channel, and a zoom that comes back finer);
#  2. ONE steering `branch` command to the running job forks two futures from its step
#     at t = 1 s: A, a faster inflow (Re 150), and B, a tilted inflow; the job computes
#     them together (side by side, each on one of the two compute ranks), each to t = 2 s
#     into its own branch file that remembers its parent; halfway, the live windows of
#     both are drawn side by side (futures-live.png);
#  3. the lineage of the three files, the Fig. 8 figure (three timelines at t = 1 s and
#     t = 2 s, one colour scale) rendered through the ParaView plugin, and the drag and
#     lift of the three timelines on one set of axes, from the futures' files and CSVs.
# Everything lands in ${REWIND_DEMO_DIR:-out/demo}; running it again replaces only the
# demo's own files there. The tree and halo demonstration is scripts/demo-tree.sh.
# For tests: REWIND_DEMO_TIMES="T1 T2" (branch time, end time; default "1 2"),
# REWIND_DEMO_SETUP=0 (no install, no build) and REWIND_BIN / REWIND_PLUGIN.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ "${REWIND_DEMO_SETUP:-1}" != 0 ]; then
  scripts/install-deps.sh
  scripts/build.sh
fi
. scripts/mpi-env.sh
bin=${REWIND_BIN:-$root/${REWIND_BUILD_DIR:-build}/apps/rewind}
plugin=${REWIND_PLUGIN-$(find "$root/${REWIND_BUILD_DIR:-build}/lib" -name 'RewindReader.so' 2>/dev/null | head -1 || true)}
py=/usr/bin/python3
read -r t1 t2 <<<"${REWIND_DEMO_TIMES:-1 2}"
t_live=$($py -c "print($t2 / 4)")               # the live windows: a quarter of the way
t_half=$($py -c "print(($t1 + $t2) / 2)")        # the futures' windows: halfway to the end
out=${REWIND_DEMO_DIR:-out/demo}
mkdir -p "$out"
cd "$out"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

# The demo's files from an earlier run (a branch never overwrites a file).
rm -rf base.h5 base.views base.csv fast.h5 fast.views fast.monitor.csv tilted.h5 tilted.views tilted.monitor.csv \
  live-fast.json live-tilted.json futures-live.png fig8.png fig8-monitors.png run.log render.log

step "1/3  rewind run: Schaefer-Turek 2D-2 (Re 100) to t = $t2 s -> base.h5, collector on (mpirun -np 4)"
mpirun -np 4 "$bin" run "$root/cases/default.toml" --set time.end=$t2 --set output.checkpoint_interval=$t1 \
  --output base.h5 --monitor base.csv \
  --listen 127.0.0.1:0 --pause-at-end >run.log 2>&1 &
job=$!
trap 'kill $job 2>/dev/null || true' EXIT
port=
for _ in $(seq 1 600); do
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' run.log)
  [ -n "$port" ] && break
  kill -0 $job 2>/dev/null || { cat run.log; die "the run ended before its collector listened"; }
  sleep 0.1
done
[ -n "$port" ] || { cat run.log; die "no collector address after 60 s"; }
# Clients name the job by its contact file, which holds the token the run generated.
srv=base.h5.contact
echo "collector on 127.0.0.1:$port: rewind window $srv ..., rewind steer $srv ... (any terminal, while it runs)"

# status: "state time step steps_per_second file" of the live run.
status() {
  "$bin" steer "$srv" status --json | $py -c \
    'import json,sys; s=json.load(sys.stdin); print(s["state"], s["time"], s["step"], round(s["steps_per_second"]), s["file"])'
}
# follow FILE END [AT CMD...]: progress lines until the run pauses at t = END in FILE;
# once its time passes AT, CMD runs (once).
follow() {
  local file=$1 end=$2 at=${3:-} last=0 state t n rate f
  shift $(($# < 3 ? $# : 3))
  while :; do
    kill -0 $job 2>/dev/null || { cat run.log; die "the run ended unexpectedly"; }
    read -r state t n rate f <<<"$(status)"
    if [ -n "$at" ] && $py -c "import sys; sys.exit(0 if $t >= $at else 1)"; then
      "$@"
      at=
    fi
    if [ "$state" = paused ] && [ "$f" = "$file" ] && $py -c "import sys; sys.exit(0 if $t >= $end - 1e-9 else 1)"; then
      printf '  %-8s t = %5.3f s  step %5d  (%s: its end)\n' "$state" "$t" "$n" "$f"
      return
    fi
    if [ $((SECONDS - last)) -ge 2 ]; then
      printf '  %-8s t = %5.3f s  step %5d  %4d steps/s  -> %s\n' "$state" "$t" "$n" "$rate" "$f"
      last=$SECONDS
    fi
    sleep 0.2
  done
}
live_windows() {
  echo "  live window, whole channel, budget 20000 values per variable:"
  "$bin" window "$srv" --box 0,0,0,2.2,0.41,0 --budget 20000 --vars u,v,p | sed 's/^/    /'
  echo "  live window, zoom on the cylinder's wake (same budget: finer cells):"
  "$bin" window "$srv" --box 0.1,0.1,0,0.5,0.3,0 --budget 20000 --vars u,v,p | sed 's/^/    /'
}
follow base.h5 $t2 $t_live live_windows

step "2/3  back to t = $t1 s: one steering command forks two futures, computed together in the running job"
echo "future A: faster inflow, 1.5 -> 2.25 m/s at the centre line (Re 150), into fast.h5"
echo "future B: tilted inflow (1.5, 0.45) m/s, into tilted.h5"
"$bin" steer "$srv" branch --from t=$t1 --file base.h5 \
  --future 'boundary.xmin.velocity=[2.25, 0, 0]' --future 'boundary.xmin.velocity=[1.5, 0.45, 0]' \
  --output fast.h5 --output tilted.h5
"$bin" steer "$srv" status | sed 's/^/  /'
"$bin" steer "$srv" resume >/dev/null
# futures AT END: a line "P D" (P = 1: a future is at t >= AT; D = 1: every future
# has reached END and none runs: paused there or finished), then one progress line.
futures() {
  "$bin" steer "$srv" status --json | $py -c '
import json, sys
at, end = float(sys.argv[1]), float(sys.argv[2])
fs = json.load(sys.stdin).get("futures", [])
print(int(any(f["time"] >= at for f in fs)),
      int(bool(fs) and all(f["state"] in ("paused", "finished") and f["time"] >= end - 1e-9 for f in fs)))
print("  " + "  |  ".join("%s %-8s t = %5.3f s  step %4d  %3d steps/s" %
                          (f["file"], f["state"], f["time"], f["step"], f["steps_per_second"]) for f in fs))' "$1" "$2"
}
# follow_futures END AT CMD...: progress lines of every future until all have reached
# t = END; once the first is past AT (the futures step in lockstep: the one with the
# larger time step leads), CMD runs (once).
follow_futures() {
  local end=$1 at=$2 last=0 now past done
  shift 2
  while :; do
    kill -0 $job 2>/dev/null || { cat run.log; die "the run ended unexpectedly"; }
    now=$(futures "$at" "$end")
    read -r past done <<<"${now%%$'\n'*}"
    if [ "$past" = 1 ] && [ $# -gt 0 ]; then
      "$@"
      set --
    fi
    if [ "$done" = 1 ] || [ $((SECONDS - last)) -ge 2 ]; then
      echo "${now#*$'\n'}"
      last=$SECONDS
    fi
    [ "$done" = 1 ] && return
    sleep 0.2
  done
}
futures_windows() {
  # Paused for the two windows: both futures at one boundary each (side by side they
  # run at the same pace), compared at about one time; resumed after.
  "$bin" steer "$srv" pause >/dev/null
  echo "  live windows of both futures as they compute (paused for them), drawn side by side into futures-live.png:"
  for f in fast tilted; do
    "$bin" window "$srv" --time live --file $f.h5 --box 0,0,0,2.2,0.41,0 --budget 25000 --vars u,v,p \
      --out live-$f.json | sed 's/^/    /'
  done
  $py "$root/scripts/render_windows.py" live-fast.json live-tilted.json -o futures-live.png \
    --labels "A: faster inflow,B: tilted inflow" --title "Two futures of one run, live as they compute" >/dev/null
  echo "  a past step while they run: t = $t1 s of base.h5, read from the file"
  "$bin" window "$srv" --box 0,0,0,2.2,0.41,0 --budget 20000 --vars u --time t=$t1 --file base.h5 | sed 's/^/    /'
  "$bin" steer "$srv" resume >/dev/null
}
follow_futures $t2 $t_half futures_windows
"$bin" steer "$srv" stop
wait $job || die "the job failed (log: $out/run.log)"
trap - EXIT
grep '^done:' run.log

step "3/3  lineage, Fig. 8 and the drag / lift of the run and its two futures"
"$bin" lineage base.h5
"$bin" plot base.csv fast.monitor.csv tilted.monitor.csv --columns cd,cl \
  --labels "base (Re 100),future A: faster inflow,future B: tilted inflow" -o fig8-monitors.png \
  --title "Drag and lift: a run and the two futures forked from it at t = $t1 s"
if [ -n "$plugin" ] && command -v pvpython >/dev/null && command -v Xvfb >/dev/null; then
  "$root/scripts/headless.sh" pvpython "$root/scripts/render_fig8.py" "$plugin" -o fig8.png \
    --files base.h5 fast.h5 tilted.h5 --labels "base,A: faster,B: tilted" --times $t1,$t2 2>render.log \
    || { tail -5 render.log; die "render failed (log: $out/render.log)"; }
else
  echo "fig8.png skipped: the ParaView plugin, pvpython or Xvfb is missing (scripts/install-deps.sh installs them)"
fi

step "done: $PWD"
ls -la base.h5 fast.h5 tilted.h5 futures-live.png fig8.png fig8-monitors.png 2>/dev/null || true
cat <<TXT

Fig. 8:            $PWD/fig8.png
drag and lift:     $PWD/fig8-monitors.png
the futures live:  $PWD/futures-live.png
Open in ParaView:  base.h5, fast.h5, tilted.h5 with the Rewind plugin ($plugin),
                   or base.views/base.hdf.series with the stock VTKHDF reader.
TXT

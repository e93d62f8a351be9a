#!/bin/sh
# Live (online) windows: a large window's throughput against raw loopback TCP for the
# same bytes, the latency of a 10^6-value window (paused, and from a computing run), and
# what a client querying back to back costs the run's step time. Two live runs of one
# case, started the way users do (mpirun ... rewind run CASE --listen 127.0.0.1:0);
# prints every measurement and the tables.
#   bench/live/run.sh BUILD [DATA_DIR] [--rounds R] [--phase S] [--latency N] [--tp-rounds T] [--np P]
# R rounds of an idle and a querying phase of S seconds each (default 8 x 10 s), N
# windows at random moments (30), T throughput/paused-latency rounds (15).
# DATA_DIR (default /work/bench-data/live) receives the runs' files (live-*.h5, ~0.1 GB
# each, overwritten) and the log live-bench.log.
# The case: cases/cavity-3d.toml with blocks of 16x16x8 cells and depth 3 on a
# 1 x 1 x 0.5 box: 128 x 128 x 64 = 1 048 576 leaf cells (2^20, cubic cells), so the
# whole-domain window at budget 2^20 returns every leaf cell: 10^6 values per variable.
# See bench/live/HISTORY.md, "Live windows (online)".
#
# --c-example PAIRS: instead, the same measurements against the C example
# (examples/heat-c, a code that adopts Rewind through its C API) beside `rewind run` on a
# problem of the same size, PAIRS interleaved rounds of one job of each kind per mode
# (ABBA order); report.py prints the medians of the per-round ratios (C example / rewind
# run). The C example: `--refine K` (default 4: 2164 leaf blocks of 16 x 16, 553 984
# leaf cells), 3 processes (2 compute ranks and its collector on a rank of its own,
# --collector rank); `rewind run`: cases/cavity-re100.toml with 32 x 32 blocks of
# 24 x 22 cells on a 1 x 22/24 box (540 672 leaf cells, 0.976x), 4 processes (its
# neighbourhood server, its collector rank and 2 compute ranks); both windows of one
# variable (T, p) over the whole domain at budget 2^20 (every leaf cell). HEAT=path: the
# example's binary; by default it is built here against BUILD installed into
# DATA_DIR/prefix, as an outside code builds it (find_package(Rewind)).
#   bench/live/run.sh BUILD [DATA_DIR] --c-example 4 --tp-rounds 5 --rounds 2 --phase 6 --latency 12
set -e
BUILD=${1:?build dir}; shift
DATA=/work/bench-data/live
case "$1" in ""|-*) ;; *) DATA=$1; shift ;; esac
ROUNDS=8
PHASE=10
LATENCY=30
TP_ROUNDS=15
NP=4
C_PAIRS=0
REFINE=4
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --phase) PHASE=$2; shift 2 ;;
    --latency) LATENCY=$2; shift 2 ;;
    --tp-rounds) TP_ROUNDS=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --c-example) C_PAIRS=$2; shift 2 ;;
    --refine) REFINE=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
BENCH=$BUILD/bench/live/rewind_bench_live
REWIND=${REWIND:-$BUILD/apps/rewind}  # REWIND=...: another build's binary (e.g. before a change)
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
. "$SRC/scripts/mpi-env.sh"
LOG=$DATA/live-bench.log
# The runs' token; the benchmark's clients (C++ and Python) take it from the environment too.
export REWIND_TOKEN="bench-$$-$RANDOM$RANDOM"

# The run: no output during the measurements (an initial and a final checkpoint only),
# no monitor rows, one progress line per step (the benchmark's step clock).
bench() {  # bench MODE OPTIONS...: the benchmark on its own live run
  mode=$1; shift
  "$BENCH" "$mode" "$@" -- mpirun -np "$NP" "$REWIND" run "$SRC/cases/cavity-3d.toml" \
    --set 'tree.s=[16, 16, 8]' --set tree.depth=3 --set 'domain.hi=[1.0, 1.0, 0.5]' \
    --set time.end=1000 --set monitor.interval=1000000000 --set monitor.progress=1e-9 \
    --set output.checkpoint_interval=0 --set output.visualisation_interval=0 \
    --output "$DATA/live-$mode.h5" --monitor "$DATA/live-$mode.csv" --force --listen 127.0.0.1:0
}

# The C example against `rewind run` (see --c-example above).
heat_binary() {  # the example built against this build's installation, as its users build it
  [ -n "${HEAT:-}" ] && { echo "$HEAT"; return; }
  cmake --install "$BUILD" --prefix "$DATA/prefix" >"$DATA/heat-build.log" 2>&1 &&
    cmake -S "$SRC/examples/heat-c" -B "$DATA/heat-c" -DCMAKE_PREFIX_PATH="$DATA/prefix" \
      -DCMAKE_BUILD_TYPE=Release >>"$DATA/heat-build.log" 2>&1 &&
    cmake --build "$DATA/heat-c" >>"$DATA/heat-build.log" 2>&1 || { cat "$DATA/heat-build.log" >&2; exit 1; }
  echo "$DATA/heat-c/heat"
}
job() {  # job KIND MODE OPTIONS...: the benchmark on one live job of that kind
  kind=$1 mode=$2; shift 2
  if [ "$kind" = heat-c ]; then
    rm -f "$DATA/heat-$mode.h5"  # the example never overwrites a file (rewind run: --force)
    "$BENCH" "$mode" --vars T --large-vars T "$@" -- mpirun -np $((NP - 1)) "$HEAT" "$DATA/heat-$mode.h5" 1000000000 \
      --listen 127.0.0.1:0 --collector rank --refine "$REFINE" --progress 1 --vis 1000000000 --cp 1000000000
  else
    "$BENCH" "$mode" --vars p --large-vars p "$@" -- mpirun -np "$NP" "$REWIND" run "$SRC/cases/cavity-re100.toml" \
      --set 'tree.s=[24, 22, 1]' --set tree.depth=5 --set 'domain.hi=[1.0, 0.9166666666666666, 1.0]' \
      --set time.end=1000 --set monitor.interval=1000000000 --set monitor.progress=1e-9 \
      --set output.checkpoint_interval=0 --set output.visualisation_interval=0 \
      --output "$DATA/run2d-$mode.h5" --monitor "$DATA/run2d-$mode.csv" --force --listen 127.0.0.1:0
  fi
}
if [ "$C_PAIRS" -gt 0 ]; then
  HEAT=$(heat_binary)
  LOG=$DATA/live-c-example.log
  {
  echo "# host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(lscpu | sed -n 's/^Model name: *//p')"
  echo "# commit: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)$(git -C "$SRC" diff --quiet 2>/dev/null || echo '+dirty')"
  echo "# c-example: $HEAT --refine $REFINE on $((NP - 1)) processes; rewind run on $NP"
  echo "# before: $(uptime)"
  START=$(date +%s)
  for i in $(seq 0 $((C_PAIRS - 1))); do
    order="rewind-run heat-c"; [ $((i % 2)) = 1 ] && order="heat-c rewind-run"
    for mode in paused running; do
      for kind in $order; do
        echo "job $kind $mode $i"
        if [ $mode = paused ]; then job $kind paused --rounds "$TP_ROUNDS" || echo "# job failed: exit $?"
        else job $kind running --rounds "$ROUNDS" --phase "$PHASE" --latency "$LATENCY" || echo "# job failed: exit $?"; fi
      done
    done
  done
  echo "# after: $(uptime); took $(( $(date +%s) - START )) s"
  } 2>&1 | tee "$LOG"
  echo
  python3 "$HERE/report.py" "$LOG"
  exit 0
fi

{
echo "# host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(lscpu | sed -n 's/^Model name: *//p')"
echo "# commit: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)$(git -C "$SRC" diff --quiet 2>/dev/null || echo '+dirty')"
echo "# before: $(uptime)"
START=$(date +%s)
echo "mode paused"
bench paused --rounds "$TP_ROUNDS"
echo "mode running"
bench running --rounds "$ROUNDS" --phase "$PHASE" --latency "$LATENCY"
echo "# after: $(uptime); took $(( $(date +%s) - START )) s"
} 2>&1 | tee "$LOG"
echo
python3 "$HERE/report.py" "$LOG"

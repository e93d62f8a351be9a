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
# See docs/benchmarks.md, "Live windows (online)".
set -e
BUILD=${1:?build dir}; shift
DATA=/work/bench-data/live
case "$1" in ""|-*) ;; *) DATA=$1; shift ;; esac
ROUNDS=8
PHASE=10
LATENCY=30
TP_ROUNDS=15
NP=4
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --phase) PHASE=$2; shift 2 ;;
    --latency) LATENCY=$2; shift 2 ;;
    --tp-rounds) TP_ROUNDS=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
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

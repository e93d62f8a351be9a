#!/bin/sh
# Offline sliding-window latency: rewind window vs (a) reading the whole step and
# subsampling it, (b) stock ParaView opening the step's VTKHDF view, (c) OpenVisus on the
# same field converted to IDX. Interleaved rounds; prints every measurement and the tables.
#   bench/window/run.sh BUILD [DATA_DIR] [--rounds R] [--depths "2 3 4"]
# DATA_DIR (default /work/bench-data) receives win1e6.h5, win1e7.h5, win1e8.h5 (depth 2,
# 3, 4: 1.57 M, 12.6 M, 101 M leaf cells, 0.04 / 0.24 / 1.9 GB) and their IDX copies;
# existing files are reused. OpenVisus comes from PyPI into a venv outside the repo,
# $VENV (default /work/venv-visus), created if missing (bench-only: python3-venv).
# See bench/window/HISTORY.md, "Sliding windows (offline)".
set -e
BUILD=${1:?build dir}; shift
DATA=/work/bench-data
case "$1" in ""|-*) ;; *) DATA=$1; shift ;; esac
ROUNDS=5
DEPTHS="2 3 4"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --depths) DEPTHS=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$BUILD/bench/window
VENV=${VENV:-/work/venv-visus}
mkdir -p "$DATA"
export OMPI_MCA_mpi_yield_when_idle=1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q openvisusnogui numpy h5py
fi

FILES=
for D in $DEPTHS; do
  F="$DATA/win1e$((D + 4)).h5"
  [ -f "$F" ] || "$BIN/rewind_bench_window_gen" "$F" --depth "$D" --vars p,u
  I="$DATA/win1e$((D + 4)).idx"
  [ -f "$I" ] || "$VENV/bin/python" "$HERE/visus_bench.py" convert "$F" "$I" --var p --compression raw
  FILES="$FILES $F"
done
IDXS=$(for F in $FILES; do echo "${F%.h5}.idx"; done)
LOG=$DATA/window-bench.log

{

echo "# host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(lscpu | sed -n 's/^Model name: *//p'); $(df -h "$DATA" | awk 'NR==2 {print $1}')"
echo "# before: $(uptime)"
"$BIN/rewind_bench_window" plan $FILES
# Cold means the guest page cache dropped for the files read: check it once with mincore.
LAST=$(echo $FILES | awk '{print $NF}')
cat "$LAST" > /dev/null
"$BIN/rewind_bench_window" evict "$LAST"

START=$(date +%s)
PLAN=$(mktemp)
"$BIN/rewind_bench_window" plan $FILES > "$PLAN"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
  for k in 0 1 2; do  # the three programs, order rotated by round
    case $(( (r + k) % 3 )) in
      0) "$BIN/rewind_bench_window" run --round "$r" $FILES ;;
      1) "$VENV/bin/python" "$HERE/visus_bench.py" run --round "$r" --plan "$PLAN" $IDXS ;;
      2) pvpython "$HERE/pv_bench.py" --round "$r" $FILES 2>/dev/null ;;
    esac
  done
  r=$((r + 1))
done
rm -f "$PLAN"
echo "# after: $(uptime); rounds took $(( $(date +%s) - START )) s"
} | tee "$LOG"
echo
python3 "$HERE/report.py" "$LOG"

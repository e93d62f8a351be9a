#!/bin/sh
# Several futures from one step: fork start against K and the state's size,
# K futures together against one after another, memory per future. Every job is a live
# run started and steered as users do (futures.py says how), on 2 + K processes for the
# largest K (one compute rank per future at least: more futures than compute ranks are
# refused); docs/benchmarks.md, "Futures".
#   bench/futures/run.sh BUILD [DATA_DIR] [--rounds R] [--rounds-3d R3] [--tp-rounds T] [--steps N]
# R interleaved rounds of K = 1, 2, 4 on the demo's case (default 5), R3 on the 3-D cavity
# (default 3), T rounds of each throughput pair (K = 2 and 4, N steps each; 5 and 100).
# DATA_DIR (default /work/bench-data/futures) receives the runs' files (overwritten) and
# the logs fork-demo.log, fork-cavity3d.log, throughput-k2.log, throughput-k4.log.
set -e
BUILD=${1:?build dir}; shift
DATA=/work/bench-data/futures
case "${1:-}" in ""|-*) ;; *) DATA=$1; shift ;; esac
ROUNDS=5 ROUNDS3D=3 TP_ROUNDS=5 STEPS=100
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --rounds-3d) ROUNDS3D=$2; shift 2 ;;
    --tp-rounds) TP_ROUNDS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../scripts/mpi-env.sh"
mkdir -p "$DATA"
py() { /usr/bin/python3 "$HERE/futures.py" "$@"; }
header() {
  echo "# host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM; before: $(uptime)"
  echo "# commit: $(git -C "$HERE" rev-parse --short HEAD)$(git -C "$HERE" diff --quiet || echo '+dirty')"
}
{ header; py fork "$BUILD" "$DATA/demo" --case demo --rounds "$ROUNDS"; echo "# after: $(uptime)"; } | tee "$DATA/fork-demo.log"
{ header; py fork "$BUILD" "$DATA/cavity3d" --case cavity3d --rounds "$ROUNDS3D"; echo "# after: $(uptime)"; } |
  tee "$DATA/fork-cavity3d.log"
for k in 2 4; do
  { header; py throughput "$BUILD" "$DATA/tp" --k $k --steps "$STEPS" --rounds "$TP_ROUNDS"; echo "# after: $(uptime)"; } |
    tee "$DATA/throughput-k$k.log"
done

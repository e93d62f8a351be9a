#!/bin/sh
# Cold one-shot windows (bench/window/HISTORY.md, §1): `rewind window FILE@STEP` now reads only the topology
# rows its walk visits. This times the one-shot (a fresh FileService per request, what
# `rewind window FILE` does) and a session request (rewind_open) of this build against a
# peer binary built from the code before (BASE: another build's rewind_bench_window), in
# the same interleaved rounds, on steps of small grids (8x8x8 cells: many rows per step,
# where reading the whole topology shows), whole-domain windows at budgets 1e4..1e6, warm
# and cold (fsync + POSIX_FADV_DONTNEED of the file right before the call; the guest's
# page cache only, see bench/window/HISTORY.md).
#   bench/window/cold_topology.sh BUILD BASE_BIN DATA_DIR [--rounds R] [--depths "4 5"]
# DATA_DIR receives b8d4.h5 and b8d5.h5 (full octrees of depth 4 and 5 with 8^3-cell
# grids: 4 681 grids / 2.4 M cells and 37 449 grids / 19.2 M cells, p only), reused if
# present. Prints every measurement and one table line per (step, budget, cache):
# medians of both and the median of the per-round ratios base/new (> 1: new faster).
set -e
BUILD=${1:?build dir}; BASE=${2:?base rewind_bench_window}; DATA=${3:?data dir}; shift 3
ROUNDS=6
DEPTHS="4 5"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --depths) DEPTHS=$2; shift 2 ;;
    *) echo "cold_topology.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
NEW=$BUILD/bench/window/rewind_bench_window
mkdir -p "$DATA"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FILES=
for D in $DEPTHS; do
  F="$DATA/b8d$D.h5"
  [ -f "$F" ] || "$BUILD/bench/window/rewind_bench_window_gen" "$F" --depth "$D" --block 8,8,8 --vars p
  FILES="$FILES $F"
done
LOG=$DATA/cold-topology.log
{
  echo "# host: $(nproc) cores, load before: $(uptime | sed 's/.*load average: //')"
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    for who in rewind rewind_open; do
      if [ $((r % 2)) = 0 ]; then order="new base"; else order="base new"; fi
      for b in $order; do
        if [ $b = new ]; then bin=$NEW; else bin=$BASE; fi
        "$bin" run --round $r --only $who $FILES --reps 3 | sed "s/^m /m $b /"
      done
    done
    r=$((r + 1))
  done
  echo "# load after: $(uptime | sed 's/.*load average: //')"
} | tee "$LOG"
python3 - "$LOG" <<'EOF'
import sys, statistics as st
from collections import defaultdict
t = defaultdict(dict)  # (stem, who, cache, budget) -> {(round, bin): ms}
for line in open(sys.argv[1]):
    f = line.split()
    if f[:1] != ["m"]:
        continue
    _, b, rnd, stem, who, cache, budget, ms, values = f
    t[(stem, who, cache, int(budget))][(int(rnd), b)] = float(ms)
print("| step | who | cache | budget | new ms | base ms | base/new (median of rounds) | rounds |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for k in sorted(t):
    m = t[k]
    rounds = sorted({r for r, _ in m if (r, "new") in m and (r, "base") in m})
    new = st.median(m[(r, "new")] for r in rounds)
    base = st.median(m[(r, "base")] for r in rounds)
    ratio = st.median(m[(r, "base")] / m[(r, "new")] for r in rounds)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:.0e} | {new:.2f} | {base:.2f} | {ratio:.2f} | {len(rounds)} |")
EOF

#!/bin/bash
# What checkpoints cost a real `rewind run`: the cylinder case with the collective write
# against dedicated I/O ranks, the same 2 compute ranks, alternating rounds.
#   bench/kernel/dedicated_run.sh BUILD [DIR] [--rounds R] [--steps N] [--every K]
# Collective: mpirun -np 3 (server + 2 compute); dedicated: -np 4 (+ 1 I/O rank). A
# checkpoint every K steps (default 20) of N (default 200), durable (the kernel's commit
# fsyncs). Reports per round the sum over checkpoints of what the compute ranks paid (the
# output lines' "in X s" / "handed off in X s") and the run's wall time ("done: ... in").
set -u
BUILD=${1:?build dir}; shift
DIR=/work/benchdata
case "${1:-}" in ""|-*) ;; *) DIR=$1; shift ;; esac
ROUNDS=4 STEPS=200 EVERY=20
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;; --steps) STEPS=$2; shift 2 ;; --every) EVERY=$2; shift 2 ;;
    *) echo "dedicated_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$DIR"
run() {  # run NP OUT [options]: prints "COST WALL"
  local np=$1 out=$2; shift 2
  rm -f "$out" "$out".monitor.csv; rm -rf "${out%.h5}".views
  mpiexec --oversubscribe -n "$np" "$BUILD/apps/rewind" run "$SRC/cases/cylinder-2d1.toml" -o "$out" --force \
    --steps "$STEPS" --set output.checkpoint_every="$EVERY" --set output.visualisation_every=0 "$@" |
    awk '/^output .* (in|handed off in) [0-9.]+ s/ { for (i = 1; i < NF; i++) if ($i == "in" && $(i+2) ~ /^s/) { c += $(i+1); break } }
         /^done:/ { for (i = 1; i < NF; i++) if ($i == "in") w = $(i+1) }
         END { printf "%.3f %.2f\n", c, w }'
}
for r in $(seq 0 $((ROUNDS - 1))); do
  for j in 0 1; do
    if [ $(( (r + j) % 2 )) = 0 ]; then
      echo "collective $r $(run 3 "$DIR/cyl_collective.h5")"
    else
      echo "dedicated $r $(run 4 "$DIR/cyl_dedicated.h5" --set 'output.io.strategy="dedicated"')"
    fi
  done
done | tee "$DIR/dedicated_run.log"
awk '{ c[$1, $2] = $3; w[$1, $2] = $4; n = $2 > n ? $2 : n }
  END { for (r = 0; r <= n; r++) printf "round %d  checkpoint cost: collective %.3f s, dedicated %.3f s (%.1f %%)  wall: %.2f s vs %.2f s\n",
          r, c["collective", r], c["dedicated", r], 100 * c["dedicated", r] / c["collective", r], w["collective", r], w["dedicated", r] }' \
  "$DIR/dedicated_run.log"
rm -f "$DIR"/cyl_*.h5 "$DIR"/cyl_*.monitor.csv "$DIR/dedicated_run.log"; rm -rf "$DIR"/cyl_*.views

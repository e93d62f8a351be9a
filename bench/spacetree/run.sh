#!/usr/bin/env bash
# Tree, nbserver and halo-exchange benchmarks (bench/spacetree/HISTORY.md).
# Usage: bench/spacetree/run.sh [build-dir]   (default: build)
# Prints markdown table rows; docs/benchmarks.md records a run and its machine.
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/bench/spacetree/rewind_bench_tree"
[[ -x "$BIN" ]] || { echo "missing $BIN: build the project first" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# 2-core CI machines run 3-5 ranks oversubscribed: let idle ranks yield the core
# instead of busy-polling (it matters most for the server, which waits a lot).
MPIRUN=(mpirun --oversubscribe --mca mpi_yield_when_idle 1)

echo "## halo exchange, 3-D full tree, depth 3, s = 16 (585 grids, 2 396 160 cells), 1 variable"
for np in 1 2 4; do "${MPIRUN[@]}" -np "$np" "$BIN" halo --depth 3 --s 16 --vars 1 --steps 20; done
echo
echo "## halo exchange, same tree, 5 variables"
for np in 1 2 4; do "${MPIRUN[@]}" -np "$np" "$BIN" halo --depth 3 --s 16 --vars 5 --steps 10; done
echo
echo "## halo exchange, 3-D adaptive tree (full to depth 2, refined to depth 4 inside a sphere), 1 variable"
for np in 1 2 4; do "${MPIRUN[@]}" -np "$np" "$BIN" halo --adaptive --depth 3 --s 16 --vars 1 --steps 10; done
echo
echo "## neighbourhood server (1 server rank + N compute ranks), same full tree"
for batch in 1 64; do
  for n in 1 2 4; do "${MPIRUN[@]}" -np $((n + 1)) "$BIN" nbserver --depth 3 --s 16 --seconds 2 --batch "$batch"; done
done

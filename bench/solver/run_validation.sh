#!/bin/sh
# Reproduces every number and plot of docs/validation.md.
#   bench/solver/run_validation.sh BUILD_DIR [OUT_DIR]
# Runs one case after another on one core each (about 60 min in total on the
# 2-core VM; run two of these blocks side by side to halve that).
set -eu
BUILD=$(cd "$1" && pwd)
OUT=${2:-validation-out}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
REWIND="$BUILD/apps/rewind"
V="/usr/bin/python3 $SRC/bench/solver/validate.py"
IMG="$SRC/docs/img"
mkdir -p "$OUT" && cd "$OUT"
run() { name=$1; shift; /usr/bin/time -f "$name: %e s wall" "$REWIND" run "$SRC/cases/$name.toml" -q "$@"; }

for re in 100 400 1000; do
  run cavity-re$re --profiles cavity-re$re-prof.csv
  $V cavity cavity-re$re-prof.csv --re $re -o "$IMG/cavity-re$re.png"
done

run cylinder-2d1
$V cylinder cylinder-2d1.csv --steady -o "$IMG/cylinder-2d1.png"
run cylinder-2d2
$V cylinder cylinder-2d2.csv --periods 4 -o "$IMG/cylinder-2d2.png"

for ra in 3 4 5 6; do
  run heated-cavity-ra1e$ra --profiles heated-ra1e$ra-prof.csv
  alpha=$(awk -F' *= *' '/^alpha/ {print $2}' "$SRC/cases/heated-cavity-ra1e$ra.toml")
  $V heated heated-cavity-ra1e$ra.csv heated-ra1e$ra-prof.csv --ra 1e$ra --alpha "$alpha"
done

for d in 0 1 2 3; do
  run taylor-green --set tree.depth=$d --monitor tg-$d.csv
done
$V tg tg-0.csv tg-1.csv tg-2.csv tg-3.csv --cells 16 32 64 128 -o "$IMG/taylor-green.png"

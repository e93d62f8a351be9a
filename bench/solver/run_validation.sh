#!/bin/sh
# Reproduces every number and plot of docs/validation.md.
#   bench/solver/run_validation.sh BUILD_DIR [OUT_DIR]
# Runs one case after another on one core each (about 2.5 h in total on the
# 2-core VM; run two of these blocks side by side to halve that).
set -eu
BUILD=$(cd "$1" && pwd)
OUT=${2:-validation-out}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
REWIND="$BUILD/apps/rewind"
V="/usr/bin/python3 $SRC/bench/solver/validate.py"
IMG="$SRC/docs/img"
mkdir -p "$OUT" && cd "$OUT"
run() { name=$1; shift; /usr/bin/time -f "$name: %e s wall" "$REWIND" run "$SRC/cases/$name.toml" -q --force --monitor "$name.csv" "$@"; }

for re in 100 400 1000; do
  run cavity-re$re --profiles cavity-re$re-prof.csv
  $V cavity cavity-re$re-prof.csv --re $re -o "$IMG/cavity-re$re.png"
done

run cylinder-2d1
$V cylinder cylinder-2d1.csv --steady -o "$IMG/cylinder-2d1.png"
run cylinder-2d2
$V cylinder cylinder-2d2.csv --periods 4 -o "$IMG/cylinder-2d2.png"
# Adaptive trees, 64 cells per diameter at the cylinder (~12 + ~20 min on one core).
run cylinder-2d1-adaptive -o cylinder-2d1-adaptive.h5 --set output.initial=false
$V cylinder cylinder-2d1-adaptive.csv --steady -o "$IMG/cylinder-2d1-adaptive.png"
/usr/bin/python3 "$SRC/bench/solver/cylinder_surface.py" cylinder-2d1-adaptive.h5 0.2
run cylinder-2d2-adaptive -o cylinder-2d2-adaptive.h5 --set output.checkpoint_interval=1
$V cylinder cylinder-2d2-adaptive.csv --periods 4 -o "$IMG/cylinder-2d2-adaptive.png"
# 3-D, Schaefer-Turek 3D-1Z: 8, 16 and 32 cells per diameter at the body (about 1 min
# here on one core; 4 and 31 min on 2 compute ranks, about twice that here), then Δp
# against the sampling distance from each final field.
for c in cylinder-3d1z cylinder-3d1z-refined cylinder-3d1z-fine; do
  run $c -o $c.h5 --set output.initial=false
  $V cylinder $c.csv --steady --3d
  /usr/bin/python3 "$SRC/bench/solver/cylinder3d_dp.py" $c.h5
done

for ra in 3 4 5 6; do
  run heated-cavity-ra1e$ra --profiles heated-ra1e$ra-prof.csv
  alpha=$(awk -F' *= *' '/^alpha/ {print $2}' "$SRC/cases/heated-cavity-ra1e$ra.toml")
  $V heated heated-cavity-ra1e$ra.csv heated-ra1e$ra-prof.csv --ra 1e$ra --alpha "$alpha"
done

for d in 0 1 2 3; do
  run taylor-green --set tree.depth=$d --monitor tg-$d.csv
done
$V tg tg-0.csv tg-1.csv tg-2.csv tg-3.csv --cells 16 32 64 128 -o "$IMG/taylor-green.png"

#!/bin/bash
# Compressed against uncompressed output of real runs: bytes on disk, compression ratio
# and write throughput per filter, for the cylinder, cavity and heated-cavity cases.
#   bench/kernel/compression.sh BUILD_DIR [DIR] [--steps N] [--np P] [--rounds R]
# Each case runs `rewind run --steps N` (default 20) under mpiexec -n P (default 3: the
# neighbourhood server + 2 compute ranks), a visualisation step every step and a
# checkpoint every 5, once per filter: none, deflate (level 4), lz4, bitshuffle, and
# zfp (visualisation steps, zfp_accuracy 1e-4, checkpoints uncompressed). R rounds
# (default 3), interleaved by filter, median reported.
#   bytes   the file's size on disk (du: allocated blocks), views excluded
#   ratio   bytes(none) / bytes
#   MiB/s   uncompressed step bytes / time of Writer::write_step, summed over the steps
#           of one kind: what `rewind run` prints per step, which includes the commit's
#           two H5Fflush (MPI_File_sync: fsync), i.e. durable writes
# DIR: where to write (default /work/benchdata).
set -eu
BUILD=${1:?build dir}; shift
DIR=/work/benchdata
case "${1:-}" in ""|-*) ;; *) DIR=$1; shift ;; esac
STEPS=20 NP=3 ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "compression.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
REWIND=$BUILD/apps/rewind
. "$SRC/scripts/mpi-env.sh"
mkdir -p "$DIR"
CASES="cylinder-2d2 cavity-re100 heated-cavity-ra1e4"
FILTERS="none deflate lz4 bitshuffle zfp"
sets() {
  case $1 in
    none) ;;
    zfp) echo "--set output.io.visualisation_compression=\"zfp\" --set output.io.zfp_accuracy=1e-4" ;;
    *) echo "--set output.io.compression=\"$1\"" ;;
  esac
}
echo "# host: $(nproc) cores; $(df -h "$DIR" | awk 'NR==2 {print $1, $2, "fs, free", $4}'); load: $(uptime | sed 's/.*load/load/')"
echo "# mpiexec -n $NP rewind run CASE --steps $STEPS, visualisation every step (float32 as the case says), checkpoint every 5"
START=$(date +%s)
out=$DIR/compression-bench.tsv
: >"$out"
for c in $CASES; do
  for r in $(seq 1 "$ROUNDS"); do
    for f in $FILTERS; do
      h5=$DIR/bench_$c.$f.h5
      mpiexec -n "$NP" "$REWIND" run "$SRC/cases/$c.toml" --output "$h5" --monitor "$DIR/bench.csv" --force --steps "$STEPS" \
        --set output.visualisation_every=1 --set output.checkpoint_every=5 --set output.visualisation_interval=0 \
        --set output.checkpoint_interval=0 $(sets $f) >"$DIR/bench.log" 2>&1
      bytes=$(du -B1 "$h5" | cut -f1)
      # output lines: "output visualisation step N t = T -> F: X MiB in Y s (...)", compressed
      # "... F: D MiB on disk (X MiB before compression; cell data Rx) in Y s (...)"
      awk -v c="$c" -v f="$f" -v r="$r" -v b="$bytes" '
        /^output +(visualisation|checkpoint) step/ { k = $2; for (i = 1; i <= NF; i++) {
          if ($i == "MiB" && ($(i+1) == "in" || $(i+1) == "before")) { x = $(i-1); sub(/^\(/, "", x); m[k] += x }
          if ($i == "in" && $(i+2) == "s") s[k] += $(i+1) } }
        END { printf "%s\t%s\t%s\t%s\t%.3f\t%.4f\t%.3f\t%.4f\n", c, f, r, b, m["visualisation"], s["visualisation"], m["checkpoint"], s["checkpoint"] }' \
        "$DIR/bench.log" >>"$out"
      rm -rf "$h5" "${h5%.h5}.views" "$h5.branches"
    done
  done
done
echo "# wall time $(( $(date +%s) - START )) s; load: $(uptime | sed 's/.*load/load/')"
/usr/bin/python3 - "$out" <<'EOF'
import sys, statistics as st, collections
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
by = collections.defaultdict(list)
for c, f, r, b, vm, vs, cm, cs in rows:
    by[(c, f)].append((int(b), float(vm), float(vs), float(cm), float(cs)))
print(f"{'case':<22}{'filter':<12}{'bytes on disk':>15}{'ratio':>8}{'vis MiB/s':>11}{'ckpt MiB/s':>12}{'(uncompressed MiB: vis, ckpt)':>32}")
cases = list(dict.fromkeys(c for c, _ in by))
for c in cases:
    base = st.median(x[0] for x in by[(c, 'none')])
    for f in ['none', 'deflate', 'lz4', 'bitshuffle', 'zfp']:
        xs = by.get((c, f))
        if not xs: continue
        b = st.median(x[0] for x in xs)
        vis = st.median(x[1] / x[2] for x in xs if x[2] > 0)
        ck = st.median(x[3] / x[4] for x in xs if x[4] > 0)
        print(f"{c:<22}{f:<12}{b:>15,.0f}{base / b:>8.2f}{vis:>11.0f}{ck:>12.0f}{xs[0][1]:>16.1f}{xs[0][3]:>10.1f}")
EOF

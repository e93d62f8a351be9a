#!/bin/bash
# The kernel's durable checkpoint write against the real IOR and h5bench's VPIC-IO kernel
# (built outside the repo from their public sources; bench/kernel/HISTORY.md, "Baselines", says how), in
# interleaved rounds on the same disk, about the same bytes (the kernel bench's 1.14 GiB
# step; IOR's blocks are whole 16 MiB transfers, so up to 16 MiB per rank fewer).
#
#   IOR=/path/to/ior H5BENCH_WRITE=/path/to/h5bench_write bench/kernel/peers.sh BUILD [DIR] [--rounds R] [--ranks "1 2 4"]
#
#   K     rewind_bench_kernel --only durable --contenders K (create + write_step + close,
#         fsyncs included)
#   IOR   ior -a MPIIO -c -t 16m -b BLOCK -e -w: collective 16 MiB transfers, fsync at
#         the end of the write phase; its summary's write bandwidth (open + write + fsync
#         + close) of the one iteration
#   VPIC  h5bench_write, 1-D CONTIG/CONTIG, 8 datasets of 4-byte values, collective data
#         and metadata, one time step; its H5Fflush syncs; bytes / "Observed completion
#         time" (create + write + flush + close)
# A peer whose variable is unset or not executable is reported absent and skipped.
# Prints one line per measurement, then per rank count the median of the per-round
# ratios K/IOR and K/VPIC.
set -u
BUILD=${1:?build dir}; shift
DIR=/work/benchdata
case "${1:-}" in ""|-*) ;; *) DIR=$1; shift ;; esac
ROUNDS=4 RANKS="1 2 4"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    *) echo "peers.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$DIR"
KB=$BUILD/bench/kernel/rewind_bench_kernel
have_ior=0 have_vpic=0
[ -n "${IOR:-}" ] && [ -x "$IOR" ] && have_ior=1 || echo "# IOR absent (set IOR=/path/to/ior): skipped"
[ -n "${H5BENCH_WRITE:-}" ] && [ -x "$H5BENCH_WRITE" ] && have_vpic=1 || echo "# h5bench VPIC-IO absent (set H5BENCH_WRITE=/path/to/h5bench_write): skipped"
STEP=1226960320   # bytes of the kernel bench's step (8 variables)
MPI="mpiexec --oversubscribe --mca mpi_yield_when_idle 1"
fresh() { rm -rf "$@"; sync; sleep 1; sync; }   # as the kernel bench: let the disk's discards drain
echo "# host: $(nproc) cores; $(uptime)"
for P in $RANKS; do
  block=$(( STEP / P / 16777216 * 16 ))   # MiB per rank, whole 16 MiB transfers
  parts=$(( STEP / 32 / P ))              # VPIC particles per rank (8 x 4 bytes each)
  cat >"$DIR/vpic.cfg" <<CFG
MEM_PATTERN=CONTIG
FILE_PATTERN=CONTIG
TIMESTEPS=1
DELAYED_CLOSE_TIMESTEPS=0
COLLECTIVE_DATA=YES
COLLECTIVE_METADATA=YES
EMULATED_COMPUTE_TIME_PER_TIMESTEP=0 s
NUM_DIMS=1
DIM_1=$parts
DIM_2=1
DIM_3=1
IO_OPERATION=WRITE
CFG
  for r in $(seq 0 $((ROUNDS - 1))); do
    order="K IOR VPIC"
    case $((r % 3)) in 1) order="IOR VPIC K" ;; 2) order="VPIC K IOR" ;; esac
    for c in $order; do
      case $c in
        K) fresh "$DIR/bench_kernel.h5"
           mibs=$($MPI -n "$P" "$KB" "$DIR" --rounds 1 --only durable --contenders K | awk '$1 == "op" && $3 == "kernel_write_durable" {printf "%.1f", $5 / $6 / 1048576}') ;;
        IOR) [ $have_ior = 1 ] || continue
           fresh "$DIR/ior.bin"
           mibs=$($MPI -n "$P" "$IOR" -a MPIIO -c -t 16m -b "${block}m" -e -w -o "$DIR/ior.bin" |
                 awk '/^Summary of all tests/ {s = 1} s && $1 == "write" {print $2; exit}')
           rm -f "$DIR/ior.bin" ;;
        VPIC) [ $have_vpic = 1 ] || continue
           fresh "$DIR/vpic.h5"
           mibs=$($MPI -n "$P" "$H5BENCH_WRITE" "$DIR/vpic.cfg" "$DIR/vpic.h5" | awk -v b=$((parts * 32 * P)) '/Observed completion time:/ {printf "%.1f", b / $4 / 1048576}')
           rm -f "$DIR/vpic.h5" ;;
      esac
      echo "op $P $r $c ${mibs:-failed}"
    done
  done
done | tee "$DIR/peers.log"
awk '$1 == "op" { v[$2, $3, $4] = $5; ranks[$2] = 1; rounds[$3] = 1 }
  END {
    for (p in ranks) {
      split("IOR VPIC", peers, " ")
      for (i = 1; i <= 2; i++) {
        n = 0
        for (r in rounds) if (v[p, r, "K"] > 0 && v[p, r, peers[i]] > 0) q[++n] = v[p, r, "K"] / v[p, r, peers[i]]
        if (n == 0) continue
        for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (q[y] < q[x]) { t = q[x]; q[x] = q[y]; q[y] = t }
        med = n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
        printf "ratio %d ranks  K / %-4s median %.2f  min %.2f  max %.2f  (%d rounds)\n", p, peers[i], med, q[1], q[n], n
      }
    }
  }' "$DIR/peers.log"
rm -f "$DIR/vpic.cfg" "$DIR/peers.log"

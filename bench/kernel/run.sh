#!/bin/sh
# Kernel write/read vs raw MPI-IO vs dd, interleaved rounds, same bytes, same file system.
#   bench/kernel/run.sh BUILD_DIR [DIR] [--quick | --rounds R] [--vars V]
# DIR: where to write (default /work/benchdata; must be on the disk you care about).
# Prints the machine load before and after, then for 1, 2 and 4 ranks every measurement
# ("op" lines) and the summary ("sum", "ratio", "brk" lines). See docs/benchmarks.md.
# Run it on the machine as it is: on a VM that hands freed memory back to the host, first
# touches are fast or slow by round (bench/kernel/first_touch.cpp), which the interleaved
# rounds and the medians of per-round ratios absorb; use enough rounds (--rounds 12).
set -e
BUILD=${1:?build dir}; shift
DIR=/work/benchdata
case "$1" in ""|-*) ;; *) DIR=$1; shift ;; esac
BIN=$BUILD/bench/kernel/rewind_bench_kernel
mkdir -p "$DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
load() { echo "# $1: $(uptime)"; top -bn1 | sed -n '3p;8,12p' | sed 's/^/#   /'; }
echo "# host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM; $(df -h "$DIR" | awk 'NR==2 {print $1, $2, "fs, free", $4}')"
load before
START=$(date +%s)
for P in 1 2 4; do
  mpiexec -n $P --oversubscribe --mca mpi_yield_when_idle 1 "$BIN" "$DIR" "$@"
  load "after $P ranks"
done
echo "# wall time $(( $(date +%s) - START )) s"
rm -f "$DIR"/bench_kernel.h5 "$DIR"/bench_kernel_serial.h5 "$DIR"/bench_raw.bin "$DIR"/bench_dd.bin "$DIR"/bench_target.bin \
  "$DIR"/bench_kernel_nosum.h5 "$DIR"/bench_kernel_indep.h5 "$DIR"/bench_kernel_coll.h5 "$DIR"/bench_ior.bin "$DIR"/bench_posix.bin "$DIR"/bench_vpic.h5
rm -rf "$DIR"/bench_kernel.views "$DIR"/bench_kernel_serial.views

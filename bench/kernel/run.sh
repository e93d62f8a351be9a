#!/bin/sh
# Kernel write/read vs raw MPI-IO vs dd, side by side, same bytes, same file system.
#   bench/kernel/run.sh BUILD_DIR [DIR]     (DIR: where to write, default /work/bench-tmp)
set -e
BUILD=${1:?build dir}; DIR=${2:-/work/bench-tmp}
BIN=$BUILD/bench/kernel/rewind_bench_kernel
mkdir -p "$DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
drop() { /usr/bin/python3 -c "import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)" "$1"; }
echo "what ranks bytes seconds GiB/s"
for P in 1 2 4; do
  OUT=$(mpiexec -n $P --oversubscribe "$BIN" "$DIR")
  echo "$OUT"
  BYTES=$(echo "$OUT" | awk '/bytes_for_dd/ {print $3}')
  MB=$(( (BYTES + 1048575) / 1048576 ))
  for mode in durable cache; do
    FLAG=""; [ $mode = durable ] && FLAG="conv=fdatasync"
    /usr/bin/time -f %e -o "$DIR/t" dd if=/dev/zero of="$DIR/dd.bin" bs=1M count=$MB $FLAG 2>/dev/null; S=$(tail -1 "$DIR/t")
    awk -v s="$S" -v b=$((MB*1048576)) -v m=$mode -v p=$P 'BEGIN{printf "%-28s %d %d %.3f %.3f\n", "dd_write_" m, p, b, s, b/s/1073741824}'
  done
  drop "$DIR/dd.bin"
  /usr/bin/time -f %e -o "$DIR/t" dd if="$DIR/dd.bin" of=/dev/null bs=1M 2>/dev/null; S=$(tail -1 "$DIR/t")
  awk -v s="$S" -v b=$((MB*1048576)) -v p=$P 'BEGIN{printf "%-28s %d %d %.3f %.3f\n", "dd_read", p, b, s, b/s/1073741824}'
done
rm -f "$DIR"/t "$DIR"/bench_kernel.h5 "$DIR"/bench_raw.bin "$DIR"/dd.bin

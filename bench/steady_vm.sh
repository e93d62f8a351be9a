#!/bin/bash
# Run a benchmark with the VM's memory held steady, then put the VM back as it was.
#
#   bench/steady_vm.sh [--build DIR] [--keep-gib G] -- COMMAND [ARGS...]
#
# Why (docs/benchmarks.md, "Why the write bandwidth is bimodal" and "Steady memory"): on a
# VM whose balloon has free page reporting on (the Firecracker machines this project's CI
# runs on), memory the guest frees is handed back to the host in 2 MiB blocks within
# seconds, and the next first touch of such memory -- a new file's page cache included --
# runs at ~0.36 GB/s instead of ~2.5 GB/s. Each benchmark round frees and refills about a
# step of page cache, so every contender draws fast or slow memory by lottery. A bare-metal
# node has no such lottery. For the duration of COMMAND this script
#   1. raises /sys/module/page_reporting/parameters/page_reporting_order above the
#      buddy allocator's largest order, so no free block qualifies for reporting;
#   2. touches the free memory once (rewind_bench_first_touch, all but --keep-gib GiB,
#      default 2), so that every page the run can be given is backed by the host;
#   3. runs COMMAND, and on exit (also on Ctrl-C) restores the order it found.
# Every contender then meets the same memory. Where page reporting is absent or the file
# is not writable (not root), it says so and runs COMMAND unchanged. Exit status: the
# command's.
set -u
BUILD=build KEEP_GIB=2
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --keep-gib) KEEP_GIB=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "steady_vm.sh: unknown option '$1' (usage: steady_vm.sh [--build DIR] [--keep-gib G] -- COMMAND...)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "steady_vm.sh: no command given (usage: steady_vm.sh [--build DIR] [--keep-gib G] -- COMMAND...)" >&2; exit 2; }
case "$KEEP_GIB" in ''|*[!0-9]*) echo "steady_vm.sh: --keep-gib must be a whole number of GiB, got '$KEEP_GIB'" >&2; exit 2 ;; esac

ORDER=/sys/module/page_reporting/parameters/page_reporting_order
REPORTED=/sys/module/page_reporting/parameters/reported_kib
TOUCH=$BUILD/bench/kernel/rewind_bench_first_touch
if [ ! -e "$ORDER" ]; then
  echo "# steady_vm: no free page reporting on this machine; running unchanged"
  exec "$@"
fi
if [ ! -w "$ORDER" ]; then
  echo "# steady_vm: $ORDER is not writable (run as root to hold memory steady); running unchanged"
  exec "$@"
fi
[ -x "$TOUCH" ] || { echo "steady_vm.sh: $TOUCH not found (build the benchmarks, or pass --build DIR)" >&2; exit 2; }

# One steady_vm at a time: a second one would save the first one's raised order as "the
# order it found" and restore that. Wait for the other run instead.
exec 9> /run/lock/rewind-steady-vm.lock
if ! flock -n 9; then
  echo "# steady_vm: another steady_vm run holds /run/lock/rewind-steady-vm.lock; waiting for it"
  flock 9
fi
OLD=$(cat "$ORDER")
restore() { echo "$OLD" > "$ORDER" && echo "# steady_vm: page_reporting_order restored to $OLD"; }
trap restore EXIT
trap 'exit 130' INT TERM
# MAX_PAGE_ORDER is 10 on x86-64 (4 MiB blocks): order 11 matches no free block.
echo 11 > "$ORDER" || { echo "steady_vm.sh: cannot write $ORDER" >&2; exit 1; }
free_gib=$(awk '/^MemFree:/ {print int($2 / 1048576)}' /proc/meminfo)
gib=$(( free_gib - KEEP_GIB ))
[ "$gib" -gt 64 ] && gib=64
echo "# steady_vm: free page reporting paused (page_reporting_order $OLD -> 11; reported so far $(cat "$REPORTED" 2>/dev/null || echo ?) KiB)"
if [ "$gib" -ge 1 ]; then
  t0=$(date +%s)
  rates=$("$TOUCH" "$gib" | awk '{printf "%s ", $(NF-1)}')
  echo "# steady_vm: touched $gib of $free_gib free GiB once in $(( $(date +%s) - t0 )) s (GB/s per GiB: $rates)"
fi
r0=$(cat "$REPORTED" 2>/dev/null || echo 0)
"$@" 9>&-
rc=$?
echo "# steady_vm: KiB reported to the host during the command: $(( $(cat "$REPORTED" 2>/dev/null || echo 0) - r0 ))"
exit $rc

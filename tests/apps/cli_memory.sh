#!/bin/bash
# The memory estimate `rewind tree` and `rewind run` print against
# the peak RSS of a real run of the README's case, read from /proc/PID/status (VmHWM) as
# a user would: within a factor 1.5 either way of what each process really used, on one
# process and on 2 compute ranks beside the neighbourhood server. (The old model, 96 MiB
# per process before any grid and 2-D grids without their third halo layer, said ~100
# MiB per compute rank and ~96 MiB for the tree where the run used ~39 and ~27 MiB.)
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
short=(--set time.end=0.1 --set output.checkpoint_interval=0.05)

# peak_rss LOG CMD...: runs CMD (output in LOG) and prints "RANK KIB" for each of its
# rewind processes, the rank from OMPI_COMM_WORLD_RANK (0 without mpiexec), KIB their
# VmHWM last read before they ended (a high-water mark: it only grows).
peak_rss() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  local top=$! p rank kib
  declare -A peak=()
  while kill -0 "$top" 2>/dev/null; do
    for p in "$top" $(pgrep -P "$top"); do
      [ "$(cat /proc/"$p"/comm 2>/dev/null)" = rewind ] || continue
      kib=$(awk '/^VmHWM/ {print $2}' /proc/"$p"/status 2>/dev/null) || continue
      rank=$(tr '\0' '\n' 2>/dev/null </proc/"$p"/environ | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
      [ -n "$kib" ] && peak[${rank:-0}]=$kib
    done
    sleep 0.05
  done
  wait "$top" || echo "exit $?" >>"$log"
  for rank in "${!peak[@]}"; do echo "$rank ${peak[$rank]}"; done | sort -n
}
# mib LOG WORDS: the MiB figure the estimate line of LOG prints before WORDS.
mib() { grep -m1 '^estimate' "$1" | grep -o "~[0-9.]* MiB $2" | grep -o '[0-9.]*' | head -1; }
# within A B: A / B in [1/1.5, 1.5].
within() { awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; exit !(b > 0 && r >= 1 / 1.5 && r <= 1.5) }'; }

peak_rss one.log "$rewind" run "$case_file" "${short[@]}" --set output.file='"one.h5"' --force >one.rss
est=$(mib one.log "in the one process") used=$(awk '$1 == 0 {printf "%.1f", $2 / 1024}' one.rss)
check "one process: the estimate (~${est:-?} MiB) within 1.5x of the peak RSS (${used:-?} MiB)" \
  "! grep -q '^exit' one.log && within '${est:-0}' '${used:-0}'"

peak_rss two.log "$mpiexec" -n 3 "$rewind" run "$case_file" "${short[@]}" --set output.file='"two.h5"' --force >two.rss
est=$(mib two.log "per compute rank") tree=$(mib two.log "on rank 0")
server=$(awk '$1 == 0 {printf "%.1f", $2 / 1024}' two.rss)
check "2 compute ranks: the run printed an estimate and 3 processes were measured" \
  "! grep -q '^exit' two.log && [ -n '$est' ] && [ -n '$tree' ] && [ \$(wc -l <two.rss) = 3 ]" || cat two.log two.rss
check "rank 0 (the tree): the estimate (~${tree:-?} MiB) within 1.5x of its peak RSS (${server:-?} MiB)" \
  "within '${tree:-0}' '${server:-0}'"
for rank in 1 2; do
  used=$(awk -v r=$rank '$1 == r {printf "%.1f", $2 / 1024}' two.rss)
  check "compute rank $rank: the estimate (~${est:-?} MiB) within 1.5x of its peak RSS (${used:-?} MiB)" \
    "within '${est:-0}' '${used:-0}'"
done
# rewind tree prints the same figures before building anything.
"$rewind" tree "$case_file" --ranks 2 >tree.out 2>&1
check "rewind tree --ranks 2 prints the run's estimate" \
  "[ '$(mib tree.out 'per compute rank')' = '$est' ] && [ '$(mib tree.out 'on rank 0')' = '$tree' ]"
exit "$fail"

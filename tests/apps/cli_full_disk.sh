#!/usr/bin/env bash
# A full disk, end to end: `rewind run` on a 3 MiB file system (a tmpfs, mounted here as
# root; SKIPPED with exit 77 where mounting is not allowed) — one process, two compute
# ranks under mpirun, and dedicated I/O ranks:
#  - exits 1 (no crash) with one error line naming the step and "No space left on device";
#  - the file keeps its committed steps, nothing uncommitted;
#  - the failed step's space is given back; a branch of the file written elsewhere
#    while the file system is full again cannot list itself in the full directory's
#    registry: it says so, and leaves no empty registry;
#  - once there is room again (the file system grown), `rewind run --restart F` continues
#    F in place and ends as a run that never met a full disk, bit for bit.
#   cli_full_disk.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
[ "$(id -u)" = 0 ] || { echo "SKIP: mounting a small file system needs root"; exit 77; }
mnt=$tmp/small
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=3m tmpfs "$mnt" 2>mount.err; then
  echo "SKIP: cannot mount a tmpfs here: $(cat mount.err)"
  exit 77
fi
cleanup() {
  cd /
  for _ in $(seq 50); do umount "$mnt" 2>/dev/null && break; sleep 0.2; done
  rm -rf "$tmp"
}
trap cleanup EXIT
case_file="$src/cases/default.toml"
run_args=(--set time.end=0.5 --set output.checkpoint_interval=0.1 --set output.visualisation_interval=0 -q)
"$rewind" run "$case_file" -o ref.h5 "${run_args[@]}" >/dev/null 2>&1
steps_of() { "$rewind" info "$1" --json | python3 -c "import json,sys; print(' '.join(f\"{s['step']}{'c' if s['committed'] else 'u'}\" for s in json.load(sys.stdin)['steps']))"; }
run_on() {  # NP STRATEGY ARGS...: rewind run (under mpiexec for NP > 1) in the small file system
  local np=$1 strategy=$2
  shift 2
  if [ "$np" = 1 ]; then (cd "$mnt" && "$rewind" run "$@" --set "output.io.strategy=\"$strategy\"")
  else (cd "$mnt" && "$mpiexec" -q -n "$np" "$rewind" run "$@" --set "output.io.strategy=\"$strategy\""); fi
}

for setup in "1 auto" "3 auto" "4 dedicated"; do
  read -r np strategy <<<"$setup"
  what="$np process(es), $strategy"
  rm -rf "$mnt"/*
  mount -o remount,size=3m "$mnt"
  run_on "$np" "$strategy" "$case_file" -o s.h5 "${run_args[@]}" >full.log 2>&1
  rc=$?
  grep -v '^mca_fbtl_posix_pwritev: ' full.log >errors.log  # Open MPI's OMPIO prints its own line per failed write
  check "$what: the full disk ends the run with exit 1, no crash" "[ $rc = 1 ] && ! grep -Eqi 'segmentation|signal' full.log"
  check "$what: one error line naming the step and the cause, and how to continue" \
    "[ \$(wc -l <errors.log) = 1 ] && grep -Eq 'error: s.h5: step [0-9]+ \(t = [0-9.]+\) not written.*No space left on device; the file keeps its committed steps: when there is room again, .rewind run --restart s.h5. continues it' errors.log"
  [ "$(wc -l <errors.log)" = 1 ] || cat full.log
  steps=$(steps_of "$mnt/s.h5")
  check "$what: the file keeps its committed steps, nothing uncommitted ($steps)" \
    "[ -n '$steps' ] && ! echo '$steps' | grep -q u && [ \"\$(steps_of ref.h5 | cut -c1-${#steps})\" = '$steps' ]"
  if [ "$np" = 1 ]; then
    # The failed step gave its space back; fill what is left, as another job would.
    head -c 64M /dev/zero >"$mnt/filler" 2>/dev/null
    (cd "$mnt" && "$rewind" run --restart s.h5@0 --set physics.nu=0.002 --set time.end=0.01 -o "$tmp/b.h5" -q) >branch.log 2>&1
    rm -f "$mnt/filler"
    check "a branch cannot list itself in the full directory's registry: it says so, leaves no empty registry" \
      "[ $? = 0 ] && grep -q 'is not listed in .*s.h5.branches (No space left on device)' branch.log && ! [ -e '$mnt/s.h5.branches' -a ! -s '$mnt/s.h5.branches' ]"
  fi
  mount -o remount,size=64m "$mnt"
  run_on "$np" "$strategy" --restart s.h5 --set time.end=0.5 -q >cont.log 2>&1
  check "$what: with room again, --restart s.h5 continues it in place" "[ $? = 0 ] && ! ls '$mnt'/s.branch*.h5 >/dev/null 2>&1"
  [ -s cont.log ] && cat cont.log
  check "$what: ... and ends as a run that never met a full disk, bit for bit" \
    "[ \"\$(steps_of '$mnt/s.h5')\" = \"\$(steps_of ref.h5)\" ] && same '$mnt/s.h5' ref.h5 && \"$rewind\" verify -q '$mnt/s.h5'"
done
exit $fail

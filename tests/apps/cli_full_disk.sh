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

plugins=$(realpath "$(dirname "$rewind")/../lib/hdf5-plugins")
h5py_reads() {  # FILE: h5py reads every dataset of every committed step whole
  HDF5_PLUGIN_PATH=$plugins:/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins /usr/bin/python3 - "$1" >py.out 2>&1 <<'EOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
idx = f['simulation/index'][...]
n = 0
def visit(name, obj):
    global n
    if isinstance(obj, h5py.Dataset):
        a = obj[...]
        assert a.dtype.kind not in 'f' or np.all(np.isfinite(a)), name
        n += 1
for row in idx:
    g = f['simulation/step_%08d' % row['step']]
    assert g.attrs['committed'] == 1, row['step']
    g.visititems(visit)
steps = sorted(k for k in f['simulation'] if k.startswith('step_'))
assert len(steps) == len(idx) > 0, (steps, len(idx))
print(len(idx), 'steps,', n, 'datasets read')
EOF
}
continues_as() {  # WHAT NP STRATEGY REFERENCE: room again, --restart s.h5 ends as REFERENCE
  local what=$1 np=$2 strategy=$3 reference=$4
  mount -o remount,size=64m "$mnt"
  run_on "$np" "$strategy" --restart s.h5 --set time.end=0.5 -q >cont.log 2>&1
  check "$what: with room again, --restart s.h5 continues it in place" "[ $? = 0 ] && ! ls '$mnt'/s.branch*.h5 >/dev/null 2>&1"
  [ -s cont.log ] && cat cont.log
  check "$what: ... and ends as a run that never met a full disk, bit for bit (rewind verify, h5py)" \
    "[ \"\$(steps_of '$mnt/s.h5')\" = \"\$(steps_of $reference)\" ] && same '$mnt/s.h5' $reference && \"$rewind\" verify -q '$mnt/s.h5' && h5py_reads '$mnt/s.h5'"
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
  continues_as "$what" "$np" "$strategy" ref.h5
done

# Compressed steps (chunked, through HDF5's filters) meet the full disk the same way: the
# step is refused before HDF5 writes it when the file system has not the room for it as
# it is, or abandoned and its bytes given back; `rewind verify` and h5py (Debian's serial
# HDF5, no Rewind code) read every committed step; the continue ends bit for bit as the
# run that never met a full disk (lossless codecs: ref.h5 itself; zfp: its own reference).
zfp_args=(--set 'output.io.visualisation_compression="zfp"' --set output.io.zfp_accuracy=1e-3
          --set output.visualisation_interval=0.05)
"$rewind" run "$case_file" -o ref_zfp.h5 "${run_args[@]}" "${zfp_args[@]}" >/dev/null 2>&1
# NP STRATEGY CODEC SIZE: a file system on which the compressed run stops part way (before
# this was fixed, "1 auto deflate 2600k" left a group verify called damaged, and runs under
# mpirun could hang in HDF5).
for setup in "1 auto deflate 2600k" "3 aggregated bitshuffle 3000k" "4 dedicated deflate 3000k" \
             "3 collective zfp 3000k"; do
  read -r np strategy codec size <<<"$setup"
  what="$codec, $np process(es), $strategy"
  if [ "$codec" = zfp ]; then codec_args=("${zfp_args[@]}") reference=ref_zfp.h5
  else codec_args=(--set "output.io.compression=\"$codec\"") reference=ref.h5; fi
  rm -rf "${mnt:?}"/*
  mount -o remount,size="$size" "$mnt"
  run_on "$np" "$strategy" "$case_file" -o s.h5 "${run_args[@]}" "${codec_args[@]}" >full.log 2>&1 &
  job=$!
  # The watchdog's output goes nowhere: its sleep outlives `kill $watchdog` and would hold
  # ctest's pipe open (ctest then waits the 120 s out after the test is done).
  ( sleep 120; kill -9 "$job" 2>/dev/null ) >/dev/null 2>&1 & watchdog=$!
  wait "$job"
  rc=$?
  kill "$watchdog" 2>/dev/null
  grep -v '^mca_fbtl_posix_pwritev: ' full.log >errors.log
  check "$what: the full disk ends the run with exit 1, no crash, no hang (rc $rc)" \
    "[ $rc = 1 ] && ! grep -Eqi 'segmentation|signal' full.log"
  check "$what: one error line naming the step and No space left on device" \
    "[ \$(wc -l <errors.log) = 1 ] && grep -Eq 'error: s.h5: step [0-9]+ \(t = [0-9.]+\) not written.*No space left on device' errors.log"
  [ "$(wc -l <errors.log)" = 1 ] || cat full.log
  check "$what: rewind verify passes" "'$rewind' verify -q '$mnt/s.h5' >verify.out 2>&1" || cat verify.out
  steps=$(steps_of "$mnt/s.h5")
  check "$what: the file keeps its committed steps, nothing uncommitted ($steps)" \
    "[ -n '$steps' ] && ! echo '$steps' | grep -q u && [ \"\$(steps_of $reference | cut -c1-${#steps})\" = '$steps' ]"
  check "$what: h5py reads every dataset of every committed step" "h5py_reads '$mnt/s.h5'" || cat py.out
  continues_as "$what" "$np" "$strategy" "$reference"
done
exit $fail

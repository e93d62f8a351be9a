#!/usr/bin/env bash
# A program on the C API (capi_roundtrip, C99) or the Fortran module (fortran_roundtrip)
# under mpiexec on 1-4 ranks: its own checks; the file it wrote and its branch through
# the stock tools (rewind verify, lineage); the h5py oracle — the parents it gave no
# arrays hold the average of their leaves; and every step the same from every rank
# count, bit for bit. capi_roundtrip also writes its leaves from float32 arrays: the h5py
# oracle float_oracle.py checks what the file stores. The statistics (format 1.9) are numpy's
# min, max and detail of the stored cells (statistics_oracle.py).
#   roundtrip.sh PROGRAM REWIND SOURCE_DIR MPIEXEC
set -u
prog=$(realpath "$1")
source "$(dirname "$0")/../apps/lib.sh" "$2" "$3" "$4"
steps() { "$rewind" info "$1" --json | /usr/bin/python3 -c "import json,sys; print(*[s['step'] for s in json.load(sys.stdin)['steps']])"; }
for np in 1 2 3 4; do
  "$mpiexec" -n $np "$prog" out$np.h5 >run$np.log 2>&1
  check "np $np: every check of the program holds" "[ $? = 0 ]"
  grep FAIL run$np.log | head -5
  check "np $np: rewind verify passes its file and the branch" "$rewind verify out$np.h5 >/dev/null && $rewind verify out$np.h5.branch.h5 >/dev/null"
  check "np $np: the parents given no arrays are the average of their leaves (h5py oracle)" "lod_ok out$np.h5 && lod_ok out$np.h5.branch.h5"
  check "np $np: the per-grid statistics of every step are numpy's (h5py oracle)" \
    "/usr/bin/python3 $src/tests/support/statistics_oracle.py out$np.h5 >stats.out 2>&1" || cat stats.out
  if [ "$(basename "$prog")" = capi_roundtrip ]; then
    check "np $np: float32 input stored as the file's type, values as given (h5py oracle)" \
      "/usr/bin/python3 $src/tests/api/float_oracle.py out$np.h5 out$np.h5.float.h5 >float.out 2>&1" || cat float.out
    check "np $np: ... and its parents are the average of its leaves (h5py oracle)" "lod_ok out$np.h5.float.h5"
  fi
  for s in $(steps out1.h5); do
    check "np $np: step $s the same as on one process, bit for bit" "same out1.h5@$s out$np.h5@$s"
  done
done
"$rewind" lineage out1.h5.branch.h5 >lineage.out 2>&1
check "rewind lineage: the branch under its parent, with its change" "grep -q 'out1.h5' lineage.out && grep -Eq '[a-z]+=[0-9.]+' lineage.out"
grep '^ok' run1.log
exit $fail

#!/usr/bin/env bash
# A program on the C API (capi_roundtrip, C99) or the Fortran module (fortran_roundtrip)
# under mpiexec on 1-4 ranks: its own checks; the file it wrote and its branch through
# the stock tools (rewind verify, lineage); the h5py oracle — the parents it gave no
# arrays hold the average of their leaves; and every step the same from every rank
# count, bit for bit. capi_roundtrip also writes its leaves from float32 arrays: the h5py
# oracle float_oracle.py checks what the file stores. The statistics (format 1.9) are numpy's
# min, max and detail of the stored cells, the shares (1.10) numpy's per-octant shares of the
# parents' details (statistics_oracle.py); both the same from every rank count, bit for bit.
#   roundtrip.sh PROGRAM REWIND SOURCE_DIR MPIEXEC
set -u
prog=$(realpath "$1")
source "$(dirname "$0")/../apps/lib.sh" "$2" "$3" "$4"
# stats_same A B: every step's statistics/* and shares/* of file B are A's, bit for bit, grid
# by grid (h5py; the grids matched by uid: rows follow the ranks, (level, rank, key)).
stats_same() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["/simulation"] for p in sys.argv[1:3])
steps = sorted(k for k in a if k.startswith("step_"))
assert steps == sorted(k for k in b if k.startswith("step_")), "different steps"
n = 0
for s in steps:
    ua, ub = a[s]["uid"][()], b[s]["uid"][()]
    assert sorted(ua) == sorted(ub), (s, "different grids")
    ia, ib = np.argsort(ua), np.argsort(ub)  # rows of the same uids, in uid order
    for grp in ("statistics", "shares"):
        assert (grp in a[s]) == (grp in b[s]), (s, grp)
        for var in (a[s][grp] if grp in a[s] else []):
            x, y = a[s][grp][var][()][ia], b[s][grp][var][()][ib]
            assert x.shape == y.shape and np.array_equal(x.view(np.uint64), y.view(np.uint64)), (s, grp, var)
            n += grp == "shares"
assert n > 0, "no shares compared"
PY
}
steps() { "$rewind" info "$1" --json | /usr/bin/python3 -c "import json,sys; print(*[s['step'] for s in json.load(sys.stdin)['steps']])"; }
for np in 1 2 3 4; do
  "$mpiexec" -n $np "$prog" out$np.h5 >run$np.log 2>&1
  check "np $np: every check of the program holds" "[ $? = 0 ]"
  grep FAIL run$np.log | head -5
  check "np $np: rewind verify passes its file and the branch" "$rewind verify out$np.h5 >/dev/null && $rewind verify out$np.h5.branch.h5 >/dev/null"
  check "np $np: the parents given no arrays are the average of their leaves (h5py oracle)" "lod_ok out$np.h5 && lod_ok out$np.h5.branch.h5"
  check "np $np: the per-grid statistics and shares of every step are numpy's (h5py oracle)" \
    "/usr/bin/python3 $src/tests/support/statistics_oracle.py out$np.h5 >stats.out 2>&1" || cat stats.out
  check "np $np: the statistics and shares the same as on one process, bit for bit (h5py)" "stats_same out1.h5 out$np.h5"
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

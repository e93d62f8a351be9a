#!/usr/bin/env bash
# capi_misuse (tests/api/capi_misuse.c) under mpiexec on 2 and 3 ranks: every misuse
# refused alike on every rank with one line (the program's own checks), then its file
# through `rewind verify` and the h5py oracle (misuse_oracle.py): exactly the good steps,
# with the values written.
#   misuse.sh PROGRAM REWIND SOURCE_DIR MPIEXEC
set -u
prog=$(realpath "$1")
source "$(dirname "$0")/../apps/lib.sh" "$2" "$3" "$4"
for np in 2 3; do
  "$mpiexec" -n $np "$prog" misuse$np.h5 >run$np.log 2>&1
  check "np $np: every misuse refused on every rank with one line, the good steps written" "[ $? = 0 ]"
  grep -E 'FAIL|status' run$np.log | head -8
  check "np $np: 17 refusals, each message one line naming the call" \
    "[ \$(grep -c '^refused: rewind_' run$np.log) = 17 ]"
  check "np $np: rewind verify passes the file" "$rewind verify misuse$np.h5 >verify$np.log 2>&1" || head -5 verify$np.log
  check "np $np: h5py finds exactly steps 1, 2, 3 with the values written" \
    "/usr/bin/python3 $src/tests/api/misuse_oracle.py misuse$np.h5 >oracle$np.log 2>&1" || head -5 oracle$np.log
done
grep '^refused' run2.log
exit $fail

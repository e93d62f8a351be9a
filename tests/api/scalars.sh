#!/usr/bin/env bash
# capi_scalars (tests/api/capi_scalars.c) under mpiexec on 1, 2 and 3 ranks: a step's
# named scalars as the C program set them, checked by the h5py oracle
# (scalars_oracle.py), which also holds `rewind info` (--json and text) and Python's
# Step.scalars to what h5py read; the file passes `rewind verify`.
#   scalars.sh PROGRAM REWIND SOURCE_DIR MPIEXEC
set -u
prog=$(realpath "$1")
source "$(dirname "$0")/../apps/lib.sh" "$2" "$3" "$4"
for np in 1 2 3; do
  "$mpiexec" -n $np "$prog" scalars$np.h5 >run$np.log 2>&1
  check "np $np: the program's checks hold on every rank" "[ $? = 0 ]" || grep FAIL run$np.log | head -5
  check "np $np: rewind verify passes the file" "$rewind verify scalars$np.h5 >verify$np.log 2>&1" || head -5 verify$np.log
  check "np $np: h5py reads what was set; info --json, info and Step.scalars say the same" \
    "PYTHONPATH=$src/python /usr/bin/python3 $src/tests/api/scalars_oracle.py scalars$np.h5 $rewind $np >oracle$np.log 2>&1" \
    || grep FAIL oracle$np.log | head -5
done
grep '^refused' run2.log
exit $fail

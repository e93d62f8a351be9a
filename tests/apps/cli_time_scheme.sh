#!/usr/bin/env bash
# Heun's rk2 (solver.time_scheme = "rk2") through the real `rewind run`, on one process and
# under mpirun with the neighbourhood server: Poiseuille flow between two immersed walls
# (tests/support/immersed-channel.toml) reaches the analytic profile (h5py + numpy oracle),
# the same steps on 1, 2 and 3 compute ranks, a restart continues bit-identically, and a case
# that asks for rk2 with the upwind blend is refused with one line, writing nothing.
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/tests/support/immersed-channel.toml"
rk2=(--set 'solver.time_scheme="rk2"')
oracle() { /usr/bin/python3 "$src/tests/support/channel_oracle.py" "$@" >oracle.out 2>&1 || { cat oracle.out; return 1; }; }

"$rewind" run "$case_file" "${rk2[@]}" -q -o np1.h5 --force >np1.log 2>&1
check "rk2 run on one process" "[ -f np1.h5 ]"
check "rk2: the steady profile within 1.5 % of u_max (20 cells across the gap: 1.1 % measured)" "oracle np1.h5 0.015"
for np in 3 4; do
  "$mpiexec" -n $np "$rewind" run "$case_file" "${rk2[@]}" -q -o np$np.h5 --force >np$np.log 2>&1
  check "rk2 under mpiexec -n $np: the same last step as on one process" "same np1.h5 np$np.h5"
done
# Explicit Euler on the same case, for the oracle's sake: the steady state does not depend on
# the scheme (second order in h either way).
"$rewind" run "$case_file" -q -o euler.h5 --force >euler.log 2>&1
check "euler: the steady profile within 1.5 % of u_max too" "oracle euler.h5 0.015"

# Restart: 40 steps at once, or 20 then 20 more under mpirun (the scheme from the file's case).
"$rewind" run "$case_file" "${rk2[@]}" -q --steps 40 --set output.checkpoint_every=20 -o whole.h5 --force >whole.log 2>&1
"$rewind" run "$case_file" "${rk2[@]}" -q --steps 20 --set output.checkpoint_every=20 -o half.h5 --force >half.log 2>&1
"$mpiexec" -n 3 "$rewind" run --restart half.h5 -q --steps 20 >cont.log 2>&1
check "rk2: run + restart under mpirun == uninterrupted run" "same whole.h5 half.h5"
check "rk2: the two runs are not the trivial state" "! same whole.h5@0 whole.h5"

# rk2 with the default upwind blend (1): one line naming the key, non-zero exit, no file.
if "$rewind" run "$case_file" --set 'solver.time_scheme="rk2"' --set solver.upwind=1 -o refused.h5 >refused.log 2>&1; then
  code=0
else
  code=$?
fi
check "rk2 with the upwind blend: non-zero exit" "[ $code -ne 0 ]"
check "rk2 with the upwind blend: one line naming solver.upwind" \
  "[ \$(wc -l <refused.log) -eq 1 ] && grep -q 'solver.upwind' refused.log"
check "rk2 with the upwind blend: no output file" "[ ! -e refused.h5 ]"
exit $fail

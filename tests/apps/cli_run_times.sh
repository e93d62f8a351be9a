#!/usr/bin/env bash
# Settings a run cannot honour are refused before it starts (docs/reliability.md,
# "Settings that cannot hang a run"): an output interval below a millionth of time.end
# (1e-9 once made a 4 s run take 4e9 steps; 1e-300 wrote 13 GB), a fixed step or a step
# cap that would take more than a billion steps, a safety factor that never ends the run.
# Each is one line naming the key, the value and the least value allowed, a non-zero exit
# at once (1 process and under mpirun), no file created, an existing file untouched (a
# --force run and a --restart over it); `rewind tree` refuses the same, `rewind keys`
# documents the rule, and an interval at the bound runs and writes a file `rewind verify`
# and h5py read.
source "$(dirname "$0")/lib.sh" "$@"
case_file=$src/cases/default.toml
py=/usr/bin/python3

refused() {  # label, expected text, np, subcommand args...
  local label=$1 want=$2 np=$3; shift 3
  local start=$SECONDS rc
  if [ "$np" = 1 ]; then timeout 60 "$rewind" "$@" >out 2>err; rc=$?
  else timeout 60 "$mpiexec" -n "$np" "$rewind" "$@" >out 2>err; rc=$?; fi
  check "$label: non-zero exit, at once" "[ $rc != 0 ] && [ $rc != 124 ] && [ $((SECONDS - start)) -lt 30 ]"
  # (mpirun itself adds a notice about the non-zero exit unless run with -q)
  check "$label: one error line naming '$want'" "[ \$(grep -c '^rewind' err) = 1 ] && grep -qF -- \"$want\" err" ||
    head -5 out err
}
# steps_h5py FILE: "step:time:kind" of every committed step, by h5py alone.
steps_h5py() { $py "$src/tests/support/steps_h5py.py" "$1"; }

refused "checkpoint_interval=1e-9, one process" "output.checkpoint_interval: 1e-09 s is too short for this run: 0 (off) or at least 4e-06 s" \
  1 run "$case_file" --output a.h5 --set output.checkpoint_interval=1e-9
check "... no file created" "[ ! -e a.h5 ]"
refused "checkpoint_interval=1e-9, mpirun -n 3" "at least 4e-06 s (a millionth of time.end = 4" \
  3 run "$case_file" --output a.h5 --set output.checkpoint_interval=1e-9
check "... no file created" "[ ! -e a.h5 ]"
refused "checkpoint_interval=1e-300" "output.checkpoint_interval: 1e-300 s is too short" \
  1 run "$case_file" --output a.h5 --set output.checkpoint_interval=1e-300
refused "visualisation_interval=1e-12 with time.end=30" "output.visualisation_interval: 1e-12 s is too short for this run: 0 (off) or at least 3e-05 s" \
  1 run "$case_file" --output a.h5 --set time.end=30 --set output.visualisation_interval=1e-12
refused "an interval below a fixed time.dt" "at least 0.001 s (the fixed time.dt" \
  1 run "$case_file" --output a.h5 --set time.dt=0.001 --set output.visualisation_interval=0.0005
refused "time.dt=1e-300" "time.dt: 1e-300 s would take more than a billion steps to time.end = 4: give 0 (automatic) or at least 4e-09 s" \
  1 run "$case_file" --output a.h5 --set time.dt=1e-300
refused "time.dt_max=1e-300" "time.dt_max: 1e-300 s would take more than a billion steps" \
  3 run "$case_file" --output a.h5 --set time.dt_max=1e-300
refused "time.safety=1e-300" "time.safety: must be in [0.001, 1], got 1e-300" \
  1 run "$case_file" --output a.h5 --set time.safety=1e-300
check "no file created by any of them" "[ ! -e a.h5 ]"
refused "rewind tree refuses the same" "output.checkpoint_interval: 1e-09 s is too short" \
  1 tree "$case_file" --set output.checkpoint_interval=1e-9

# An existing file is left as it was: a --force run over it, a restart of it.
run_compute 2 "$case_file" --output b.h5 --steps 3 --set output.checkpoint_interval=0.05 -q
check "a good run writes b.h5" "[ $? = 0 ]" || tail -3 log
sum=$(sha256sum b.h5)
refused "--force over b.h5 with checkpoint_interval=1e-9" "output.checkpoint_interval: 1e-09 s" \
  3 run "$case_file" --output b.h5 --force --set output.checkpoint_interval=1e-9
refused "--restart b.h5 with checkpoint_interval=1e-300" "output.checkpoint_interval: 1e-300 s" \
  1 run --restart b.h5 --set output.checkpoint_interval=1e-300
refused "--restart b.h5 with a far later end and the stored interval" \
  "output.checkpoint_interval: 0.05 s is too short for this run: 0 (off) or at least 1e+06 s" \
  1 run --restart b.h5 --set time.end=1e12
check "b.h5 is untouched, byte for byte" "[ \"\$(sha256sum b.h5)\" = '$sum' ]"
check "... it verifies" "\"$rewind\" verify -q b.h5 >v.out 2>&1" || cat v.out
check "... and h5py reads its 2 committed steps" "[ \"\$(steps_h5py b.h5 | wc -w)\" = 2 ]"
check "no branch file beside it" "[ -z \"\$(ls | grep -v '^b.h5$' | grep '\.h5$')\" ]"

# The table says so.
COLUMNS=200 "$rewind" keys output.checkpoint_interval >k.out 2>&1
check "rewind keys documents the interval's rule" "grep -qF '[0, 1e+12]; 0 or >= time.end / 1e6 and >= time.dt' k.out"

# An interval at the bound is honoured: time.end = 0.01, interval 1e-8 (a millionth):
# every step lands on an output time, as the user asked, and the file reads.
run_compute 2 "$case_file" --output c.h5 --steps 3 --set time.end=0.01 --set output.checkpoint_interval=1e-8 \
  --set output.visualisation_interval=0 -q
check "an interval of exactly a millionth of time.end runs" "[ $? = 0 ]" || tail -3 log
check "... its file verifies" "\"$rewind\" verify -q c.h5 >v.out 2>&1" || cat v.out
got=$(steps_h5py c.h5)
echo "c.h5 (h5py): $got"
check "... h5py reads a checkpoint at every step, at multiples of 1e-8" \
  "[ '$got' = '0:0:checkpoint 1:1e-08:checkpoint 2:2e-08:checkpoint 3:3e-08:checkpoint' ]"
exit $fail

#!/usr/bin/env bash
# Steering a live run to times it cannot honour is refused, and the run goes on
# (docs/reliability.md, "Settings that cannot hang a run"):
#  - `set output.checkpoint_interval=1e-12` (before: accepted, every step shortened to
#    1e-12 s: the job froze), and `=1e-20` later (before: 0.12 + 1e-20 == 0.12, no
#    checkpoint until the end): one error line with the reason and the least value;
#  - `set time.end` below and at the current time (before: the job ended silently), and
#    an in-job branch whose time.end is before its branch point (refused as a --restart is);
#  - the job is where it was after each (same state, step, time), resumes, keeps stepping
#    and finishes by itself; its file verifies (`rewind verify`), h5py reads its steps,
#    and every step is bit for bit that of a run that was never steered.
#   cli_steer_times.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
. "$src/tests/collector/serve_util.sh"  # check, start_live, pause_at, status, one_error, wait_job
in_tmpdir
export REWIND_TOKEN="times-$$-$RANDOM$RANDOM"  # the run's token; the clients take it from here too
steps=40
args=("$src/cases/default.toml" --steps $steps --set time.end=30 --set output.checkpoint_interval=0.01
      --set output.visualisation_interval=0 -q)

start_live 4 s.h5 "${args[@]}"
field() { echo "$1" | cut -d' ' -f"$2"; }
# refused NAME PATTERN KEY=VALUE: one error line matching PATTERN, the run where it was.
refused() {
  local before
  before=$(status)
  check "set $3: one error line, $1" "one_error ${steer[*]} set '$3' && grep -Eq '$2' err.out"
  sed 's/^/       /' err.out
  check "... and the run is where it was ($before)" "[ \"\$(status)\" = '$before' ]"
}

pause_at 3
now=$(status)
echo "paused: $now"
check "paused a few steps in" "[ \"$(field "$now" 1)\" = paused ]"
refused "too short for the run" \
  "output.checkpoint_interval: 1e-12 s is too short for this run: 0 \(off\) or at least 3e-05 s" \
  output.checkpoint_interval=1e-12
t=$(field "$now" 3)
half=$($py -c "print(repr($t / 2))")
refused "time.end below the current time" "time.end: .* is not after the current time t = .*the run would end at once" \
  "time.end=$half"
refused "time.end at the current time" "time.end: .* is not after the current time" "time.end=$t"
check "branch with time.end before its branch point: one error line" \
  "one_error ${steer[*]} branch --from latest --set time.end=$half --output early.h5 && grep -q 'time.end = .* is not after the restart step.s time' err.out"
sed 's/^/       /' err.out
check "... no branch file, and the run is where it was" "[ ! -e early.h5 ] && [ \"\$(status)\" = '$now' ]"
check "the parameters still hold the case's values" \
  "${steer[*]} parameters --json 2>/dev/null | $py -c \"import json, sys; p = {q['name']: q['value'] for q in json.load(sys.stdin)['parameters']}; sys.exit(p['output.checkpoint_interval'] != 0.01 or p['time.end'] != 30.0)\""

# Later (t well above 1e-20 / 2^-52): the interval would be lost in round-off.
pause_at 20
late=$(status)
echo "paused again: $late"
check "the run kept stepping after the refusals" "[ \"$(field "$late" 2)\" -ge 20 ]"
refused "lost in round-off at the current time" "1e-20 s is too short for this run.*at t = .* it is even lost in round-off" \
  output.checkpoint_interval=1e-20

"${steer[@]}" resume >/dev/null 2>&1
wait_job 120
check "the run resumes and finishes by itself" "[ -n '$ended' ]"
check "... and exits 0" "[ '$rc' = 0 ]" || tail -5 serve.log
"$rewind" verify -q s.h5 >verify.out 2>&1
check "its file verifies" "[ $? = 0 ]" || cat verify.out

# The same run, never steered (2 compute ranks, as under --listen -n 4).
"$mpiexec" -n 3 "$rewind" run "${args[@]}" --output u.h5 >u.log 2>&1
check "the unsteered run" "[ $? = 0 ]" || tail -3 u.log
# steps_h5py FILE: "step:time:kind" of every committed step, by h5py alone.
steps_h5py() { $py "$src/tests/support/steps_h5py.py" "$1"; }
a=$(steps_h5py s.h5) b=$(steps_h5py u.h5)
echo "steered (h5py):   $a"
echo "unsteered (h5py): $b"
check "h5py reads the same steps, times and kinds in both, up to step $steps" \
  "[ -n '$a' ] && [ '$a' = '$b' ] && [ \"\$(echo '$a' | tr ' ' '\n' | tail -1 | cut -d: -f1)\" = $steps ]"
same=1 n=0
for s in $(echo "$b" | tr ' ' '\n' | cut -d: -f1); do
  "$rewind" diff --all-cells "s.h5@$s" "u.h5@$s" >diff.out 2>&1 || { same=; echo "step $s differs:"; cat diff.out; }
  n=$((n + 1))
done
check "every step ($n) is bit for bit the unsteered run's" "[ -n '$same' ] && [ $n -ge 2 ]"
exit $fail

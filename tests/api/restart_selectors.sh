#!/usr/bin/env bash
# One selector language for restarts: from a file whose last step is a visualisation
# step, `rewind run --restart F@SEL` (2 compute ranks), a C code (capi_restart) and a
# Fortran code (fortran_restart, when built) on 2 ranks each, at SEL = latest and t=T (T
# between outputs, and T on a visualisation step), take the same checkpoint — the one the
# h5py oracle finds in the file's index — and say the same note. Then examples/heat-c's
# `--restart FILE@SEL`: t=T branches into OUT from the checkpoint the oracle names (its note
# said), latest continues FILE; both reach the uninterrupted run's last step bit for bit.
#   restart_selectors.sh REWIND SOURCE_DIR MPIEXEC CAPI_RESTART HEAT [FORTRAN_RESTART]
set -u
progs=("$(realpath "$4")" "$(realpath "$5")" "${6:+$(realpath "$6")}")
source "$(dirname "$0")/../apps/lib.sh" "$1" "$2" "$3"
capi=${progs[0]} heat=${progs[1]} fortran=${progs[2]}
oracle() { /usr/bin/python3 "$src/tests/api/restart_oracle.py" "$@"; }

# Checkpoints every 0.1, visualisation steps every 0.05, no final checkpoint: the last
# step (t = 0.25) is a visualisation step.
run_compute 2 "$src/cases/default.toml" --output a.h5 --set time.end=0.25 --set output.checkpoint_interval=0.1 \
  --set output.visualisation_interval=0.05 --set output.final=false -q
check "the run file's last step is a visualisation step (h5py)" "[ \"\$(oracle a.h5 --last-kind)\" = visualisation ]"

for sel in latest t=0.17 t=0.25; do
  run_compute 2 --restart "a.h5@$sel" --output "cli.$sel.h5" --set time.end=0.3 -q
  branches=("cli.$sel.h5")
  check "rewind run --restart a.h5@$sel branches" "[ -f cli.$sel.h5 ]"
  "$mpiexec" -n 2 "$capi" a.h5 "$sel" "c.$sel.h5" >"c.$sel.log" 2>&1
  check "C (2 ranks): rewind_reader_find_checkpoint(\"$sel\") and a branch of it" "[ $? = 0 ]"
  branches+=("c.$sel.h5")
  if [ -n "$fortran" ]; then
    "$mpiexec" -n 2 "$fortran" a.h5 "$sel" "f.$sel.h5" >"f.$sel.log" 2>&1
    check "Fortran (2 ranks): rewind_reader_find_checkpoint('$sel') and a branch of it" "[ $? = 0 ]"
    branches+=("f.$sel.h5")
  fi
  oracle a.h5 "$sel" "${branches[@]}" >"oracle.$sel.out" 2>&1
  check "$sel: the command line, C$([ -n "$fortran" ] && echo ', Fortran') take the checkpoint the h5py oracle names ($(tail -1 oracle.$sel.out))" "[ $? = 0 ]" || cat "oracle.$sel.out"
  note=$(sed -n 's/^note: //p' "c.$sel.log")
  case $sel in t=*)
    check "$sel: the C code's note is the command line's: $note" "[ -n \"\$note\" ] && grep -qxF -- \"rewind run: note: \$note\" log"
    [ -z "$fortran" ] || check "$sel: ... and the Fortran code's" "grep -qxF -- \"note: \$note\" f.$sel.log" ;;
  esac
done

# heat-c: 30 steps, checkpoints at 0, 20 and 30 (its last step), a visualisation step at
# 10; T = 0.00018 lies between steps 14 and 15 (dt = 0.2 / 128^2), after step 10.
"$mpiexec" -n 2 "$heat" whole.h5 40 --vis 10 --cp 20 >whole.log 2>&1
"$mpiexec" -n 2 "$heat" h.h5 30 --vis 10 --cp 20 >h.log 2>&1
check "heat-c: runs (40 steps, and 30)" "[ -f whole.h5 ] && [ -f h.h5 ]"
"$mpiexec" -n 2 "$heat" hb.h5 40 --vis 10 --cp 20 --restart 'h.h5@t=0.00018' >hb.log 2>&1
check "heat-c --restart h.h5@t=T: runs" "[ $? = 0 ]"
check "... branches into OUT from the checkpoint the h5py oracle names" "oracle h.h5 t=0.00018 hb.h5 >/dev/null"
check "... says so: step 10 is a visualisation output, restarting from step 0" \
  "grep -q 'heat: note: t=0.00018: step 10 .* visualisation output; restarting from .* step 0' hb.log"
check "... and reaches step 40 bit for bit as the uninterrupted run" "same whole.h5@40 hb.h5@40"
"$mpiexec" -n 2 "$heat" unused 40 --vis 10 --cp 20 --restart h.h5@latest >hc.log 2>&1
check "heat-c --restart h.h5@latest: continues its file from its last checkpoint" "[ $? = 0 ] && [ ! -e unused ]"
check "... to step 40 bit for bit as the uninterrupted run" "same whole.h5@40 h.h5@40"
exit $fail

#!/bin/bash
# A run's file and live link list what its case solves: a 2-D
# isothermal case u, v, p (no w: 2-D; no T: no heat), a 2-D heated case u, v, p, T, a
# 3-D case u, v, w, p — in /common/variable_names and every checkpoint's cell_data (read
# with h5py), in `rewind info`, and in a live job's info and default window. A restart
# of a 2-D isothermal file runs; one that switches heat on is refused with one line.
source "$(dirname "$0")/lib.sh" "$@"
. "$src/tests/collector/serve_util.sh"  # start_live, wait_job (the live job below)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
py=/usr/bin/python3
short=(--set time.end=0.02 --set output.checkpoint_interval=0.01 --set output.visualisation_interval=0)

# listed FILE NAMES...: /common/variable_names and every checkpoint's cell_data are NAMES (h5py).
listed() {
  $py - "$@" <<'EOF'
import sys
import h5py
path, want = sys.argv[1], sys.argv[2:]
with h5py.File(path, "r") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f["common/variable_names"][()]]
    steps = [g for k, g in f["simulation"].items() if k.startswith("step_") and g.attrs["kind"] in (b"checkpoint", "checkpoint")]
    stored = [sorted(g["cell_data"].keys()) for g in steps]
sys.exit(0 if names == want and steps and all(s == sorted(want) for s in stored) else f"{names} {stored}")
EOF
}
# info_lists FILE NAMES...: `rewind info`'s variables line names NAMES and no other.
info_lists() {
  local f=$1; shift
  "$rewind" info "$f" >info.out 2>&1 || return 1
  local line
  line=$(grep -m1 -i '^variables' info.out) || return 1
  for v in u v w p T; do
    if [[ " $* " == *" $v "* ]]; then [[ "$line" == *" $v ["* ]] || return 1
    else [[ "$line" != *" $v ["* ]] || return 1; fi
  done
}

run_compute 2 "$src/cases/default.toml" "${short[@]}" --output iso.h5
check "2-D isothermal, 2 compute ranks: the file lists u, v, p (h5py)" "listed iso.h5 u v p" || tail -3 log
check "... and rewind info lists u, v, p, no w, no T" "info_lists iso.h5 u v p" || cat info.out
run_compute 1 "$src/cases/heated-cavity-ra1e3.toml" "${short[@]}" --output heat.h5
check "2-D heated: u, v, p, T (h5py)" "listed heat.h5 u v p T" || tail -3 log
check "... and rewind info lists u, v, p, T, no w" "info_lists heat.h5 u v p T" || cat info.out
run_compute 2 "$src/cases/cavity-3d.toml" --set tree.depth=1 "${short[@]}" --output cube.h5
check "3-D isothermal: u, v, w, p (h5py)" "listed cube.h5 u v w p" || tail -3 log
check "... and rewind info lists u, v, w, p, no T" "info_lists cube.h5 u v w p" || cat info.out

# A visualisation variable the case does not solve: one line naming what it solves.
"$rewind" run "$src/cases/default.toml" "${short[@]}" --output bad.h5 --set 'output.variables=["u","w"]' >bad.out 2>&1
check "output.variables with w in 2-D: one error line naming u, v, p, no file" \
  "[ \$? != 0 ] && [ \$(wc -l <bad.out) = 1 ] && grep -q 'this case solves u, v, p' bad.out && [ ! -e bad.h5 ]" || cat bad.out

# Restarts read what the file holds.
run_compute 2 --restart iso.h5@latest --set time.end=0.03 --output iso2.h5
check "a restart of the 2-D isothermal file runs and writes u, v, p" "listed iso2.h5 u v p" || tail -3 log
"$rewind" run --restart iso.h5@latest --set time.end=0.03 --set physics.alpha=1e-3 --output hot.h5 >hot.out 2>&1
check "a restart that switches heat on: refused with one line, no file" \
  "[ \$? != 0 ] && [ \$(wc -l <hot.out) = 1 ] && grep -q 'T' hot.out && [ ! -e hot.h5 ]" || cat hot.out

# The live link: info and a window without --vars (what the ParaView dock counts).
export REWIND_TOKEN="solved-$$-$RANDOM"
start_live 3 live.h5 "$src/cases/default.toml" --set time.end=30 -q
$py - "$src/python" "$port" >liveinfo.out 2>&1 <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import rewind
c = rewind.Client("127.0.0.1", int(sys.argv[2]), timeout=60)
print(" ".join(v["name"] for v in c.info()["variables"]))
EOF
check "a live 2-D isothermal job's info lists u, v, p" "grep -qx 'u v p' liveinfo.out" || cat liveinfo.out
"$rewind" window 127.0.0.1:$port --time live --box 0,0,0,2.2,0.41,0 --budget 3000 >livewin.out 2>&1
check "... and its live window without --vars holds 3 variables" "grep -q '(3 variables)' livewin.out" || cat livewin.out
"${steer[@]}" stop >/dev/null 2>&1
wait_job 60
check "the live job stops cleanly" "[ -n '$ended' ] && [ '$rc' = 0 ]" || tail -3 serve.log
exit "$fail"

#!/usr/bin/env bash
# What `rewind run` logs, through what a user reads:
#  - with compression on, each output line of `rewind run` says what the step
#    takes on disk, what it was before compression and the cell data's ratio — h5py's
#    storage sizes of the step's datasets (dset.id.get_storage_size()) are the oracle;
#  - a branch made in the job at t = 0 (steer branch --from '#0') and stopped
#    reports the time the run reached in its `done:` line, not the branch's start.
#   cli_run_log.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"

# the run's log, compressed steps, on 2 ranks (collective filtered writes).
"$mpiexec" -n 2 "$rewind" run "$case_file" --steps 2 --output z.h5 --set output.visualisation_every=1 \
  --set output.checkpoint_every=2 --set 'output.io.compression="deflate"' >z.out 2>&1
grep '^output  .* step [0-9]* t = .* -> ' z.out >z.lines
/usr/bin/python3 - z.h5 z.lines >oracle3.out 2>&1 <<'PYEOF'
import re, sys
import h5py
line = re.compile(r" step (\d+) t = .*: ([0-9.]+) MiB on disk \(([0-9.]+) MiB before compression; cell data ([0-9.]+)x\) in ")
seen = 0
with h5py.File(sys.argv[1], "r") as f:
    for text in open(sys.argv[2]):
        m = line.search(text)
        assert m, text  # every step's line says its size on disk and the ratio
        step, on_disk, before, ratio = int(m[1]), float(m[2]), float(m[3]), float(m[4])
        g = f[f"/simulation/step_{step:08d}"]
        dsets = []
        g.visititems(lambda name, o: dsets.append(o) if isinstance(o, h5py.Dataset) else None)
        stored = sum(d.id.get_storage_size() for d in dsets)
        data = sum(d.size * d.dtype.itemsize for d in dsets)
        assert abs(on_disk - stored / 2**20) <= 0.006, (step, on_disk, stored / 2**20)
        assert abs(before - data / 2**20) <= 0.006, (step, before, data / 2**20)
        assert stored < 0.9 * data, (step, stored, data)  # deflate shrinks it: the two differ
        cell = [g["cell_data"][n] for n in g["cell_data"]]
        cell_ratio = sum(d.size * d.dtype.itemsize for d in cell) / sum(d.id.get_storage_size() for d in cell)
        assert abs(ratio - cell_ratio) <= 0.006, (step, ratio, cell_ratio)
        print(step, f"{on_disk} MiB on disk, {before} MiB before, {ratio}x")
        seen += 1
assert seen == 3, seen  # steps 0, 1, 2
PYEOF
check "run: each compressed step's line gives h5py's bytes on disk, the bytes before and the cell data's ratio" \
  "[ \$(grep -c x oracle3.out) = 3 ] || { cat oracle3.out z.lines | tail -5; false; }"
# stop a branch made in the job at t = 0; its done: line gives the time reached.
py=/usr/bin/python3
"$rewind" run "$case_file" --output s.h5 --set time.end=30 --set output.checkpoint_interval=0.05 \
  --set output.visualisation_interval=0 --set monitor.progress=0 --listen 127.0.0.1:0 >s.out 2>&1 &
run_pid=$!
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' s.out)
  [ -n "$port" ] && break
  sleep 0.1
done
# Steered through its contact file, s.h5.contact (which holds the token the job generated).
job_time() { "$rewind" steer s.h5 status --json 2>/dev/null | $py -c "import json,sys; print(json.load(sys.stdin)['time'])" 2>/dev/null; }
wait_time() {  # until the job's time is past $1 (at most 60 s)
  for _ in $(seq 1 600); do $py -c "import sys; sys.exit(float(sys.argv[1] or 0) <= float(sys.argv[2]))" "$(job_time)" "$1" && return; sleep 0.1; done
}
wait_time 0.06
"$rewind" steer s.h5 branch --from '#0' --set physics.nu=0.002 --output s0.h5 >branch.out 2>&1
wait_time 0.06
"$rewind" steer s.h5 pause >/dev/null 2>&1
reached=$(job_time)
"$rewind" steer s.h5 stop >stop.out 2>&1
for _ in $(seq 1 600); do kill -0 $run_pid 2>/dev/null || break; sleep 0.1; done
wait $run_pid
rc=$?
last=$("$rewind" info s0.h5 --json | $py -c "import json,sys; print(json.load(sys.stdin)['steps'][-1]['time'])")
done_t=$(sed -n 's/^done: .* to t = \([^ ]*\) in .*/\1/p' s.out)
check "a branch from '#0' made in the job, stopped: the job ends cleanly" "[ '$rc' = 0 ] && grep -q s0.h5 branch.out"
check "... its done: line gives the time it reached ($reached, last checkpoint $last), not the branch's t = 0" \
  "$py -c 'import sys; d, r, l = map(float, sys.argv[1:]); sys.exit(not (d >= r * (1 - 1e-5) and r > 0.05 and abs(d - l) <= 1e-5 * l))' '$done_t' '$reached' '$last' || { tail -4 s.out; false; }"
exit $fail

#!/usr/bin/env bash
# One writing job per file, whatever name reaches it (docs/file-format.md §5, "One writing
# job"): while a job under mpirun writes w.h5,
#  - a `--force` run into a symbolic link to it (under mpirun too), a `--force` run into a
#    hard link to it, one into a `..` path to it, and a continue in place through the
#    symlink are each refused with one line naming the writer, exit non-zero, no crash;
#  - `rewind info` through the hard link names the writer;
# afterwards the job ends as it would have alone: the file verifies (rewind verify), and
# h5py + numpy find its committed steps and /common equal to those of a run nobody
# disturbed.
# A new, still empty file whose claim names a process on another host (what the ranks of a
# job spread over nodes see of their claiming rank while it creates the file) is refused
# for that claim (--break-lock), not as "exists; use --force"; --break-lock then writes it.
#   cli_claim_names.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
session=
stop_all() {
  [ -n "$session" ] && kill -9 $(ps -o pid= -s "$session") 2>/dev/null
  rm -rf "$tmp"
}
trap stop_all EXIT
case_file="$src/cases/default.toml"
run=(--set time.end=0.3 --set output.checkpoint_interval=0.05 --set output.visualisation_interval=0 -q)
committed() { "$rewind" info "$1" --json 2>/dev/null | python3 -c "import json,sys; print(sum(s['committed'] for s in json.load(sys.stdin)['steps']))" 2>/dev/null || echo 0; }
# one_line_naming FILE PID: FILE is exactly one error line naming process PID on this host.
one_line_naming() { [ "$(wc -l <"$1")" = 1 ] && grep -q "error: .*is being written by another job: .*(process $2 on host $(hostname), since " "$1"; }

"$mpiexec" -n 3 "$rewind" run "$case_file" -o ref.h5 "${run[@]}" >ref.log 2>&1
check "the reference run (nobody else near its file)" "[ $? = 0 ]" || cat ref.log

ln -s w.h5 sym.h5
mkdir sub
setsid "$mpiexec" -n 3 "$rewind" run "$case_file" -o w.h5 "${run[@]}" >w.log 2>&1 &
session=$!
for _ in $(seq 600); do [ "$(committed w.h5)" -ge 1 ] && break; sleep 0.1; done
# Stopped, every process of the job, so that it still writes (holds its claim) whatever
# the checks below take; continued at the end.
kill -STOP $(ps -o pid= -s "$session")
holder=$(sed -n 's/^pid=//p' w.h5.lock)
check "the job writes w.h5 (its claim names it)" "[ -n '$holder' ]"
ln w.h5 hard.h5

"$mpiexec" -q -n 3 "$rewind" run "$case_file" -o sym.h5 --force "${run[@]}" >sym.log 2>&1
check "a --force run into a symlink to it (under mpirun) is refused, naming the writer" \
  "[ $? != 0 ] && one_line_naming sym.log $holder" || cat sym.log
"$rewind" run "$case_file" -o hard.h5 --force "${run[@]}" >hard.log 2>&1
check "a --force run into a hard link to it is refused, naming the writer and its name" \
  "[ $? != 0 ] && one_line_naming hard.log $holder && grep -q 'under another name of the same file: $PWD/w.h5' hard.log" ||
  cat hard.log
"$rewind" run "$case_file" -o sub/../w.h5 --force "${run[@]}" >dotdot.log 2>&1
check "a --force run into sub/../w.h5 is refused, naming the writer" "[ $? != 0 ] && one_line_naming dotdot.log $holder" ||
  cat dotdot.log
"$rewind" run --restart sym.h5 --set time.end=0.5 >restart.log 2>&1
rc=$?
check "a continue in place through the symlink is refused (no crash), naming the writer" \
  "[ $rc != 0 ] && [ $rc -lt 128 ] && one_line_naming restart.log $holder" || cat restart.log
"$rewind" info hard.h5 >info.out 2>&1
check "rewind info through the hard link names the writer" \
  "[ $? = 0 ] && grep -q '^writer      being written by .*(process $holder on host' info.out" || cat info.out

kill -CONT $(ps -o pid= -s "$session")
wait "$session"
check "the job ends as it would alone" "[ $? = 0 ]" || cat w.log
session=
check "the file verifies (every committed step)" "\"$rewind\" verify -q w.h5"
check "its claim is gone, under every name" "[ ! -e w.h5.lock ] && [ ! -e hard.h5.lock ] && [ ! -e sym.h5.lock ]"
/usr/bin/python3 - w.h5 ref.h5 >oracle.out 2>&1 <<'PYEOF'
# h5py + numpy, no Rewind code: the committed steps (index rows and every dataset of their
# groups) and every dataset of /common equal the undisturbed run's, value for value.
import sys, h5py, numpy as np
def datasets(group):
    out = {}
    group.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out
def same(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
with h5py.File(sys.argv[1], "r") as w, h5py.File(sys.argv[2], "r") as r:
    def committed(f):
        index = f["simulation/index"][...]
        return [(int(row["step"]), float(row["time"])) for row in index if row["committed"]]
    steps = committed(w)
    assert steps and steps == committed(r), (steps, committed(r))
    assert same(datasets(w["common"]), datasets(r["common"])), "/common differs"
    for step, _ in steps:
        g = f"simulation/step_{step:08d}"
        assert same(datasets(w[g]), datasets(r[g])), g + " differs"
    print(f"{len(steps)} committed steps equal")
PYEOF
check "h5py + numpy: its committed steps and /common equal the undisturbed run's" "[ $? = 0 ]" || cat oracle.out

# Claimed on another host: an empty new file, its claim's record from node "nodeA".
: >far.h5
printf 'rewind file claim\nhost=nodeA\npid=4242\nsince=2026-01-01 00:00:00 UTC\ncommand=rewind run far.toml\n' >far.h5.lock
"$mpiexec" -q -n 2 "$rewind" run "$case_file" -o far.h5 "${run[@]}" >far.log 2>&1
check "a file claimed on another host is refused for its claim (one line naming the host), not as 'exists'" \
  "[ $? != 0 ] && [ \"\$(grep -c 'error:' far.log)\" = 1 ] && grep -q 'is claimed by a job on another host: .*process 4242 on host nodeA' far.log && ! grep -q 'use --force' far.log" || cat far.log
check "  the file is untouched (empty) and its claim kept" "[ ! -s far.h5 ] && grep -q '^host=nodeA' far.h5.lock"
"$mpiexec" -q -n 2 "$rewind" run "$case_file" -o far.h5 "${run[@]}" --break-lock >far2.log 2>&1
check "  with --break-lock the run writes it, and it verifies" "[ $? = 0 ] && \"$rewind\" verify -q far.h5" || cat far2.log
exit $fail

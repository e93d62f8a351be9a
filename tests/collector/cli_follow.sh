#!/usr/bin/env bash
# `rewind serve` of a file that `rewind run` is still writing follows it: committed
# steps appear as they commit, windows of the newest step are served at once, a step
# being written is never served, and after the writer has finished the server lists
# exactly the file's committed steps, without a restart (follow_check.py, against h5py).
#   cli_follow.sh REWIND SOURCE_DIR PYTHON
set -u
rewind=$1 src=$2 py=$3
. "$src/tests/collector/serve_util.sh"
in_tmpdir
writer_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; [ -n "$writer_pid" ] && kill "$writer_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# About 60 output steps over several seconds (each written and flushed: the crash protocol).
"$rewind" run "$src/cases/default.toml" --output f.h5 --set time.end=0.3 --set output.visualisation_interval=0.005 \
  -q >run.log 2>&1 &
writer_pid=$!
for _ in $(seq 1 300); do
  "$rewind" info f.h5 2>/dev/null | grep -q '^ *5 .* yes$' && break
  sleep 0.05
done
start_serve f.h5
check "rewind serve starts on a file being written" "[ -n '$port' ]"
check "the server follows the file while it is written and after" "$py $src/tests/collector/follow_check.py $src $port $writer_pid f.h5"
wait "$writer_pid"
check "the writer finished (exit 0)" "[ $? = 0 ]"
writer_pid=

# The writer's lock (kernel/step_lock.hpp), held here by Python for 1.5 s as rewind run
# holds it while a step goes to disk: a reader of the file waits for it, then answers.
$py - f.h5 >lock.out 2>&1 <<'PY' &
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hh4xqqi4x", fcntl.F_WRLCK, 0, 1 << 62, 1, 0))  # struct flock
print("locked", flush=True)
time.sleep(1.5)
PY
locker=$!
for _ in $(seq 1 100); do grep -q locked lock.out && break; sleep 0.05; done
t0=$(date +%s%N)
"$rewind" window f.h5 --box 0,0,0,2.2,0.41,0 --budget 500 >locked.out 2>&1
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
wait "$locker"
check "a reader waits while the writer's lock is held (${ms} ms), then answers" "[ $rc = 0 ] && [ $ms -ge 1200 ]"
exit $fail

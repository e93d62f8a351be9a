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
exit $fail

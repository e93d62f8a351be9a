#!/usr/bin/env bash
# Steering commands that fail leave a live run where it was:
#  - `rewind steer branch` with an output that cannot be created (a missing directory,
#    an existing file, the run's own file, a directory, /dev/null, a FIFO, a new name
#    under /dev, a name too long), a
#    step that is gone, and a branch whose first checkpoint hits a full disk (a small
#    tmpfs in a private mount namespace; skipped, saying so, where none can be made):
#    each is one error line, and the run's status shows the same state, step, time and
#    file afterwards; no branch file is left behind;
#  - a bounded fuzz of set / branch / control arguments (steer_fuzz.py);
#  - then the run resumes and finishes: it exits 0, its file verifies, and every step
#    it wrote is bit for bit the step of a run that never got a command (rewind diff);
#  - the full disk again with dedicated I/O ranks (which write after the hand-off).
#   cli_steer_fail.sh REWIND SOURCE_DIR PYTHON MPIEXEC
set -u
rewind=$1 src=$2 py=$3 mpiexec=$4
# A private mount namespace for the full disk: re-run this script inside one if we can.
if [ -z "${REWIND_STEER_FAIL_NS:-}" ] && [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
  REWIND_STEER_FAIL_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$src/tests/collector/serve_util.sh"  # check, start_live, pause_at, status, one_error, wait_job
tmp=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  for m in full full2; do mountpoint -q "$tmp/$m" 2>/dev/null && umount "$tmp/$m"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
chmod 755 "$tmp"
export REWIND_TOKEN="fail-$$-$RANDOM$RANDOM"  # the runs' token; the clients take it from here too
# Room for the run to advance while it is steered: the first pause lands when the run
# has already computed a few steps (18 of 24 once, on a loaded CI machine), and each of
# the fuzz's valid resumes lets a step or two pass before its pause; with 24 steps the
# run once reached its end during the fuzz and finished instead of staying paused.
steps=120
args=("$src/cases/default.toml" --steps $steps --set time.end=30 --set output.checkpoint_interval=0.02
      --set output.visualisation_interval=0 -q)

start_live 4 a.h5 "${args[@]}"
# Paused a few steps in, so the branch point (latest) is not the initial state.
pause_at 3
before=$(status)
echo "paused: $before"
check "paused a few steps in" "[ \"\$(echo '$before' | cut -d' ' -f1)\" = paused ]"

live_window() { "$rewind" window "127.0.0.1:$port" --box 0,0,0,2.2,0.41,0 --budget 4000 --vars u,p --out "$1" >/dev/null 2>&1; }
live_window w0.json
echo "not an HDF5 file" >exists.txt
mkdir adir
long=$(printf 'x%.0s' $(seq 1 300)).h5
refused() {  # NAME PATTERN BRANCH-ARGS...: one error line matching PATTERN, the run unchanged
  local name=$1 pattern=$2
  shift 2
  check "branch $name: one error line" "one_error ${steer[*]} branch $* && grep -Eq '$pattern' err.out"
  sed 's/^/       /' err.out
  check "... and the run is where it was" "[ \"\$(status)\" = '$before' ]"
}
refused "into a missing directory" "cannot create the branch file.*No such file" --from latest --output "$tmp/no/dir/b.h5"
check "... nothing created" "[ ! -e no ]"
refused "into an existing file" "exists" --from latest --output exists.txt
check "... which is left as it was" "[ \"\$(cat exists.txt)\" = 'not an HDF5 file' ]"
refused "into the run's own file" "never writes into its parent" --from latest --output a.h5
refused "into a directory" "adir: is a directory" --from latest --output adir
refused "into /dev/null" "/dev/null: is a character device" --from latest --output /dev/null
mkfifo fifo
refused "into a FIFO (never opened: nothing waits for a reader)" "fifo: is a FIFO" --from latest --output fifo
dev="/dev/rewind-steer-fail-$$.h5"
refused "into a new file under /dev" "lies under /dev" --from latest --output "$dev"
check "... nothing created there" "[ ! -e '$dev' ]"
rm -f "$dev"
refused "into a name too long" "File name too long" --from latest --output "$long"
refused "from a step that is gone" "no committed step 99999" --from 99999 --output gone.h5
refused "from before the first step" "no committed step at or before" --from t=-1 --output early.h5
check "no branch file was left behind" "[ -z \"\$(ls *.h5 | grep -v '^a.h5$')\" ]"

# A full disk in the branch's first checkpoint: the branch file is created on a tmpfs
# with room for its header but not for a checkpoint.
if [ -n "${REWIND_STEER_FAIL_NS:-}" ] && mkdir full && mount -t tmpfs -o size=96k tmpfs full 2>/dev/null; then
  refused "whose first checkpoint meets a full disk" "branch did not start.*goes on from step" --from latest \
    --output "$tmp/full/b.h5"
  check "... the half-written branch file is removed" "[ -z \"\$(ls full)\" ]"
  check "... and the reply says so, never to continue the removed file" \
    "grep -q 'b.h5 was removed: branch again when there is room' err.out && ! grep -q 'restart.*b.h5' err.out"
  ls -la full
else
  echo "skip full disk: no private mount namespace with a tmpfs here (needs root and unshare -m)"
fi

live_window w1.json
check "a live window after the failed branches is the one before, value by value (step, time, file too)" \
  "[ -s w0.json ] && $py -c 'import json, sys; sys.exit(json.load(open(\"w0.json\")) != json.load(open(\"w1.json\")))'"

$py "$src/tests/collector/steer_fuzz.py" "$port" "$tmp" 200 45 31 >fuzz.out 2>&1
rc=$?
cat fuzz.out
check "200 fuzzed steering requests (at most 45 s) are all refused, the run answers, paused on its file" \
  "[ $rc = 0 ] && [ \"\$(status | cut -d' ' -f1,4)\" = \"$(echo "$before" | cut -d' ' -f1,4)\" ]"

"${steer[@]}" resume >/dev/null 2>&1
wait_job 120
check "the run resumes and finishes by itself" "[ -n '$ended' ]"
check "... and exits 0" "[ '$rc' = 0 ]"
[ "$rc" = 0 ] || tail -5 serve.log
"$rewind" verify -q a.h5 >verify.out 2>&1
check "its file verifies" "[ $? = 0 ]"

# The same run, never steered (2 compute ranks, as under --listen -n 4).
"$mpiexec" -n 3 "$rewind" run "${args[@]}" --output b.h5 >b.log 2>&1
check "the unsteered run" "[ $? = 0 ]"
steps_of() { "$rewind" info "$1" --json | $py -c "import json,sys; print(' '.join(str(s['step']) for s in json.load(sys.stdin)['steps']))"; }
echo "steered:   $(steps_of a.h5)"
echo "unsteered: $(steps_of b.h5)"
same=1 n=0
for s in $(steps_of b.h5); do
  "$rewind" diff --all-cells "a.h5@$s" "b.h5@$s" >diff.out 2>&1 || { same=; echo "step $s differs:"; cat diff.out; }
  n=$((n + 1))
done
check "every step of the unsteered run ($n) is bit for bit the same step of the steered one" "[ -n '$same' ] && [ $n -ge 2 ]"
check "both reach step $steps" "[ \"\$(steps_of a.h5 | tr ' ' '\n' | tail -1)\" = $steps ] && [ \"\$(steps_of b.h5 | tr ' ' '\n' | tail -1)\" = $steps ]"

# The same full disk with dedicated I/O ranks, which write a step after the compute
# ranks handed it over: the branch waits for its first step to be written before it
# counts as started.
if [ -n "${REWIND_STEER_FAIL_NS:-}" ] && mkdir full2 && mount -t tmpfs -o size=96k tmpfs full2 2>/dev/null; then
  start_listener "$mpiexec" -n 5 "$rewind" run "${args[@]}" --set output.io.strategy='"dedicated"' --output d.h5 \
    --listen 127.0.0.1:0
  steer=("$rewind" steer "127.0.0.1:$port")
  "${steer[@]}" pause >/dev/null 2>&1
  before=$(status)
  refused "onto a full disk, dedicated I/O ranks" "branch did not start.*written by the I/O ranks.*goes on from step" \
    --from latest --output "$tmp/full2/b.h5"
  check "... the branch file is removed" "[ -z \"\$(ls full2)\" ]"
  check "... and the reply says so, never to continue the removed file" \
    "grep -q 'b.h5 was removed: branch again when there is room' err.out && ! grep -q 'restart.*b.h5' err.out"
  "${steer[@]}" resume >/dev/null 2>&1
  wait_job 120
  check "... and the run finishes, exit 0" "[ -n '$ended' ] && [ '$rc' = 0 ]"
  check "... its file verifies" "\"$rewind\" verify -q d.h5 >/dev/null 2>&1"
  umount full2
else
  echo "skip full disk with dedicated I/O ranks: no private mount namespace with a tmpfs here"
fi
exit $fail

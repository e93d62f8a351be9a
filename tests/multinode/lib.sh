# Sourced by the tests/multinode scripts: `source "$(dirname "$0")/lib.sh" "$@"`.
# Arguments: the rewind binary, the source tree. Runs jobs on simulated nodes
# (scripts/simnodes.sh: one Open MPI daemon per node name, each in a UTS namespace of its
# own; docs/cluster.md, "Simulated nodes"); exits 77 with the reason when they cannot be
# made here (no unshare, not root and no user namespaces). Works in a temporary folder
# removed on exit; every job is bounded in time.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../apps/lib.sh" "$1" "$2" mpirun
sim=$src/scripts/simnodes.sh
py=/usr/bin/python3
if ! why=$("$sim" check 2>&1); then
  echo "SKIP: $why"
  exit 77
fi
. "$src/scripts/mpi-env.sh"  # root, oversubscribed ranks that yield their core while they wait
export SIMNODES_STATE=$tmp/simnodes
mkdir -p "$SIMNODES_STATE"

# slots HOSTS: the number of processes of a host list (nodeA:3,nodeB:2 -> 5).
slots() { local n=0 h; for h in ${1//,/ }; do n=$((n + ${h##*:})); done; echo $n; }
# bounded CMD...: CMD, stopped like `timeout -k 5 ${JOB_SECONDS:-90}` (TERM, then KILL 5 s
# later), but first described on stderr (what_runs): a job that hangs in CI leaves the
# state and stacks of its ranks in the log that shows its failure.
bounded() {
  local limit=$((${JOB_SECONDS:-90} * 5)) ticks=0
  "$@" &
  local pid=$!
  while [ -d "/proc/$pid" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
    sleep 0.2
    ticks=$((ticks + 1))
    if [ $ticks = $limit ]; then
      what_runs >&2
      kill -TERM "$pid" 2>/dev/null
    elif [ $ticks = $((limit + 25)) ]; then
      kill -KILL "$pid" 2>/dev/null
    fi
  done
  wait "$pid"
}
# what_runs: every rewind process (the multinode tests run alone: PROCESSORS 2), each
# thread's state, CPU time (user, system ticks), last and allowed CPUs and kernel wait
# channel, and with gdb its stacks.
what_runs() {
  local p t
  echo "--- still running after ${JOB_SECONDS:-90} s, stopped; its ranks:"
  for p in $(pgrep -x "$(basename "$rewind")"); do
    echo "pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)"
    for t in /proc/"$p"/task/*; do
      echo "  thread ${t##*/}: state $(cut -d' ' -f3 "$t/stat") user/system $(cut -d' ' -f14,15 "$t/stat")" \
        "cpu $(cut -d' ' -f39 "$t/stat") allowed $(awk '/^Cpus_allowed_list/ {print $2}' "$t/status") wchan $(cat "$t/wchan")"
    done 2>/dev/null
    if command -v gdb >/dev/null; then
      timeout 30 gdb -p "$p" -batch -ex 'thread apply all bt 25' 2>/dev/null | grep -E '^(Thread|#)'
    fi
  done
}
# on HOSTS ARGS...: `rewind ARGS` on the simulated nodes HOSTS (one process per slot,
# filled in order: world rank 0 on the first node), at most ${JOB_SECONDS:-90} s.
on() {
  local hosts=$1; shift
  bounded "$sim" mpirun "$hosts" -np "$(slots "$hosts")" "$rewind" "$@"
}
# one NP ARGS...: `rewind ARGS` on one node (plain mpirun, NP processes).
one() {
  local np=$1; shift
  bounded mpirun -np "$np" "$rewind" "$@"
}
# same_file REF FILE...: every group, dataset and attribute bit for bit (h5py oracle).
same_file() { $py "$src/tests/multinode/same_file.py" "$@" >same.out 2>&1 || { head -5 same.out; return 1; }; }
# names_are HOSTS: the ranks of a job on HOSTS see exactly those host names.
names_are() {
  local want got
  want=$(for h in ${1//,/ }; do echo "${h%%:*}"; done | sort | tr '\n' ' ')
  got=$(timeout -k 5 60 "$sim" mpirun "$1" -np "$(slots "$1")" hostname | sort -u | tr '\n' ' ')
  [ "$got" = "$want" ] || { echo "host names: $got (want $want)"; return 1; }
}
# all_verify FILE...: `rewind verify` passes for every file.
all_verify() { local f; for f in "$@"; do "$rewind" verify "$f" >/dev/null || { echo "$f does not verify"; return 1; }; done; }

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
# on HOSTS ARGS...: `rewind ARGS` on the simulated nodes HOSTS (one process per slot,
# filled in order: world rank 0 on the first node), at most ${JOB_SECONDS:-90} s.
on() {
  local hosts=$1; shift
  timeout -k 5 "${JOB_SECONDS:-90}" "$sim" mpirun "$hosts" -np "$(slots "$hosts")" "$rewind" "$@"
}
# one NP ARGS...: `rewind ARGS` on one node (plain mpirun, NP processes).
one() {
  local np=$1; shift
  timeout -k 5 "${JOB_SECONDS:-90}" mpirun -np "$np" "$rewind" "$@"
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

#!/usr/bin/env bash
# Simulated nodes on one machine: an MPI job whose ranks sit on several "nodes", each
# with its own host name, for testing what only a second node exercises (docs/cluster.md,
# "Simulated nodes").
#
#   scripts/simnodes.sh check                       exit 0 if it can run here, else 77 + why
#   scripts/simnodes.sh mpirun HOSTS MPIRUN_ARGS... mpirun over HOSTS (e.g. nodeA:3,nodeB:3)
#   scripts/simnodes.sh kill HOST                   kill -9 every process of HOST's node
#
# What it simulates: MPI locality (MPI_COMM_TYPE_SHARED splits per node, Open MPI's
# shared-memory transport only within a node), host names (gethostname,
# MPI_Get_processor_name), and the inter-node transport (TCP, over loopback), with one
# Open MPI daemon per node started through a launch agent (scripts/simnodes/agent.sh) in
# a UTS namespace of its own instead of through ssh. What it does not: separate disks
# (every node writes the same file system), memories or CPUs (all nodes share this
# machine's), networks (loopback, no latency or bandwidth of a real interconnect), or
# separate process or user namespaces (/proc shows every node's processes).
#
# Needs `unshare --uts` (root, or unprivileged user namespaces) and Open MPI's mpirun.
# SIMNODES_STATE=DIR (default: a fresh temporary folder per job) holds each node's daemon
# pid (DIR/HOST.pid), which `kill` needs; SIMNODES_ENV_<HOST>="VAR=VALUE ..." adds
# environment to one node's processes (HOST with '-' and '.' as '_').
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

check() {
  if ! command -v unshare >/dev/null; then echo "simnodes: no unshare (Debian: util-linux)"; return 77; fi
  if ! command -v mpirun >/dev/null; then echo "simnodes: no mpirun (Debian: openmpi-bin)"; return 77; fi
  local why
  if ! why=$(unshare --uts /bin/sh -c 'hostname simnodes-check' 2>&1); then
    echo "simnodes: cannot give a process its own host name (unshare --uts: ${why:-failed}); run as root or allow unprivileged user namespaces"
    return 77
  fi
}

case "${1:-}" in
  check) check ;;
  mpirun)
    [ $# -ge 2 ] || { echo "usage: simnodes.sh mpirun HOST:SLOTS,HOST:SLOTS... MPIRUN_ARGS..." >&2; exit 2; }
    check >&2 || exit $?
    hosts=$2; shift 2
    if [ -z "${SIMNODES_STATE:-}" ]; then
      SIMNODES_STATE=$(mktemp -d /tmp/simnodes.XXXXXX)
      trap 'rm -rf "$SIMNODES_STATE"' EXIT
    fi
    export SIMNODES_STATE
    # Loopback is the network between the nodes (Open MPI leaves it out by default).
    mpirun --mca plm_rsh_agent "$here/simnodes/agent.sh" --mca btl_tcp_if_include lo \
      --mca oob_tcp_if_include lo --host "$hosts" "$@"
    ;;
  kill)
    [ $# = 2 ] && [ -n "${SIMNODES_STATE:-}" ] ||
      { echo "usage: SIMNODES_STATE=DIR simnodes.sh kill HOST (DIR: the job's SIMNODES_STATE)" >&2; exit 2; }
    pid=$(cat "$SIMNODES_STATE/$2.pid" 2>/dev/null) || { echo "simnodes: no node $2 in $SIMNODES_STATE" >&2; exit 1; }
    ns=$(readlink "/proc/$pid/ns/uts" 2>/dev/null) || { echo "simnodes: node $2 (pid $pid) is gone" >&2; exit 1; }
    # Every process in the node's UTS namespace: its daemon and every rank it started.
    victims=()
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$ns" ] && victims+=("${p#/proc/}")
    done
    kill -9 "${victims[@]}" 2>/dev/null || true
    echo "simnodes: killed ${#victims[@]} processes of node $2"
    ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac

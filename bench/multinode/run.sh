#!/bin/bash
# Ranks on 2 simulated nodes (scripts/simnodes.sh) against the same ranks on 1 node: what
# a dedicated hand-off costs the compute ranks, and how long a live window takes. The
# "nodes" share this machine's disk and cores: these are correctness and overhead
# figures of the inter-node paths (TCP over loopback instead of shared memory), not a
# cluster's bandwidth (bench/multinode/HISTORY.md).
#   bench/multinode/run.sh BUILD [--rounds R]
# Hand-off: the cylinder (3 compute ranks, 2 I/O ranks: one per node, or both on the one
# node), a checkpoint every 10 of 100 steps; per round the sum over checkpoints of "handed
# off in X s" on the output lines, and of the part of it spent waiting for a free slot
# (the I/O ranks still writing the step before). Live: the default case with 3 compute ranks (2 nodes:
# the collector's node has 1 of them), 20 `rewind window --time live` of the whole domain
# (budget 20000, p, u) while the job runs; the median of the client's "X ms".
set -u
BUILD=$(realpath "${1:?build dir}"); shift
ROUNDS=3
[ "${1:-}" = --rounds ] && ROUNDS=$2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/scripts/mpi-env.sh"
rewind=$BUILD/apps/rewind sim=$SRC/scripts/simnodes.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
export SIMNODES_STATE=$tmp
launch() {  # launch NODES ARGS...: 1 = mpirun -np 6 on this node; 2 = nodeA:3,nodeB:3
  local n=$1; shift
  if [ "$n" = 1 ]; then mpirun -np "${NP:-6}" "$rewind" "$@"; else "$sim" mpirun "${HOSTS:-nodeA:3,nodeB:3}" -np "${NP:-6}" "$rewind" "$@"; fi
}
handoff() {  # handoff NODES: seconds the compute ranks spent handing off (sum over checkpoints)
  rm -rf d.h5 d.views d.h5.monitor.csv
  launch "$1" run "$SRC/cases/cylinder-2d1.toml" -o d.h5 --force --steps 100 --set output.checkpoint_every=10 \
    --set output.visualisation_every=0 --set 'output.io.strategy="dedicated"' --set output.io.io_ranks_per_node=$((3 - $1)) |
    awk '/handed off in/ { for (i = 1; i < NF; i++) if ($i == "in") { c += $(i+1); n++; break }
                           for (i = 1; i < NF; i++) if ($i == "(waited") { w += $(i+1); break } }
         END { printf "%.4f %.4f %d\n", c, w, n }'
}
live() {  # live NODES: median ms of 20 live windows
  rm -rf l.h5 l.h5.contact l.views l.h5.monitor.csv
  NP=5 HOSTS=nodeA:3,nodeB:2 launch "$1" run "$SRC/cases/default.toml" -o l.h5 --force --set time.end=100 \
    --set output.checkpoint_interval=0 --set output.visualisation_interval=0 --listen 127.0.0.1:0 >live.log 2>&1 &
  local job=$!
  for _ in $(seq 600); do [ -e l.h5.contact ] && break; sleep 0.1; done
  for _ in $(seq 20); do "$rewind" window l.h5 --time live --box 0,0,0,2.2,0.41,0 --budget 20000 --vars p,u; done |
    sed -n 's/.* \([0-9.]*\) ms$/\1/p' | sort -g | awk '{ a[NR] = $1 } END { printf "%.1f %d\n", a[int((NR + 1) / 2)], NR }'
  "$rewind" steer l.h5 stop >/dev/null 2>&1
  wait $job
  grep -o '[0-9]* of [0-9]* compute ranks wrote into[^,;]*' live.log | head -1 >&2
}
for r in $(seq "$ROUNDS"); do
  for n in 1 2; do echo "round $r nodes $n handoff_s/waited_s/checkpoints $(handoff $n)"; done
  for n in 2 1; do echo "round $r nodes $n live_window_ms/windows $(live $n)"; done
done

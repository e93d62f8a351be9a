#!/usr/bin/env bash
# The batch scripts of scripts/slurm through a real Slurm (Debian's slurm-wlm 22.05): a
# controller and two node daemons started by this test (tests/slurm/local_slurm.sh:
# configuration written here, stopped at the end), each node its own host name, all in a
# network namespace of their own that only this test uses (the daemons authenticate
# nobody). Open MPI ranks are launched by srun (PMIx), once by mpirun inside the job.
#  - run.sbatch on 2 nodes: the file equals, bit for bit, a one-node collective run's;
#  - dedicated.sbatch on 2 nodes: one I/O rank on each node, the same file;
#  - restart.sbatch (mpirun inside the allocation): a branch from step 5 whose step 10
#    equals the uninterrupted run's;
#  - live.sbatch: the collector listens on its node's interface with a token and writes
#    RUN.h5.contact (mode 600: the node's name, the port, the token); `rewind steer` and
#    `rewind window` connect by naming the run file; the live window equals the file;
#    `stop` ends the job, whose contact file is then gone.
# Skipped (77) with the reason when Slurm is not installed or the namespaces cannot be
# made (needs root).
#   slurm_jobs.sh REWIND SOURCE_DIR
set -u
if [ -z "${REWIND_SLURM_NETNS:-}" ]; then
  for c in slurmctld slurmd sbatch srun sinfo unshare ip; do
    command -v $c >/dev/null || { echo "SKIP: $c not found (Debian: slurmd slurmctld slurm-client util-linux iproute2; scripts/install-deps.sh)"; exit 77; }
  done
  if ! why=$(unshare --net --uts --mount --pid --fork true 2>&1); then
    echo "SKIP: cannot make a private network namespace for the test's Slurm (unshare --net: ${why:-failed}; needs root)"
    exit 77
  fi
  REWIND_SLURM_NETNS=1 exec unshare --net --uts --mount --pid --fork --mount-proc --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/../apps/lib.sh" "$1" "$2" mpirun
source "$src/tests/slurm/local_slurm.sh"
. "$src/scripts/mpi-env.sh"
py=/usr/bin/python3
hostname slurm-login
# The namespace's network: loopback, plus one address that is not loopback (Slurm asks
# getaddrinfo for addresses, which lists IPv4 only where a non-loopback one exists).
ip link set lo up
ip link add rwd0 type bridge 2>/dev/null && ip addr add 10.254.0.1/24 dev rwd0 && ip link set rwd0 up ||
  ip addr add 10.254.0.1/32 dev lo
# The nodes' names resolve here alone (a private /etc/hosts in this mount namespace).
{ cat /etc/hosts; echo "127.0.0.1 nodeA nodeB slurm-login"; } >hosts
mount --bind hosts /etc/hosts
# Between the nodes: TCP over loopback. The nodes share this machine's cores: no binding.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_hwloc_base_binding_policy=none
export REWIND=$rewind
trap 'slurm_stop; rm -rf "$tmp"' EXIT
if ! slurm_start "$tmp/slurm" nodeA nodeB >start.why 2>&1; then
  echo "SKIP: the test's Slurm daemons did not start: $(cat start.why)"
  exit 77
fi
sb=$src/scripts/slurm
case_file=$src/cases/cylinder-2d1.toml
opts=(--steps 10 --set output.checkpoint_every=5 --set output.visualisation_every=5)
batch() { timeout -k 5 120 sbatch -W -t 5 "$@" >>sbatch.out 2>&1; }  # waits for the job's end

# References on one node, outside Slurm: 3 compute ranks, collective.
mpirun -np 4 "$rewind" run "$case_file" -o ref.h5 "${opts[@]}" -q --set 'output.io.strategy="collective"' >ref.log 2>&1 ||
  cat ref.log

batch -N 2 --ntasks-per-node=2 -o run.out "$sb/run.sbatch" "$case_file" run.h5 "${opts[@]}" -q
check "run.sbatch on 2 nodes (4 tasks): the job ran" "grep -q '^rewind-run: job [0-9]* on 2 nodes (node.*), 4 tasks' run.out || { cat run.out; false; }"
check "run.sbatch: the file equals the one-node collective run's, bit for bit" \
  "$py $src/tests/multinode/same_file.py ref.h5 run.h5 >same1.out 2>&1 || { head -3 same1.out; cat run.out; false; }"

batch -N 2 --ntasks-per-node=3 -o ded.out "$sb/dedicated.sbatch" "$case_file" ded.h5 "${opts[@]}"
check "dedicated.sbatch on 2 nodes (6 tasks): 2 I/O ranks, one per node, wrote the steps" \
  "grep -q '^io ranks    2 I/O rank(s) wrote 3 steps' ded.out || { tail -5 ded.out; false; }"
check "dedicated.sbatch: the file equals the one-node collective run's, bit for bit" \
  "$py $src/tests/multinode/same_file.py ref.h5 ded.h5 >same2.out 2>&1 || { head -3 same2.out; false; }"

REWIND_LAUNCH=mpirun batch -N 2 --ntasks-per-node=2 -o br.out "$sb/restart.sbatch" run.h5@5 --steps 5 -o br.h5 -q
check "restart.sbatch (mpirun inside the job): the branch's step 10 equals the uninterrupted run's, bit for bit" \
  "same ref.h5@10 br.h5@10 || { tail -5 br.out; false; }"

# The live job: submitted without waiting; reached by naming its run file.
(umask 077 && echo "s3cret-$RANDOM$RANDOM" >token)
TOKEN_FILE=$PWD/token timeout -k 5 120 sbatch -t 5 -N 2 --ntasks-per-node=2 -o live.out "$sb/live.sbatch" \
  "$src/cases/default.toml" live.h5 --set time.end=30 >>sbatch.out 2>&1
# Until the collector listens, or the job has ended (then its output says why).
for _ in $(seq 1 900); do
  [ -e live.h5.contact ] && break
  [ -s sbatch.out ] && [ -z "$(squeue -h 2>/dev/null)" ] && [ -e live.out ] && break
  sleep 0.1
done
check "live.sbatch: the job writes live.h5.contact (mode 600) with its node's name, a port and the token" \
  "[ \"\$(stat -c %a live.h5.contact 2>/dev/null)\" = 600 ] && $py -c \"import json; c=json.load(open('live.h5.contact')); assert c['host']=='nodeA' and c['node']=='nodeA' and c['token']==open('token').read().strip(), c\"" ||
  tail -5 live.out
"$rewind" steer live.h5 pause >pause.out 2>&1
check "rewind steer live.h5 pause: connects through the contact file, with its token" "grep -q '^paused at step' pause.out || { cat pause.out; false; }"
"$rewind" window live.h5 --time live --box 0,0,0,2.2,0.41,0 --budget 3000 --out w.json >w.out 2>&1
check "rewind window live.h5 --time live: a live window" "[ -s w.json ] || { cat w.out; false; }"
REWIND_TOKEN=wrong "$rewind" steer live.h5 status --token wrong >wrong.out 2>&1
check "a wrong token given explicitly is refused (the contact file's is not used then)" \
  "[ \$? != 0 ] && grep -q 'unauthorized' wrong.out"
"$rewind" steer live.h5 stop >/dev/null 2>&1
for _ in $(seq 1 300); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
check "stop: the job ends, and its contact file is gone" "[ -z \"\$(squeue -h)\" ] && [ ! -e live.h5.contact ]"
check "the live window equals the file's last step, value by value" \
  "$py $src/tests/collector/check_window.py live.h5 w.json >chk.out 2>&1 || { tail -3 chk.out; tail -5 live.out; false; }"
exit $fail

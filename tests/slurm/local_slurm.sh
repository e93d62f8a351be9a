# Sourced: a throwaway Slurm cluster on this machine, for tests/slurm. Call inside a
# network namespace of its own (slurm_jobs.sh re-runs itself under `unshare --net`):
# the daemons listen on every address of that namespace, which only this test uses, and
# authenticate nobody (auth/none) -- nobody outside can reach them. In a PID namespace of
# its own too, everything the daemons start ends with the test, however it ends.
#   slurm_start DIR NODE...   writes DIR/slurm.conf, starts slurmctld and one slurmd per
#                             NODE (each in a UTS namespace named NODE, with a TmpFS of
#                             its own, CPUS each, default 4);
#                             returns non-zero with the reason on stdout if they do not
#                             come up within 30 s
#   slurm_stop                cancels every job, stops the daemons, waits for them
# Exports SLURM_CONF for sbatch, srun, squeue and sinfo.
slurm_dir= slurm_pids=()
slurm_start() {
  slurm_dir=$1; shift
  local nodes=("$@") n port=$((20000 + RANDOM % 20000))
  mkdir -p "$slurm_dir/state"
  {
    echo "ClusterName=rewindtest"
    echo "SlurmctldHost=$(hostname)(127.0.0.1)"
    echo "SlurmctldPort=$port"
    echo "SlurmUser=$(id -un)"
    echo "SlurmdUser=root"
    echo "AuthType=auth/none"
    echo "CredType=cred/none"
    echo "StateSaveLocation=$slurm_dir/state"
    echo "SlurmdSpoolDir=$slurm_dir/spool-%n"
    echo "SlurmctldPidFile=$slurm_dir/slurmctld.pid"
    echo "SlurmdPidFile=$slurm_dir/slurmd-%n.pid"
    echo "SlurmctldLogFile=$slurm_dir/slurmctld.log"
    echo "SlurmdLogFile=$slurm_dir/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "SlurmdParameters=config_overrides"  # more CPUs than the machine has: oversubscribed ranks
    echo "KillWait=5"
    echo "MinJobAge=6"  # sbatch -W polls every 2 s while MinJobAge / 3 <= 2 (else every 8, then 32 s)
    echo "TmpFS=$slurm_dir/tmp"  # each node its own (below): PMIx keeps per-step files there
    local i=0
    for n in "${nodes[@]}"; do
      i=$((i + 1))
      echo "NodeName=$n NodeAddr=127.0.0.1 Port=$((port + i)) CPUs=${CPUS:-4} State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=$(IFS=,; echo "${nodes[*]}") Default=YES MaxTime=INFINITE State=UP"
  } >"$slurm_dir/slurm.conf"
  export SLURM_CONF=$slurm_dir/slurm.conf
  # In the foreground (-D) as this shell's children: they are reaped when they end.
  slurmctld -D -f "$SLURM_CONF" >"$slurm_dir/start.out" 2>&1 &
  slurm_pids=($!)
  mkdir -p "$slurm_dir/tmp"
  for n in "${nodes[@]}"; do
    # A node: its own host name, and its own TmpFS (a folder of its own mounted there).
    mkdir -p "$slurm_dir/tmp-$n" "$slurm_dir/spool-$n"
    unshare --uts --mount --propagation private /bin/sh -c \
      'hostname "$0" && mount --bind "$2" "$3" && exec slurmd -D -f "$1" -N "$0"' \
      "$n" "$SLURM_CONF" "$slurm_dir/tmp-$n" "$slurm_dir/tmp" >>"$slurm_dir/start.out" 2>&1 &
    slurm_pids+=($!)
  done
  local until=$(($(date +%s) + 30))
  while [ "$(date +%s)" -lt $until ]; do
    local p
    for p in "${slurm_pids[@]}"; do
      kill -0 "$p" 2>/dev/null ||
        { echo "a daemon ended: $(cat "$slurm_dir"/*.log "$slurm_dir/start.out" 2>/dev/null | grep -E 'fatal|error' | tail -1)"; return 1; }
    done
    [ "$(timeout 5 sinfo -h -o '%t' 2>/dev/null | sort -u | tr -d '\n')" = idle ] && return 0
    sleep 0.2
  done
  echo "the Slurm nodes did not become idle within 30 s: $(sinfo -h 2>&1 | head -2 | tr '\n' ' ')"
  return 1
}
slurm_stop() {
  [ -n "$slurm_dir" ] || return 0
  scancel --full --signal=KILL --user="$(id -un)" >/dev/null 2>&1  # every job of the test's cluster
  local p
  for p in "${slurm_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${slurm_pids[@]}"; do wait "$p" 2>/dev/null; done
  slurm_dir= slurm_pids=()
}

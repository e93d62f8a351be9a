#!/usr/bin/env bash
# The SSH tunnel recipe of docs/cluster.md ("Connecting to a job"), as written: a live job
# on a compute node whose collector listens on that node's loopback only, reached from
# another host through `ssh -N -L PORT:127.0.0.1:PORT -J login cn042`:
#  - the "compute node" cn042 is a network namespace of its own (its loopback, and an
#    address 10.77.0.2 on a veth pair), with its own sshd; the "login node" is an sshd on
#    127.0.0.1:2222 of the test's namespace, where the client runs (the workstation);
#  - without the tunnel, `rewind steer RUN.h5` (through the contact file) fails with one
#    line that says the job listens on loopback of cn042 and to use a tunnel;
#  - through the tunnel, with the token: status, pause, a live window equal to the file's
#    cells value by value, stop; without the token: unauthorized.
# Everything runs in namespaces of its own (network, mount, PID, UTS; re-run under
# unshare): no port, interface or sshd of the machine is touched. Skipped (77) with the
# reason without sshd or root.
#   multinode_ssh_tunnel.sh REWIND SOURCE_DIR
set -u
if [ -z "${REWIND_SSH_NETNS:-}" ]; then
  for c in /usr/sbin/sshd ssh ssh-keygen unshare nsenter ip; do
    command -v $c >/dev/null || { echo "SKIP: $c not found (Debian: openssh-server openssh-client util-linux iproute2)"; exit 77; }
  done
  if ! why=$(unshare --net --uts --mount --pid --fork true 2>&1); then
    echo "SKIP: cannot make private namespaces for the test's hosts (unshare --net: ${why:-failed}; needs root)"
    exit 77
  fi
  REWIND_SSH_NETNS=1 exec unshare --net --uts --mount --pid --fork --mount-proc --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/../apps/lib.sh" "$1" "$2" mpirun
. "$src/scripts/mpi-env.sh"
py=/usr/bin/python3
hostname workstation
ip link set lo up
mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd  # sshd's privilege separation folder, in this namespace only
# The compute node: a network and UTS namespace, joined to this one by a veth pair.
unshare --net --uts /bin/sh -c 'hostname cn042 && exec sleep 600' &
node=$!
sleep 0.3
ip link add veth0 type veth peer name veth1 netns $node
ip addr add 10.77.0.1/24 dev veth0 && ip link set veth0 up
on_node() { nsenter -t $node -n -u "$@"; }
on_node sh -c 'ip link set lo up && ip addr add 10.77.0.2/24 dev veth1 && ip link set veth1 up'
# Keys and the two sshds (root, key only, forwarding allowed).
ssh-keygen -q -t ed25519 -N '' -f key && ssh-keygen -q -t ed25519 -N '' -f hostkey && cp key.pub authorized_keys
sshd_conf() {  # sshd_conf ADDRESS PORT
  printf '%s\n' "ListenAddress $1" "Port $2" "HostKey $PWD/hostkey" "AuthorizedKeysFile $PWD/authorized_keys" \
    "PermitRootLogin prohibit-password" "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" \
    "StrictModes no" "AllowTcpForwarding yes" "PidFile $PWD/sshd-$2.pid"
}
sshd_conf 127.0.0.1 2222 >login.conf && sshd_conf 10.77.0.2 22 >node.conf
/usr/sbin/sshd -D -e -f "$PWD/login.conf" 2>login.log &
on_node /usr/sbin/sshd -D -e -f "$PWD/node.conf" 2>node.log &
# The workstation's ssh configuration: login and cn042 as a cluster's would be named.
cat >ssh.conf <<EOF
Host login
  HostName 127.0.0.1
  Port 2222
Host cn042
  HostName 10.77.0.2
  Port 22
Host *
  User root
  IdentityFile $PWD/key
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  BatchMode yes
  LogLevel ERROR
EOF
(umask 077 && echo "tunnel-$RANDOM$RANDOM" >token)

# The job, on cn042, its collector on cn042's loopback (the default address).
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
on_node timeout -k 5 90 mpirun -np 4 "$rewind" run "$src/cases/default.toml" -o live.h5 --set time.end=30 \
  --listen 127.0.0.1:0 --token-file "$PWD/token" >run.log 2>&1 &
job=$!
for _ in $(seq 1 600); do [ -e live.h5.contact ] && break; sleep 0.1; done
port=$($py -c "import json; c=json.load(open('live.h5.contact')); assert c['node']=='cn042' and c['host']=='127.0.0.1', c; print(c['port'])")
check "the job on cn042 writes its contact file: its loopback and port" "[ -n '$port' ]"
"$rewind" steer live.h5 status >direct.out 2>&1
check "from the workstation, without a tunnel: one line saying the job listens on loopback of cn042, use a tunnel" \
  "[ \$? != 0 ] && [ \$(wc -l <direct.out) = 1 ] && grep -q 'it listens on loopback of cn042 only: reach it through an SSH tunnel' direct.out"

# The recipe: ssh -N -L PORT:127.0.0.1:PORT -J login cn042 (the port as the contact file says).
ssh -F ssh.conf -N -L 7400:127.0.0.1:$port -J login cn042 2>tunnel.log &
tunnel=$!
for _ in $(seq 1 100); do "$rewind" steer 127.0.0.1:7400 status --token-file token >status.out 2>&1 && break; sleep 0.2; done
check "through the tunnel (workstation -> login -> cn042's loopback), with the token: status" \
  "grep -q '^running\|^paused' status.out || { cat status.out tunnel.log; false; }"
check "... the tunnel went through the login node's sshd to cn042's" \
  "grep -q 'Accepted publickey for root from 127.0.0.1' login.log && grep -q 'Accepted publickey for root from 10.77.0.1' node.log"
"$rewind" steer 127.0.0.1:7400 pause --token-file token >pause.out 2>&1
check "... pause" "grep -q '^paused at step' pause.out"
"$rewind" window 127.0.0.1:7400 --time live --box 0,0,0,2.2,0.41,0 --budget 3000 --token-file token --out w.json >w.out 2>&1
check "... a live window" "[ -s w.json ] || { cat w.out; false; }"
REWIND_TOKEN= REWIND_TOKEN_FILE= "$rewind" steer 127.0.0.1:7400 status >notoken.out 2>&1
check "... without the token: refused (unauthorized)" "[ \$? != 0 ] && grep -q unauthorized notoken.out"
"$rewind" steer 127.0.0.1:7400 stop --token-file token >/dev/null 2>&1
for _ in $(seq 1 600); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
wait $job
check "stop ends the job (exit 0), its contact file removed" "[ $? = 0 ] && [ ! -e live.h5.contact ]"
check "the window through the tunnel equals the file's last step, value by value" \
  "$py $src/tests/collector/check_window.py live.h5 w.json >chk.out 2>&1 || { tail -3 chk.out; false; }"
kill $tunnel 2>/dev/null
exit $fail

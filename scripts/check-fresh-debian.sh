#!/usr/bin/env bash
# Runs the README's two set-up commands on a fresh Debian 12 in a chroot: nothing that
# was installed on this machine by hand can help them. Needs root and Debian's mirror.
#   scripts/check-fresh-debian.sh [DIR]     (default DIR: /tmp/rewind-fresh-debian)
# DIR/root becomes a minimal bookworm (debootstrap --variant=minbase, ~30 s), this
# repository's committed HEAD is cloned into it, and `bash .ci/run` (= scripts/test.sh:
# installs the ~60 packages, builds, runs every test) and then `scripts/demo.sh` run
# there, as CI would (CI=true, a clean environment). Logs: DIR/test.log, DIR/demo.log.
# Took 5 minutes here (2 cores, a fast mirror; 13 on a slower day). The chroot gets
# the host's /etc/hosts: without an entry for the host name, OpenMPI's start-up waits
# ~10 s per run of 3 or more ranks (a real Debian install has one).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/rewind-fresh-debian}
root=$dir/root
if [ "$(id -u)" != 0 ]; then
  echo "check-fresh-debian: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi
if [ -e "$root" ]; then
  echo "check-fresh-debian: $root exists; remove it (umount anything under it first) or name another DIR" >&2
  exit 2
fi
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
mkdir -p "$dir"
echo "check-fresh-debian: debootstrap bookworm into $root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$dir/debootstrap.log" 2>&1
cp /etc/hosts /etc/resolv.conf "$root/etc/"
mounts=(proc sys dev dev/pts dev/shm)
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "$root/${mounts[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in "${mounts[@]}"; do mount --bind "/$m" "$root/$m"; done
git clone -q . "$root/work/main"
[ -d ../shared ] && cp -r ../shared "$root/work/shared"  # CI has shared/ beside the clone
run() {  # run NAME COMMAND: in the chroot's clone, with CI's clean environment
  echo "check-fresh-debian: $2 (log: $dir/$1.log)"
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin CI=true LANG=C.UTF-8 \
    bash -c "cd /work/main && $2" >"$dir/$1.log" 2>&1 </dev/null
}
start=$SECONDS
run test "bash .ci/run" || { echo "check-fresh-debian: the test command FAILED; tail of $dir/test.log:" >&2; tail -20 "$dir/test.log" >&2; exit 1; }
grep -E "tests passed" "$dir/test.log" | tail -1
run demo "scripts/demo.sh" || { echo "check-fresh-debian: the demo FAILED; tail of $dir/demo.log:" >&2; tail -20 "$dir/demo.log" >&2; exit 1; }
echo "check-fresh-debian: both README commands passed on a fresh Debian 12 in $((SECONDS - start)) s"

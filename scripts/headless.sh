#!/usr/bin/env bash
# headless.sh CMD [ARGS...]: run CMD (pvpython, pvbatch, paraview) under a private Xvfb.
#
# Why renders lost their X connection ("bad X server connection", 2 renders in 12 under
# `xvfb-run -a`, 7 in 12 with 3 concurrent starts): ParaView opens the display once to
# probe it and closes it; the server, left without clients, resets, and pvpython's real
# connection falls into the reset, more often the busier the machine. So Xvfb runs with
# -noreset (12 in 12 then, 3 at a time). It also gets a display number no X server uses,
# checked as a socket file and as an abstract socket (/proc/net/unix: shared with servers
# whose /tmp we do not see), and -nopn, so it exits instead of serving on half its
# sockets; it reports its display (-displayfd) once it accepts connections, so CMD never
# starts before its server is up. Starts are serialised by a lock shared by every
# headless.sh on the machine ($REWIND_HEADLESS_LOCK, default /tmp/rewind-headless.lock),
# held only until the server is up. Should a connection still be lost, CMD runs again on
# a fresh server, at most 3 times, only for that error. Exit status: CMD's.
# REWIND_XVFB_LOG=FILE keeps Xvfb's messages.
set -u
command -v Xvfb >/dev/null || { echo "headless: Xvfb not found (Debian package xvfb)" >&2; exit 127; }
work=$(mktemp -d)
xpid=
stop_x() { [ -n "$xpid" ] && { kill "$xpid" 2>/dev/null; wait "$xpid" 2>/dev/null; }; xpid=; }
trap 'stop_x; rm -rf "$work"' EXIT
lock=${REWIND_HEADLESS_LOCK:-/tmp/rewind-headless.lock}
# A display number with no socket file, lock file or abstract socket.
free_display() {
  local n
  for n in $(seq $((100 + RANDOM % 800)) 999) $(seq 100 999); do
    [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] && continue
    grep -q "@/tmp/.X11-unix/X$n\$" /proc/net/unix 2>/dev/null && continue
    echo "$n"
    return 0
  done
  return 1
}
for attempt in 1 2 3; do
  exec 5>>"$lock" && flock -w 60 5 || echo "headless: could not take $lock; starting anyway" >&2
  for try in 1 2 3 4 5; do  # another server may take the number first: take the next
    : >"$work/display"
    n=$(free_display) || break
    Xvfb ":$n" -displayfd 3 -nopn -noreset -screen 0 1600x1200x24 -nolisten tcp 3>"$work/display" >/dev/null 5>&- \
      2>>"${REWIND_XVFB_LOG:-/dev/null}" &
    xpid=$!
    for _ in $(seq 300); do
      [ -s "$work/display" ] && break
      kill -0 "$xpid" 2>/dev/null || break
      sleep 0.05
    done
    [ -s "$work/display" ] && break
    stop_x
  done
  exec 5>&-  # the next server may start
  if [ ! -s "$work/display" ]; then stop_x; echo "headless: Xvfb did not start (attempt $attempt)" >&2; continue; fi
  # CMD's stderr goes through tee (kept to look for the X error); stdout stays as it is.
  { DISPLAY=":$(head -n1 "$work/display")" "$@" 2>&1 1>&4 | tee "$work/stderr" >&2; rc=${PIPESTATUS[0]}; } 4>&1
  stop_x
  [ $rc != 0 ] && grep -q 'bad X server connection' "$work/stderr" || exit $rc
  echo "headless: lost the X connection, running again on a new server (attempt $attempt of 3)" >&2
done
exit 1

#!/usr/bin/env bash
# headless.sh CMD [ARGS...]: run CMD (pvpython, pvbatch, paraview) under a private Xvfb.
#
# Xvfb picks a free display itself and reports it once it accepts connections
# (-displayfd), so CMD never starts before its server is up. When several servers start
# at once a client can still lose its connection ("bad X server connection", the failure
# `xvfb-run -a` shows now and then); CMD is then run again on a fresh server, at most 3
# times, and only for that error. Exit status: CMD's. REWIND_XVFB_LOG=FILE keeps
# Xvfb's messages.
set -u
command -v Xvfb >/dev/null || { echo "headless: Xvfb not found (Debian package xvfb)" >&2; exit 127; }
work=$(mktemp -d)
xpid=
stop_x() { [ -n "$xpid" ] && { kill "$xpid" 2>/dev/null; wait "$xpid" 2>/dev/null; }; xpid=; }
trap 'stop_x; rm -rf "$work"' EXIT
for attempt in 1 2 3; do
  : >"$work/display"
  Xvfb -displayfd 3 -screen 0 1600x1200x24 -nolisten tcp 3>"$work/display" >/dev/null \
    2>>"${REWIND_XVFB_LOG:-/dev/null}" &
  xpid=$!
  for _ in $(seq 300); do
    [ -s "$work/display" ] && break
    kill -0 "$xpid" 2>/dev/null || break
    sleep 0.05
  done
  if [ ! -s "$work/display" ]; then stop_x; echo "headless: Xvfb did not start (attempt $attempt)" >&2; continue; fi
  # CMD's stderr goes through tee (kept to look for the X error); stdout stays as it is.
  { DISPLAY=":$(head -n1 "$work/display")" "$@" 2>&1 1>&4 | tee "$work/stderr" >&2; rc=${PIPESTATUS[0]}; } 4>&1
  stop_x
  [ $rc != 0 ] && grep -q 'bad X server connection' "$work/stderr" || exit $rc
  echo "headless: lost the X connection, running again on a new server (attempt $attempt of 3)" >&2
done
exit 1

# Sourced by the collector's shell tests (needs $rewind).
# start_serve FILE [OPTIONS...]: `rewind serve FILE --listen 127.0.0.1:0 OPTIONS` in the
# background; sets server_pid, and port (empty if no address was printed within 10 s).
start_serve() {
  local file=$1
  shift
  "$rewind" serve "$file" --listen 127.0.0.1:0 "$@" >serve.log 2>&1 &
  server_pid=$!
  port=
  for _ in $(seq 1 100); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' serve.log)
    [ -n "$port" ] && break
    sleep 0.1
  done
}

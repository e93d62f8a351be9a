#!/usr/bin/env bash
# The plugin answers files through collector::FileService and live runs through the
# collector's client, and carries none of the collector's Asio server (rewind::collector):
#   no_server.sh PLUGIN.so
# The symbols it must have make the check unable to pass on a plugin nm cannot read.
set -u
plugin=$1
symbols=$(nm -C "$plugin") || { echo "FAIL nm cannot read $plugin"; exit 1; }
bad=0
for need in 'rwd::collector::FileService::window' 'rwd::collector::Client::window'; do
  grep -qF "$need" <<<"$symbols" || { echo "FAIL $plugin has no $need"; bad=1; }
done
server=$(grep -E 'rwd::collector::(Server::|detail::Connection::)' <<<"$symbols" | head -3)
[ -z "$server" ] || { echo "FAIL $plugin links the collector's server:"; echo "$server"; bad=1; }
[ $bad = 0 ] && echo "ok: FileService and Client, no Server or Connection in $plugin"
exit $bad

#!/bin/sh
# Open MPI's launch agent for simulated nodes (scripts/simnodes.sh; docs/cluster.md).
# Open MPI calls it as `agent.sh HOST COMMAND...` to start its daemon (orted) on HOST;
# instead of ssh, it starts the daemon here, in a new UTS namespace whose host name is
# HOST. Every rank that daemon starts sees that host name: MPI_COMM_TYPE_SHARED splits
# per name, MPI_Get_processor_name and gethostname return it, and ranks of different
# names talk over TCP.
#   SIMNODES_STATE=DIR   the daemon's pid is written to DIR/HOST.pid (for simnodes kill)
#   SIMNODES_ENV_HOST="VAR=VALUE ..."  extra environment for that node's processes
#                        (HOST with '-' and '.' as '_')
set -eu
host=$1
shift
if [ -n "${SIMNODES_STATE:-}" ]; then echo $$ >"$SIMNODES_STATE/$host.pid"; fi
var=SIMNODES_ENV_$(printf %s "$host" | tr -- '-.' '__')
extra=$(eval "printf %s \"\${$var:-}\"")
exec unshare --uts /bin/sh -c "hostname \"\$0\" && exec env $extra /bin/sh -c \"\$1\"" "$host" "$*"

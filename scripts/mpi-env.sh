# Sourced by the scripts: lets OpenMPI start as root (CI and containers run as root)
# and on more ranks than cores (CI has 2).
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
# Oversubscribed ranks must yield the core while they wait, or runs slow down many times.
export OMPI_MCA_mpi_yield_when_idle=1

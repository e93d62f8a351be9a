#!/usr/bin/env bash
# One command: install what is missing, build, run the default demo.
#
# The demo: build and partition a 3-D tree (`rewind tree`), then run the default
# case on 1 neighbourhood-server rank + 2 compute ranks, writing one shared HDF5 file;
# list its steps, branch from a past step with changed settings, show the lineage and
# plot the monitors. Everything lands in ${REWIND_DEMO_DIR:-out/demo}.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
. scripts/mpi-env.sh
bin=${REWIND_BUILD_DIR:-build}/apps/rewind
out=${REWIND_DEMO_DIR:-out/demo}
mkdir -p "$out"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "rewind tree cases/tree-demo.toml"
"$bin" tree cases/tree-demo.toml

step "mpirun -np 3 rewind halo cases/tree-demo.toml   (1 neighbourhood server + 2 compute ranks)"
mpirun -np 3 "$bin" halo cases/tree-demo.toml

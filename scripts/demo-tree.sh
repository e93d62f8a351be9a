#!/usr/bin/env bash
# The second demo (the main one is scripts/demo.sh): the space tree and its halo
# exchange, and the offline workflow from the command line. Installs what is missing
# and builds first, like the main demo.
#
#  1. build and partition a 3-D tree (`rewind tree`), and run the three-phase halo
#     exchange on it under the launch model (1 neighbourhood server + 2 compute ranks);
#  2. simulate flow around a cylinder (Re 100) on 2 compute ranks, writing every output
#     step into one shared HDF5 file;
#  3. go back to t = 2 s and branch with a faster inflow into a new file that remembers
#     its parent, then show the lineage and how the branch differs;
#  4. plot the monitors and render the last step of both branches with ParaView.
# Everything lands in ${REWIND_DEMO_DIR:-out/demo-tree}; running it again overwrites only that.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/install-deps.sh
scripts/build.sh
. scripts/mpi-env.sh
bin=$root/${REWIND_BUILD_DIR:-build}/apps/rewind
plugin=$(find "$root/${REWIND_BUILD_DIR:-build}/lib" -name 'RewindReader.so' 2>/dev/null | head -1 || true)
out=${REWIND_DEMO_DIR:-out/demo-tree}
mkdir -p "$out"
cd "$out"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "rewind tree: a 3-D octree refined around a sphere, partitioned along the Lebesgue curve"
"$bin" tree "$root/cases/tree-demo.toml"

step "rewind halo: 1 neighbourhood server + 2 compute ranks, three-phase ghost exchange, checked"
mpirun -np 3 "$bin" halo "$root/cases/tree-demo.toml"

step "rewind run: cylinder at Re 100, 4 simulated seconds, 1 server + 2 compute ranks -> cylinder.h5"
mpirun -np 3 "$bin" run "$root/cases/default.toml" --output cylinder.h5 --monitor cylinder.csv --force

step "rewind info cylinder.h5"
"$bin" info cylinder.h5

step "branch: back to t = 2, inflow 1.5 -> 2.25 m/s (Re 150), into cylinder-re150.h5"
mpirun -np 3 "$bin" run --restart cylinder.h5@t=2 --set 'boundary.xmin.velocity=[2.25,0,0]' \
  --output cylinder-re150.h5 --monitor cylinder-re150.csv --force

step "rewind lineage cylinder.h5"
"$bin" lineage cylinder.h5

step "rewind diff: the branch at t = 4 against the original"
"$bin" diff cylinder.h5 cylinder-re150.h5 || true

step "rewind plot: monitors (drag, lift, Strouhal) as PNG"
"$bin" plot cylinder.csv -o cylinder.png --title "Cylinder, Re 100"
"$bin" plot cylinder-re150.csv -o cylinder-re150.png --title "Branch from t = 2, Re 150"

if [ -n "$plugin" ] && command -v pvpython >/dev/null && command -v Xvfb >/dev/null; then
  step "ParaView (Rewind plugin): velocity u at t = 4 in both branches"
  "$root/scripts/headless.sh" pvpython "$root/scripts/render_step.py" "$plugin" cylinder.h5 cylinder-u.png \
    cylinder-re150.h5 cylinder-re150-u.png 2>render.log || { tail -5 render.log; echo "render failed (log: $out/render.log)"; exit 1; }
fi

step "done: files in $out"
ls -la
cat <<TXT

Open in ParaView: cylinder.h5 with the Rewind plugin ($plugin),
or without it: cylinder.views/cylinder.hdf.series (stock VTKHDF reader).
TXT

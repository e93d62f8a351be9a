#!/usr/bin/env bash
# Write a short 2-D run, compute what it holds with h5py, then check the plugin in pvpython.
set -eu
rewind=$1 plugin=$2 src=$3
command -v pvpython >/dev/null 2>&1 || { echo "pvpython not found: skipping"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || { echo "Xvfb not found: skipping"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$rewind" run "$src/cases/default.toml" --output run.h5 --monitor run.csv -q \
  --set time.end=0.1 --set output.visualisation_interval=0.05 --set 'tree.refine=[{center=[0.2,0.2,0.5],radius=0.08,level=4}]'
/usr/bin/python3 "$here/expected.py" run.h5 expected.json
"$src/scripts/headless.sh" pvpython "$here/check_plugin.py" "$plugin" run.h5 expected.json

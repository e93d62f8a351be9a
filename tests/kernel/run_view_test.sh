#!/bin/sh
# Stock-ParaView check of the VTKHDF views: write a file with the foreign_writer example,
# then open its .hdf.series in pvpython. Exit 77 (skipped) if pvpython is missing.
set -e
WRITER=$1; SCRIPT=$2
command -v pvpython >/dev/null 2>&1 || { echo "pvpython not found: skipping"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || { echo "Xvfb not found: skipping"; exit 77; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mpiexec -n 2 --oversubscribe "$WRITER" "$DIR/run.h5"
# foreign_writer: root + 8 children (2 levels, 9 blocks); root temperature = 300 + 0 + 1 at step 1;
# a view names the array with its unit (docs/file-format.md §7)
"$(dirname "$0")/../../scripts/headless.sh" pvpython "$SCRIPT" "$DIR/run.views/run.hdf.series" 2 9 "temperature [K]" 301.0

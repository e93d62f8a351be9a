#!/bin/sh
# Quality at equal budget: the error of `rewind window --lod adaptive` against the leaves,
# over that of the uniform rule, for budgets doubling from 300 (2-D) or 500 (3-D) to 64
# times that, on one step of a file and a box. The error is tests/support/window_error_oracle.py's
# (h5py + numpy from the leaves, relative L2 over the fluid lattice cells whose centre lies
# in the box; it also checks each window against the file and that no two pieces overlap).
# Prints one line per budget and the geometric mean of the ratios over the budgets where
# both windows err and the root alone fits (below it both are the same level-0 subsample).
#   bench/window/quality.sh REWIND FILE STEP [BOX x0,y0,z0,x1,y1,z1] [FIRST_BUDGET]
# docs/benchmarks.md, "Adaptive windows by octants"; the files: the commands there.
set -e
REWIND=${1:?rewind executable}; FILE=${2:?file}; STEP=${3:?step}; BOX=$4; B=${5:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
ORACLE=$HERE/../../tests/support/window_error_oracle.py
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -z "$BOX" ]; then
  BOX=$(/usr/bin/python3 -c "
import h5py, sys
b = h5py.File(sys.argv[1], 'r')['/simulation/step_%08d/bounding_box' % int(sys.argv[2])][0]
print(','.join(repr(float(v)) for v in (b[0], b[2], b[4], b[1], b[3], b[5])))" "$FILE" "$STEP")
fi
for i in 0 1 2 3 4 5 6; do
  "$REWIND" window "$FILE@$STEP" --box "$BOX" --budget "$B" --vars u --out "$TMP/u.json" >/dev/null
  "$REWIND" window "$FILE@$STEP" --box "$BOX" --budget "$B" --vars u --lod adaptive --out "$TMP/a.json" >/dev/null
  /usr/bin/python3 "$ORACLE" "$FILE" "$TMP/u.json" "$TMP/a.json" "$B" "$BOX" | tee -a "$TMP/lines"
  B=$((B * 2))
done
/usr/bin/python3 - "$TMP/lines" <<'PY'
import math, re, sys
rs = []
for line in open(sys.argv[1]):
    m = re.search(r"uniform ([0-9.e+-]+) \(.*adaptive ([0-9.e+-]+) \(", line)
    if m and float(m.group(1)) > 0:  # both err (a uniform window with no error: both exact)
        rs.append(max(float(m.group(2)) / float(m.group(1)), 1e-12))
print(f"geometric mean of the ratios over {len(rs)} budgets: {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}"
      if rs else "no budget where both windows err")
PY

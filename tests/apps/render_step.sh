#!/usr/bin/env bash
# scripts/render_step.py, as the README shows it: two runs on one colour scale, sized to
# the domain; a 3-D run as a mid-z slice; one error line for a missing file or an
# unknown variable.
#   render_step.sh REWIND SOURCE_DIR MPIEXEC PLUGIN.so
plugin=$(realpath "$4")  # before lib.sh moves into its temporary folder
source "$(dirname "$0")/lib.sh" "$@"
render() { "$src/scripts/headless.sh" pvpython "$src/scripts/render_step.py" "$plugin" "$@"; }
"$rewind" run "$src/cases/default.toml" --steps 3 --output a.h5 -q
"$rewind" run "$src/cases/default.toml" --steps 3 --output b.h5 --set 'boundary.xmin.velocity=[3, 0, 0]' -q
render a.h5 a.png b.h5 b.png --var u >r.out 2>&1
check "two runs render, on one colour scale" \
  "[ $? = 0 ] && [ -s a.png ] && [ -s b.png ] && [ \$(grep -o 'colour scale .*)' r.out | sort -u | wc -l) = 1 ]"
check "the image follows the domain's aspect (2.2 x 0.41: wide and low)" \
  "/usr/bin/python3 -c \"import matplotlib.pyplot as plt, sys; h, w, _ = plt.imread('a.png').shape; sys.exit(0 if w == 1400 and h < 500 else 1)\""
"$rewind" run "$src/cases/cavity-3d.toml" --steps 2 --output c.h5 -q
render c.h5 c.png --var u >c.out 2>&1
check "a 3-D run renders (a slice through the middle)" "[ $? = 0 ] && [ -s c.png ]"
render missing.h5 m.png >m.out 2>&1
check "a missing file: one error line, exit 1" "[ $? = 1 ] && [ \$(wc -l <m.out) = 1 ] && grep -q 'missing.h5: no such file' m.out"
render a.h5 f.png --var foo >f.out 2>&1
check "an unknown variable: one error line naming the ones there are, exit 1" \
  "[ $? = 1 ] && [ \$(grep -c . f.out) = 1 ] && grep -q \"no cell variable 'foo' (it has: \" f.out && [ ! -e f.png ]"
exit $fail

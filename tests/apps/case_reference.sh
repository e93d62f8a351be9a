#!/usr/bin/env bash
# The case-key reference is the key table the parsers use:
#  - docs/case-reference.md is exactly what `rewind keys --markdown` prints (regenerate
#    with `cmake --build BUILD --target case_reference`); a row added, changed or
#    removed in config/src/case_keys.cpp without regenerating fails here;
#  - `rewind keys SECTION` prints one section; an unknown section is one error line;
#  - the defaults, ranges and "did you mean" a user meets come from that table.
#   case_reference.sh REWIND SOURCE_DIR
source "$(dirname "$0")/lib.sh" "$@"
lines() { wc -l <"$1" | tr -d ' '; }

"$rewind" keys --markdown >ref.md 2>&1
check "rewind keys --markdown exits 0" "[ $? = 0 ]"
diff -u "$src/docs/case-reference.md" ref.md >drift.diff
check "docs/case-reference.md matches the key table (else: cmake --build BUILD --target case_reference)" \
  "[ $? = 0 ] || { cat drift.diff; false; }"

COLUMNS=80 "$rewind" keys >all.out 2>&1
check "rewind keys: every section" "[ $? = 0 ] && grep -q '^\[physics\]' all.out && grep -q '^\[output\]' all.out"
check "... each key with type, unit, default, range, restart policy and steerable, then its description" \
  "grep -A2 -E '^  physics\.nu ' all.out | tr -s ' \n' ' ' | grep -q 'number \[m^2/s\]; required; range (0, 10\]; on restart: branch; steerable kinematic viscosity'"
check "... the kernel's I/O options as output.io keys" "grep -q '^  output.io.cb_nodes ' all.out"
check "... the d-grids cannot change on a restart, the depth refines, time.end continues the file" \
  "grep -A1 -E '^  tree\.s ' all.out | tr -s ' \n' ' ' | grep -q 'on restart: no' && grep -A1 -E '^  tree\.depth ' all.out | tr -s ' \n' ' ' | grep -q 'on restart: refines' && grep -A2 -E '^  time\.end ' all.out | tr -s ' \n' ' ' | grep -q 'on restart: continues; steerable'"
check "... in lines that fit the terminal (COLUMNS=80; every line, not 342 columns)" \
  "[ \$(awk '{ if (length(\$0) > m) m = length(\$0) } END { print m }' all.out) -le 80 ]"
"$rewind" keys boundary >b.out 2>&1
check "rewind keys boundary: only that section" \
  "[ $? = 0 ] && grep -q 'boundary.<face>.velocity' b.out && ! grep -q 'physics' b.out"
"$rewind" keys physics.nu >one.out 2>&1
check "rewind keys physics.nu: that key alone" \
  "[ $? = 0 ] && [ \$(grep -c '^  [a-z]' one.out) = 1 ] && grep -q '^  physics.nu ' one.out"
"$rewind" keys boundary.xmin.velocity >face.out 2>&1
check "rewind keys boundary.xmin.velocity: the row of boundary.<face>.velocity" \
  "[ $? = 0 ] && [ \$(grep -c '^  [a-z]' face.out) = 1 ] && grep -q 'boundary.<face>.velocity' face.out"
"$rewind" keys physics.nuu >typo.out 2>&1
check "rewind keys physics.nuu: one error line naming the key it misspells" \
  "[ $? != 0 ] && [ \$(lines typo.out) = 1 ] && grep -q \"no key or section 'physics.nuu'; did you mean 'physics.nu'?\" typo.out"
"$rewind" keys physic >bad.out 2>&1
check "rewind keys with an unknown section: one error line, non-zero exit" \
  "[ $? != 0 ] && [ \$(lines bad.out) = 1 ] && grep -q \"no key or section 'physic'\" bad.out"

# What the table says is what the parsers do.
case_file="$src/cases/default.toml"
"$rewind" tree "$case_file" --set run.ranks=0 >r.out 2>&1
check "a value outside the table's range: one line with the range" \
  "[ $? != 0 ] && [ \$(lines r.out) = 1 ] && grep -q 'run.ranks: must be at least 1, got 0' r.out"
"$rewind" run "$case_file" --steps 1 --set physics.nu=20 >nu.out 2>&1
check "physics.nu above the table's (0, 10]: refused" "[ $? != 0 ] && grep -q 'physics.nu: must be positive and at most 10, got 20' nu.out"
"$rewind" run "$case_file" --steps 1 --set physics.alhpa=0.1 >pr.out 2>&1
check "a typo of a key the case does not set: 'did you mean' from the table" \
  "[ $? != 0 ] && grep -q \"unknown key 'physics.alhpa'.*did you mean 'physics.alpha'\" pr.out"
"$rewind" run "$case_file" --steps 1 --set boundary.ymin.velocity=[1,0,0] >nv.out 2>&1
check "a known key this case does not use: said so, not 'unknown'" \
  "[ $? != 0 ] && grep -q \"key 'boundary.ymin.velocity'.*has no effect in this case\" nv.out"
"$rewind" run "$case_file" --steps 1 --set boundary.xmin.type=lid >bt.out 2>&1
check "a word outside the table's choices names them" \
  "[ $? != 0 ] && grep -q \"boundary.xmin.type: unknown value 'lid' (one of: wall, moving_wall\" bt.out"
exit $fail

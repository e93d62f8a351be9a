#!/usr/bin/env bash
# `rewind tree` on the shipped cases, and one clear error line for bad case files.
set -u
rewind=$1 src=$2
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$src/tests/support/check.sh"  # check LABEL CONDITION

"$rewind" --help >"$tmp/help" 2>&1
check "--help lists tree" "grep -q '^ *tree ' $tmp/help"

for c in "$src"/cases/*.toml; do
  "$rewind" tree "$c" >"$tmp/out" 2>&1; rc=$?
  check "tree $(basename "$c") exits 0" "[ $rc = 0 ]"
  check "tree $(basename "$c") is balanced" "grep -q '2:1 balanced  yes' $tmp/out"
done

"$rewind" tree "$src/cases/tree-demo.toml" --ranks 3 --json >"$tmp/json"
check "json has 969 grids on 3 ranks" "/usr/bin/python3 -c 'import json,sys; j=json.load(open(\"$tmp/json\")); sys.exit(0 if j[\"grids\"]==969 and len(j[\"cells_per_rank\"])==3 and sum(j[\"cells_per_rank\"])==j[\"cells\"] else 1)'"

bad() {  # name, expected text, case text, extra args
  printf '%b' "$3" >"$tmp/bad.toml"
  "$rewind" tree "$tmp/bad.toml" ${4:-} >"$tmp/out" 2>"$tmp/err"; rc=$?
  check "$1: non-zero exit" "[ $rc != 0 ]"
  check "$1: one line" "[ \$(wc -l <$tmp/err) = 1 ]"
  check "$1: names '$2'" "grep -qF -- \"$2\" $tmp/err"
}
ok='[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth=1\n'
bad "unknown key" "unknown key 'tree.colour'" "${ok}colour=1\n"
bad "unknown section" "unknown key 'solverz.x'" "${ok}[solverz]\nx=1\n"
bad "bad type" "tree.depth: expected an integer" '[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth="2"\n'
bad "bad factor" "tree.r" "${ok}r=[3,3,3]\n"
bad "missing key" "domain.hi: missing" '[domain]\nlo=[0,0,0]\n[tree]\ndepth=1\n'
bad "syntax" "TOML syntax error" '[domain\n'
bad "bad override" "tree.depth" "$ok" "--set tree.depth=-1"
"$rewind" tree /nonexistent/case.toml >/dev/null 2>"$tmp/err"; rc=$?
check "missing file: exit 1 and names it" "[ $rc = 1 ] && grep -q 'cannot open case file' $tmp/err"
exit $fail

#!/usr/bin/env bash
# `rewind run` takes the kernel's I/O options from [output.io] (or --set output.io.X=...):
# good values reach the writer and the file is a normal Rewind file; bad values, unknown
# keys and the options a case must not touch give one error line naming the key, a
# non-zero exit, and leave an existing output file untouched.
set -u
rewind=$1 src=$2
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$src/tests/support/check.sh"  # check LABEL CONDITION
cd "$tmp"
cp "$src/cases/default.toml" case.toml

# The options reach the writer: without the pipeline the linear buffer is half the size.
"$rewind" run case.toml --steps 4 --output default.h5 >out.default 2>&1
buf() { grep -m1 -o 'buffer [0-9.]* MiB' "$1" | awk '{print $2}'; }
"$rewind" run case.toml --steps 4 --output tuned.h5 \
  --set output.io.cb_nodes=1 --set 'output.io.romio_cb_write="disable"' \
  --set output.io.pipeline=false --set output.io.early_writeback=false \
  --set output.io.alignment=65536 >out 2>err; rc=$?
check "tuned run exits 0" "[ $rc = 0 ]"
check "pipeline=false halves the reported buffer ($(buf out.default) -> $(buf out) MiB)" \
  "awk -v a=$(buf out.default) -v b=$(buf out) 'BEGIN { exit !(b > 0 && a > 1.9 * b && a < 2.1 * b) }'"
"$rewind" info tuned.h5 >info 2>&1; rc=$?
check "tuned file reads back" "[ $rc = 0 ] && grep -q checkpoint info"

printf '\n[output.io]\ncb_buffer_size = 4194304\nkeep_buffer = false\n' >>case.toml
"$rewind" run case.toml --steps 4 --output table.h5 >out 2>err; rc=$?
check "[output.io] table in the case file is accepted" "[ $rc = 0 ] && [ -s table.h5 ]"

before=$(sha256sum tuned.h5)
bad() {  # name, expected text, --set assignment
  "$rewind" run case.toml --steps 4 --output tuned.h5 --force --set "$3" >out 2>err; rc=$?
  check "$1: non-zero exit" "[ $rc != 0 ]"
  check "$1: one line" "[ \$(wc -l <err) = 1 ]"
  check "$1: names '$2'" "grep -qF -- \"$2\" err"
  check "$1: existing file untouched" "[ \"\$(sha256sum tuned.h5)\" = \"$before\" ]"
}
bad "unknown option" "unknown key 'output.io.stripe_count'" "output.io.stripe_count=4"
check "unknown option: says it came from --set" "grep -qF '(at a --set override)' err"
bad "unknown [output] key" "unknown key 'output.checkpoint_intervall'" "output.checkpoint_intervall=1"
bad "negative size" "output.io.cb_buffer_size: I/O option 'cb_buffer_size' must not be negative" "output.io.cb_buffer_size=-1"
bad "bad hint" "output.io.romio_cb_write: I/O option 'romio_cb_write' must be" "output.io.romio_cb_write=yes"
bad "wrong type" "output.io.pipeline: expected true or false" "output.io.pipeline=1"
bad "crash protocol is not a case setting" "output.io.flush_on_commit: cannot be set in a case" "output.io.flush_on_commit=false"
exit $fail

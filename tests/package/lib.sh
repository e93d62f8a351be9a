# Sourced by the package tests: `source "$(dirname "$0")/lib.sh" SOURCE_DIR`. Sets $src,
# $here (this folder), $python (with h5py and numpy), $fail; works in a temporary folder
# removed on exit; check LABEL CONDITION prints ok/FAIL, remembers a failure and returns
# non-zero on one; show FILE prints a log's last lines.
set -u
src=$(realpath "$1")
here=$src/tests/package
python=${REWIND_PYTHON:-/usr/bin/python3}
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
. "$src/tests/support/check.sh"  # check LABEL CONDITION
show() { tail -n 15 "$1" | sed 's/^/     | /'; }
# writer_ok LOG FILE: the kernel's example writer (examples/kernel/foreign_writer.cpp)
# read back its restart step, and h5py finds every value it wrote in FILE.
writer_ok() { grep -q 'all values as written' "$1" && $python "$here/check_foreign_file.py" "$2" >>"$1" 2>&1; }

#!/usr/bin/env bash
# Every command that opens a file says in one line what is wrong with a path that is not
# a readable Rewind file: info, lineage, diff, verify, window, serve
# and run --restart, each with a missing file, a file without read permission, a
# symlink loop, a directory, a FIFO and a file that is not HDF5. No crash, no hang, a
# non-zero exit, and the words a user knows ("permission denied", "too many levels of
# symbolic links"), never a raw library message.
#   cli_bad_paths.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
chmod 755 "$tmp"
"$rewind" run "$src/cases/default.toml" --output ok.h5 --steps 1 -q >run.log 2>&1 || { cat run.log; exit 1; }
cp ok.h5 locked.h5 && chmod 000 locked.h5
ln -s loop_b loop_a && ln -s loop_a loop_b
mkdir dir.h5
mkfifo fifo.h5
echo "just text" >text.h5

# As root, permissions do not apply: the locked file is read as nobody (setpriv), if
# nobody can run this build; otherwise that column is skipped, saying so.
as_reader=()
if [ "$(id -u)" = 0 ]; then
  if setpriv --reuid=nobody --regid=nogroup --clear-groups "$rewind" info ok.h5 >/dev/null 2>&1; then
    as_reader=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  else
    echo "skip permission denied: running as root and user nobody cannot run $rewind or read $tmp"
  fi
fi

# expect COMMAND-WORDS (with @ for the path) PATH PATTERN: one "error:" line matching PATTERN, exit != 0.
expect() {
  local words=$1 path=$2 pattern=$3 runner=()
  [ "$path" = locked.h5 ] && runner=("${as_reader[@]}")
  # shellcheck disable=SC2086
  timeout 30 "${runner[@]}" "$rewind" ${words//@/$path} >err.out 2>&1
  local rc=$?
  check "$(echo "${words//@/$path}" | cut -c1-60): '$pattern'" \
    "[ $rc != 0 ] && [ $rc != 124 ] && [ \"\$(wc -l <err.out)\" = 1 ] && grep -q 'error:' err.out && grep -q '$pattern' err.out"
  [ "$(wc -l <err.out)" = 1 ] && grep -q "$pattern" err.out || sed 's/^/       /' err.out | head -3
}
commands=("info @" "lineage @" "diff @ ok.h5" "diff ok.h5 @" "verify @" "window @ --box 0,0,0,2.2,0.41,0 --budget 100"
          "serve @ --listen 127.0.0.1:0" "run --restart @")
for c in "${commands[@]}"; do
  expect "$c" missing.h5 "missing.h5: no such file"
  [ "$(id -u)" != 0 ] || [ ${#as_reader[@]} -gt 0 ] && expect "$c" locked.h5 "locked.h5: permission denied"
  expect "$c" loop_a "loop_a: too many levels of symbolic links"
  expect "$c" dir.h5 "dir.h5: is a directory"
  expect "$c" fifo.h5 "fifo.h5: not a regular file"
  expect "$c" text.h5 "text.h5: not an HDF5 file"
done
check "the readable file still opens (the checks refuse only what they should)" "\"$rewind\" info ok.h5 >/dev/null 2>&1"
exit $fail

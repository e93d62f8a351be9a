#!/usr/bin/env bash
# The resource guard through the real command: an oversized case (one mistyped digit,
# tree.depth = 9 in 3-D: 8^9 grids) is refused before anything is allocated, with one
# line naming the key and the estimate, a non-zero exit and no output file, on one
# process and under mpirun (no MPI_ABORT banner); --memory-limit overrides it.
source "$(dirname "$0")/lib.sh" "$@"
cavity=$src/cases/cavity-3d.toml

refused() {  # label, expected text, np, subcommand args...
  local label=$1 want=$2 np=$3; shift 3
  local start=$SECONDS rc
  if [ "$np" = 1 ]; then
    # A process that tried to build the tree would hit this address-space limit long
    # before it could print the guard's line.
    (ulimit -v 2000000; "$rewind" "$@" >out 2>err); rc=$?
  else
    "$mpiexec" -n "$np" "$rewind" "$@" >out 2>err; rc=$?
  fi
  check "$label: non-zero exit" "[ $rc != 0 ]"
  # (mpirun itself adds a notice about the non-zero exit unless run with -q)
  check "$label: one error line naming '$want'" "[ \$(grep -c '^rewind' err) = 1 ] && grep -qF -- \"$want\" err"
  check "$label: the line gives the estimate" "grep -q 'grids' err && grep -q 'per process' err"
  check "$label: no MPI_ABORT banner" "! grep -q MPI_ABORT out err"
  check "$label: refused at once" "[ $((SECONDS - start)) -lt 20 ]"
}

refused "tree, depth 9" "tree.depth = 9" 1 tree "$cavity" --set tree.depth=9
refused "run, depth 9, one process" "tree.depth = 9" 1 run "$cavity" --set tree.depth=9 --output big.h5
check "run, depth 9: no output file" "[ ! -e big.h5 ]"
refused "run, depth 9, mpirun -np 3" "tree.depth = 9" 3 run "$cavity" --set tree.depth=9 --output big.h5
check "run under mpirun, depth 9: no output file" "[ ! -e big.h5 ]"
refused "halo, depth 9, mpirun -np 2" "tree.depth = 9" 2 halo "$cavity" --set tree.depth=9
refused "a refine region too deep" "tree.refine[0].level = 12" 1 tree "$src/cases/tree-demo.toml" \
  --set tree.refine[0].level=12 --set tree.max_depth=12
refused "a small --memory-limit" "tree.depth = 2" 1 tree "$cavity" --memory-limit 16M

# The same case fits when the user says so, and a normal case is not disturbed.
check "--memory-limit off lets a refused case through" \
  "\"$rewind\" tree \"$cavity\" --memory-limit 16M >/dev/null 2>&1; [ \$? != 0 ] && \"$rewind\" tree \"$cavity\" --memory-limit off >/dev/null"
check "a normal case prints its estimate beside the tree" "\"$rewind\" tree \"$cavity\" | grep -q '^estimate .*grids.*available'"
"$rewind" tree "$cavity" --memory-limit lots >out 2>err; rc=$?
check "a bad --memory-limit: one line, non-zero exit" "[ $rc != 0 ] && [ \$(wc -l <err) = 1 ] && grep -q 'memory-limit' err"

# A restart is judged by the stored step's exact size, and names it.
"$rewind" run "$src/cases/default.toml" --output small.h5 --set time.end=0.02 -q >/dev/null 2>&1
refused "a restart too large for the limit" "small.h5@" 1 run --restart small.h5 --set time.end=0.04 --memory-limit 32M
exit $fail

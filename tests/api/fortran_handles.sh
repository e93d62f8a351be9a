#!/usr/bin/env bash
# The Fortran module's handles are types of their own and its status is optional, as in
# ADIOS2's bindings: a program that passes one handle where another is expected does
# not compile (gfortran names the mismatch: "passed TYPE(rewind_file) to TYPE(rewind_config)"), the same program with the right handles
# does; a call without `ierr` that fails stops the program with Rewind's message.
#   fortran_handles.sh FC MODULE_DIR FORTRAN_STOP SOURCE_DIR MPIEXEC
set -u
fc=$1 moddir=$(realpath "$2") stop_prog=$(realpath "$3")
src=$(realpath "$4") mpiexec=$5
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
. "$src/tests/support/check.sh"
program() {  # NAME ARGS-OF-THE-CALL: a program making one call with the handles given
  cat >"$1.f90" <<F90
program $1
  use rewind
  implicit none
  type(rewind_config) :: cfg
  type(rewind_grids) :: grids
  type(rewind_file) :: file
  type(rewind_reader) :: reader
  integer :: rc
  $2
end program
F90
  "$fc" -fsyntax-only -I"$moddir" "$1.f90" >"$1.log" 2>&1
}
compiles() {  # LABEL NAME CALL
  program "$2" "$3"
  check "$1" "[ $? = 0 ]" || head -5 "$2.log"
}
refused() {  # LABEL NAME CALL GIVEN EXPECTED: gfortran's "passed TYPE(GIVEN) to TYPE(EXPECTED)"
  program "$2" "$3"
  check "$1" "[ $? != 0 ] && grep -qi 'passed TYPE($4) to TYPE($5)' $2.log" || head -5 "$2.log"
}
compiles "the right handle (a config to rewind_config_set_option) compiles" right_config \
  "call rewind_config_set_option(cfg, 'strategy', 'auto', ierr=rc)"
refused "a file passed as a config does not compile, the compiler naming the types" file_as_config \
  "call rewind_config_set_option(file, 'strategy', 'auto', ierr=rc)" rewind_file rewind_config
compiles "the right handles to rewind_file_write compile" right_write \
  "call rewind_file_write(file, 1_8, 0d0, 0d0, REWIND_CHECKPOINT, grids)"
refused "a reader passed as the grids does not compile" reader_as_grids \
  "call rewind_file_write(file, 1_8, 0d0, 0d0, REWIND_CHECKPOINT, reader)" rewind_reader rewind_grids
"$mpiexec" -n 2 "$stop_prog" >stop.out 2>stop.err
code=$?
check "a failed call without ierr stops the program (exit $code)" "[ $code != 0 ] && ! grep -q 'not reached' stop.out"
check "... with Rewind's message on the error unit" "grep -q '^rewind: .*checksums' stop.err" || head -5 stop.err
exit $fail

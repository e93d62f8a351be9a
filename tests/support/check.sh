# Sourced by the shell tests: `. "$src/tests/support/check.sh"` (or relative to the script).
# check LABEL CONDITION: evaluates CONDITION, prints "ok   LABEL" or "FAIL LABEL" and
# remembers a failure in $fail (end the script with `exit "$fail"`); returns non-zero on a
# failure, so `check ... || show log` prints what went wrong.
fail=${fail:-0}
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }

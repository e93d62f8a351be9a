#!/usr/bin/env bash
# Every command block of README.md, run as a user types it, and what the README says it
# prints: tests/apps/readme_blocks.py extracts the ```sh blocks (not
# the two set-up commands, which demo_fig8 and CI run) into one script, run in a folder
# that looks like the source tree (build/apps/rewind, cases/, scripts/). Each command
# must exit 0 and print every `#   ...` line shown under it; the README's synopsis
# block names only subcommands and options `rewind --help` knows; what the blocks leave
# in a clone is ignored by git.
#   readme_blocks.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
mkdir -p build/apps && ln -s "$rewind" build/apps/rewind && ln -s "$src/cases" cases && ln -s "$src/scripts" scripts
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/python3 "$src/tests/apps/readme_blocks.py" "$src/README.md" blocks.sh "$port" 2>commands.txt
check "the README has command blocks (the dedicated-I/O example, the live run)" \
  "grep -q 'strategy=' commands.txt && grep -q -- '--listen' commands.txt"

while read -r test first; do
  check "not run here: '$first...', run by the test $test" \
    "grep -rqw -- '$test' '$src/tests' --include=CMakeLists.txt"
done <skipped.txt
bash -n blocks.sh 2>syntax.out
check "the blocks make a shell script (continued lines joined)" "[ ! -s syntax.out ] || { cat syntax.out; false; }"
setsid bash blocks.sh >blocks.log 2>&1 &
pid=$!
trap 'kill -- -$pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 3000); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
check "the blocks end within 300 s" "! kill -0 $pid 2>/dev/null || { cat blocks.log; false; }"
# What the blocks leave in a clone is ignored by git: a git work tree
# here with the project's .gitignore lists no untracked file but this test's own.
mine='^(blocks\.(sh|log)|commands\.txt|skipped\.txt|syntax\.out|cases|scripts)$'
cp "$src/.gitignore" . && git init -q . 2>/dev/null
check "the blocks leave no file git would list as untracked in a clone" \
  "left=\$(git status --porcelain --untracked-files=all | sed 's/^?? //' | grep -Ev \"\$mine\" | grep -v '^\.gitignore\$'); [ -z \"\$left\" ] || { echo \"\$left\"; false; }"
rm -rf .git .gitignore
for n in $(ls out | grep -E '^[0-9]+\.cmd$' | sort -n | sed 's/\.cmd$//'); do
  cmd=$(cat out/$n.cmd)
  if [ -f out/$n.pid ]; then rc=$(cat out/bg.$(cat out/$n.pid).rc 2>/dev/null); else rc=$(cat out/$n.rc 2>/dev/null); fi
  check "$cmd: exit 0" "[ '$rc' = 0 ] || { tail -5 out/$n; false; }"
  while IFS= read -r want; do
    check "... prints: $want" "grep -Pq \"\$want\" out/$n || { tail -3 out/$n; false; }"
  done <out/$n.expect
done

for f in *.h5; do
  check "$f, written by the blocks, verifies" "[ -f '$f' ] && '$rewind' verify '$f' >verify.out 2>&1 || { tail -2 verify.out; false; }"
done

# The synopsis: every `rewind NAME` is a subcommand, every --option one it takes.
"$rewind" --help >help.out 2>&1
/usr/bin/python3 - "$src/README.md" >synopsis.txt <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
block = text.split("## The `rewind` command", 1)[1].split("```", 2)[1]
sub = None
for line in block.splitlines():
    head = re.split(r"\s{2,}", line.strip())[0]  # the command; its description follows 2+ spaces
    if not line.startswith(" "):
        m = re.search(r"\brewind ([a-z]\w*)", head)
        sub = m.group(1) if m else None
        if sub:
            print(sub, "")
    elif not head.startswith("["):
        continue
    for opt in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", head) if sub else []:
        print(sub, opt)
PYEOF
while read -r sub opt; do
  [ -z "$opt" ] && { check "synopsis: rewind $sub is a subcommand" "grep -Eq '^  $sub( |$)' help.out"; continue; }
  "$rewind" $sub --help >sub.out 2>&1
  for s in $(sed -n '/^Subcommands:/,$s/^  \([a-z]*\) .*/\1/p' sub.out); do "$rewind" $sub x $s --help >>sub.out 2>&1; done
  check "synopsis: rewind $sub takes $opt" "grep -q -- '$opt' sub.out"
done <synopsis.txt
exit $fail

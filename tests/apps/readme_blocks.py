"""The README's command blocks as a shell script a user would type (tests/apps/readme_blocks.sh).

readme_blocks.py README.md SCRIPT PORT: every ```sh block, in order, except the two set-up
commands (scripts/demo.sh: tests/apps/demo_fig8.sh runs it; scripts/test.sh: the suite
itself) and the blocks marked `<!-- readme_blocks: not run here, tested by TEST -->` (listed
in skipped.txt: TEST and the block's first line). Each command's output goes to out/N (its exit code to out/N.rc); the lines
`#   TEXT` under a command are what it prints (`...` stands for what varies) and land in
out/N.expect. A command ending in `&` runs in the background; the next line starts once
every line the README shows for it has appeared (a user waits for them too). A command
refused with "has not been reached" (a branch from a step the run has not got to yet;
`rewind window` waits for such a step itself) is typed again a second later, for up to 120 s. The collector's port 7400 becomes PORT (a free one).
Prints the commands, one a line, to stderr."""
import os
import re
import shlex
import sys

SETUP = {"scripts/demo.sh", "scripts/test.sh"}


# A block right under this comment is not run here; the test it names runs its commands
# the same way (a build and install of minutes, a template for the user's own file).
SKIP = re.compile(r"<!-- readme_blocks: not run here, tested by ([\w.-]+)[^>]*-->\s*$")


def blocks(text, skipped=None):
    for m in re.finditer(r"^```sh\n(.*?)^```", text, re.S | re.M):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if (s := SKIP.search(before)) is not None:
            if skipped is not None:
                skipped.append((s.group(1), m.group(1).splitlines()[0]))
            continue
        yield m.group(1).splitlines()


def commands(lines):
    """[(command, [expected line, ...])] of one block; a line ending in \\ goes on."""
    out, more = [], False
    for line in lines:
        if more:
            out[-1] = (out[-1][0][:-1].rstrip() + " " + line.strip(), out[-1][1])
        elif line.startswith("#   ") and out:
            out[-1][1].append(line[4:].strip())
        elif line.strip() and not line.startswith("#"):
            out.append((line.strip(), []))
        else:
            continue
        more = out[-1][0].endswith("\\")
    return out


def pattern(expected):
    return ".*".join(re.escape(p) for p in expected.split("..."))


def main(readme, script, port):
    os.makedirs("out", exist_ok=True)
    skipped = []
    cmds = [c for b in blocks(open(readme).read(), skipped) for c in commands(b) if c[0] not in SETUP]
    with open("skipped.txt", "w") as f:
        f.write("".join(f"{test} {first}\n" for test, first in skipped))
    sh = ["set -u", "bg=", 'wait_for() {  # wait_for FILE PATTERN PID: up to 300 s, while PID lives',
          '  for _ in $(seq 1 3000); do grep -Pq "$2" "$1" 2>/dev/null && return 0; kill -0 "$3" 2>/dev/null || return 1;',
          '    sleep 0.1; done; return 1; }']
    for n, (cmd, expect) in enumerate(cmds):
        cmd = cmd.replace(":7400", f":{port}")
        expect = [e.replace(":7400", f":{port}") for e in expect]
        print(cmd, file=sys.stderr)
        with open(f"out/{n}.expect", "w") as f:
            f.write("".join(pattern(e) + "\n" for e in expect))
        with open(f"out/{n}.cmd", "w") as f:
            f.write(cmd + "\n")
        if cmd.endswith("&"):
            sh.append(f"{{ {cmd[:-1]}\n}} >out/{n} 2>&1 &")
            sh.append(f'bg="$bg $!"; echo $! >out/{n}.pid')
            # Not one more line unless it printed them: a run that failed to listen leaves the
            # port to whoever holds it, and no later command may talk to another job.
            sh += [f"wait_for out/{n} {shlex.quote(q)} $(cat out/{n}.pid) || exit 1" for q in map(pattern, expect)]
        else:
            sh.append(f"for _ in $(seq 1 120); do {{ {cmd}\n}} >out/{n} 2>&1; echo $? >out/{n}.rc\n"
                      f"  grep -q 'has not been reached' out/{n} || break; sleep 1; done")
    sh.append('for p in $bg; do wait "$p"; echo $? >"out/bg.$p.rc"; done')
    open(script, "w").write("\n".join(sh) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])

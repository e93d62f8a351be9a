"""The README's command blocks as a shell script a user would type (tests/apps/readme_blocks.sh).

readme_blocks.py README.md SCRIPT PORT: every ```sh block, in order, except the two set-up
commands (scripts/demo.sh: tests/apps/demo_fig8.sh runs it; scripts/test.sh: the suite
itself). Each command's output goes to out/N (its exit code to out/N.rc); the lines
`#   TEXT` under a command are what it prints (`...` stands for what varies) and land in
out/N.expect. A command ending in `&` runs in the background; the next line starts once
every line the README shows for it has appeared (a user waits for them too). A command
refused with "has not been reached" (a past step the run has not got to yet) is typed again
a second later, for up to 120 s. The collector's port 7400 becomes PORT (a free one).
Prints the commands, one a line, to stderr."""
import os
import re
import shlex
import sys

SETUP = {"scripts/demo.sh", "scripts/test.sh"}


def blocks(text):
    for m in re.finditer(r"^```sh\n(.*?)^```", text, re.S | re.M):
        yield m.group(1).splitlines()


def commands(lines):
    """[(command, [expected line, ...])] of one block."""
    out = []
    for line in lines:
        if line.startswith("#   ") and out:
            out[-1][1].append(line[4:].strip())
        elif line.strip() and not line.startswith("#"):
            out.append((line.strip(), []))
    return out


def pattern(expected):
    return ".*".join(re.escape(p) for p in expected.split("..."))


def main(readme, script, port):
    os.makedirs("out", exist_ok=True)
    cmds = [c for b in blocks(open(readme).read()) for c in commands(b) if c[0] not in SETUP]
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

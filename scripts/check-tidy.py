#!/usr/bin/env python3
"""Runs .clang-tidy's checks on the lines changed since BASE; exit 1 if any is reported.

    scripts/check-tidy.py BASE      (scripts/test.sh: BASE from scripts/change-base.sh)

Checked: the changed C/C++ sources the build compiles (its compile_commands.json, in
${REWIND_BUILD_DIR:-build}) and the changed headers of the modules .clang-tidy's
HeaderFilterRegex names; only diagnostics on changed lines count (-line-filter), so code
a change does not touch is not held against it. About 5-30 s of CPU per file, files in
parallel (one per core); of a change of more files, the REWIND_TIDY_MAX_FILES (default 8)
with the most changed lines, so the check stays within a few minutes. Fix what it
reports, or mark a deliberate exception `// NOLINT(check-name): why`.
"""
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DIAGNOSTIC = re.compile(r"^\S+:\d+:\d+: (warning|error):")


def fail(message, code=2):
    print(f"check-tidy: {message}")
    sys.exit(code)


def changed_lines(base):
    """{path: [[first, last], ...]} of the lines added or changed since base."""
    diff = subprocess.run(["git", "diff", "-U0", "--diff-filter=d", base, "--", "*.c", "*.h", "*.cpp",
                           "*.hpp", "*.cxx"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    lines, path = {}, None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and path:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            first, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                lines.setdefault(path, []).append([first, first + count - 1])
    return lines


def checked(paths, build):
    compiled = {str(pathlib.Path(e["directory"], e["file"]).resolve())
                for e in json.loads((build / "compile_commands.json").read_text())}
    config = (ROOT / ".clang-tidy").read_text()
    headers = re.search(r"^HeaderFilterRegex:\s*'(.*)'", config, re.M).group(1)
    return [p for p in paths if str(ROOT / p) in compiled
            or (p.endswith((".h", ".hpp")) and re.search(headers, "/" + p))]


def includer(header, build):
    """A compiled source that includes `header` (by its path under include/, or its name),
    so the header is checked with flags that find what it includes; None: none does."""
    name = header.split("/include/", 1)[-1] if "/include/" in header else pathlib.PurePath(header).name
    pattern = re.compile(r'#\s*include\s*"(?:[^"]*/)?' + re.escape(name) + '"')
    sources = sorted({str(pathlib.Path(e["directory"], e["file"]).resolve())
                      for e in json.loads((build / "compile_commands.json").read_text())})
    module = str(ROOT / header.split("/", 1)[0])
    for src in sorted(sources, key=lambda s: not s.startswith(module)):  # its own module's first
        try:
            if pattern.search(pathlib.Path(src).read_text(errors="replace")):
                return src
        except OSError:
            continue
    return None


def tidy(tidy_binary, build, path, ranges):
    # A header is checked through a source that includes it (its own flags: a header-only
    # adapter's includes are not its module's); diagnostics count on the header's lines only.
    source = includer(path, build) if path.endswith((".h", ".hpp")) else None
    line_filter = json.dumps([{"name": path, "lines": ranges}])
    r = subprocess.run([tidy_binary, "-p", str(build), "--quiet", f"-line-filter={line_filter}", source or path],
                       cwd=ROOT, capture_output=True, text=True)
    return [line for line in r.stdout.splitlines() if line]


def main():
    if len(sys.argv) != 2:
        fail("usage: scripts/check-tidy.py BASE")
    base = sys.argv[1]
    tidy_binary = shutil.which("clang-tidy-14") or shutil.which("clang-tidy")
    if not tidy_binary:
        fail("clang-tidy not installed (apt-get install clang-tidy-14)")
    build = (ROOT / os.environ.get("REWIND_BUILD_DIR", "build")).resolve()
    if not (build / "compile_commands.json").is_file():
        fail(f"no {build}/compile_commands.json: build first (scripts/build.sh)")
    if subprocess.run(["git", "rev-parse", "-q", "--verify", base + "^{commit}"], cwd=ROOT,
                      capture_output=True).returncode:
        fail(f"'{base}' is not a commit here")
    lines = changed_lines(base)
    files = checked(sorted(lines), build)
    most = int(os.environ.get("REWIND_TIDY_MAX_FILES", "8"))
    if len(files) > most:
        size = lambda p: sum(last - first + 1 for first, last in lines[p])
        left = sorted(files, key=size, reverse=True)[most:]
        print(f"check-tidy: {len(files)} files changed: the {most} with the most changed lines are checked, "
              f"not {' '.join(left)} (REWIND_TIDY_MAX_FILES={len(files)} checks them all)")
        files = [p for p in files if p not in left]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        outputs = list(pool.map(lambda p: tidy(tidy_binary, build, p, lines[p]), files))
    reported = 0
    for out in outputs:
        if out:
            print("\n".join(out))
        reported += sum(bool(DIAGNOSTIC.match(line)) for line in out)
    if reported:
        fail(f"{reported} diagnostic(s) on the lines changed since {base} in {len(files)} file(s) "
             "(above; fix them or mark a deliberate one `// NOLINT(check-name): why`)", 1)
    print(f"check-tidy: the lines changed since {base} in {len(files)} file(s) pass .clang-tidy")
    return 0


if __name__ == "__main__":
    sys.exit(main())

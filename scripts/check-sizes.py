#!/usr/bin/env python3
"""Fails on a production function over 80 lines or a source file over 700 lines that is
not in scripts/size-allowlist.txt, and on an allowlisted one that grew or no longer needs
its line (the list may only shrink).

    scripts/check-sizes.py            check (the ctest `size_check` runs this)
    scripts/check-sizes.py --list     print every violation in the allowlist's format

Production code: the tracked C/C++ and Python files outside tests/, bench/ and examples.
A function's length counts its lines from the one that names it to its closing brace (C++)
or its last statement (Python), inclusive; lambdas and nested functions count toward the
function around them. The C++ reading is lexical (comments, strings and preprocessor lines
removed, braces matched), which is exact for this code base's layout.
"""
import ast
import pathlib
import re
import subprocess
import sys

MAX_FUNCTION = 80
MAX_FILE = 700
ROOT = pathlib.Path(__file__).resolve().parent.parent
ALLOWLIST = ROOT / "scripts" / "size-allowlist.txt"
CXX = (".c", ".h", ".cpp", ".hpp", ".cxx", ".hxx")
SKIP = re.compile(r"^(tests|bench)/|(^|/)examples/")

# One lexical token of C++ that may hold a brace: comments, literals, preprocessor lines.
_LEXEME = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'
    r"'(?:\\.|[^'\\\n])*'|^[ \t]*#(?:\\\n|[^\n])*",
    re.S | re.M,
)
_SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b|^\s*extern\s*$")
_CALLABLE_END = re.compile(
    r"\)\s*(const|noexcept(\([^)]*\))?|override|final|mutable|&|&&|\s)*(->\s*[\w:<>,\s*&()]+)?$"
)


def _blank(m):
    """A removed lexeme keeps its newlines, so line numbers stay."""
    return re.sub(r"[^\n]", " ", m.group(0))


def cxx_functions(text):
    """(name, first line, length) of each function defined at namespace or class scope."""
    code = _LEXEME.sub(_blank, text)
    found = []
    stack = []  # per open brace: "scope", "function", "init" or "block"
    head_start = 0
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    for m in re.finditer(r"[{};]", code):
        c, pos = m.group(0), m.start()
        inside_function = "function" in stack
        if c == ";":
            if not inside_function and "init" not in stack:
                head_start = pos + 1
            continue
        if c == "}":
            kind = stack.pop() if stack else "block"
            if kind == "function" and "function" not in stack:
                name, first = open_function
                found.append((name, first, line_of(pos) - first + 1))
            if kind != "init" and "function" not in stack:
                head_start = pos + 1
            continue
        if inside_function:
            stack.append("block")
            continue
        head = code[head_start:pos]
        stripped = head.strip()
        if stripped.count("(") > stripped.count(")") or (re.search(r"\)\s*:", stripped)
                                                          and re.search(r"[\w>]$", stripped)):
            stack.append("init")  # in a default argument or a constructor's initialiser list
            continue
        if _CALLABLE_END.search(stripped) or re.search(r"\)\s*:.*[)}]$", stripped, re.S):
            first_char = head_start + len(head) - len(head.lstrip())
            name = re.search(r"([~\w:]*operator\s*(?:\(\)|[^\s(]+)|[~\w:]+(?:<[^()]*?>)?)\s*\(", stripped)
            if re.search(r"(^|[=,({])\s*\[[\w&=, *]*\]\s*\(", stripped) or not name:
                name = "<lambda>"  # an initialiser's lambda, e.g. a command's registration
            else:
                name = name.group(1)
            open_function = (name, line_of(first_char))
            stack.append("function")
        elif _SCOPE.search(stripped) or stripped == 'extern':
            stack.append("scope")
            head_start = pos + 1
        else:
            stack.append("block")  # a table or another initialiser
    return found


def python_functions(text):
    tree = ast.parse(text)
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, child.lineno, child.end_lineno - child.lineno + 1))
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    return found


def violations():
    """{key: length}: key is `path` for a file, `path:function` for a function."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode:
        print(f"check-sizes: {ROOT} is not a git checkout: nothing to check")
        sys.exit(77)  # ctest: skipped
    files = listed.stdout.split()
    out = {}
    for path in files:
        if SKIP.search(path) or not path.endswith(CXX + (".py",)):
            continue
        file = ROOT / path
        if file.is_symlink() or not file.is_file():
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        lines = text.count("\n") + (not text.endswith("\n"))
        if lines > MAX_FILE:
            out[path] = lines
        functions = python_functions(text) if path.endswith(".py") else cxx_functions(text)
        for name, _, length in functions:
            if length > MAX_FUNCTION:
                key = f"{path}:{name}"
                out[key] = max(out.get(key, 0), length)
    return out


def read_allowlist():
    allowed = {}
    for n, line in enumerate(ALLOWLIST.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            key, _, size = line.rpartition(" ")
            if not key or not size.isdigit():
                sys.exit(f"check-sizes: {ALLOWLIST.name} line {n}: expected 'KEY LINES', got '{line}'")
            allowed[key.strip()] = int(size)
    return allowed


def main():
    found = violations()
    if sys.argv[1:] == ["--list"]:
        for key, size in sorted(found.items()):
            print(f"{key} {size}")
        return 0
    allowed = read_allowlist()
    errors = []
    for key, size in sorted(found.items()):
        what = "file" if ":" not in key else "function"
        limit = MAX_FILE if what == "file" else MAX_FUNCTION
        if key not in allowed:
            errors.append(f"{key}: {what} of {size} lines (limit {limit}): split it")
        elif size > allowed[key]:
            errors.append(f"{key}: {what} grew to {size} lines (allowlisted at {allowed[key]}, "
                          f"limit {limit}): split it rather than grow it")
    for key in sorted(set(allowed) - set(found)):
        errors.append(f"{key}: no longer over the limit: remove its line from {ALLOWLIST.name}")
    for key in sorted(set(allowed) & set(found)):
        if found[key] < allowed[key]:
            errors.append(f"{key}: now {found[key]} lines: lower its allowance in "
                          f"{ALLOWLIST.name} from {allowed[key]}")
    for e in errors:
        print(f"check-sizes: {e}")
    if errors:
        return 1
    print(f"check-sizes: no function over {MAX_FUNCTION} lines and no file over {MAX_FILE} "
          f"beyond the {len(allowed)} allowlisted in {ALLOWLIST.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

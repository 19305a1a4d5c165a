#!/usr/bin/env python3
"""Regenerates the CHECK lines of the golden IR tests (tests/cli/compile/golden).

Run it after a change to the tracer that is meant to change the IR, then read
the diff: every changed line is a change in what flyc compile emits.

    python3 tests/cli/compile/update_checks.py [--flyc build/bin/flyc] [FILE.fly ...]

Each golden file is a set of kernels separated by `// -----` lines, with a RUN
line that compiles it with `--split-input-file` and pipes the result to
FileCheck. For every part, the old `// CHECK` lines are dropped and new ones
are written at its end: a CHECK-LABEL per kernel, then every line of its body
with CHECK-NEXT. SSA values become FileCheck variables (`%[[V3:...]]` where a
value is first seen, `%[[V3]]` after), so the checks follow the values through
the kernel rather than the printer's numbering alone.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SPLIT = re.compile(r"^// -----\s*$")
SSA = re.compile(r"%([A-Za-z0-9_.$-]+)")
# A value's name is made of these characters; the pattern stops at the
# first character that cannot be part of one.
NAME_PATTERN = "[^ ,:()#]+"


def split_parts(lines):
    parts, cur = [], []
    for line in lines:
        if SPLIT.match(line):
            parts.append(cur)
            cur = []
        else:
            cur.append(line)
    parts.append(cur)
    return parts


def run_line(lines, path):
    """The flyc arguments of the RUN line that feeds FileCheck."""
    for line in lines:
        m = re.match(r"^// RUN: flyc compile (.*?)\s*\|\s*FileCheck %s\s*$", line)
        if m:
            examples = os.path.join(ROOT, "examples")
            return [a.replace("%s", path).replace("%examples", examples) for a in m.group(1).split()]
    sys.exit(f"{path}: no line '// RUN: flyc compile ... | FileCheck %s'")


def var_name(ssa):
    if ssa[0].isdigit():
        return "V" + ssa
    return re.sub(r"[^A-Za-z0-9]", "_", ssa).upper()


def escape(text):
    # FileCheck reads {{ and [[ as the start of a regex or a variable.
    return text.replace("{{", "{{[{][{]}}").replace("[[", "{{[[][[]}}")


def check_line(text, seen):
    out, pos = [], 0
    for m in SSA.finditer(text):
        out.append(escape(text[pos : m.start()]))
        name = var_name(m.group(1))
        if name in seen:
            out.append(f"%[[{name}]]")
        else:
            seen.add(name)
            out.append(f"%[[{name}:{NAME_PATTERN}]]")
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def checks_for(module):
    """CHECK lines for the kernels of one printed module."""
    out, lines, i = [], module.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)gpu\.func @([A-Za-z0-9_]+)\((.*)$", line)
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        seen = set()
        out.append(f"// CHECK-LABEL: gpu.func @{m.group(2)}(")
        out.append("// CHECK-SAME:  " + check_line(m.group(3), seen))
        i += 1
        while i < len(lines) and not re.match(r"^\s{%d}\}" % indent, lines[i]):
            body = lines[i]
            pad = " " * max(0, len(body) - len(body.lstrip()) - indent - 2)
            out.append("// CHECK-NEXT:  " + pad + check_line(body.strip(), seen))
            i += 1
        out.append("")
    return out


def strip_checks(part):
    kept = [l for l in part if not re.match(r"^// CHECK(-[A-Z]+)?:", l)]
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def update(path, flyc):
    with open(path) as f:
        lines = f.read().splitlines()
    args = run_line(lines, path)
    proc = subprocess.run([flyc, "compile"] + args, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{path}: flyc failed:\n{proc.stderr}")
    modules = split_parts(proc.stdout.splitlines())
    parts = split_parts(lines)
    if len(modules) != len(parts):
        sys.exit(f"{path}: {len(parts)} parts but {len(modules)} modules")
    out = []
    for k, (part, module) in enumerate(zip(parts, modules)):
        if k:
            out.append("// -----")
        body = strip_checks(part)
        out.extend(body)
        checks = checks_for("\n".join(module))
        if checks:
            out.append("")
            out.extend(checks[:-1] if checks[-1] == "" else checks)
        if k + 1 < len(parts):
            out.append("")
    text = "\n".join(out) + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return text != "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flyc", default=os.path.join(ROOT, "build", "bin", "flyc"))
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or sorted(
        os.path.join(HERE, "golden", f)
        for f in os.listdir(os.path.join(HERE, "golden"))
        if f.endswith(".fly")
    )
    for path in files:
        changed = update(path, a.flyc)
        print(f"{'updated' if changed else 'unchanged'}: {os.path.relpath(path)}")


if __name__ == "__main__":
    main()

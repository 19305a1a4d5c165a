#!/usr/bin/env python3
"""Checks (or, with --update, rewrites) the tables of a Markdown file that
`flyc vocabulary --table=NAME` generates from the compiler's registries.

A generated table sits between two marks:

    <!-- flyc vocabulary --table=targets -->
    | target | ... |
    <!-- end of table -->

and must be exactly what the command prints, so the documentation cannot
drift from fly_targets.def, fly_atoms.def and fly_ops.def. After a change to
a registry, `check-tables.py BIN_DIR docs/language.md --update` rewrites
them; read the diff.

usage: check-tables.py BIN_DIR FILE.md [--update]
"""
import os
import re
import subprocess
import sys

BEGIN = re.compile(r"^<!-- flyc vocabulary --table=(\w+) -->$")
END = "<!-- end of table -->"


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--update"):
        sys.exit(__doc__)
    bin_dir, doc = sys.argv[1], sys.argv[2]
    update = len(sys.argv) == 4
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, stale, i, tables = [], [], 0, 0
    while i < len(lines):
        out.append(lines[i])
        m = BEGIN.match(lines[i])
        i += 1
        if not m:
            continue
        tables += 1
        start = i
        while i < len(lines) and lines[i] != END:
            i += 1
        if i == len(lines):
            sys.exit(f"{doc}:{start}: the table '{m.group(1)}' has no '{END}' line")
        flyc = os.path.join(bin_dir, "flyc")
        p = subprocess.run([flyc, "vocabulary", f"--table={m.group(1)}"], capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.exit(f"{doc}:{start}: flyc vocabulary --table={m.group(1)} failed:\n{p.stderr}")
        want = p.stdout.rstrip("\n").split("\n")
        if lines[start:i] != want:
            stale.append(f"{doc}:{start}: the table '{m.group(1)}' is not what flyc prints")
        out.extend(want)
    if tables == 0:
        sys.exit(f"{doc}: no generated tables")
    if update:
        with open(doc, "w", encoding="utf-8") as f:
            f.write("\n".join(out))
        print(f"{doc}: {tables} tables written")
        return
    if stale:
        print("\n".join(stale))
        print(f"regenerate them with: {sys.argv[0]} {bin_dir} {doc} --update")
        sys.exit(1)
    print(f"{doc}: {tables} tables match")


if __name__ == "__main__":
    main()

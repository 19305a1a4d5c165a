#!/usr/bin/env python3
"""Runs every `$ fly-layout ...` example in a Markdown file's code blocks and
checks that the text shown after it is exactly what the tool prints (stdout
and stderr together), so the documentation cannot drift from the code.

usage: check-examples.py BIN_DIR FILE.md
"""
import os
import subprocess
import sys


def code_blocks(lines):
    """The lines of each fenced block, in order."""
    block = None
    for line in lines:
        if line.strip().startswith("```"):
            if block is None:
                block = []
            else:
                yield block
                block = None
        elif block is not None:
            block.append(line)


def examples(block):
    """(command, expected output) pairs: a `$ ` line and what follows it."""
    i = 0
    while i < len(block):
        text = block[i].lstrip()
        indent = len(block[i]) - len(text)
        if not text.startswith("$ fly-layout"):
            i += 1
            continue
        j, shown = i + 1, []
        while j < len(block) and not block[j].lstrip().startswith("$ "):
            shown.append(block[j][indent:])
            j += 1
        while shown and shown[-1] == "":
            shown.pop()
        yield text[2:], "\n".join(shown)
        i = j


def main():
    bin_dir, doc = sys.argv[1], sys.argv[2]
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    count = failed = 0
    for block in code_blocks(lines):
        for command, want in examples(block):
            run = subprocess.run(command, shell=True, capture_output=True, text=True, env=env)
            got = (run.stdout + run.stderr).rstrip("\n")
            count += 1
            if got != want:
                failed += 1
                print(f"{doc}: example differs: $ {command}\n--- shown\n{want}\n--- printed\n{got}\n")
    print(f"{count - failed} passed, {failed} failed")
    return 1 if failed or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

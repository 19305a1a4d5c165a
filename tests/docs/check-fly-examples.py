#!/usr/bin/env python3
"""Checks the Fly examples of a Markdown file against flyc, so the language
specification cannot drift from the front end.

- A block fenced as ```fly must parse: `flyc parse` exits with 0.
- A block fenced as ```fly-error shows input the compiler refuses:
  `flyc check` (syntax and meaning) must exit with 1 and print an `error:`
  diagnostic. When the
  block has a line comment `// expect: TEXT`, TEXT must appear in what flyc
  prints.
- A file name after the language, as in ```fly lib/tiles.fly, also saves the
  block under that name (relative to a scratch directory shared by the whole
  document), so that later blocks can import it and commands can name it.
- In a ```console block, every `$ flyc ...` line is run as a shell command in
  that scratch directory, with BIN_DIR first on PATH; the lines after it, up
  to the next `$ ` line, are exactly what it must print (stdout and stderr
  as one stream, in the order a terminal shows them). Console blocks without
  a `$ flyc` command are left alone, as are blocks of other languages.

Each failing block is reported with the line of the Markdown file where it
starts.

usage: check-fly-examples.py BIN_DIR FILE.md
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)\s*([^\s`]*)")
EXPECT = re.compile(r"^\s*//\s*expect:\s*(.*?)\s*$")
TIMEOUT_S = 30


class Block:
    def __init__(self, lang, name, line, text, closed):
        self.lang = lang      # the word after the fence: fly, fly-error, console, ...
        self.name = name      # the file name after it, or ""
        self.line = line      # 1-based line of the opening fence
        self.text = text      # the content, without the fence's indentation
        self.closed = closed  # False when the file ended inside the block


def blocks(lines):
    """Every fenced block, in order. A fence inside a block of another kind
    does not start a block; a block left open runs to the end of the file, as
    Markdown renders it."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m.group(1)), m.group(2)
        start, body, closed = i + 1, [], False
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if (close and close.group(2)[0] == fence[0] and len(close.group(2)) >= len(fence)
                    and close.group(3) == ""):
                closed = True
                i += 1
                break
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            i += 1
        yield Block(m.group(3), m.group(4), start, "\n".join(body) + "\n", closed)


def run(command, cwd, env, merged=False):
    """(exit status, stdout, stderr), or with merged (exit status, stdout
    and stderr interleaved, ""); the status is None after a timeout."""
    try:
        done = subprocess.run(command, shell=isinstance(command, str), cwd=cwd, env=env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                              text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "", f"did not finish within {TIMEOUT_S} s"
    return done.returncode, done.stdout, done.stderr or ""


def save(directory, name, text):
    path = os.path.normpath(os.path.join(directory, name))
    if os.path.isabs(name) or not path.startswith(os.path.join(directory, "")):
        raise ValueError(f"the file name '{name}' leaves the scratch directory")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def check_example(block, flyc, scratch, env):
    """None when a fly or fly-error block behaves as its fence says, else
    the reason."""
    if block.name:
        try:
            save(scratch, block.name, block.text)
        except ValueError as e:
            return str(e)
    with tempfile.TemporaryDirectory(prefix="example-") as alone:
        path = save(alone, f"example-{block.line}.fly", block.text)
        command = "parse" if block.lang == "fly" else "check"
        status, out, err = run([flyc, command, path], alone, env)
    if status is None:
        return f"flyc {command} {err}"
    if block.lang == "fly":
        if status != 0:
            return f"flyc parse exited with {status}, expected 0\n{err}"
        return None
    if status != 1:
        return f"flyc check exited with {status}, expected 1 (the block must be refused)\n{err}"
    if "error:" not in err:
        return f"flyc check printed no 'error:' diagnostic\n{err}"
    for line in block.text.split("\n"):
        m = EXPECT.match(line)
        if m and m.group(1) not in out + err:
            return f"the message '{m.group(1)}' was not printed\n{err}"
    return None


def commands(text):
    """(command, expected output) for each `$ flyc` line of a console block."""
    lines = text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ flyc"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        yield lines[i][2:], "\n".join(lines[i + 1:j]).rstrip("\n")
        i = j


def check_console(block, scratch, env):
    """None when every flyc command of a console block prints what it shows."""
    problems = []
    for command, want in commands(block.text):
        status, out, err = run(command, scratch, env, merged=True)
        # Trailing blanks are invisible in a document (CuTe's tables end their
        # lines with one), so lines are compared without them.
        got = "\n".join(line.rstrip() for line in out.rstrip("\n").split("\n"))
        want = "\n".join(line.rstrip() for line in want.split("\n"))
        if status is None:
            problems.append(f"$ {command}: {err}")
        elif got != want:
            problems.append(f"$ {command}\n--- shown\n{want}\n--- printed\n{got}")
    return "\n".join(problems) or None


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n")[-1], file=sys.stderr)
        return 2
    bin_dir, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    flyc = os.path.join(bin_dir, "flyc")
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    env.pop("FLY_STDLIB", None)  # commands name their standard library themselves
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    checked = failed = 0
    with tempfile.TemporaryDirectory(prefix="fly-doc-") as scratch:
        for block in blocks(lines):
            example = block.lang in ("fly", "fly-error")
            if not example and not (block.lang == "console" and "$ flyc" in block.text):
                continue
            checked += 1
            if not block.closed:
                why = "the block is not closed"
            elif example:
                why = check_example(block, flyc, scratch, env)
            else:
                why = check_console(block, scratch, env)
            if why:
                failed += 1
                print(f"{doc}:{block.line}: ```{block.lang} block: {why.rstrip()}\n")
    print(f"{checked - failed} passed, {failed} failed")
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

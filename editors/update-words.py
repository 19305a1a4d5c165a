#!/usr/bin/env python3
"""Rewrites the word lists of the editor grammars from `flyc vocabulary
--json`, the words the compiler knows: the builtin functions and values of
VS Code's TextMate grammar, Vim's syntax file and Emacs's fly-mode. Run it
after a builtin is added or renamed (a row of sema/check/fly_ops.def), then
read the diff; with --check it changes nothing and fails when a list is not
what it would write (the `editors.words` test).

    editors/update-words.py build/bin/flyc [--check]

Each list is the compiler's, in its order. Keywords and types are written by
hand: they are the lexer's and change with the grammar, not with builtins.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VSCODE = os.path.join(HERE, "vscode", "syntaxes", "fly.tmLanguage.json")
VIM = os.path.join(HERE, "vim", "syntax", "fly.vim")
EMACS = os.path.join(HERE, "emacs", "fly-mode.el")
BEGIN, END = "BEGIN flyc vocabulary", "END flyc vocabulary"


def chunks(words, width):
    """Words in lines of at most `width` characters (each word once)."""
    line, out = [], []
    for w in words:
        if line and len(" ".join(line + [w])) > width:
            out.append(line)
            line = []
        line.append(w)
    if line:
        out.append(line)
    return out


def vscode(text, functions, values):
    alt_f, alt_v = "|".join(functions), "|".join(values)
    text = re.sub(r'("match": "\(\\\\\.\)\\\\s\*\()[^)]*(\)\\\\s\*\(\?=\\\\\(\)")',
                  lambda m: m.group(1) + alt_f + m.group(2), text, count=1)
    text = re.sub(r'("builtin-call": \{\n[^\n]*\n\s*"match": "\\\\b\()[^)]*(\))',
                  lambda m: m.group(1) + alt_f + m.group(2), text, count=1)
    text = re.sub(r'("builtin-values": \{\n\s*"match": "\\\\b\()[^)]*(\))',
                  lambda m: m.group(1) + alt_v + m.group(2), text, count=1)
    json.loads(text)  # still a grammar
    return text


def region(text, comment, body):
    """Replaces the lines between the BEGIN and END marks."""
    pat = re.compile(r"(^" + re.escape(comment) + r" " + BEGIN + r"[^\n]*\n).*?(^" +
                     re.escape(comment) + r" " + END + r")", re.S | re.M)
    if not pat.search(text):
        sys.exit(f"update-words: no '{comment} {BEGIN}' ... '{END}' region")
    return pat.sub(lambda m: m.group(1) + body + m.group(2), text, count=1)


def vim(text, functions, values):
    body = ('syn match   flyBuiltinValue    "\\.\\@1<!\\<\\%(' + "\\|".join(values) + '\\)\\>"\n')
    for line in chunks(functions, 70):
        body += 'syn match   flyBuiltinFunction "\\<\\%(' + "\\|".join(line) + '\\)\\ze\\s*("\n'
    return region(text, '"', body)


def emacs(text, functions, values):
    def strings(words):
        lines = [" ".join(f'"{w}"' for w in line) for line in chunks(words, 70)]
        return "  '(" + "\n    ".join(lines) + ")\n"
    body = ("(defconst fly-builtin-values\n" + strings(values) +
            '  "The builtin names of Fly that are values rather than functions.")\n\n'
            "(defconst fly-builtin-functions\n" + strings(functions) +
            '  "The builtin functions of Fly, highlighted where they are called.")\n')
    return region(text, ";;", body)


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--check"):
        sys.exit(__doc__)
    check = len(sys.argv) == 3
    words = json.loads(subprocess.run([sys.argv[1], "vocabulary", "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    functions, values = words["builtin-function"], words["builtin-value"]
    stale = []
    for path, rewrite in ((VSCODE, vscode), (VIM, vim), (EMACS, emacs)):
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = rewrite(old, functions, values)
        if new == old:
            continue
        stale.append(os.path.relpath(path, os.path.dirname(HERE)))
        if not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    if check and stale:
        print("not what flyc vocabulary gives: " + ", ".join(stale))
        print(f"rewrite them with: {sys.argv[0]} {sys.argv[1]}")
        sys.exit(1)
    print(("rewrote: " + ", ".join(stale)) if stale else "the editors' word lists are up to date")


if __name__ == "__main__":
    main()

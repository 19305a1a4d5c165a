#!/usr/bin/env python3
"""The words of `flyc vocabulary` against the lexer's own rules.

    check-lexer-words.py FLYC LEXER.re

Every word lexer.re reserves (a rule `"word" { ... }` for an identifier-like
word) must be listed by `flyc vocabulary`, and every keyword, constant and
type constructor listed must be a rule of the lexer: the list editors are
checked against (grammar/fly_words.c) cannot drift from the lexer.
"""
import json
import re
import subprocess
import sys


def main():
    flyc, lexer = sys.argv[1], sys.argv[2]
    vocab = json.loads(subprocess.run([flyc, "vocabulary", "--json"], check=True,
                                      stdout=subprocess.PIPE, text=True).stdout)
    listed = {w for words in vocab.values() for w in words}
    with open(lexer) as f:
        text = f.read()
    rules = set(re.findall(r'^\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\{', text, re.M)) - {"_"}
    problems = [f"lexer.re reserves '{w}', which flyc vocabulary does not list"
                for w in sorted(rules - listed)]
    for kind in ("keyword", "constant", "type-constructor"):
        problems += [f"flyc vocabulary lists {kind} '{w}', which lexer.re does not reserve"
                     for w in vocab[kind] if w not in rules]
    for p in problems:
        print(p)
    print(f"{len(rules)} reserved words checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Instruction counts of a kernel's hot loop in AMD GCN assembly, and its
code object's resources: what the instruction-level tests of AMD kernels
assert, since no AMD GPU runs them here.

    hot_loop.py FILE.s [INSN=N ...] [--max-regs N] [--lds BYTES]

The hot loop is the largest natural loop of the kernel's control-flow
graph (basic blocks from labels and branches, loops from the back edges of
a depth-first walk); an iteration or tail LLVM peels out of it is not
counted. Each INSN=N says the loop holds N instructions
whose mnemonic starts with INSN (v_mfma_f32_16x16x32 counts every type of
that shape). --max-regs bounds .vgpr_count + .agpr_count (512 / the waves a
SIMD the kernel declares), --lds states .group_segment_fixed_size; scratch
(.private_segment_fixed_size) must be 0. Prints what it found; exit status
1 when something differs, 2 on bad usage.
"""
from __future__ import annotations

import re
import sys


def blocks_of(lines: list) -> list:
    """The basic blocks of the first kernel: (label or None, lines, successor
    labels, falls through)."""
    blocks, cur, label = [], [], None

    def close(falls: bool, succ: list) -> None:
        nonlocal cur, label
        blocks.append((label, cur, succ, falls))
        cur, label = [], None

    for line in lines:
        m = re.match(r"^(\.?L\w+):", line)
        if m:
            if cur or label:
                close(True, [])
            label = m.group(1)
            continue
        insn = line.split()
        if not insn or insn[0].startswith((".", ";")) or insn[0].endswith(":"):
            continue
        cur.append(line)
        if insn[0] == "s_endpgm":
            close(False, [])
        elif insn[0] == "s_branch":
            close(False, [insn[1]])
        elif insn[0].startswith("s_cbranch"):
            close(True, [insn[1]])
    if cur:
        close(False, [])
    return blocks


def hot_loop(lines: list) -> list:
    """The lines of the largest natural loop of the control-flow graph."""
    blocks = blocks_of(lines)
    index = {b[0]: i for i, b in enumerate(blocks) if b[0]}
    succs = []
    for i, (_, _, targets, falls) in enumerate(blocks):
        s = [index[t] for t in targets if t in index]
        if falls and i + 1 < len(blocks):
            s.append(i + 1)
        succs.append(s)
    # Back edges: to a block on the depth-first search's stack.
    back, state, stack = [], [0] * len(blocks), [(0, iter(succs[0]))] if blocks else []
    if blocks:
        state[0] = 1
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[node] = 2
            stack.pop()
        elif state[nxt] == 1:
            back.append((node, nxt))
        elif state[nxt] == 0:
            state[nxt] = 1
            stack.append((nxt, iter(succs[nxt])))
    preds = [[] for _ in blocks]
    for i, s in enumerate(succs):
        for j in s:
            preds[j].append(i)
    best: set = set()
    for latch, head in back:
        # The natural loop: the header, and what reaches the latch without
        # passing through it.
        body, work = {head, latch}, ([latch] if latch != head else [])
        while work:
            for p in preds[work.pop()]:
                if p not in body:
                    body.add(p)
                    work.append(p)
        if sum(len(blocks[i][1]) for i in body) > sum(len(blocks[i][1]) for i in best):
            best = body
    return [line for i in sorted(best) for line in blocks[i][1]]


def metadata(text: str, key: str) -> int | None:
    m = re.search(r"^\s*\." + key + r":\s+(\d+)", text, re.M)
    return int(m.group(1)) if m else None


def main(argv: list) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = open(argv[1]).read()
    loop = hot_loop(text.splitlines())
    if not loop:
        print(f"{argv[1]}: no loop found")
        return 1
    fails = 0
    args = iter(argv[2:])
    for a in args:
        if a in ("--max-regs", "--lds"):
            want = int(next(args))
            if a == "--max-regs":
                got = (metadata(text, "vgpr_count") or 0) + (metadata(text, "agpr_count") or 0)
                ok = got <= want
                print(f"{'ok' if ok else 'FAIL'}: {got} VGPRs and AGPRs a lane (at most {want})")
            else:
                got = metadata(text, "group_segment_fixed_size")
                ok = got == want
                print(f"{'ok' if ok else 'FAIL'}: {got} bytes of LDS (want {want})")
            fails += not ok
            continue
        insn, _, n = a.partition("=")
        got = sum(1 for line in loop if re.match(r"^\s*" + re.escape(insn), line))
        ok = n.isdigit() and got == int(n)
        print(f"{'ok' if ok else 'FAIL'}: {got} {insn} in the hot loop (want {n})")
        fails += not ok
    scratch = metadata(text, "private_segment_fixed_size")
    print(f"{'ok' if scratch == 0 else 'FAIL'}: {scratch} bytes of scratch a lane")
    fails += scratch != 0
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Instruction counts of a kernel's hot loop in AMD GCN assembly, and its
code object's resources: what the instruction-level tests of AMD kernels
assert, since no AMD GPU runs them here.

    hot_loop.py FILE.s [INSN=N ...] [--max-regs N] [--lds BYTES]

The hot loop is the longest run of lines from a label to a branch back to
it (the outermost loop; LLVM may peel an iteration or the tail out of it,
which this leaves out). Each INSN=N says the loop holds N instructions
whose mnemonic starts with INSN (v_mfma_f32_16x16x32 counts every type of
that shape). --max-regs bounds .vgpr_count + .agpr_count (512 / the waves a
SIMD the kernel declares), --lds states .group_segment_fixed_size; scratch
(.private_segment_fixed_size) must be 0. Prints what it found; exit status
1 when something differs, 2 on bad usage.
"""
from __future__ import annotations

import re
import sys


def hot_loop(lines: list) -> list:
    labels = {}
    best = (0, 0)
    for i, line in enumerate(lines):
        m = re.match(r"^(\.?L\w+):", line)
        if m:
            labels[m.group(1)] = i
        m = re.match(r"^\s*s_cbranch_\w+\s+(\.?L\w+)", line) or \
            re.match(r"^\s*s_branch\s+(\.?L\w+)", line)
        if m and m.group(1) in labels and i - labels[m.group(1)] > best[1] - best[0]:
            best = (labels[m.group(1)], i)
    return lines[best[0]:best[1] + 1]


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

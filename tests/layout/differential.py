#!/usr/bin/env python3
"""differential.py -- randomized differential test of Fly's layout algebra
against the independent CuTe model in cute_reference.py.

    python3 tests/layout/differential.py --tool build/bin/fly-layout --cases 2000 --seed 1

For every case it runs the tool once, computes the CuTe C++ answer
(cute_reference, flavour 'cute') and the answer Fly's documentation promises
(flavour 'flydoc', which applies docs/layout-algebra.md's documented
deviations), and classifies the outcome:

  agree            tool text == CuTe text (or both refuse)
  documented       tool != CuTe but == the behaviour docs/layout-algebra.md
                   declares as a deliberate difference (its section 5)
  undeclared       tool == what the doc's reference section describes, but the
                   doc does not declare it as a difference from CuTe (or
                   claims CuTe does the same): cosize, col/row_major, group
  text-form        tool text differs but is the same function with the same
                   top-level mode sizes (a grouping/printing difference)
  wrong-function   tool result is a different function from CuTe's
  tool-refuses     tool exits 1 where CuTe (and the doc) give a result
  tool-accepts     tool gives a result where CuTe refuses (static_assert) or
                   computes a non-layout, and the doc does not explain it
  property         the tool's result breaks a defining property that is
                   checked independently of any reference text
  usage            the tool exited with neither 0 nor 1, or printed junk

The way an operation becomes a command line is `command_line()`; the way
output is read back is `read_output()`.  `--frontend flyc` targets
`flyc layout 'op(arg, ...)'`.

Reproducers: for every (class, operation, reason) the shortest command line
is printed with the tool's output, CuTe's answer and, where it differs, the
documented answer.  --json FILE keeps every case.

Speed: one process per case, run from a process pool (--jobs); 2000 cases
take a few seconds.  A quick run for a test suite:

    python3 tests/layout/differential.py --cases 300 --seed 1 --quiet

Exit status: 0 when nothing but agree/documented was seen, 1 otherwise
(use --allow CLASS[,CLASS] to accept known classes), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import random
import shlex
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cute_reference as ref  # noqa: E402
from cute_reference import U, Layout  # noqa: E402

# ---------------------------------------------------------------------------
# front ends


def fly_text(v):
    """A value in Fly's expression syntax. Fly reads CuTe's text form except
    for one thing: a lone layout in parentheses only groups, so a tuple of one
    element is always written with its trailing comma, (4:4,)."""
    if isinstance(v, Layout):
        return f"{fly_text(v.shape)}:{fly_text(v.stride)}"
    if isinstance(v, tuple):
        inner = ",".join(fly_text(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if v is ref.U:
        return "_"
    return str(v)


def fly_arg(text):
    try:
        return fly_text(ref.parse_value(text))
    except ref.ParseError:
        return text


# fly-layout operations that flyc spells otherwise: its builtin, and whether
# the layout comes first (fly-layout puts the index first).
FLYC_NAMES = {
    "layout_like": ("make_layout_like", False), "fragment_like": ("make_fragment_like", False),
    "get_hier_coord": ("get_hier_coord", True), "get_flat_coord": ("get_flat_coord", True),
    "get_1d_coord": ("get_1d_coord", True),
}
# operations whose result flyc layout does not print (a boolean)
FLYC_SKIP = {"elem_less"}


def command_line(frontend, tool, op, args):
    """The argv that asks `tool` for `op` applied to the argument texts."""
    if frontend == "fly-layout":
        return [tool, op, *args]
    if frontend == "flyc":
        name, swap = FLYC_NAMES.get(op, (op, False))
        texts = [fly_arg(a) for a in args]
        if swap:
            texts = texts[::-1]
        return [tool, "layout", f"{name}({', '.join(texts)})"]
    raise ValueError(frontend)


def read_output(frontend, kind, text):
    """Canonical result text from the tool's stdout (None if unreadable)."""
    text = text.strip()
    if not text:
        return None
    line = text.splitlines()[0].strip() if kind != "slice" else text.strip()
    if frontend == "flyc" and kind == "slice" and "offset" not in line:
        # accept "(L, N)" as well
        try:
            v = ref.parse_value(line)
            if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], Layout):
                return f"{ref.layout_str(v[0])}  offset {v[1]}"
        except ref.ParseError:
            return None
    return line


# ---------------------------------------------------------------------------
# random inputs

LEAVES = [1, 2, 2, 2, 3, 4, 4, 5, 6, 8]


def rand_shape(rng, depth, budget):
    """A random shape of nesting depth <= depth and size <= budget: a few
    leaves (size-1 leaves now and then) under a random nesting."""
    k = rng.choice([1, 1, 2, 2, 2, 3, 3, 4, 5])
    leaves = []
    for _ in range(k):
        if rng.random() < 0.12:
            leaves.append(1)
            continue
        opts = [x for x in LEAVES if 1 < x <= budget]
        if not opts:
            break
        x = rng.choice(opts)
        leaves.append(x)
        budget //= x
    if not leaves:
        leaves = [rng.choice([1, 2])]
    prof = rand_profile_like(rng, len(leaves), depth)
    return unflatten(leaves, prof)


def unflatten(flat, profile):
    it = iter(flat)

    def rec(p):
        if isinstance(p, tuple):
            return tuple(rec(x) for x in p)
        return next(it)
    return rec(profile)


def rand_profile_like(rng, n, depth=3):
    """A random nesting of n leaves (a tuple structure with n leaves)."""
    if n == 1 and (depth == 0 or rng.random() < 0.7):
        return 0
    if depth == 0:
        return tuple([0] * n)
    parts = []
    left = n
    while left > 0:
        k = rng.randint(1, left)
        parts.append(k)
        left -= k
    if len(parts) == 1 and rng.random() < 0.5:
        return tuple([0] * n) if n > 1 else (0,)
    return tuple(rand_profile_like(rng, k, depth - 1) for k in parts)


def strides_compact(rng, shape, gaps=False, zeros=0.0, perm=True):
    leaves = list(ref.flatten_to_tuple(shape))
    order = list(range(len(leaves)))
    if perm:
        rng.shuffle(order)
    d = [0] * len(leaves)
    cur = 1
    for i in order:
        if gaps and rng.random() < 0.4:
            cur *= rng.choice([2, 3, 4])
        d[i] = cur
        cur *= leaves[i]
    for i in range(len(d)):
        if rng.random() < zeros:
            d[i] = 0
    return unflatten(d, shape)


def strides_random(rng, shape, neg=True):
    pool = [0, 1, 1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32]
    if neg:
        pool += [-1, -2, -4]
    return unflatten([rng.choice(pool) for _ in ref.flatten_to_tuple(shape)], shape)


def rand_layout(rng, depth=3, budget=256, kind=None):
    shape = rand_shape(rng, depth, budget)
    kind = kind or rng.choice(["compact", "compact", "gaps", "zeros", "random", "colmajor"])
    if kind == "compact":
        stride = strides_compact(rng, shape)
    elif kind == "colmajor":
        stride = strides_compact(rng, shape, perm=False)
    elif kind == "gaps":
        stride = strides_compact(rng, shape, gaps=True)
    elif kind == "zeros":
        stride = strides_compact(rng, shape, zeros=0.3)
    else:
        stride = strides_random(rng, shape, neg=rng.random() < 0.3)
    return Layout(shape, stride)


def factorize_random(rng, s):
    """Split s into a random list of factors > 1 (or [s])."""
    out = []
    while s > 1:
        divs = [d for d in range(2, s + 1) if s % d == 0]
        d = rng.choice(divs)
        out.append(d)
        s //= d
    return out or [1]


def admissible_tile(rng, L, max_leaves=3, extend=True, from_start=False):
    """A layout B built from the fine factors of L's (coalesced) modes, so
    that L o B is admissible: leaves are runs of consecutive fine factors
    with the stride of the run's start."""
    flat = ref.coalesce_x(L)
    fs = list(ref.wrap(flat.shape))
    fine = []
    for s in fs:
        fine.extend(f for f in factorize_random(rng, s) if f > 1)
    if extend and rng.random() < 0.2:
        fine.append(rng.choice([2, 3]))
    if not fine:
        fine = [1]
    Q = [1]
    for f in fine:
        Q.append(Q[-1] * f)
    # partition the fine list into runs
    cuts = sorted(rng.sample(range(1, len(fine)), k=min(len(fine) - 1, rng.randint(0, 3)))) \
        if len(fine) > 1 else []
    bounds = [0] + cuts + [len(fine)]
    runs = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    k = rng.randint(1, min(max_leaves, len(runs)))
    if from_start:
        chosen = runs[:k]
    else:
        chosen = rng.sample(runs, k)
        if rng.random() < 0.5:
            chosen.sort()
    leaves = []
    for a, b in chosen:
        n = 1
        for f in fine[a:b]:
            n *= f
        leaves.append((n, Q[a]))
    if rng.random() < 0.1:
        leaves.insert(rng.randrange(len(leaves) + 1), (rng.choice([1, 2, 3]), 0))
    prof = rand_profile_like(rng, len(leaves), 2)
    return Layout(unflatten([n for n, _ in leaves], prof), unflatten([r for _, r in leaves], prof))


def perturb(rng, B):
    """Make a tile (probably) inadmissible: change a stride or a size."""
    sh = list(ref.flatten_to_tuple(B.shape))
    st = list(ref.flatten_to_tuple(B.stride))
    i = rng.randrange(len(sh))
    if rng.random() < 0.5:
        st[i] = max(1, st[i] + rng.choice([1, 2, 3]))
    else:
        sh[i] = sh[i] + rng.choice([1, 2])
    return Layout(unflatten(sh, B.shape), unflatten(st, B.stride))


def rand_tile_for(rng, L, p_bad=0.2):
    r = rng.random()
    if r < 0.6:
        B = admissible_tile(rng, L)
        if rng.random() < p_bad:
            B = perturb(rng, B)
        return B
    if r < 0.8:
        return rand_layout(rng, depth=2, budget=max(2, ref.product(L.shape)), kind="compact")
    return rand_layout(rng, depth=2, budget=32)


def rand_tiler(rng, L, top=True, for_divide=False):
    """A tiler for L: '_', an int, a layout, or a tuple of tilers (by mode)."""
    r = rng.random()
    rk = ref.layout_rank(L)
    if top and r < 0.35 or (not top and r < 0.2 and isinstance(L.shape, tuple)):
        n = rng.randint(1, rk) if rk > 0 else 0
        if rng.random() < 0.05:
            n = rk + 1                      # too many modes
        out = []
        for i in range(n):
            if i >= rk:
                out.append(rng.choice([2, 4]))
                continue
            Li = ref.layout_get(L, i)
            out.append(rand_tiler(rng, Li, top=False, for_divide=for_divide))
        return tuple(out)
    r = rng.random()
    if r < 0.12 and not top:
        return U
    if r < 0.3:
        size = ref.product(L.shape)
        divs = [d for d in range(1, size + 1) if size % d == 0]
        if rng.random() < 0.15:
            return rng.randint(1, size + 3)
        return rng.choice(divs)
    if for_divide:
        B = admissible_tile(rng, L, extend=False)
        if rng.random() < 0.15:
            B = perturb(rng, B)
        return B
    return rand_tile_for(rng, L)


def rand_coord(rng, shape, allow_u=False, oob=0.05):
    """A coordinate for shape: natural, 1-D per mode, or whole 1-D."""
    def rec(s, top):
        if allow_u and rng.random() < 0.35:
            return U
        if isinstance(s, tuple) and (top or rng.random() < 0.7):
            return tuple(rec(x, False) for x in s)
        n = ref.product(s)
        if rng.random() < oob:
            return n + rng.randint(0, 2)
        return rng.randrange(n)
    if not allow_u and rng.random() < 0.2:
        n = ref.product(shape)
        return rng.randrange(n) if rng.random() > oob else n
    return rec(shape, True)


def rand_injective(rng, budget=128):
    shape = rand_shape(rng, 3, budget)
    return Layout(shape, strides_compact(rng, shape, gaps=rng.random() < 0.6))


def rand_profile_for(rng, shape, top=True):
    if not isinstance(shape, tuple):
        return 1
    n = len(shape) if top else len(shape)
    k = rng.randint(0, n) if top else n
    if top and rng.random() < 0.08:
        k = n + 1
    out = []
    for i in range(k):
        if i < len(shape) and isinstance(shape[i], tuple) and rng.random() < 0.4:
            out.append(rand_profile_for(rng, shape[i], top=False))
        else:
            out.append(1)
    return tuple(out)


def tstr(t):
    return ref.tuple_str(t)


def lstr(L):
    return ref.layout_arg_str(L)


def blanks(rng, text):
    """Sprinkle blanks between tokens (never inside a number)."""
    out = []
    for i, ch in enumerate(text):
        if ch in "(),:" and rng.random() < 0.15:
            out.append(rng.choice([" ", "  ", "\t"]))
        out.append(ch)
        if ch in "(,:" and rng.random() < 0.15 and not (i + 1 < len(text) and text[i + 1] == "-"):
            out.append(" ")
    return "".join(out)


def gen_case(rng, op):
    """Argument texts for one random case of op."""
    if op == "show":
        r = rng.random()
        if r < 0.5:
            L = rand_layout(rng)
            if rng.random() < 0.3:
                L = Layout((L.shape,), (L.stride,))
            return [blanks(rng, lstr(L))]
        if r < 0.75:
            return [blanks(rng, tstr(rand_coord(rng, rand_shape(rng, 3, 64), allow_u=True)))]
        L = rand_layout(rng, budget=64)
        return [blanks(rng, ref.tiler_str(rand_tiler(rng, L)))]
    if op in ("col_major", "row_major"):
        return [tstr(rand_shape(rng, 3, 256))]
    if op in ("size", "cosize", "rank", "depth", "shape", "stride", "flatten"):
        return [lstr(rand_layout(rng))]
    if op == "get":
        L = rand_layout(rng)
        return [lstr(L), str(rng.randrange(ref.layout_rank(L) + (1 if rng.random() < 0.1 else 0)))]
    if op == "select":
        L = rand_layout(rng)
        rk = ref.layout_rank(L)
        return [lstr(L)] + [str(rng.randrange(rk)) for _ in range(rng.randint(1, 4))]
    if op == "group":
        L = rand_layout(rng)
        rk = ref.layout_rank(L)
        b = rng.randint(0, rk)
        e = rng.randint(b, rk)
        return [lstr(L), str(b), str(e)]
    if op in ("append", "prepend"):
        L = rand_layout(rng, budget=64)
        if rng.random() < 0.3:
            return [lstr(L)]
        return [lstr(L), lstr(rand_layout(rng, depth=2, budget=16))]
    if op == "zip":
        r = rng.choice([1, 2, 2, 3])
        modes = []
        for _ in range(rng.choice([1, 2, 2, 3])):
            sub = tuple(rng.choice([1, 2, 3, 4]) for _ in range(r))
            if rng.random() < 0.08:
                sub = sub[:-1] if len(sub) > 1 else sub[0]
            modes.append(sub)
        shape = tuple(modes)
        if rng.random() < 0.1:
            shape = (rng.choice([2, 3]),) + shape
        return [lstr(Layout(shape, strides_compact(rng, shape)))]
    if op == "crd2idx":
        L = rand_layout(rng)
        return [tstr(rand_coord(rng, L.shape)), lstr(L)]
    if op == "idx2crd":
        shape = rand_shape(rng, 3, 256)
        n = ref.product(shape)
        i = rng.randrange(n) if rng.random() < 0.9 else n + rng.randint(0, 10)
        return [str(i), tstr(shape)]
    if op in ("slice", "dice"):
        L = rand_layout(rng)
        return [tstr(rand_coord(rng, L.shape, allow_u=True, oob=0.03)), lstr(L)]
    if op in ("coalesce", "filter"):
        shape = rand_shape(rng, 3, 256)
        kind = rng.random()
        if kind < 0.5:
            st = strides_compact(rng, shape, perm=rng.random() < 0.5, zeros=0.2)
        else:
            st = strides_random(rng, shape, neg=False)
        L = Layout(shape, st)
        if rng.random() < 0.5:
            return [lstr(L)]
        return [lstr(L), tstr(rand_profile_for(rng, L.shape))]
    if op == "composition":
        if rng.random() < 0.1:
            # several leaves whose samples all stay inside L's first mode
            s0 = rng.choice([5, 6, 7, 9, 10, 12])
            L = Layout((s0, rng.choice([2, 3])), (1, s0 + rng.choice([1, 2, 3])))
            a = rng.choice([1, 2, 3])
            b = rng.choice([2, 3])
            B = Layout((2, 2), (b, a)) if rng.random() < 0.5 else Layout((2, 2), (a, b))
            return [lstr(L), lstr(B)]
        L = rand_layout(rng, budget=256)
        if rng.random() < 0.3:
            return [lstr(L), ref.tiler_str(rand_tiler(rng, L))]
        return [lstr(L), lstr(rand_tile_for(rng, L))]
    if op == "complement":
        if rng.random() < 0.75:
            L = rand_injective(rng, budget=64)
        else:
            L = rand_layout(rng, budget=64)
        if ref.product(L.shape) > 0 and rng.random() < 0.1:
            L = Layout(L.shape, ref.repeat_like(L.shape, 0))
        r = rng.random()
        if r < 0.25:
            return [lstr(L)]
        try:
            ext = ref.cosize(ref.filter_layout(L))
        except ref.CuteError:
            ext = 8
        ext = max(1, ext)
        if r < 0.65:
            return [lstr(L), str(ext * rng.choice([1, 1, 2, 3, 4]))]
        if r < 0.85:
            return [lstr(L), str(rng.randint(1, 2 * ext + 4))]
        a = rng.choice([2, 3, 4, 5, 6, 8])
        b = rng.choice([2, 3, 4, 5, 6, 8])
        return [lstr(L), tstr((a, b) if rng.random() < 0.8 else (a, b, 2))]
    if op in ("right_inverse", "left_inverse"):
        r = rng.random()
        if r < 0.15:
            # equal strides: the order among ties decides the result
            shape = rand_shape(rng, 2, 64)
            st = unflatten([rng.choice([0, 1, 1, 2, 2, 4, 6])
                            for _ in ref.flatten_to_tuple(shape)], shape)
            return [lstr(Layout(shape, st))]
        if r < 0.45:
            shape = rand_shape(rng, 3, 256)
            L = Layout(shape, strides_compact(rng, shape))
        elif r < 0.7:
            L = rand_injective(rng, 128)
        elif r < 0.85:
            shape = rand_shape(rng, 3, 128)
            L = Layout(shape, strides_compact(rng, shape, zeros=0.3))
        else:
            L = rand_layout(rng, budget=64, kind="random")
        return [lstr(L)]
    if op.endswith("_divide"):
        L = rand_layout(rng, budget=256, kind=rng.choice(["compact", "colmajor", "gaps", "zeros"]))
        if rng.random() < 0.45:
            T = rand_tiler(rng, L, for_divide=True)
            if not isinstance(T, tuple):
                T = (T,) if rng.random() < 0.3 else T
        else:
            T = admissible_tile(rng, L, extend=False)
            if rng.random() < 0.1:
                T = perturb(rng, T)
        return [lstr(L), ref.tiler_str(T)]
    if op in ("shape_div", "ceil_div", "elem_less"):
        a = rand_shape(rng, 2, 256)
        r = rng.random()
        if op == "elem_less":
            b = rand_shape(rng, 2, 256) if r < 0.3 else a
            return [tstr(rand_coord(rng, b, oob=0.3)) if rng.random() < 0.8 else tstr(a), tstr(b)]
        if r < 0.4:
            b = rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 40])
        elif r < 0.8 and ref.is_tuple(a):
            b = tuple(rng.choice([1, 2, 3, 4]) for _ in a[:rng.randint(1, len(a))])
            if op == "shape_div":
                b = tuple(rng.choice([1, 2, ref.product(x)]) for x in a)
        else:
            b = rand_shape(rng, 1, 64)
        return [tstr(a), tstr(b)]
    if op == "product_each":
        return [tstr(rand_shape(rng, 3, 256))]
    if op == "take":
        L = rand_layout(rng)
        rk = ref.layout_rank(L)
        b = rng.randrange(rk)
        e = rng.randint(b + 1, rk) if rng.random() < 0.95 else b
        return [lstr(L), str(b), str(e)]
    if op in ("layout_like", "fragment_like"):
        shape = rand_shape(rng, 3, 256)
        r = rng.random()
        if r < 0.4:
            st = strides_compact(rng, shape, perm=True, zeros=0.2)
        elif r < 0.6:
            st = unflatten([rng.choice([0, 1, 2, 2, 4, 8]) for _ in ref.flatten_to_tuple(shape)],
                           shape)
        else:
            st = strides_random(rng, shape, neg=op == "layout_like")
        return [lstr(Layout(shape, st))]
    if op == "tile_to_shape":
        shape = rand_shape(rng, 2, 32)
        B = Layout(shape, strides_compact(rng, shape, perm=True))
        rk = ref.layout_rank(B)
        R = rk + (1 if rng.random() < 0.3 else 0)
        sizes = ref.product_each(B.shape) + (1,) * (R - rk)
        trg = tuple(s * rng.choice([1, 2, 3]) + (1 if rng.random() < 0.05 else 0) for s in sizes)
        if rng.random() < 0.5:
            return [lstr(B), tstr(trg)]
        order = list(range(R))
        rng.shuffle(order)
        return [lstr(B), tstr(trg), tstr(tuple(order) if R > 1 else order[0])]
    if op in ("get_hier_coord", "get_flat_coord", "get_1d_coord"):
        shape = rand_shape(rng, 3, 256)
        L = Layout(shape, strides_compact(rng, shape, perm=True, gaps=rng.random() < 0.2))
        vals = values(L) or [0]
        i = rng.choice(vals) if rng.random() < 0.85 else rng.randint(0, max(vals) + 3)
        return [str(i), lstr(L)]
    if op.endswith("_product"):
        L = rand_injective(rng, budget=24) if rng.random() < 0.8 else rand_layout(rng, budget=16)
        if op in ("blocked_product", "raked_product"):
            B = rand_layout(rng, depth=2, budget=12, kind=rng.choice(["compact", "colmajor", "colmajor"]))
            return [lstr(L), lstr(B)]
        r = rng.random()
        if r < 0.5:
            rk = ref.layout_rank(L)
            n = rng.randint(1, rk)
            T = tuple(rng.choice([U, 2, 3, Layout(2, 1), Layout((2, 2), (1, 2)),
                                  Layout((2, 3), (3, 1)), Layout(3, 1)])
                      for _ in range(n))
        else:
            T = rand_layout(rng, depth=2, budget=12, kind=rng.choice(["compact", "colmajor", "gaps"]))
        return [lstr(L), ref.tiler_str(T)]
    raise ValueError(op)


ALL_OPS = [
    "show", "size", "cosize", "rank", "depth", "shape", "stride", "get", "select", "group",
    "append", "prepend", "zip", "flatten", "crd2idx", "idx2crd", "slice", "dice",
    "coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse",
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product",
    "blocked_product", "raked_product", "col_major", "row_major",
    "shape_div", "ceil_div", "elem_less", "product_each", "take", "layout_like",
    "fragment_like", "tile_to_shape", "get_hier_coord", "get_flat_coord", "get_1d_coord",
]

# relative frequency of each operation in a run
WEIGHTS = collections.defaultdict(lambda: 1, {
    "composition": 6, "complement": 4, "right_inverse": 2, "left_inverse": 2,
    "logical_divide": 3, "zipped_divide": 2, "tiled_divide": 2, "flat_divide": 2,
    "logical_product": 2, "zipped_product": 1, "tiled_product": 1, "flat_product": 1,
    "blocked_product": 2, "raked_product": 2, "coalesce": 2, "filter": 2,
    "crd2idx": 2, "slice": 2, "dice": 1,
})


def make_cases(seed, n, ops):
    rng = random.Random(seed)
    pool = [op for op in ops for _ in range(WEIGHTS[op])]
    cases = []
    # every op at least once, then random
    order = list(ops) + [rng.choice(pool) for _ in range(max(0, n - len(ops)))]
    for k, op in enumerate(order[:n]):
        crng = random.Random(f"{seed}/{k}/{op}")
        cases.append((k, op, gen_case(crng, op)))
    return cases


# ---------------------------------------------------------------------------
# evaluation helpers (functional checks)

EVAL_LIMIT = 1 << 14


def values(L):
    """[L(i) for i in range(size(L))] (None when too large)."""
    sh = ref.flatten_to_tuple(L.shape)
    st = ref.flatten_to_tuple(L.stride)
    n = ref.product(sh) if sh else 1
    if n > EVAL_LIMIT or n <= 0:
        return None
    vals = [0]
    for s, d in zip(sh, st):
        vals = [v + k * d for k in range(s) for v in vals]
    return vals


def mode_sizes(L):
    return tuple(ref.product(x) for x in ref.wrap(L.shape))


def same_function(A, B):
    fa = (ref.flatten_to_tuple(A.shape), ref.flatten_to_tuple(A.stride))
    fb = (ref.flatten_to_tuple(B.shape), ref.flatten_to_tuple(B.stride))
    if fa == fb:
        return True
    va, vb = values(A), values(B)
    if va is None or vb is None:
        return None
    return va == vb


# Operations where Fly does what docs/layout-algebra.md section 4 describes,
# but section 5 does not list it as a difference from CuTe C++ (or the text
# says CuTe does the same, which it does not).
UNDECLARED: dict[str, str] = {}


def doc_items_for(op, args_parsed, cute_out, fly_out):
    """Which documented deviation explains tool == flydoc != cute."""
    items = {
        "composition": "5.1/5.3 (exact divisibility, negative B stride, n:0 for size-1 leaves)",
        "complement": "5.4 (complement refuses what it cannot complement)",
        "left_inverse": "5.6 (left_inverse refuses overlapping modes)",
        "crd2idx": "5.12 (coordinates are range-checked)",
        "idx2crd": "5.12 (coordinates are range-checked)",
        "slice": "5.12 (coordinates are range-checked)",
        "dice": "5.12 (coordinates are range-checked)",
        "zip": "5.18 (a leaf zips as a mode of rank 1)",
        "product_each": "5.21 (product_each of an integer is the integer)",
        "layout_like": "5.23 (equal strides are ordered left to right)",
        "fragment_like": "5.23 (compact; a rank-2 layout keeps its mode 1)",
        "tile_to_shape": "5.13 (an order value appears twice)",
        "get_hier_coord": "5.22 (the layout must give the index)",
        "get_flat_coord": "5.22 (the layout must give the index)",
        "get_1d_coord": "5.22 (the layout must give the index)",
    }
    if op.endswith("_divide"):
        return "5.8/5.9/5.1 (size(L) cotarget; '_' tiles; exact composition)"
    if op.endswith("_product"):
        return "5.9/5.1/5.4/5.18 ('_' blocks; exact composition; strict complement; a leaf zips as a rank-1 mode)"
    return items.get(op, "?")


# ---------------------------------------------------------------------------
# properties checked on the tool's result, independent of the reference text

def check_property(op, args, tool_val):
    """None if fine or not applicable, else a message."""
    try:
        if op == "composition" and isinstance(args[1], Layout):
            L, B = args
            R = tool_val
            vb, vr = values(B), values(R)
            if vb is None or vr is None or len(vb) != len(vr):
                return None if vr is None or vb is None else f"size {len(vr)} != size(B) {len(vb)}"
            if any(x < 0 for x in vb):
                return None
            # only meaningful when B's modes do not overlap: B injective once
            # its stride-0 (broadcast) modes are dropped
            vnz = values(ref.filter_zeros(B))
            if vnz is None or len(set(vnz)) != len(vnz):
                return None
            for i, (x, y) in enumerate(zip(vb, vr)):
                if L(x) != y:
                    return f"R({i}) = {y} but L(B({i})) = L({x}) = {L(x)}"
        if op == "right_inverse":
            L = args[0]
            vr = values(tool_val)
            if vr is None:
                return None
            for i, x in enumerate(vr):
                if not 0 <= x < max(1, ref.product(L.shape)) and len(vr) > 1:
                    return f"R({i}) = {x} outside L's domain"
                if len(vr) > 1 and L(x) != i:
                    return f"L(R({i})) = {L(x)} != {i}"
        if op == "left_inverse":
            L = args[0]
            vl = values(L)
            if vl is None or any(x < 0 for x in vl):
                return None
            if len(set(vl)) != len(vl):
                return None
            for i, x in enumerate(vl):
                if tool_val(x) != i:
                    return f"R(L({i})) = R({x}) = {tool_val(x)} != {i}"
        if op == "complement":
            L = args[0]
            cot = args[1] if len(args) > 1 else None
            vl, vr = values(L), values(tool_val)
            if vl is None or vr is None:
                return None
            if any(vr[i] >= vr[i + 1] for i in range(len(vr) - 1)):
                return "complement is not strictly increasing"
            img = {a + b for a in set(vl) for b in vr}
            if len(img) != len(set(vl)) * len(vr):
                return "(L, R) is not injective on L's image"
            if isinstance(cot, int) and not set(range(cot)) <= img:
                return f"(L, R) does not cover [0, {cot})"
        if op == "logical_divide" and isinstance(args[1], Layout):
            # the definition: L o (B, complement(B, size(L))), for injective B
            L, B = args
            vb = values(B)
            if vb is None or len(set(vb)) != len(vb) or any(x < 0 for x in vb):
                return None
            try:
                M = ref.make_layout(B, ref.complement(B, ref.layout_size(L), "flydoc"))
            except ref.CuteError:
                M = B
            vm, vr = values(M), values(tool_val)
            if vm is None or vr is None:
                return None
            if len(vm) != len(vr):
                if M is B:
                    vr = vr[:len(vm)]
                else:
                    return f"size {len(vr)} != size of (B, complement) {len(vm)}"
            for i, (x, y) in enumerate(zip(vm, vr)):
                if L(x) != y:
                    return f"result({i}) = {y} but L(M({i})) = L({x}) = {L(x)}"
        if op == "logical_product" and isinstance(args[1], Layout):
            L = args[0]
            m0 = ref.layout_get(tool_val, 0)
            if same_function(m0, L) is False:
                return "mode 0 of the product is not the block"
    except ref.CuteError:
        return None
    return None


PROPERTY_OPS = ("composition", "right_inverse", "left_inverse", "complement",
                "logical_divide", "logical_product")


# ---------------------------------------------------------------------------
# one case

def reference(op, parsed, flavor):
    """(status, text, kind, value, detail)"""
    try:
        kind, val = ref.run_op(op, parsed, flavor)
        if kind == "layout":
            ref.check_layout(val)
        return "ok", ref.result_str(kind, val), kind, val, ""
    except ref.FlyDocRefuse as e:
        return "refuse", None, None, None, f"doc item {e.item}: {e}"
    except ref.CuteGarbage as e:
        return "garbage", None, None, None, str(e)
    except ref.CuteRefuse as e:
        return "refuse", None, None, None, str(e)


def run_case(case, tool, frontend, timeout=10):
    k, op, args = case
    argv = command_line(frontend, tool, op, args)
    t0 = time.time()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = -9, "", "timeout"
    except OSError as e:
        rc, out, err = -1, "", str(e)
    dt = time.time() - t0
    parsed = ref.parse_args(op, args)
    c_status, c_text, c_kind, c_val, c_detail = reference(op, parsed, "cute")
    f_status, f_text, f_kind, f_val, f_detail = reference(op, parsed, "flydoc")
    res = {
        "id": k, "op": op, "args": args, "cmd": shlex.join(argv),
        "rc": rc, "tool": out.strip(), "stderr": err.strip().splitlines()[0] if err.strip() else "",
        "cute": c_text if c_status == "ok" else f"<{c_status}: {c_detail}>",
        "flydoc": f_text if f_status == "ok" else f"<{f_status}: {f_detail}>",
        "time": dt,
    }
    kind = c_kind or f_kind or result_kind(op)
    tool_text = read_output(frontend, kind, out) if rc == 0 else None
    res["class"], res["sub"] = classify(op, parsed, rc, tool_text, kind,
                                        (c_status, c_text, c_val, c_detail),
                                        (f_status, f_text, f_val, f_detail))
    # where the tool refuses and CuTe answers: is CuTe's answer right?
    if rc == 1 and c_status == "ok" and c_kind == "layout" and \
            op in ("composition", "logical_divide") and isinstance(parsed[1], Layout):
        msg = check_property(op, parsed, c_val)
        res["cute_wrong"] = msg or ""
    # independent property of the tool's result
    if rc == 0 and tool_text is not None and kind == "layout":
        try:
            tv = ref.parse_layout(tool_text)
        except ref.ParseError:
            tv = None
        if tv is not None:
            msg = check_property(op, parsed, tv)
            if not msg and res["class"] == "wrong-function" and op in PROPERTY_OPS:
                res["sub"] += "; the tool's result passes the property check"
            if msg:
                res["property"] = msg
                if res["class"] in ("agree", "documented", "text-form"):
                    res["class"], res["sub"] = "property", msg.split(" ")[0]
    return res


def result_kind(op):
    if op == "show":
        return "text"
    if op in ("size", "cosize", "rank", "depth", "crd2idx", "get_1d_coord"):
        return "int"
    if op in ("shape", "stride", "idx2crd", "shape_div", "ceil_div", "product_each",
              "get_hier_coord", "get_flat_coord"):
        return "tuple"
    if op == "elem_less":
        return "text"
    if op == "slice":
        return "slice"
    return "layout"


def classify(op, parsed, rc, tool_text, kind, C, F):
    c_status, c_text, c_val, c_detail = C
    f_status, f_text, f_val, f_detail = F
    if rc not in (0, 1) or (rc == 0 and tool_text is None):
        return "usage", f"rc={rc}"
    if rc == 0:
        tool_val = None
        try:
            if kind == "layout":
                tool_val = ref.parse_layout(tool_text)
            elif kind == "slice":
                tool_val = ref.parse_layout(tool_text.split("  offset")[0])
        except ref.ParseError:
            return "usage", "unparsable output"
    if c_status == "ok" and rc == 0:
        if tool_text == c_text:
            return "agree", "same text"
        if f_status == "ok" and tool_text == f_text:
            if op in UNDECLARED:
                return "undeclared", UNDECLARED[op]
            return "documented", doc_items_for(op, parsed, c_text, f_text)
        if kind in ("layout", "slice") and tool_val is not None:
            cv = c_val if kind == "layout" else c_val[0]
            if kind == "slice":
                off_t = tool_text.split("offset")[-1].strip()
                if off_t != str(c_val[1]):
                    return "wrong-function", "slice offset"
            # compare with the documented result first when the doc differs
            if kind == "layout" and f_status == "ok" and f_text != c_text:
                if same_function(tool_val, f_val) and mode_sizes(tool_val) == mode_sizes(f_val):
                    return "text-form", "same function and mode sizes as the documented result"
            same = same_function(tool_val, cv)
            if same and mode_sizes(tool_val) == mode_sizes(cv):
                return "text-form", "same function and mode sizes"
            if same:
                return "text-form", "same 1-D function, different mode sizes"
            if same is None:
                return "wrong-function", "text differs (too large to compare functions)"
            return "wrong-function", "differs from CuTe"
        return "wrong-function", f"{kind} differs"
    if c_status != "ok" and rc == 1:
        return "agree", f"both refuse ({c_status})"
    if c_status == "ok" and rc == 1:
        if f_status != "ok":
            return "documented", f"tool refuses: {f_detail.split(':')[0]}"
        return "tool-refuses", op
    # reference refuses, tool accepts
    if f_status == "ok":
        if tool_text == f_text:
            return "documented", (f"CuTe {c_status}s; doc gives this result "
                                  f"({doc_items_for(op, parsed, None, None)})")
        if kind == "layout" and tool_val is not None and same_function(tool_val, f_val) \
                and mode_sizes(tool_val) == mode_sizes(f_val):
            return "text-form", f"CuTe {c_status}s; doc result up to grouping"
    return "tool-accepts", f"CuTe {c_status}: {c_detail.split(':')[0]}"


def run_batch(batch, tool, frontend):
    return [run_case(c, tool, frontend) for c in batch]


# ---------------------------------------------------------------------------
# driver

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", default=None, help="path of fly-layout (or flyc)")
    ap.add_argument("--frontend", choices=["fly-layout", "flyc"], default="fly-layout")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--ops", default=",".join(ALL_OPS), help="comma-separated operations")
    ap.add_argument("--jobs", type=int, default=max(2, (os.cpu_count() or 2)))
    ap.add_argument("--json", help="write every case with its classification here")
    ap.add_argument("--show", type=int, default=1, help="reproducers shown per class")
    ap.add_argument("--allow", default="", help="classes that do not fail the run, e.g. text-form")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    tool = a.tool or os.path.join(root, "build", "bin",
                                  "fly-layout" if a.frontend == "fly-layout" else "flyc")
    if not os.path.exists(tool):
        print(f"differential.py: no tool at {tool}", file=sys.stderr)
        return 2
    ops = [o for o in a.ops.split(",") if o]
    for o in ops:
        if o not in ALL_OPS:
            print(f"differential.py: unknown operation {o}", file=sys.stderr)
            return 2
    if a.frontend == "flyc":
        ops = [o for o in ops if o not in FLYC_SKIP]

    t0 = time.time()
    cases = make_cases(a.seed, a.cases, ops)
    nb = max(1, a.jobs * 4)
    batches = [cases[i::nb] for i in range(nb)]
    results = []
    if a.jobs <= 1:
        results = run_batch(cases, tool, a.frontend)
    else:
        with concurrent.futures.ProcessPoolExecutor(a.jobs) as ex:
            for r in ex.map(run_batch, batches, [tool] * nb, [a.frontend] * nb):
                results.extend(r)
    results.sort(key=lambda r: r["id"])
    elapsed = time.time() - t0

    by_class = collections.Counter(r["class"] for r in results)
    table = collections.defaultdict(collections.Counter)
    for r in results:
        table[r["op"]][r["class"]] += 1
    groups = collections.defaultdict(list)
    for r in results:
        if r["class"] not in ("agree",):
            groups[(r["class"], r["op"], r["sub"])].append(r)

    classes = ["agree", "documented", "undeclared", "text-form", "wrong-function",
               "tool-refuses", "tool-accepts", "property", "usage"]
    if not a.quiet:
        print(f"{len(results)} cases, seed {a.seed}, {elapsed:.1f} s, tool {tool} ({a.frontend})")
        hdr = f"{'operation':16}" + "".join(f"{c[:10]:>11}" for c in classes)
        print(hdr)
        for op in ops:
            if table[op]:
                print(f"{op:16}" + "".join(f"{table[op][c]:>11}" for c in classes))
        print(f"{'total':16}" + "".join(f"{by_class[c]:>11}" for c in classes))
        for key in sorted(groups, key=lambda k: (classes.index(k[0]), k[1], k[2])):
            cls, op, sub = key
            rs = sorted(groups[key], key=lambda r: (len(r["cmd"]), r["cmd"]))
            print(f"\n[{cls}] {op}: {sub}  ({len(rs)} cases)")
            for r in rs[:a.show]:
                print(f"  $ {r['cmd']}")
                print(f"    tool:   {r['tool'] if r['rc'] == 0 else '<exit %d> %s' % (r['rc'], r['stderr'])}")
                print(f"    cute:   {r['cute']}")
                if r["flydoc"] != r["cute"]:
                    print(f"    flydoc: {r['flydoc']}")
                if r.get("cute_wrong"):
                    print(f"    CuTe's result is wrong: {r['cute_wrong']}")
                elif "cute_wrong" in r:
                    print("    CuTe's result passes the property check")
                if "property" in r:
                    print(f"    property: {r['property']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    allowed = {"agree", "documented"} | {c for c in a.allow.split(",") if c}
    bad = sum(n for c, n in by_class.items() if c not in allowed)
    if a.quiet:
        print(f"{len(results)} cases in {elapsed:.1f} s: " +
              ", ".join(f"{c} {by_class[c]}" for c in classes if by_class[c]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

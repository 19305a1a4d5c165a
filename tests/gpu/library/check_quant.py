#!/usr/bin/env python3
"""GPU checks of kernels/quant through fly.kernels: per_token_quant and
per_block_quant against a float64 PyTorch reference computed the same way,
on fresh random inputs, over row lengths from 1 to 262144 (odd ones and
partial groups included), offset starts and padded rows, row-major, padded
and column-major scales, an all-zero row; outputs poisoned and guarded.

The reference, per row (or group) of x in float64:

    scale = max(max |x|, 1e-10) / QMAX,   v = x / scale

and what is checked, with d = 2^-22 (a few units in the last place of f32:
the kernels multiply x by 1 / scale, rounded to f32, instead of dividing):

* scales: |s - scale| <= 1e-6 scale;
* q is the nearest value of its type to v, ties to even, saturated at
  +-QMAX: q equals PyTorch's conversion of v (round() for int8,
  .to(float8) after a clamp) except where v lies within d |v| of the
  midpoint between two neighbours, and there q is the other neighbour:
  |q - v| <= |q_ref - v| + d |v| everywhere; the number of such ties is
  printed;
* dequantised: |q scale - x| <= (half a step of q's type at v + d |v|) scale;
* the largest magnitude of each row (group) becomes +-QMAX exactly, and
  int8 never gives -128.
"""
from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402
from fly import FlyError  # noqa: E402

INPUTS = [torch.bfloat16, torch.float16, torch.float32]
QTYPES = [torch.float8_e4m3fn, torch.int8]
QMAX = {torch.float8_e4m3fn: 448.0, torch.float8_e5m2: 57344.0, torch.int8: 127.0}
TINY = 1e-10
D = 2.0**-22
# (rows, row length): odd lengths, one element, partial groups of 128, the
# register plans' edges, streamed rows, many rows.
SHAPES = [(3, 1), (5, 7), (64, 127), (7, 128), (9, 129), (33, 1000), (17, 4096), (9, 4097),
          (4, 16384), (3, 65536 + 3), (2, 262144), (300, 64), (2048, 512)]


def layouts(m, n):
    """(name, offset in elements, row stride) of the inputs and outputs tried."""
    yield "contiguous", 0, n
    yield "offset by 1 element, rows padded by 3", 1, n + 3
    yield "offset by 8 elements, rows padded by 8", 8, n + 8


def half_step(v, qtype):
    """Half the distance between the neighbours of qtype around |v| (an
    upper bound): 3 mantissa bits and subnormals from 2^-9 for e4m3, 2 bits
    and 2^-16 for e5m2, 1/2 for int8."""
    a = v.abs()
    if qtype == torch.int8:
        return torch.full_like(a, 0.5)
    if qtype == torch.float8_e4m3fn:
        return torch.maximum(a * 2.0**-4, torch.full_like(a, 2.0**-10))
    return torch.maximum(a * 2.0**-3, torch.full_like(a, 2.0**-17))


def nearest(v, qtype):
    """v (float64) converted by PyTorch: rounded to nearest (ties to even)
    and saturated, as float64."""
    qmax = QMAX[qtype]
    if qtype == torch.int8:
        return torch.round(v).clamp(-qmax, qmax)
    return v.clamp(-qmax, qmax).to(torch.float32).to(qtype).to(torch.float64)


def ref_scales(x64, group):
    """float64 scales of each group of `group` columns (the last partial),
    and the same repeated over each group's columns."""
    m, n = x64.shape
    g = -(-n // group) if n else 0
    padded = torch.zeros(m, g * group, dtype=torch.float64, device=x64.device)
    padded[:, :n] = x64.abs()
    amax = padded.view(m, g, group).amax(-1).clamp_min(TINY)
    return amax, amax.repeat_interleave(group, dim=1)[:, :n]


def check_q(c: Checks, what: str, q, s_cols, x, amax_cols, qtype) -> None:
    """q (m x n of qtype) against the reference for x, with the kernel's
    scales spread over the columns (s_cols) and the groups' amax spread
    likewise."""
    qmax = QMAX[qtype]
    x64 = x.to(torch.float64)
    v = x64 * qmax / amax_cols
    g = q.to(torch.float32).to(torch.float64)
    ref = nearest(v, qtype)
    slack = D * v.abs()
    bad_nan = torch.isnan(g)
    off = ((g - v).abs() > (ref - v).abs() + slack) | bad_nan
    ties = int(((g != ref) & ~off).sum())
    n_off = int(off.sum())
    c.ok(what + ": q is the nearest value", n_off == 0,
         f"{ties} near-ties rounded the other way" +
         (f", {n_off} of {g.numel()} not nearest, worst |q - v| - |q_ref - v| "
          f"{float(((g - v).abs() - (ref - v).abs()).nan_to_num(math.inf).max()):.3g}"
          if n_off else ""))
    err = (g * s_cols - x64).abs()
    allowed = (half_step(v, qtype) + slack) * s_cols
    n_over = int((err > allowed).sum()) + int(bad_nan.sum())
    c.ok(what + ": dequantised within half a step", n_over == 0,
         f"{n_over} of {g.numel()} outside" if n_over else "")
    top = (x64.abs() == amax_cols) & (amax_cols > TINY)
    c.ok(what + ": the largest magnitude becomes +-QMAX",
         bool((g[top].abs() == qmax).all()) and
         (qtype != torch.int8 or not bool((g == -128).any())))


def check_per_token(c: Checks) -> None:
    for dt in INPUTS:
        for qt in QTYPES:
            for m, n in SHAPES:
                for name, off, rs in layouts(m, n):
                    vals = rand((m, n), dt, scale=3.0)
                    if m > 2:
                        vals[1] = 0  # an all-zero row
                    x = Guarded((m, n), dt, off, rs).fill(vals)
                    q = Guarded((m, n), qt, off, rs)
                    s = Guarded((m, 1), torch.float32, off, 1 + off)   # strided but for off 0
                    got_q, got_s = fk.per_token_quant(x.tensor, qt, out=q.tensor, scale=s.tensor)
                    torch.cuda.synchronize()
                    what = f"per_token_quant {dt} -> {qt} {m}x{n} {name}"
                    c.ok(what + ": returns out and scale",
                         got_q.data_ptr() == q.tensor.data_ptr() and
                         got_s.data_ptr() == s.tensor.data_ptr())
                    amax, amax_cols = ref_scales(x.tensor.to(torch.float64), max(n, 1))
                    c.close(what + ": scales", s.tensor, amax / QMAX[qt], 0.0, 1e-6)
                    s_cols = s.tensor.to(torch.float64).expand(m, n)
                    check_q(c, what, q.tensor, s_cols, x.tensor, amax_cols, qt)
                    if m > 2:
                        c.ok(what + ": an all-zero row gives zeros and a finite scale",
                             bool((q.tensor[1].to(torch.float32) == 0).all()) and
                             bool(torch.isfinite(s.tensor[1]).all()))
                    c.ok(what + ": guards",
                         q.guards_intact() and s.guards_intact() and x.guards_intact())


def check_per_block(c: Checks) -> None:
    group = 128
    for dt in INPUTS:
        for qt in QTYPES:
            for m, n in SHAPES:
                g = -(-n // group)
                for name, off, rs in layouts(m, n):
                    vals = rand((m, n), dt, scale=3.0)
                    if m > 2:
                        vals[1] = 0
                    if m > 2 and n > 300:
                        vals[2, 128:256] = 0  # an all-zero group
                    x = Guarded((m, n), dt, off, rs).fill(vals)
                    q = Guarded((m, n), qt, off, rs)
                    # Scales row-major, offset and padded, or column-major
                    # (with 16-byte accesses of x, where off is 8).
                    col_major = off == 8
                    if col_major:
                        s = Guarded((g, m), torch.float32)
                        scale = s.tensor.t()
                    else:
                        s = Guarded((m, g), torch.float32, off, g + off)
                        scale = s.tensor
                    got_q, got_s = fk.per_block_quant(x.tensor, group, qt, out=q.tensor,
                                                      scale=scale)
                    torch.cuda.synchronize()
                    what = (f"per_block_quant {dt} -> {qt} {m}x{n} {name}, scales "
                            f"{'column-major' if col_major else 'row-major'}")
                    c.ok(what + ": returns out and scale",
                         got_q.data_ptr() == q.tensor.data_ptr() and
                         got_s.data_ptr() == scale.data_ptr())
                    amax, amax_cols = ref_scales(x.tensor.to(torch.float64), group)
                    c.close(what + ": scales", scale, amax / QMAX[qt], 0.0, 1e-6)
                    s_cols = scale.to(torch.float64).repeat_interleave(group, dim=1)[:, :n]
                    check_q(c, what, q.tensor, s_cols, x.tensor, amax_cols, qt)
                    c.ok(what + ": guards",
                         q.guards_intact() and s.guards_intact() and x.guards_intact())


def compiled_on_first_use(what: str, fn) -> bool:
    """Runs fn, a call of a specialisation that no bundle holds; False (and
    a line saying so) where the compiler is not here to make it (a GPU
    machine with only the bundles)."""
    try:
        fn()
    except FlyError as e:
        if "is not here" not in str(e):
            raise
        print(f"skip quant: {what} (compiled on first use, and no compiler here)", flush=True)
        return False
    return True


def check_python(c: Checks) -> None:
    """Shapes of more dimensions, new outputs, other types, refusals."""
    x = rand((2, 3, 4096 + 64), torch.bfloat16)
    q, s = fk.per_token_quant(x)
    c.ok("per_token_quant 3-D: shapes and types",
         q.shape == x.shape and q.dtype == torch.float8_e4m3fn and
         s.shape == (2, 3, 1) and s.dtype == torch.float32)
    amax, amax_cols = ref_scales(x.view(6, -1).to(torch.float64), x.shape[-1])
    c.close("per_token_quant 3-D: scales", s.view(6, 1), amax / 448.0, 0.0, 1e-6)
    check_q(c, "per_token_quant 3-D", q.view(6, -1), s.view(6, 1).to(torch.float64).expand(6, -1),
            x.view(6, -1), amax_cols, torch.float8_e4m3fn)

    for qt in (torch.float8_e4m3fn, torch.int8, torch.float8_e5m2):
        if not compiled_on_first_use(f"per_block_quant {qt}",
                                     lambda: fk.per_block_quant(x[:1, :1], dtype=qt)):
            continue
        q, s = fk.per_block_quant(x, dtype=qt)
        g = -(-x.shape[-1] // 128)
        c.ok(f"per_block_quant 3-D {qt}: shapes and types",
             q.shape == x.shape and q.dtype == qt and s.shape == (2, 3, g))
        amax, amax_cols = ref_scales(x.view(6, -1).to(torch.float64), 128)
        c.close(f"per_block_quant 3-D {qt}: scales", s.view(6, g), amax / QMAX[qt], 0.0, 1e-6)
        check_q(c, f"per_block_quant 3-D {qt}", q.view(6, -1),
                s.view(6, g).to(torch.float64).repeat_interleave(128, dim=1)[:, :x.shape[-1]],
                x.view(6, -1), amax_cols, qt)
    q, s = fk.per_block_quant(x, column_major_scales=True)
    c.ok("per_block_quant column_major_scales: the rows of each group contiguous",
         s.shape == (2, 3, g) and s.stride(-2) == 1 and s.stride(-1) == 6)
    amax, _ = ref_scales(x.view(6, -1).to(torch.float64), 128)
    c.close("per_block_quant column_major_scales: scales", s.reshape(6, g), amax / 448.0,
            0.0, 1e-6)
    if compiled_on_first_use("per_block_quant group_size 64",
                             lambda: fk.per_block_quant(x, group_size=64)):
        q, s = fk.per_block_quant(x, group_size=64)
        amax, amax_cols = ref_scales(x.view(6, -1).to(torch.float64), 64)
        c.close("per_block_quant group_size 64: scales", s.view(6, -1), amax / 448.0, 0.0, 1e-6)
        check_q(c, "per_block_quant group_size 64", q.view(6, -1),
                s.view(6, -1).to(torch.float64).repeat_interleave(64, dim=1),
                x.view(6, -1), amax_cols, torch.float8_e4m3fn)
    if compiled_on_first_use("per_token_quant float8_e5m2",
                             lambda: fk.per_token_quant(x, torch.float8_e5m2)):
        q, s = fk.per_token_quant(x, torch.float8_e5m2)
        amax, amax_cols = ref_scales(x.view(6, -1).to(torch.float64), x.shape[-1])
        check_q(c, "per_token_quant float8_e5m2", q.view(6, -1),
                s.view(6, 1).to(torch.float64).expand(6, -1), x.view(6, -1), amax_cols,
                torch.float8_e5m2)

    c.raises("per_token_quant refuses a bfloat16 dtype",
             lambda: fk.per_token_quant(x, torch.bfloat16), "dtype")
    c.raises("per_token_quant refuses an int32 x",
             lambda: fk.per_token_quant(x.to(torch.int32)), "x must be")
    c.raises("per_token_quant refuses a scale of the wrong shape",
             lambda: fk.per_token_quant(x, scale=torch.empty(6, device="cuda")), "scale")
    c.raises("per_block_quant refuses a group size that is not a power of two",
             lambda: fk.per_block_quant(x, group_size=100), "group_size")
    c.raises("per_block_quant refuses an out of the wrong dtype",
             lambda: fk.per_block_quant(x, out=torch.empty_like(x)), "out")


def main() -> int:
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    c = Checks("quant")
    check_per_token(c)
    check_per_block(c)
    check_python(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""GPU checks of kernels/gemm through fly.kernels.gemm and scaled_mm: D = A @ B (and its
fused epilogue, activation(alpha A @ B + bias) + beta C) against a
float64 PyTorch reference on fresh random inputs, over M, N, K from 1 to
8192 (odd sizes that leave partial tiles of M, N and K, K not a multiple
of 8 that forces a copy), A and B as row-major, transposed and padded-row
views, offset outputs with padded rows, all three output types; outputs
poisoned with NaN inside guard regions that must be untouched afterwards.

Tolerance: the products are exact in f32 and summed in f32 in an order
the reference does not follow, then rounded once to the output type. With
inputs of magnitude ~1 the sum's error is below K * 2^-24 * sum |a b|;
relative to the typical magnitude sqrt(K) of the result that is
sqrt(K) 2^-24, far below the output's rounding: the check allows the
output type's rounding (TOL of common.py) relative to sum_k |a_ik b_kj|,
the magnitude of the terms, plus 1e-5 of it for the f32 sum.

scaled_mm (fp8: e4m3 x e4m3, e5m2 x e4m3, e4m3 x e5m2): the reference is
float64 of the dequantised values (the fp8 tensors themselves, times their
scales). A product of two fp8 values is exact in f32 whatever the pair
(3 + 3 or 2 + 3 mantissa bits); what differs from f32 is how the fp8 MMAs
add them, with fewer bits (measured errors up to 2e-3 on sums near 8):
1e-3 of the terms' magnitude on top of the output's rounding, for e5m2 as
for e4m3, since e5m2 changes the inputs' values, not the additions.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

SIZES = [1, 17, 1000, 4095, 4097, 8192]
# (M, N, K): every size in each position with the others moderate, a few
# large products, and the smallest.
SHAPES = sorted({(m, 256, 512) for m in SIZES} | {(256, n, 512) for n in SIZES} |
                {(256, 256, k) for k in SIZES} |
                {(1, 1, 1), (17, 17, 17), (4097, 4095, 1000), (8192, 8192, 8192),
                 (1000, 4097, 4095)})


def reference(a, b):
    a, b = a.to(torch.float64), b.to(torch.float64)
    return a @ b, a.abs() @ b.abs()


def one(c: Checks, m: int, n: int, k: int, dtype, out_dtype, a_form: str, b_form: str,
        offset: int, pad: int, split_k=None) -> None:
    # A: (M, K) row-major, or a transposed view of a (K, M) tensor.
    a = rand((m, k) if a_form == "rows" else (k, m), dtype)
    a = a if a_form == "rows" else a.t()
    # B: (K, N) as a transposed view of an (N, K) weight (the usual case),
    # or row-major (N contiguous: read by gemm_nn when N % 8 == 0, else
    # copied to K-major by the wrapper), or padded rows of an (N, K + 8)
    # weight or of a (K, N + 8) matrix.
    if b_form == "weight":
        b = rand((n, k), dtype).t()
    elif b_form == "rows":
        b = rand((k, n), dtype)
    elif b_form == "padded_rows":
        b = rand((k, n + 8), dtype)[:, :n]
    else:
        b = rand((n, k + 8), dtype)[:, :k].t()
    d = Guarded((m, n), out_dtype, offset=offset, row_stride=n + pad)
    fk.gemm(a, b, out=d.tensor, split_k=split_k)
    torch.cuda.synchronize()
    ref, mag = reference(a, b)
    atol, rtol = tol(out_dtype)
    what = (f"{m}x{n}x{k} {str(dtype)[6:]}->{str(out_dtype)[6:]} a:{a_form} b:{b_form} "
            f"offset {offset} pad {pad}" + (f" split_k {split_k}" if split_k else ""))
    # |d - ref| <= rtol |ref| + (atol' + 1e-5) * mag, atol' a relative
    # rounding of the output type applied to the terms' magnitude.
    err = (d.tensor.to(torch.float64) - ref).abs()
    allowed = rtol * ref.abs() + (1e-5 + (atol if out_dtype != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(d.tensor.to(torch.float64))
    c.ok(what, not bool(bad.any()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
FP8_NAMES = {E4M3: "e4m3", E5M2: "e5m2"}


def one_scaled(c: Checks, m: int, n: int, k: int, out_dtype, offset: int, pad: int,
               rowwise: bool = False, ta=E4M3, tb=E4M3) -> None:
    """scaled_mm: fp8 operands (a of ta, b of tb), per-tensor scales (or
    rowwise: one a row of a, one a column of b) read on the GPU."""
    a = rand((m, k), torch.float32, 2.0).to(ta)
    b = rand((n, k), torch.float32, 2.0).to(tb).t()
    if rowwise:
        sa = torch.rand((m, 1), device="cuda") + 0.25
        sb = torch.rand((1, n), device="cuda") + 0.25
    else:
        sa = torch.tensor([0.37], device="cuda")
        sb = torch.tensor([1.9], device="cuda")
    d = Guarded((m, n), out_dtype, offset=offset, row_stride=n + pad)
    fk.scaled_mm(a, b, sa, sb, out=d.tensor)
    torch.cuda.synchronize()
    ref, mag = reference(a, b)
    s = sa.to(torch.float64).reshape(-1, 1) * sb.to(torch.float64).reshape(1, -1)
    ref, mag = ref * s, mag * s
    atol, rtol = tol(out_dtype)
    # fp8 MMAs add their products with fewer bits than f32: 1e-3 of the
    # terms' magnitude on top of the output's rounding.
    err = (d.tensor.to(torch.float64) - ref).abs()
    allowed = rtol * ref.abs() + (1e-3 + (atol if out_dtype != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(d.tensor.to(torch.float64))
    pair = FP8_NAMES[ta] + ("" if tb == ta else "x" + FP8_NAMES[tb])
    c.ok(f"scaled_mm {m}x{n}x{k} {pair}->{str(out_dtype)[6:]} offset {offset} pad {pad}"
         + (" rowwise" if rowwise else ""),
         not bool(bad.any()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


def act64(x, activation):
    """The activation in float64, by PyTorch."""
    F = torch.nn.functional
    return {None: lambda t: t, "relu": F.relu, "silu": F.silu, "gelu": F.gelu,
            "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}[activation](x)


def one_epilogue(c: Checks, m: int, n: int, k: int, dtype, out_dtype, bias: bool, activation,
                 res: bool, alpha: float = 1.0, beta: float = 1.0, fp8: bool = False,
                 nn: bool = False, offset: int = 2, pad: int = 6) -> None:
    """The fused epilogue, activation(alpha (a @ b) + bias) + beta c, against
    float64: the result's rounding, plus the sums' error carried through the
    activation (whose slope is at most ~1.13) and alpha."""
    if fp8:
        a = rand((m, k), torch.float32, 2.0).to(torch.float8_e4m3fn)
        b = rand((n, k), torch.float32, 2.0).to(torch.float8_e4m3fn).t()
    else:
        a = rand((m, k), dtype)
        b = rand((k, n), dtype) if nn else rand((n, k), dtype).t()
    bv = rand((n,), out_dtype, 4.0) if bias else None
    cm = rand((m, n), out_dtype) if res else None
    d = Guarded((m, n), out_dtype, offset=offset, row_stride=n + pad)
    if fp8:
        one_t = torch.ones(1, device="cuda")
        fk.scaled_mm(a, b, one_t, one_t, bias=bv, activation=activation, out=d.tensor)
    else:
        fk.gemm(a, b, bias=bv, activation=activation, c=cm, alpha=alpha, beta=beta,
                out=d.tensor)
    torch.cuda.synchronize()
    ref, mag = reference(a, b)
    x = alpha * ref + (bv.to(torch.float64) if bias else 0.0)
    y = act64(x, activation) + (beta * cm.to(torch.float64) if res else 0.0)
    atol, rtol = tol(out_dtype)
    sums = (1e-3 if fp8 else 1e-5) * 1.2 * abs(alpha) * mag
    err = (d.tensor.to(torch.float64) - y).abs()
    allowed = rtol * y.abs() + sums + (atol if out_dtype != torch.float32 else 1e-6) * (
        mag * abs(alpha) + (bv.abs().to(torch.float64) if bias else 0.0) +
        (abs(beta) * cm.abs().to(torch.float64) if res else 0.0))
    bad = (err > allowed) | torch.isnan(d.tensor.to(torch.float64))
    what = (f"epilogue {m}x{n}x{k} {'e4m3' if fp8 else str(dtype)[6:]}->{str(out_dtype)[6:]}"
            f"{' bias' if bias else ''}{' ' + activation if activation else ''}"
            f"{' c' if res else ''}{f' alpha {alpha}' if alpha != 1 else ''}"
            f"{f' beta {beta}' if res and beta != 1 else ''}{' nn' if nn else ''}"
            f" offset {offset} pad {pad}")
    c.ok(what, not bool(bad.any()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


def replays(c: Checks) -> None:
    """A call whose signature matches an earlier one's is replayed (the
    earlier call's kernel and packed arguments, the new data pointers):
    each call's result must be its own, with fresh operands each time, for
    a result made anew, an out given, c the same tensor as out, and operands
    the wrapper copies (K % 8: the copy is the call's own, never replayed;
    fp8 operands have rows of a multiple of 16 bytes, so none is copied)."""
    import importlib

    g = importlib.import_module("fly.kernels.gemm")
    bf = torch.bfloat16
    for (m, n, k), how in (((16, 4096, 4096), "out"), ((300, 1032, 1000), "new"),
                           ((300, 1032, 1000), "c is out"), ((17, 520, 1001), "copied"),
                           ((64, 264, 256), "scaled")):
        before = len(g._REPLAYS)
        worst, bad = 0.0, False
        for _ in range(3):
            if how == "scaled":
                a = rand((m, k), torch.float32, 2.0).to(E4M3)
                w = rand((n, k), torch.float32, 2.0).to(E4M3)
                sa, sb = torch.rand(1, device="cuda") + 0.5, torch.rand(1, device="cuda") + 0.5
                d = fk.scaled_mm(a, w.t(), sa, sb)
                ref, mag = reference(a, w.t())
                ref, mag = ref * float(sa) * float(sb), mag * float(sa) * float(sb)
                allowed = 2e-2 * ref.abs() + 1e-2 * mag
            else:
                a, w = rand((m, k), bf), rand((n, k), bf)
                cm = rand((m, n), bf)
                if how == "new":
                    d = fk.gemm(a, w.t())
                elif how == "c is out":
                    d = cm.clone()
                    fk.gemm(a, w.t(), c=d, beta=0.5, out=d)
                else:
                    d = torch.full((m, n), float("nan"), dtype=bf, device="cuda")
                    fk.gemm(a, w.t(), out=d)
                ref, mag = reference(a, w.t())
                if how == "c is out":
                    ref = ref + 0.5 * cm.to(torch.float64)
                allowed = 1e-2 * ref.abs() + 1e-2 * mag
            torch.cuda.synchronize()
            err = (d.to(torch.float64) - ref).abs()
            worst = max(worst, float(err.max()))
            bad = bad or bool((err > allowed).any() or torch.isnan(d.to(torch.float64)).any())
        kept = len(g._REPLAYS) - before
        # A copied operand is not replayed; the others are, once.
        want = 0 if how == "copied" else 1
        c.ok(f"replayed calls {m}x{n}x{k} ({how}): three calls, each its own result",
             not bad and kept == want, f"max error {worst:.3g}, {kept} replays kept (want {want})")
    # Split K's workspace: a larger product replaces the stream's, the
    # older living on in the replayed call bound with it (its results stay
    # right), and freed once that replay is dropped.
    import gc
    import weakref

    def split_call(n):
        a, w = rand((16, 4096), bf), rand((n, 4096), bf)
        d = fk.gemm(a, w.t(), split_k=2)
        ref, mag = reference(a, w.t())
        torch.cuda.synchronize()
        err = (d.to(torch.float64) - ref).abs()
        return bool((err <= 1e-2 * ref.abs() + 1e-2 * mag).all())
    key = (torch.device("cuda", torch.cuda.current_device()),
           torch.cuda.current_stream().cuda_stream)
    g._WORKSPACES.pop(key, None)  # the checks before grew it: start small
    ok = split_call(4096) and split_call(4096)
    first = weakref.ref(g._WORKSPACES[key][0])
    ok = ok and split_call(8192) and g._WORKSPACES[key][0] is not first()
    ok = ok and first() is not None and split_call(4096) and split_call(4096)
    g._REPLAYS.clear()
    gc.collect()
    c.ok("split K's workspace: replaced when it grows, the older held by its replayed call "
         "(right results) and freed with it", ok and first() is None,
         f"results right: {ok}, older freed: {first() is None}")
    a = rand((16, 64), bf)
    k_ = next(iter(g._KERNELS.values()))
    c.raises("a bound launch rebinding a scalar",
             lambda: k_.bind(a, a, a, a, a, 1, 1.0, a, a, 0.0, a, a, rebind=(5,)), "argument 5")


def main() -> int:
    c = Checks("gemm")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    for (m, n, k) in SHAPES:
        one(c, m, n, k, torch.bfloat16, torch.bfloat16, "rows", "weight", 0, 0)
    for dtype, od in ((torch.float16, torch.float16), (torch.bfloat16, torch.float32),
                      (torch.float16, torch.float32)):
        one(c, 1000, 4097, 1000, dtype, od, "rows", "weight", 3, 5)
    for a_form, b_form in (("cols", "weight"), ("rows", "rows"), ("rows", "padded"),
                           ("cols", "rows")):
        one(c, 333, 517, 777, torch.bfloat16, torch.bfloat16, a_form, b_form, 1, 8)
    # NN: b row-major (N contiguous), read by gemm_nn as it is, with every
    # tile size, partial tiles of each mode, padded rows, each output type.
    for (m, n, k) in ((1, 256, 512), (17, 4096, 1000), (4097, 4104, 4095), (1000, 264, 17),
                      (333, 520, 777), (8192, 8192, 8192)):
        one(c, m, n, k, torch.bfloat16, torch.bfloat16, "rows", "rows", 0, 0)
    one(c, 1000, 4104, 1000, torch.float16, torch.float16, "rows", "padded_rows", 3, 5)
    one(c, 1000, 4104, 1000, torch.bfloat16, torch.float32, "cols", "padded_rows", 1, 8)
    # Split K by default (few rows whose tiles leave most multiprocessors
    # idle, a long K): the parts meet in a workspace that the last part of
    # each tile leaves zeros for the next call; TMA-stored and offset D,
    # each output type, fp8; on 64 x 64 tiles in two parts (N 2600 to
    # 4096) and on 64 x 128 tiles in up to eight (N 520).
    for (m, n, k), od, offset, pad in (((1, 4096, 11008), torch.bfloat16, 0, 0),
                                       ((16, 4096, 14336), torch.bfloat16, 8, 8),
                                       ((16, 2600, 8192), torch.float32, 2, 6),
                                       ((7, 520, 4096), torch.float32, 4, 4),
                                       ((64, 4104, 8192), torch.bfloat16, 2, 6)):
        one(c, m, n, k, torch.bfloat16, od, "rows", "weight", offset, pad)
    one_scaled(c, 16, 4096, 8192, torch.bfloat16, 8, 8)
    one_scaled(c, 16, 4096, 16384, torch.bfloat16, 8, 8)
    # Split K asked for: partial parts and tiles.
    for split, (m, n, k), od in ((2, (16, 4097, 1000), torch.bfloat16),
                                 (4, (333, 517, 4097), torch.float32),
                                 (8, (1, 4096, 8192), torch.bfloat16),
                                 (8, (130, 250, 100), torch.bfloat16)):
        one(c, m, n, k, torch.bfloat16, od, "rows", "weight", 2, 6, split)
    for (m, n, k), od in (((1, 1, 1), torch.bfloat16), ((17, 4097, 1000), torch.bfloat16),
                          ((1000, 256, 4095), torch.float32), ((4096, 4096, 4096), torch.bfloat16),
                          ((333, 4095, 8192), torch.bfloat16)):
        one_scaled(c, m, n, k, od, 1, 8)
    # Rowwise scales, on every tile size the wrapper picks.
    for (m, n, k) in ((4096, 4096, 4096), (1000, 4098, 1000), (333, 4098, 777), (17, 258, 4095),
                      (1, 2, 1)):
        one_scaled(c, m, n, k, torch.bfloat16, 0, 0, rowwise=True)
    # The fused epilogue: each activation, bias, c (a residual) and the
    # scalars, on partial tiles of every tile size the wrapper picks.
    bf = torch.bfloat16
    for act in (None, "relu", "silu", "gelu", "gelu_tanh"):
        one_epilogue(c, 1000, 4098, 1000, bf, bf, True, act, False)
    for (m, n, k) in ((4097, 4098, 1000), (333, 518, 777), (17, 4098, 4095), (1, 2, 1)):
        one_epilogue(c, m, n, k, bf, bf, True, "gelu", True, alpha=0.5, beta=-2.0)
        one_epilogue(c, m, n, k, bf, bf, True, "silu", False)
        one_epilogue(c, m, n, k, bf, bf, False, None, True)
    one_epilogue(c, 1000, 4098, 1000, torch.float16, torch.float16, True, "gelu", True)
    one_epilogue(c, 1000, 4104, 1000, bf, bf, True, "gelu", True, nn=True)
    one_epilogue(c, 1000, 4104, 1000, bf, bf, True, None, False, nn=True)
    # D stored by TMA (its start and rows on 16 bytes: offsets of 16 bytes,
    # rows of a multiple of 8 outputs), clipped at its edges: partial
    # tiles of every tile size the wrapper picks, each output type, the
    # epilogue, fp8.
    for (m, n, k) in ((1000, 4104, 1000), (17, 4104, 4095), (4097, 264, 136), (333, 520, 777),
                      (130, 14336, 512), (1, 8, 8)):
        one(c, m, n, k, bf, bf, "rows", "weight", 8, 8)
    one(c, 1000, 4104, 1000, torch.float16, torch.float32, "rows", "weight", 4, 4)
    one(c, 130, 14336, 512, bf, torch.float32, "rows", "weight", 4, 12)
    one(c, 333, 4104, 777, torch.float16, torch.float16, "cols", "rows", 8, 16)
    for (m, n, k) in ((4097, 4104, 1000), (1000, 8192, 512), (333, 520, 777), (17, 4104, 4095)):
        one_epilogue(c, m, n, k, bf, bf, True, "gelu", True, alpha=0.5, beta=-2.0, offset=8,
                     pad=8)
        one_epilogue(c, m, n, k, bf, bf, True, "silu", False, offset=8, pad=8)
        one_epilogue(c, m, n, k, bf, bf, False, None, True, offset=8, pad=8)
    one_epilogue(c, 1000, 4104, 1000, None, bf, True, None, False, fp8=True, offset=8, pad=8)
    one_scaled(c, 333, 4104, 777, bf, 8, 8)
    one_scaled(c, 1000, 4104, 1000, torch.float32, 4, 4)
    one_scaled(c, 333, 4104, 777, bf, 8, 8, rowwise=True)
    # Mixed fp8 (the bundles built ahead of time, bf16 out): e5m2 by e4m3
    # per tensor on partial tiles of every tile size the wrapper picks, odd
    # N (single stores) and even, and rowwise; e4m3 by e5m2 with even N.
    for (m, n, k), offset, pad in (((1, 1, 1), 1, 8), ((17, 4097, 1000), 1, 8),
                                   ((1000, 256, 4095), 1, 8), ((333, 4095, 8192), 1, 8),
                                   ((4096, 4096, 4096), 0, 0), ((333, 4098, 777), 0, 0)):
        one_scaled(c, m, n, k, torch.bfloat16, offset, pad, ta=E5M2, tb=E4M3)
    for (m, n, k) in ((4096, 4096, 4096), (333, 4098, 777), (17, 258, 4095), (1, 2, 1)):
        one_scaled(c, m, n, k, torch.bfloat16, 0, 0, rowwise=True, ta=E5M2, tb=E4M3)
        one_scaled(c, m, n, k, torch.bfloat16, 0, 0, rowwise=True, ta=E4M3, tb=E5M2)
    for (m, n, k) in ((1000, 4098, 1000), (333, 4098, 777), (17, 258, 4095), (1, 2, 1)):
        one_scaled(c, m, n, k, torch.bfloat16, 0, 0, ta=E4M3, tb=E5M2)
    one_epilogue(c, 1000, 4098, 1000, None, bf, True, None, False, fp8=True)
    one_epilogue(c, 17, 4098, 1000, None, bf, True, None, False, fp8=True)
    replays(c)
    # Refusals, each naming what is wrong.
    a = rand((4, 8), torch.bfloat16)
    c.raises("a and b of different K", lambda: fk.gemm(a, rand((9, 4), torch.bfloat16)), "(K, N)")
    c.raises("a split_k of 3", lambda: fk.gemm(a, rand((8, 4), torch.bfloat16), split_k=3),
             "split_k")
    c.raises("an f32 input", lambda: fk.gemm(a.float(), rand((8, 4), torch.float32)), "bfloat16")
    c.raises("an out of the wrong shape",
             lambda: fk.gemm(a, rand((8, 4), torch.bfloat16), out=torch.empty(
                 (4, 5), dtype=torch.bfloat16, device="cuda")), "out is")
    w = rand((8, 4), torch.bfloat16)
    c.raises("an unknown activation", lambda: fk.gemm(a, w, activation="tanh"), "activation")
    c.raises("a bias of the wrong length",
             lambda: fk.gemm(a, w, bias=rand((5,), torch.bfloat16)), "bias")
    c.raises("a c of the wrong shape", lambda: fk.gemm(a, w, c=rand((4, 5), torch.bfloat16)),
             "c is")
    c.raises("split_k with a bias",
             lambda: fk.gemm(a, w, bias=rand((4,), torch.bfloat16), split_k=2), "split_k")
    f8 = a.to(torch.float8_e4m3fn)
    unit = torch.ones(1, device="cuda")
    c.raises("scaled_mm of bfloat16", lambda: fk.scaled_mm(a, a.t(), unit, unit), "float8_e4m3fn")
    # As torch._scaled_mm: no two e5m2 operands, and no fp8 beside bf16.
    f5 = a.to(torch.float8_e5m2)
    c.raises("scaled_mm of e5m2 by e5m2", lambda: fk.scaled_mm(f5, f5.t(), unit, unit),
             "scaled_mm: b is float8_e4m3fn where a is float8_e5m2")
    c.raises("scaled_mm of e4m3 by bfloat16", lambda: fk.scaled_mm(f8, a.t(), unit, unit),
             "scaled_mm: b is float8_e4m3fn or float8_e5m2, not torch.bfloat16")
    c.raises("scaled_mm of bfloat16 by e5m2", lambda: fk.scaled_mm(a, f5.t(), unit, unit),
             "scaled_mm: a is float8_e4m3fn or float8_e5m2, not torch.bfloat16")
    c.raises("scaled_mm with a scale of two elements",
             lambda: fk.scaled_mm(f8, f8.t(), torch.ones(2, device="cuda"), unit), "scale_a")
    c.raises("scaled_mm with a column scale of the wrong length",
             lambda: fk.scaled_mm(f8, f8.t(), torch.ones((4, 1), device="cuda"),
                                  torch.ones((1, 5), device="cuda")), "scale_b")
    c.raises("tensors on the CPU are refused", lambda: fk.gemm(a.cpu(), a.t().cpu()), "must be on a GPU")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

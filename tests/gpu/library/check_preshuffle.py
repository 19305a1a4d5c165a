#!/usr/bin/env python3
"""GPU checks of the preshuffle GEMM (kernels/gemm/gemm_preshuffle.fly)
through fly.kernels.preshuffle_b and preshuffle_mm: D = SA SB (A W^T)
against a float64 PyTorch reference on fresh random inputs.

Cases: M, N and K mixed from 1, 17, 1000 and 4097 (partial tiles of M and
N; K not a multiple of the step, nor of 16 bytes, which the wrapper pads
with zeros), bf16 and f16 in (plain or scaled), e4m3 in with per-token and
per-channel scales or DeepSeek-V3's block scales (1 x 128 of A, 128 x 128
of B; a partial last block of K and of N), each output type the registry builds, A as a
padded-row view (its rows go on with NaN past K: what the kernel read
there would reach the result), offset outputs with padded rows, outputs
poisoned with NaN inside guard regions that must be untouched afterwards.

Tolerance (as check_gemm.py): the products are exact in f32 and summed in
f32 in an order the reference does not follow, then rounded once to the
output type: the output type's rounding (TOL of common.py) relative to
sum_k |s_i a_ik w_jk s_j|, plus 1e-5 of it for the f32 sum. fp8 is
multiplied exactly (e4m3 converts exactly to f16, bf16, f32) and summed in
f32 on NVIDIA and gfx942; gfx950's fp8 MFMA adds with fewer bits: 1e-3 of
the magnitude there, as check_gemm.py allows scaled_mm.

    check_preshuffle.py [--quick]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

SIZES = [1, 17, 1000, 4097]
SHAPES = sorted({(m, 256, 520) for m in SIZES} | {(256, n, 520) for n in SIZES} |
                {(256, 256, k) for k in SIZES} |
                {(1, 1, 1), (4097, 4095, 1000), (1000, 4097, 4095), (17, 4097, 4095)})
QUICK = [(1, 1, 1), (17, 17, 17), (256, 256, 4095), (1000, 4097, 4095)]
FP8 = torch.float8_e4m3fn


def padded(rows: int, k: int, dtype):
    """rows x k random values in rows that go on with NaN past k (fp8:
    a NaN byte) and start at a 16-byte boundary."""
    width = -(-(k + 1) // 16) * 16
    if dtype == FP8:
        x = torch.full((rows, width), 0x7F, dtype=torch.uint8, device="cuda").view(FP8)
        x[:, :k] = (rand((rows, k), torch.float32) * 2).to(FP8)
    else:
        x = torch.full((rows, width), float("nan"), dtype=dtype, device="cuda")
        x[:, :k] = rand((rows, k), dtype)
    return x[:, :k]


def one(c: Checks, m: int, n: int, k: int, dtype, od, scaled: bool, offset: int = 0,
        pad: int = 0) -> None:
    a = padded(m, k, dtype)
    w = (rand((n, k), torch.float32) * 2).to(dtype)
    sa = sb = None
    if scaled:
        sa = torch.rand((m, 1), device="cuda") + 0.5
        sb = torch.rand(n, device="cuda") + 0.5
    d = Guarded((m, n), od, offset=offset, row_stride=n + pad)
    bp = fk.preshuffle_b(w)
    fk.preshuffle_mm(a, bp, n, scale_a=sa, scale_b=sb, out=d.tensor)
    torch.cuda.synchronize()
    a64, w64 = a.to(torch.float64), w.to(torch.float64)
    s = (sa.to(torch.float64) * sb.to(torch.float64)[None, :]) if scaled else 1.0
    ref = (a64 @ w64.t()) * s
    mag = (a64.abs() @ w64.abs().t()) * s
    atol, rtol = tol(od)
    sums = 1e-3 if dtype == FP8 and "gfx950" in str(getattr(torch.cuda.get_device_properties(0),
                                                              "gcnArchName", "")) else 1e-5
    got = d.tensor.to(torch.float64)
    err = (got - ref).abs()
    allowed = rtol * ref.abs() + (sums + (atol if od != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(got)
    c.ok(f"{m}x{n}x{k} {str(dtype)[6:]}->{str(od)[6:]}{' scaled' if scaled else ''} "
         f"offset {offset} pad {pad}", not bool(bad.any()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


def blockwise(c: Checks, m: int, n: int, k: int, od) -> None:
    """fp8 with DeepSeek-V3's block scales: 1 x 128 of A, 128 x 128 of B."""
    a = padded(m, k, FP8)
    w = (rand((n, k), torch.float32) * 2).to(FP8)
    kb = -(-k // 128)
    sa = torch.rand((m, kb), device="cuda") + 0.5
    sb = torch.rand((-(-n // 128), kb), device="cuda") + 0.5
    d = Guarded((m, n), od, offset=1, row_stride=n + 3)
    fk.preshuffle_mm(a, fk.preshuffle_b(w), n, scale_a=sa, scale_b=sb, blockwise=True,
                     out=d.tensor)
    torch.cuda.synchronize()
    a64, w64 = a.to(torch.float64), w.to(torch.float64)
    ref = torch.zeros((m, n), dtype=torch.float64, device="cuda")
    mag = torch.zeros_like(ref)
    cols = torch.arange(n, device="cuda") // 128
    for b in range(kb):
        part = slice(128 * b, min(k, 128 * (b + 1)))
        s = sa[:, b].double()[:, None] * sb[cols, b].double()[None, :]
        ref += (a64[:, part] @ w64[:, part].t()) * s
        mag += (a64[:, part].abs() @ w64[:, part].abs().t()) * s
    atol, rtol = tol(od)
    got = d.tensor.to(torch.float64)
    err = (got - ref).abs()
    allowed = rtol * ref.abs() + (1e-3 + (atol if od != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(got)
    c.ok(f"blockwise {m}x{n}x{k} e4m3->{str(od)[6:]}", not bool(bad.any()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    c = Checks("preshuffle_mm")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    for (m, n, k) in (QUICK if quick else SHAPES):
        one(c, m, n, k, torch.bfloat16, torch.bfloat16, False)
        one(c, m, n, k, FP8, torch.bfloat16, True)
    # The types the registry builds ahead of time (the GPU machine
    # compiles nothing), offset outputs with padded rows.
    for dtype, od, scaled in ((torch.bfloat16, torch.float32, True),
                              (torch.float16, torch.float16, False),
                              (torch.float16, torch.float32, True), (FP8, torch.float32, True)):
        one(c, 1000, 4097, 1000, dtype, od, scaled, 3, 5)
        one(c, 17, 333, 4097, dtype, od, scaled, 1, 0)
    for (m, n, k) in ((1, 1, 16), (300, 200, 328), (1000, 4097, 4096), (17, 333, 4112)):
        blockwise(c, m, n, k, torch.bfloat16)
    # Refusals, each naming what is wrong.
    a = rand((4, 32), torch.bfloat16)
    bp = fk.preshuffle_b(rand((20, 32), torch.bfloat16))
    c.raises("fp8 without scales",
             lambda: fk.preshuffle_mm(a.to(FP8), fk.preshuffle_b(rand((20, 32), FP8)), 20),
             "scale_a and scale_b come together")
    c.raises("a weight of another type",
             lambda: fk.preshuffle_mm(a.half(), bp, 20), "of one type")
    c.raises("an N bp does not hold", lambda: fk.preshuffle_mm(a, bp, 40), "blocks of 16 rows")
    c.raises("scales of the wrong length",
             lambda: fk.preshuffle_mm(a, bp, 20, scale_a=torch.ones(3, device="cuda"),
                                      scale_b=torch.ones(20, device="cuda")), "scale_a holds")
    c.raises("blockwise scales for bf16",
             lambda: fk.preshuffle_mm(a, bp, 20, scale_a=torch.ones((4, 1), device="cuda"),
                                      scale_b=torch.ones((1, 1), device="cuda"), blockwise=True),
             "blockwise scales are for fp8")
    c.raises("a weight that is not a matrix",
             lambda: fk.preshuffle_b(rand((2, 3, 4), torch.bfloat16)), "matrix")
    # gfx942's own fp8 (FNUZ) is AMD's: refused for an NVIDIA target and GPU
    # (bytes viewed as it: the GPU has no kernels of the type to fill it).
    fnuz = torch.float8_e4m3fnuz
    c.raises("an FNUZ weight for NVIDIA",
             lambda: fk.preshuffle_b(torch.zeros((20, 64), dtype=torch.uint8, device="cuda").view(fnuz), "sm_90"),
             "for AMD, float8_e4m3fnuz too")
    amd_bp = fk.preshuffle_b(torch.zeros((20, 64), dtype=torch.uint8, device="cuda").view(fnuz), "gfx942")
    c.raises("FNUZ fp8 on an NVIDIA GPU",
             lambda: fk.preshuffle_mm(torch.zeros((4, 64), dtype=torch.uint8, device="cuda").view(fnuz), amd_bp, 20,
                                      scale_a=torch.ones(4, device="cuda"),
                                      scale_b=torch.ones(20, device="cuda")),
             "float8_e4m3fnuz is AMD gfx942's fp8")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

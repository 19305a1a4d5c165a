#!/usr/bin/env python3
"""GPU checks of the Ampere GEMM (kernels/gemm/gemm_sm80.fly: cp.async,
ldmatrix, mma.sync) through fly.kernels.gemm(arch="sm_80"), which forces
it on an H100 as well, and through the registry's specialisations
directly for the tiles fly.kernels.gemm does not choose: D = A @ B
against a float64 PyTorch reference on fresh random inputs.

Cases: M, N and K mixed from 1, 17, 1000, 4095 and 4097 (partial tiles of
M, N and K; K not a multiple of 8, whose last 16-byte chunk of a row
straddles K), bf16 and f16 in, each output type, A and B as row-major,
transposed and padded-row views, offset outputs with padded rows, outputs
poisoned with NaN inside guard regions that must be untouched afterwards.
Operands whose rows continue past K with NaN (a view of a wider tensor)
show that nothing past K is summed: a NaN read there would reach the
result.

Tolerance (as check_gemm.py): the products are exact in f32 and summed in
f32 in an order the reference does not follow, then rounded once to the
output type: the output type's rounding (TOL of common.py) relative to
sum_k |a_ik b_kj|, plus 1e-5 of it for the f32 sum.

    check_gemm_sm80.py [--quick]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

SIZES = [1, 17, 1000, 4095, 4097]
# Every size in each position with the others moderate, a few mixes of
# the large ones, and the smallest.
SHAPES = sorted({(m, 256, 520) for m in SIZES} | {(256, n, 520) for n in SIZES} |
                {(256, 256, k) for k in SIZES} |
                {(1, 1, 1), (17, 17, 17), (4097, 4095, 1000), (1000, 4097, 4095),
                 (4095, 1000, 4097), (17, 4097, 4095)})
QUICK = [(1, 1, 1), (17, 17, 17), (256, 256, 4095), (1000, 4097, 4095), (4097, 1000, 17)]


def reference(a, b):
    a, b = a.to(torch.float64), b.to(torch.float64)
    return a @ b, a.abs() @ b.abs()


def judge(c: Checks, what: str, d: Guarded, a, b, out_dtype) -> None:
    torch.cuda.synchronize()
    ref, mag = reference(a, b)
    atol, rtol = tol(out_dtype)
    got = d.tensor.to(torch.float64)
    err = (got - ref).abs()
    allowed = rtol * ref.abs() + (1e-5 + (atol if out_dtype != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(got)
    c.ok(what, not bool(bad.any()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


def one(c: Checks, m: int, n: int, k: int, dtype, out_dtype, a_form: str, b_form: str,
        offset: int, pad: int) -> None:
    """fly.kernels.gemm(a, b, arch="sm_80") with a (M, K) and b (K, N)."""
    # A: (M, K) row-major, a transposed view of a (K, M) tensor (copied to
    # K-major by the wrapper), or the first K columns of NaN-padded rows.
    if a_form == "rows":
        a = rand((m, k), dtype)
    elif a_form == "cols":
        a = rand((k, m), dtype).t()
    else:
        a = nan_padded(m, k, dtype)
    # B: (K, N) as a transposed view of an (N, K) weight (the usual case),
    # row-major (copied by the wrapper), or a weight of NaN-padded rows.
    if b_form == "weight":
        b = rand((n, k), dtype).t()
    elif b_form == "rows":
        b = rand((k, n), dtype)
    else:
        b = nan_padded(n, k, dtype).t()
    d = Guarded((m, n), out_dtype, offset=offset, row_stride=n + pad)
    fk.gemm(a, b, out=d.tensor, arch="sm_80")
    judge(c, f"sm_80 {m}x{n}x{k} {str(dtype)[6:]}->{str(out_dtype)[6:]} a:{a_form} b:{b_form} "
          f"offset {offset} pad {pad}", d, a, b, out_dtype)


def nan_padded(rows: int, k: int, dtype):
    """rows x k random values, the first k of rows of 16-byte multiples
    that go on with NaN (what a kernel reads past K shows in its result)."""
    kp = -(-(k + 1) // 8) * 8
    x = torch.full((rows, kp), float("nan"), dtype=dtype, device="cuda")
    x[:, :k] = rand((rows, k), dtype)
    return x[:, :k]


def tile(c: Checks, consts: dict, m: int, n: int, k: int) -> None:
    """One specialisation of the registry's gemm_sm80, launched directly
    (tiles fly.kernels.gemm does not choose), on NaN-padded operands."""
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[consts["T"]]
    od = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[consts["TD"]]
    a = nan_padded(m, k, dtype)
    w = nan_padded(n, k, dtype)
    d = Guarded((m, n), od, offset=2, row_stride=n + 6)
    one_ = torch.ones(1, dtype=torch.float32, device="cuda")
    fk.kernel("gemm_sm80", consts, a.device)(a, w, d.tensor, one_, one_, 1)
    judge(c, f"gemm_sm80 {consts} {m}x{n}x{k}", d, a, w.t(), od)


def scaled(c: Checks) -> None:
    """The scales SA and SB, read on the GPU, multiply the sums."""
    a = nan_padded(300, 77, torch.bfloat16)
    w = nan_padded(200, 77, torch.bfloat16)
    sa = torch.tensor([0.37], device="cuda")
    sb = torch.tensor([1.9], device="cuda")
    d = Guarded((300, 200), torch.float32, offset=1, row_stride=203)
    consts = {"T": "bf16", "TD": "f32", "BM": 128, "BN": 128, "BK": 32, "STAGES": 4,
              "WARPS_M": 2, "WARPS_N": 2, "PAIR": False}
    fk.kernel("gemm_sm80", consts, a.device)(a, w, d.tensor, sa, sb, 1)
    s = float(torch.tensor(0.37)) * float(torch.tensor(1.9))
    torch.cuda.synchronize()
    ref, mag = reference(a, w.t())
    err = (d.tensor.to(torch.float64) - ref * s).abs()
    c.ok("gemm_sm80 scales 0.37 x 1.9", bool((err <= 1e-5 * mag * s).all()) and d.guards_intact(),
         f"max error {float(err.max()):.3g}")


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    c = Checks("gemm_sm80")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    for (m, n, k) in (QUICK if quick else SHAPES):
        one(c, m, n, k, torch.bfloat16, torch.bfloat16, "rows", "weight", 0, 0)
    # The pairs of types the registry builds ahead of time (the GPU machine
    # compiles nothing).
    for dtype, od in ((torch.float16, torch.float16), (torch.bfloat16, torch.float32),
                      (torch.float16, torch.float32)):
        one(c, 1000, 4097, 1000, dtype, od, "rows", "weight", 3, 5)
        one(c, 17, 4095, 4097, dtype, od, "rows", "weight", 1, 0)
    for a_form, b_form in (("cols", "weight"), ("rows", "rows"), ("padded", "padded"),
                           ("cols", "rows"), ("padded", "weight")):
        one(c, 333, 517, 777, torch.bfloat16, torch.bfloat16, a_form, b_form, 1, 8)
        one(c, 4097, 17, 1001, torch.float16, torch.float32, a_form, b_form, 2, 3)
    # Each tile the registry builds, straddling chunks of K included.
    for consts in (
            {"T": "bf16", "TD": "bf16", "BM": 128, "BN": 256, "BK": 32, "STAGES": 3,
             "WARPS_M": 2, "WARPS_N": 4, "PAIR": True},
            {"T": "f16", "TD": "f16", "BM": 128, "BN": 256, "BK": 32, "STAGES": 3,
             "WARPS_M": 2, "WARPS_N": 4, "PAIR": True},
            {"T": "bf16", "TD": "f32", "BM": 64, "BN": 128, "BK": 32, "STAGES": 4,
             "WARPS_M": 2, "WARPS_N": 2, "PAIR": False},
            {"T": "f16", "TD": "f16", "BM": 128, "BN": 128, "BK": 32, "STAGES": 4,
             "WARPS_M": 2, "WARPS_N": 2, "PAIR": True}):
        for (m, n, k) in ((1000, 4096, 4095), (129, 258, 33), (4097, 130, 8)):
            tile(c, consts, m, n, k)
    scaled(c)
    # Refusals, each naming what is wrong.
    a = rand((4, 8), torch.bfloat16)
    b = rand((8, 4), torch.bfloat16)
    c.raises("split_k on the Ampere path", lambda: fk.gemm(a, b, split_k=2, arch="sm_80"),
             "split_k")
    c.raises("an arch that is not one", lambda: fk.gemm(a, b, arch="sm_75"), "arch")
    c.raises("a fused epilogue on the Ampere path",
             lambda: fk.gemm(a, b, activation="relu", arch="sm_80"), "epilogue")
    if torch.cuda.get_device_capability() != (9, 0):
        c.raises("the Hopper kernel off compute capability 9.0",
                 lambda: fk.gemm(a, b, arch="sm_90a"), "9.0")
    odd = torch.empty((4, 6), dtype=torch.bfloat16, device="cuda")[:, :5]
    consts = {"T": "bf16", "TD": "bf16", "BM": 128, "BN": 128, "BK": 32, "STAGES": 4,
              "WARPS_M": 2, "WARPS_N": 2, "PAIR": True}
    one_ = torch.ones(1, device="cuda")
    c.raises("PAIR with an odd N", lambda: fk.kernel("gemm_sm80", consts, a.device)(
        a, rand((5, 8), torch.bfloat16), odd, one_, one_, 1), "N is even")
    c.raises("tensors on the CPU are refused", lambda: fk.gemm(a.cpu(), b.cpu(), arch="sm_80"), "must be on a GPU")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

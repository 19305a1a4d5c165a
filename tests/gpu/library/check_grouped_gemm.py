#!/usr/bin/env python3
"""GPU checks of kernels/gemm/gemm_grouped.fly through fly.kernels.grouped_gemm:
the grouped product of a mixture of experts, out[rows of e] = a[rows of e] @
b[e].T, against a float64 PyTorch reference group by group, on fresh random
inputs: 1, 8 and 64 experts, uneven groups, empty ones, groups of one row,
K of odd sizes (17: rows copied to a 16-byte stride), N not a multiple of
the tile, b padded along K or strided (copied), both tile heights the
wrapper picks, all three output types, outputs at odd offsets with padded
rows. offs[E - 1] stops short of M: the rows past it are poisoned and must
be left as they were, as must the guard regions around the output. Then
torch._grouped_mm, where the installed PyTorch has it, on the same inputs,
and the refusals.

Tolerance: as check_gemm.py, the output type's rounding relative to
sum_k |a_ik b_jk| (the terms' magnitude), plus 1e-5 of it for the f32 sum.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402
from fly import FlyError  # noqa: E402


def ends(sizes) -> torch.Tensor:
    """offs: the running sums of the groups' sizes, int32 on the GPU."""
    return torch.tensor(sizes, dtype=torch.int64).cumsum(0).to(torch.int32).cuda()


def weights(e: int, n: int, k: int, dtype, form: str) -> torch.Tensor:
    """b (E, N, K): contiguous, rows padded along K (a view the kernel reads
    as it is), or N contiguous (copied by the wrapper)."""
    if form == "contiguous":
        return rand((e, n, k), dtype)
    if form == "padded":
        return rand((e, n, k + 8), dtype)[:, :, :k]
    return rand((e, k, n), dtype).transpose(1, 2)


def one(c: Checks, sizes, tail: int, n: int, k: int, dtype, out_dtype, b_form: str = "contiguous",
        offset: int = 0, pad: int = 0) -> None:
    e = len(sizes)
    used = sum(sizes)
    m = used + tail
    a = rand((m, k), dtype)
    b = weights(e, n, k, dtype, b_form)
    offs = ends(sizes)
    d = Guarded((m, n), out_dtype, offset=offset, row_stride=n + pad)
    before = d.tensor[used:].clone()
    fk.grouped_gemm(a, b, offs, out=d.tensor)
    torch.cuda.synchronize()
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    ref = torch.zeros((used, n), dtype=torch.float64, device="cuda")
    mag = torch.zeros_like(ref)
    start = 0
    for g, rows in enumerate(sizes):
        ref[start:start + rows] = a64[start:start + rows] @ b64[g].T
        mag[start:start + rows] = a64[start:start + rows].abs() @ b64[g].abs().T
        start += rows
    got = d.tensor[:used].to(torch.float64)
    atol, rtol = tol(out_dtype)
    err = (got - ref).abs()
    allowed = rtol * ref.abs() + (1e-5 + (atol if out_dtype != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(got)
    # The rows past offs[E - 1] keep their poison, bit for bit.
    bits = torch.int32 if d.tensor.element_size() == 4 else torch.int16
    tail_kept = torch.equal(d.tensor[used:].view(bits), before.view(bits))
    worst = float(err.max()) if err.numel() else 0.0
    shown = sizes if len(sizes) <= 8 else f"{len(sizes)} groups of {min(sizes)}..{max(sizes)} rows"
    what = (f"{shown} +{tail} rows, N {n}, K {k} {str(dtype)[6:]}->{str(out_dtype)[6:]} "
            f"b:{b_form} offset {offset} pad {pad}")
    c.ok(what, not bool(bad.any()) and tail_kept and d.guards_intact(),
         f"max error {worst:.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "") +
         ("" if tail_kept else ", a row past offs[E - 1] changed") +
         ("" if d.guards_intact() else ", a guard changed"))


def against_torch(c: Checks) -> None:
    """The same result as torch._grouped_mm (bf16 out), where PyTorch has it."""
    if not hasattr(torch, "_grouped_mm"):
        c.ok("torch._grouped_mm", True, "not in this PyTorch: skipped")
        return
    sizes = [128, 0, 64, 320, 8, 256, 0, 248]
    a = rand((sum(sizes), 512), torch.bfloat16)
    b = rand((len(sizes), 768, 512), torch.bfloat16)
    offs = ends(sizes)
    try:
        want = torch._grouped_mm(a, b.transpose(-2, -1), offs=offs)
    except Exception as ex:  # noqa: BLE001 - an older build may refuse these shapes
        c.ok("torch._grouped_mm", True, f"refused here ({type(ex).__name__}): skipped")
        return
    got = fk.grouped_gemm(a, b, offs)
    # Both round f32 sums once to bf16, summed in their own orders: a unit
    # in the last place apart at most.
    c.close("against torch._grouped_mm", got.float(), want.float(), 1e-2, 1.6e-2)


def groups(e: int, mean: int, empty: int, seed: int) -> list[int]:
    """e group sizes about `mean` rows, uneven, `empty` of them empty and one
    of a single row."""
    g = torch.Generator().manual_seed(seed)
    sizes = (torch.rand(e, generator=g) * 2 * mean).long().tolist()
    for i in torch.randperm(e, generator=g)[:empty].tolist():
        sizes[i] = 0
    sizes[(seed * 7) % e] = 1
    return sizes


def main() -> int:
    c = Checks("grouped_gemm")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    bf, f16, f32 = torch.bfloat16, torch.float16, torch.float32
    # One expert: a plain product of the first rows (128-row tiles).
    one(c, [1000], 24, 4097, 1000, bf, bf)
    one(c, [1], 0, 256, 17, bf, bf)
    # Eight: uneven, empty groups, a group of one row, a partial last tile of
    # every group, N not a multiple of 128.
    uneven = [0, 300, 1, 0, 517, 128, 64, 2000]
    one(c, uneven, 37, 1000, 1000, bf, bf)
    one(c, uneven, 5, 4097, 17, bf, bf, "padded", 3, 5)
    one(c, uneven, 0, 264, 4096, f16, f16, "strided", 1, 8)
    one(c, uneven, 9, 1000, 1000, bf, f32, "contiguous", 1, 3)
    one(c, uneven, 9, 1001, 777, f16, f32)
    # Few rows a group: 64-row tiles.
    one(c, [3, 0, 60, 1, 65, 0, 127, 40], 11, 520, 1000, bf, bf)
    one(c, [3, 0, 60, 1, 65, 0, 127, 40], 11, 517, 1000, f16, f16, "contiguous", 1, 0)
    # Sixty-four: MoE shapes (top-2 routing), empty groups.
    one(c, groups(64, 128, 6, 1), 100, 1408, 2048, bf, bf)
    one(c, groups(64, 20, 20, 2), 3, 2048, 1000, bf, bf, "padded", 2, 6)
    one(c, groups(64, 300, 3, 3), 0, 200, 17, f16, f16)
    # K = 0: the groups' rows are zeros.
    one(c, [3, 0, 5], 2, 64, 0, bf, bf)
    # Every group empty: nothing written, the rows left as they were.
    one(c, [0, 0, 0], 50, 256, 64, bf, bf)
    against_torch(c)
    # Refusals, each naming what is wrong.
    a = rand((10, 64), bf)
    b = rand((2, 32, 64), bf)
    offs = ends([4, 6])
    c.raises("a 3-D a", lambda: fk.grouped_gemm(b, b, offs), "(M, K)")
    c.raises("a 2-D b", lambda: fk.grouped_gemm(a, b[0], offs), "(E, N, K)")
    c.raises("a and b of different K", lambda: fk.grouped_gemm(a, rand((2, 32, 63), bf), offs),
             "(E, N, K)")
    c.raises("a and b of different types", lambda: fk.grouped_gemm(a, b.half(), offs),
             "bfloat16")
    c.raises("f32 inputs", lambda: fk.grouped_gemm(a.float(), b.float(), offs), "bfloat16")
    c.raises("an int64 offs", lambda: fk.grouped_gemm(a, b, offs.long()), "int32")
    c.raises("an offs of a list", lambda: fk.grouped_gemm(a, b, [4, 6]), "int32")
    c.raises("an offs of the wrong length", lambda: fk.grouped_gemm(a, b, ends([4, 4, 2])),
             "one end per expert")
    c.raises("an offs on the CPU", lambda: fk.grouped_gemm(a, b, offs.cpu()), "GPU")
    c.raises("an out of the wrong shape",
             lambda: fk.grouped_gemm(a, b, offs, out=torch.empty((10, 33), dtype=bf,
                                                                 device="cuda")), "out is")
    c.raises("an out_dtype of int8", lambda: fk.grouped_gemm(a, b, offs, out_dtype=torch.int8),
             "out_dtype")
    try:
        fk.grouped_gemm(a.cpu(), b.cpu(), offs.cpu())
        c.ok("tensors on the CPU are refused", False, "no error raised")
    except FlyError as ex:
        c.ok("tensors on the CPU are refused", True, str(ex))
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""GPU checks of the MoE 2-stage GEMMs (kernels/moe/moe_gemm.fly) through
fly.kernels.moe_preshuffle_weights and moe_gemm_2stage, against a float64
PyTorch reference on fresh random inputs:

    y[t] = sum_k w_k W2[e_k] (silu(W1[e_k, :I] x[t]) * (W1[e_k, I:] x[t]))

Cases: tokens 1 to 333, 4 to 8 experts, 1 to 2 experts a token (some
entries -1: an expert another GPU holds, left out), hidden widths that are
and are not whole tiles (520: a partial step of K in stage 1 and a
partial tile of N in stage 2), inner widths that are not multiples of 16
(padded by moe_preshuffle_weights), bf16 and f16, float32 and the input's
type out.

Tolerance: stage 1's intermediate is rounded to the input's type, as the
reference rounds it; the rest is f32 sums in another order and the
hardware's exp in silu, which can move an intermediate to the next
representable value: 2^-7 of the terms' magnitude sum_k |w_k| |W2| |h|,
plus the output type's rounding.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402


def reference(x, w1, w2, weights, ids):
    """y (float64) and the magnitude of its terms, the intermediate rounded
    to x's type as the kernel stores it."""
    t, h = x.shape
    i = w2.shape[2]
    y = torch.zeros((t, h), dtype=torch.float64, device="cuda")
    mag = torch.zeros_like(y)
    x64 = x.double()
    for tok in range(t):
        for k in range(ids.shape[1]):
            e = int(ids[tok, k])
            if e < 0 or e >= w1.shape[0]:
                continue
            g = w1[e, :i].double() @ x64[tok]
            u = w1[e, i:].double() @ x64[tok]
            hid = (g * torch.sigmoid(g) * u).to(x.dtype).double()
            w = float(weights[tok, k])
            y[tok] += w * (w2[e].double() @ hid)
            mag[tok] += abs(w) * (w2[e].double().abs() @ hid.abs())
    return y, mag


def one(c: Checks, t: int, e: int, k: int, h: int, i: int, dtype, od, holes: bool) -> None:
    x = rand((t, h), dtype)
    w1 = rand((e, 2 * i, h), dtype, 0.1)
    w2 = rand((e, h, i), dtype, 0.1)
    logits = torch.randn((t, e), device="cuda")
    weights, ids = torch.softmax(logits, -1).topk(k, -1)
    ids = ids.to(torch.int32)
    if holes:
        ids[::3, -1] = -1
    w1p, w2p = fk.moe_preshuffle_weights(w1, w2)
    y = fk.moe_gemm_2stage(x, w1p, w2p, weights, ids, out_dtype=od)
    torch.cuda.synchronize()
    ref, mag = reference(x, w1, w2, weights, ids)
    atol, rtol = tol(od)
    err = (y.double() - ref).abs()
    allowed = rtol * ref.abs() + (2.0**-7 + (atol if od != torch.float32 else 0.0)) * mag + 1e-6
    bad = (err > allowed) | torch.isnan(y)
    c.ok(f"T {t} E {e} K {k} H {h} I {i} {str(dtype)[6:]}->{str(od)[6:]}"
         f"{' with -1 entries' if holes else ''}", not bool(bad.any()),
         f"max error {float(err.max()):.3g}" + (f", {int(bad.sum())} outside" if bad.any() else ""))


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    c = Checks("moe_gemm")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    cases = [(1, 4, 1, 128, 96, torch.bfloat16, torch.float32, False),
             (7, 8, 2, 520, 200, torch.bfloat16, torch.bfloat16, True),
             (333, 8, 2, 256, 128, torch.float16, torch.float32, False)]
    if not quick:
        cases += [(333, 4, 2, 520, 200, torch.bfloat16, torch.float32, True),
                  (64, 8, 1, 1024, 512, torch.float16, torch.float16, False),
                  (129, 6, 2, 136, 40, torch.bfloat16, torch.float32, False)]
    for case in cases:
        one(c, *case)
    x = rand((4, 128), torch.bfloat16)
    w1 = rand((2, 64, 128), torch.bfloat16)
    w2 = rand((2, 128, 32), torch.bfloat16)
    w1p, w2p = fk.moe_preshuffle_weights(w1, w2)
    ids = torch.zeros((4, 1), dtype=torch.int32, device="cuda")
    c.raises("weights of the wrong shapes", lambda: fk.moe_preshuffle_weights(w1, w1),
             "w1 is (E, 2I, H)")
    c.raises("topk of another T", lambda: fk.moe_gemm_2stage(
        x, w1p, w2p, torch.ones((3, 1), device="cuda"), ids[:3]), "(T, K) for T = 4")
    c.raises("x of another type", lambda: fk.moe_gemm_2stage(
        x.half(), w1p, w2p, torch.ones((4, 1), device="cuda"), ids), "of its type")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""GPU checks of kernels/attention/flash_attn.fly through
fly.kernels.flash_attn: flash attention's forward pass,

    out[b, i, h] = sum_j softmax_j(scale q[b, i, h] . k[b, j, h // g]) v[b, j, h // g]

(keys j <= i with causal, top-left as torch's SDPA), and the log-sum-exp
of each row, against a float64 PyTorch reference on fresh random inputs:
sequence lengths 1, 17, 300, 1000 and 4097 (partial query and key tiles,
queries and keys of different lengths), MHA, GQA and MQA, head dimensions
64 and 128, bf16 and f16, a given scale, operands given as views that are
not contiguous (copied), and outputs written into a poisoned tensor inside
guard regions that must be untouched afterwards.

Tolerance: P = exp(s - m) is rounded to the input type before P V (as
every flash attention does), so out may differ from the float64
reference by that rounding of weights summing to 1 times |v| (about
2^-8 of max |v| for bf16, 2^-11 for f16) plus the f32 sums: atol 3e-2
(bf16) and 4e-3 (f16) on inputs of unit variance; the LSE, computed in
f32 from f32 scores, within 1e-4.
"""
from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

ATOL = {torch.bfloat16: 3e-2, torch.float16: 4e-3}


def reference(q, k, v, causal: bool, scale: float):
    """float64 (out (B, Sq, H, D), lse (B, H, Sq))."""
    h, hk = q.size(2), k.size(2)
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    kd, vd = kd.repeat_interleave(h // hk, 1), vd.repeat_interleave(h // hk, 1)
    s = qd @ kd.transpose(-1, -2) * scale
    if causal:
        keep = torch.ones(q.size(1), k.size(1), dtype=torch.bool, device="cuda").tril()
        s = s.masked_fill(~keep, float("-inf"))
    return (torch.softmax(s, -1) @ vd).transpose(1, 2), torch.logsumexp(s, -1)


def one(c: Checks, b: int, sq: int, sk: int, h: int, hk: int, d: int, dt=torch.bfloat16,
        causal: bool = False, scale=None, views: bool = False, given_out: bool = False) -> None:
    q = torch.randn(b, sq, h, d, device="cuda", dtype=dt)
    k = torch.randn(b, sk, hk, d, device="cuda", dtype=dt)
    v = torch.randn(b, sk, hk, d, device="cuda", dtype=dt)
    if views:
        # (B, H, S, D) tensors seen as (B, S, H, D): not contiguous.
        q, k, v = (t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v))
    guard = Guarded((b, sq, h, d), dt, offset=8) if given_out else None
    out, lse = fk.flash_attn(q, k, v, causal=causal, softmax_scale=scale,
                             out=guard.tensor if guard else None, return_lse=True)
    torch.cuda.synchronize()
    ro, rl = reference(q, k, v, causal, scale if scale is not None else 1 / math.sqrt(d))
    eo = (out.double() - ro).abs()
    el = (lse.double() - rl).abs()
    good = (not torch.isnan(out).any() and float(eo.max()) <= ATOL[dt] and
            float(el.max()) <= 1e-4 and (guard is None or guard.guards_intact()))
    what = (f"{b}x{sq}x{sk} heads {h}/{hk} D {d} {str(dt)[6:]}" + (" causal" if causal else "")
            + (f" scale {scale}" if scale is not None else "") + (" views" if views else "")
            + (" out given" if given_out else ""))
    c.ok(what, good, f"max |out err| {float(eo.max()):.3g}, max |lse err| {float(el.max()):.3g}"
         + ("" if guard is None or guard.guards_intact() else ", a guard changed"))


def refusals(c: Checks) -> None:
    q = torch.randn(1, 8, 2, 128, device="cuda", dtype=torch.bfloat16)
    fa = fk.flash_attn
    c.raises("D 96", lambda: fa(q[..., :96], q[..., :96], q[..., :96]), "64 or 128")
    c.raises("k of float16", lambda: fa(q, q.half(), q), "bfloat16 or all float16")
    c.raises("float32", lambda: fa(q.float(), q.float(), q.float()), "bfloat16 or all float16")
    c.raises("3 heads over 2", lambda: fa(torch.randn(1, 8, 3, 128, device="cuda",
                                                        dtype=torch.bfloat16), q, q), "whole number")
    c.raises("k and v of different shapes", lambda: fa(q, q, q[:, :4]), "(batch, Sk, HK, D)")
    c.raises("no keys", lambda: fa(q, q[:, :0], q[:, :0]), "no keys")
    c.raises("q of three dimensions", lambda: fa(q[0], q, q), "(batch, seq, heads, D)")
    c.raises("on the CPU", lambda: fa(q.cpu(), q.cpu(), q.cpu()), "GPU")
    c.raises("out of another type", lambda: fa(q, q, q, out=torch.empty_like(q).half()), "out is")


def main() -> int:
    c = Checks("flash_attn")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    for dt in (torch.bfloat16, torch.float16):
        for causal in (False, True):
            for (b, sq, sk, h, hk, d) in ((1, 1, 1, 1, 1, 128), (2, 17, 17, 4, 2, 64),
                                          (1, 1000, 1000, 2, 2, 128), (2, 300, 777, 4, 1, 128),
                                          (1, 4097, 4097, 2, 2, 64), (3, 128, 256, 8, 8, 128),
                                          (2, 1000, 17, 2, 1, 64)):
                one(c, b, sq, sk, h, hk, d, dt, causal)
    one(c, 2, 300, 300, 4, 2, 128, scale=0.3)
    one(c, 2, 300, 520, 4, 2, 128, causal=True, views=True)
    one(c, 2, 333, 333, 4, 4, 64, torch.float16, given_out=True)
    one(c, 1, 17, 1000, 2, 1, 128, causal=True, given_out=True)
    refusals(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

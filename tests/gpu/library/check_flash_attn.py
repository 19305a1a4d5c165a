#!/usr/bin/env python3
"""GPU checks of kernels/attention/flash_attn.fly (Hopper) and
flash_attn_sm80.fly (the Ampere path, arch="sm_80") through
fly.kernels.flash_attn: flash attention's forward pass,

    out[b, i, h] = sum_j softmax_j(scale q[b, i, h] . k[b, j, h // g]) v[b, j, h // g]

(keys j <= i with causal, top-left as torch's SDPA), and the log-sum-exp
of each row, against a float64 PyTorch reference on fresh random inputs:
sequence lengths 1, 17, 300, 1000 and 4097 (partial query and key tiles,
queries and keys of different lengths), MHA, GQA and MQA, head dimensions
64, 128 and 256 (Hopper), bf16 and f16, a given scale, operands given as
views that are not contiguous (copied), and outputs written into a
poisoned tensor inside guard regions that must be untouched afterwards.

Tolerance: P = exp(s - m) is rounded to the input type before P V (as
every flash attention does), so out may differ from the float64
reference by that rounding of weights summing to 1 times |v| (about
2^-8 of max |v| for bf16, 2^-11 for f16) plus the f32 sums: atol 3e-2
(bf16) and 4e-3 (f16) on inputs of unit variance; the LSE, computed in
f32 from f32 scores, within 1e-4.

flash_attn_varlen: sequences of lengths 0 to 4097 packed together, with
queries and no keys (zeros, lse -1e30) and keys and no queries, each
against its own reference, on both kernels.
"""
from __future__ import annotations

import itertools
import math
import os
import random
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
        causal: bool = False, scale=None, views: bool = False, given_out: bool = False,
        arch=None) -> None:
    q = torch.randn(b, sq, h, d, device="cuda", dtype=dt)
    k = torch.randn(b, sk, hk, d, device="cuda", dtype=dt)
    v = torch.randn(b, sk, hk, d, device="cuda", dtype=dt)
    if views:
        # (B, H, S, D) tensors seen as (B, S, H, D): not contiguous.
        q, k, v = (t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v))
    guard = Guarded((b, sq, h, d), dt, offset=8) if given_out else None
    out, lse = fk.flash_attn(q, k, v, causal=causal, softmax_scale=scale,
                             out=guard.tensor if guard else None, return_lse=True, arch=arch)
    torch.cuda.synchronize()
    ro, rl = reference(q, k, v, causal, scale if scale is not None else 1 / math.sqrt(d))
    eo = (out.double() - ro).abs()
    el = (lse.double() - rl).abs()
    good = (not torch.isnan(out).any() and float(eo.max()) <= ATOL[dt] and
            float(el.max()) <= 1e-4 and (guard is None or guard.guards_intact()))
    what = (f"{b}x{sq}x{sk} heads {h}/{hk} D {d} {str(dt)[6:]}" + (" causal" if causal else "")
            + (f" scale {scale}" if scale is not None else "") + (" views" if views else "")
            + (" out given" if given_out else "") + (f" {arch}" if arch else ""))
    c.ok(what, good, f"max |out err| {float(eo.max()):.3g}, max |lse err| {float(el.max()):.3g}"
         + ("" if guard is None or guard.guards_intact() else ", a guard changed"))


def one_varlen(c: Checks, lens_q, lens_k, h: int, hk: int, d: int, dt=torch.bfloat16,
               causal: bool = False, arch=None, given_max: bool = True) -> None:
    """flash_attn_varlen on sequences of lengths lens_q (queries) and lens_k
    (keys) packed together, each against its own float64 reference; a
    sequence with no keys must give zeros (lse -1e30)."""
    tq, tk = sum(lens_q), sum(lens_k)
    q = torch.randn(tq, h, d, device="cuda", dtype=dt)
    k = torch.randn(tk, hk, d, device="cuda", dtype=dt)
    v = torch.randn(tk, hk, d, device="cuda", dtype=dt)
    cu_q, cu_k = (torch.tensor([0] + list(itertools.accumulate(n)), device="cuda",
                               dtype=torch.int32) for n in (lens_q, lens_k))
    guard = Guarded((tq, h, d), dt, offset=8)
    out, lse = fk.flash_attn_varlen(q, k, v, cu_q, cu_k, max(lens_q) if given_max else None,
                                    max(lens_k) if given_max else None, causal=causal,
                                    out=guard.tensor, return_lse=True, arch=arch)
    torch.cuda.synchronize()
    eo = el = 0.0
    good = not torch.isnan(out).any() and guard.guards_intact()
    for i, (a, e) in enumerate(zip(cu_q.tolist()[:-1], cu_k.tolist()[:-1])):
        nq, nk = lens_q[i], lens_k[i]
        if nq == 0:
            continue
        if nk == 0:
            good = (good and bool((out[a:a + nq] == 0).all())
                    and bool((lse[:, a:a + nq] == -1e30).all()))
            continue
        ro, rl = reference(q[None, a:a + nq], k[None, e:e + nk], v[None, e:e + nk], causal,
                           1 / math.sqrt(d))
        eo = max(eo, float((out[None, a:a + nq].double() - ro).abs().max()))
        el = max(el, float((lse[None, :, a:a + nq].double() - rl).abs().max()))
    good = good and eo <= ATOL[dt] and el <= 1e-4
    c.ok(f"varlen q {lens_q} k {lens_k} heads {h}/{hk} D {d} {str(dt)[6:]}"
         + (" causal" if causal else "") + (f" {arch}" if arch else "")
         + ("" if given_max else " max_seqlen read"), good,
         f"max |out err| {eo:.3g}, max |lse err| {el:.3g}")


def refusals(c: Checks) -> None:
    q = torch.randn(1, 8, 2, 128, device="cuda", dtype=torch.bfloat16)
    fa = fk.flash_attn
    c.raises("D 96", lambda: fa(q[..., :96], q[..., :96], q[..., :96]), "64, 128 or 256")
    q256 = torch.randn(1, 8, 2, 256, device="cuda", dtype=torch.bfloat16)
    c.raises("D 256 on the Ampere kernel", lambda: fa(q256, q256, q256, arch="sm_80"), "Hopper")
    c.raises("k of float16", lambda: fa(q, q.half(), q), "bfloat16 or all float16")
    c.raises("float32", lambda: fa(q.float(), q.float(), q.float()), "bfloat16 or all float16")
    c.raises("3 heads over 2", lambda: fa(torch.randn(1, 8, 3, 128, device="cuda",
                                                        dtype=torch.bfloat16), q, q), "whole number")
    c.raises("k and v of different shapes", lambda: fa(q, q, q[:, :4]), "(batch, Sk, HK, D)")
    c.raises("no keys", lambda: fa(q, q[:, :0], q[:, :0]), "no keys")
    c.raises("q of three dimensions", lambda: fa(q[0], q, q), "(batch, seq, heads, D)")
    c.raises("on the CPU", lambda: fa(q.cpu(), q.cpu(), q.cpu()), "GPU")
    c.raises("out of another type", lambda: fa(q, q, q, out=torch.empty_like(q).half()), "out is")
    c.raises("arch sm_70", lambda: fa(q, q, q, arch="sm_70"), "arch is")
    c.raises("a negative scale", lambda: fa(q, q, q, softmax_scale=-0.1), "positive finite")
    c.raises("a scale of 0", lambda: fa(q, q, q, softmax_scale=0.0), "positive finite")
    cu = torch.tensor([0, 8], device="cuda", dtype=torch.int32)
    fv = fk.flash_attn_varlen
    c.raises("varlen q of four dimensions", lambda: fv(q, q[0], q[0], cu, cu),
             "(tokens, heads, D)")
    c.raises("varlen offsets of int64", lambda: fv(q[0], q[0], q[0], cu.long(), cu), "int32")
    c.raises("varlen offsets of two batches for one", lambda: fv(
        q[0], q[0], q[0], cu, torch.tensor([0, 4, 8], device="cuda", dtype=torch.int32)),
        "B + 1 offsets each")


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
    # Many tiles a block: Hopper's blocks (one a multiprocessor) walk the
    # tiles (causal: pairs of row tiles, to 4K rows at D 128 and 1K at D
    # 64; a block a tile past that), their K and V stages, Q's buffer and
    # the consumers' turns running on from tile to tile.
    one(c, 4, 2000, 2000, 16, 4, 128)
    one(c, 3, 1500, 1700, 16, 8, 64, torch.float16)
    one(c, 2, 3000, 2500, 16, 8, 64)    # tiles of 192 rows, three consumers
    one(c, 4, 2000, 2000, 16, 4, 128, causal=True)
    one(c, 8, 1000, 1000, 16, 16, 64, causal=True)
    one(c, 1, 5000, 5000, 8, 2, 128, causal=True)
    # Head dimension 256 (Hopper: 64-key steps in two stages).
    for causal in (False, True):
        one(c, 2, 300, 777, 4, 2, 256, causal=causal)
        one(c, 1, 1000, 1000, 2, 1, 256, torch.float16, causal=causal)
    one(c, 1, 17, 17, 1, 1, 256, given_out=True)
    # The Ampere kernel (flash_attn_sm80.fly), as other GPUs run it.
    for dt in (torch.bfloat16, torch.float16):
        for causal in (False, True):
            for (b, sq, sk, h, hk, d) in ((1, 1, 1, 1, 1, 128), (2, 17, 17, 4, 2, 64),
                                          (2, 300, 777, 4, 1, 128), (1, 4097, 4097, 2, 2, 64),
                                          (3, 128, 256, 8, 8, 128), (2, 1000, 17, 2, 1, 64)):
                one(c, b, sq, sk, h, hk, d, dt, causal, arch="sm_80")
    one(c, 2, 300, 520, 4, 2, 128, causal=True, views=True, arch="sm_80")
    one(c, 2, 333, 333, 4, 4, 64, torch.float16, given_out=True, scale=0.3, arch="sm_80")
    # Sequences of any lengths packed together (flash_attn_varlen), on both kernels.
    for arch in (None, "sm_80"):
        for causal in (False, True):
            one_varlen(c, [1, 300, 17, 1000], [1, 300, 777, 1000], 4, 2, 128, causal=causal,
                       arch=arch)
            one_varlen(c, [129, 0, 64, 4097], [129, 5, 0, 4097], 2, 1, 64, torch.float16,
                       causal=causal, arch=arch)
        one_varlen(c, [7, 200], [300, 3], 8, 8, 128, arch=arch, given_max=False)
    one_varlen(c, [100, 333], [257, 1], 4, 4, 256, causal=True)
    # 48 sequences of 0 to 700 queries and keys: tiles past a sequence's
    # end and sequences without keys met on the persistent walk.
    rng = random.Random(22)
    lens_q = [rng.choice((0, 1, rng.randrange(700))) for _ in range(48)]
    lens_k = [rng.choice((0, 1, rng.randrange(700))) for _ in range(48)]
    for causal in (False, True):
        one_varlen(c, lens_q, lens_k, 16, 4, 128, causal=causal)
    one_varlen(c, lens_q, lens_k, 8, 8, 64, torch.float16)
    refusals(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

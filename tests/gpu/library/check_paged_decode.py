#!/usr/bin/env python3
"""GPU checks of fly.kernels.paged_attention_decode: one query token per
sequence against a paged KV cache,

    out[b, h] = sum_t softmax_t(scale q[b, h] . K[b, t]) V[b, t],  t < context_lens[b]

with K[b, t] = k_scale k_cache[block_tables[b, t // BS], t % BS, h // g]
(V likewise), against a float64 PyTorch reference that gathers the pages,
on fresh random inputs: contexts 1, 17, 1000 and 4097 and a batch that
mixes them with contexts of 0 (rows of zeros), groups of 1, 4, 8, 16 and
20 query heads a key head, D 64 and 128, blocks of 16 and 32 tokens, bf16
and f16 caches and float8_e4m3fn caches with scales, the context cut into
1, 7 or 64 splits and the wrapper's own choice, a given scale and
max_context, q as views that are not contiguous, and outputs written
into a poisoned tensor with padded rows inside guard regions that must be
untouched afterwards.

A wrong read shows: the block tables are shuffled (a sequence's blocks lie
anywhere in the cache), the cache has blocks no sequence owns, and every
slot no sequence owns, the tails of last blocks included, holds NaN. So
no token past a context may reach the sums, not even as 0 x NaN. A
table's entries past its sequence's blocks point at those NaN blocks or
hold -1 or 2^30.

Tolerance: P = exp(s - m) is rounded to the 16-bit type before P V (as
every flash decoding does), so out may differ from the float64 reference
by that rounding of weights summing to 1 times |V| (about 2^-8 of max |V|
for bf16, 2^-11 for f16) plus the f32 sums: atol 2e-2 (bf16) and 3e-3
(f16) times the root mean square of the dequantised V read, which is
about 1 here (unit-variance V; an fp8 cache holds randn / scale, so its
dequantised values are unit-variance too, their quantisation error being
in the reference as well). An fp8 cache's values are taken as exact in
the 16-bit type (e4m3 converts exactly to bf16 and f16); a kernel that
rounded q to fp8 would need more.
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

ATOL = {torch.bfloat16: 2e-2, torch.float16: 3e-3}
FP8 = torch.float8_e4m3fn
MIX = [0, 1, 17, 1000, 4097, 33, 0, 512]  # a batch of 8 contexts, two of them empty
SPARE_BLOCKS = 7   # cache blocks no sequence owns
SPARE_ENTRIES = 3  # table entries past the longest sequence's blocks


def fill(shape, cache_dt, scale: float):
    """Unit-variance random values stored as cache_dt: for fp8, randn / scale
    rounded to e4m3 (the real values are stored * scale)."""
    x = torch.randn(shape, device="cuda")
    if cache_dt == FP8:
        return (x / scale).clamp(-448, 448).to(FP8)
    return x.to(cache_dt)


def poison(cache, owned) -> None:
    """NaN in every slot (block, row) where owned is False."""
    if cache.element_size() == 1:
        cache.view(torch.uint8)[~owned] = 0x7F  # e4m3fn's NaN
    else:
        cache[~owned] = float("nan")


def gather(cache, blocks, rows, scale: float):
    """float64 cache[blocks, rows] * scale: (n, HK, D)."""
    if cache.element_size() == 1:  # indexing by the bytes, then converting
        return cache.view(torch.uint8)[blocks, rows].view(cache.dtype).double() * scale
    return cache[blocks, rows].double() * scale


def paged(lens, bs: int, hk: int, d: int, cache_dt, k_scale: float, v_scale: float):
    """(k_cache, v_cache, block_tables, pages): caches of shuffled blocks as
    the module docstring says, and pages[b] the float64 (K, V) of sequence
    b's tokens (None for a context of 0)."""
    counts = [-(-n // bs) for n in lens]
    nb = sum(counts) + SPARE_BLOCKS
    maxb = max(counts) + SPARE_ENTRIES
    k = fill((nb, bs, hk, d), cache_dt, k_scale)
    v = fill((nb, bs, hk, d), cache_dt, v_scale)
    perm = torch.randperm(nb, device="cuda")
    spare = perm[sum(counts):]
    # Entries past a sequence's blocks: NaN blocks, -1 or 2^30.
    tables = spare[torch.randint(0, SPARE_BLOCKS, (len(lens), maxb), device="cuda")]
    junk = torch.rand(tables.shape, device="cuda")
    tables = torch.where(junk < 0.25, -1, torch.where(junk < 0.5, 2**30, tables))
    owned = torch.zeros(nb, bs, dtype=torch.bool, device="cuda")
    pages, start = [], 0
    for b, (n, cnt) in enumerate(zip(lens, counts)):
        blocks = perm[start:start + cnt]
        start += cnt
        tables[b, :cnt] = blocks
        t = torch.arange(n, device="cuda")
        owned[blocks[t // bs], t % bs] = True
        pages.append((blocks[t // bs], t % bs) if n else None)
    pages = [None if p is None else (gather(k, *p, k_scale), gather(v, *p, v_scale))
             for p in pages]
    poison(k, owned)
    poison(v, owned)
    return k, v, tables.to(torch.int32), pages


def reference(q, pages, hk: int, scale: float):
    """float64 (B, HQ, D); zeros for a sequence of no tokens."""
    b, hq, d = q.shape
    out = torch.zeros(b, hq, d, dtype=torch.float64, device="cuda")
    for i, p in enumerate(pages):
        if p is None:
            continue
        k, v = (x.repeat_interleave(hq // hk, 1) for x in p)  # (n, HQ, D)
        s = torch.einsum("hd,thd->ht", q[i].double(), k) * scale
        out[i] = torch.einsum("ht,thd->hd", torch.softmax(s, -1), v)
    return out


def make_q(b: int, hq: int, hk: int, d: int, dt, view: str):
    """q (B, HQ, D): contiguous; "fused" the query part of a (B, HQ + 2 HK, D)
    projection; "heads-major" a (HQ, B, D) tensor seen as (B, HQ, D)."""
    if view == "fused":
        return torch.randn(b, hq + 2 * hk, d, device="cuda", dtype=dt)[:, :hq]
    if view == "heads-major":
        return torch.randn(hq, b, d, device="cuda", dtype=dt).transpose(0, 1)
    return torch.randn(b, hq, d, device="cuda", dtype=dt)


def one(c: Checks, lens, hq: int, hk: int, d: int = 128, bs: int = 16, dt=torch.bfloat16,
        fp8: bool = False, splits=None, scale=None, given_out: bool = False, view: str = "",
        max_context: bool = False) -> None:
    b = len(lens)
    k_scale, v_scale = (0.05, 0.02) if fp8 else (1.0, 1.0)
    kc, vc, tables, pages = paged(lens, bs, hk, d, FP8 if fp8 else dt, k_scale, v_scale)
    q = make_q(b, hq, hk, d, dt, view)
    ctx = torch.tensor(lens, dtype=torch.int32, device="cuda")
    guard = Guarded((b, hq, d), dt, offset=8, row_stride=d + 8) if given_out else None
    out = fk.paged_attention_decode(q, kc, vc, tables, ctx, softmax_scale=scale,
                                    k_scale=k_scale, v_scale=v_scale,
                                    max_context=max(lens) if max_context else None,
                                    splits=splits, out=guard.tensor if guard else None)
    if guard is not None:
        out = guard.tensor
    torch.cuda.synchronize()
    ref = reference(q, pages, hk, scale if scale is not None else 1 / math.sqrt(d))
    vs = [p[1] for p in pages if p is not None]
    rms = float(torch.cat(vs).pow(2).mean().sqrt()) if vs else 1.0
    atol = ATOL[dt] * rms
    err = float((out.double() - ref).abs().max())
    empty = [i for i, n in enumerate(lens) if n == 0]
    zeros = all(bool((out[i] == 0).all()) for i in empty)
    intact = guard is None or guard.guards_intact()
    good = not bool(torch.isnan(out).any()) and err <= atol and zeros and intact
    shown = ",".join(map(str, lens)) if len(set(lens)) > 1 else f"{b}x{lens[0]}"
    what = (f"contexts {shown} heads {hq}/{hk} D {d} BS {bs} {str(dt)[6:]}"
            + (" fp8 cache" if fp8 else "") + (f" splits {splits}" if splits else "")
            + (f" scale {scale}" if scale is not None else "") + (f" q {view}" if view else "")
            + (" max_context" if max_context else "") + (" out given" if given_out else ""))
    c.ok(what, good, f"max |err| {err:.3g}, atol {atol:.3g}"
         + ("" if zeros else ", an empty context's row is not zeros")
         + ("" if intact else ", a guard changed"))


def refusals(c: Checks) -> None:
    """Each a call that must raise, and a word its message must hold."""
    def args(b=2, hq=8, hk=2, d=128, dt=torch.bfloat16, device="cuda"):
        q = torch.randn(b, hq, d, device=device, dtype=dt)
        kc = torch.randn(6, 16, hk, d, device=device, dtype=torch.bfloat16)
        tables = torch.arange(6, device=device, dtype=torch.int32).view(2, 3)[:b]
        ctx = torch.full((b,), 40, device=device, dtype=torch.int32)
        return q, kc, kc.clone(), tables, ctx

    def misaligned(x):
        """x's shape and values, starting 2 bytes past an allocation."""
        m = torch.empty(x.numel() + 1, device="cuda", dtype=x.dtype)[1:].view(x.shape)
        return m.copy_(x)

    pad = fk.paged_attention_decode
    q, kc, vc, tables, ctx = args()
    for what, fn, word in (
        ("q of float32", lambda: pad(*args(dt=torch.float32)), "bfloat16"),
        ("D 96", lambda: pad(*args(d=96)), "64 or 128"),
        ("v_cache of another shape", lambda: pad(q, kc, vc[:, :8], tables, ctx), "v_cache"),
        ("3 heads over 2", lambda: pad(*args(hq=3)), "multiple"),
        ("block_tables of int64", lambda: pad(q, kc, vc, tables.long(), ctx), "int32"),
        ("context_lens of 1 for 2 sequences", lambda: pad(q, kc, vc, tables, ctx[:1]),
         "context_lens"),
        ("on the CPU", lambda: pad(*args(device="cpu")), "GPU"),
        ("blocks of 96 tokens", lambda: pad(q, kc.view(1, 96, 2, 128), vc.view(1, 96, 2, 128),
                                            tables, ctx), "16 or 32"),
        ("caches of float16 for bfloat16 q", lambda: pad(q, kc.half(), vc.half(), tables, ctx),
         "float8_e4m3fn"),
        ("a cache that starts off 16 bytes", lambda: pad(q, misaligned(kc), vc, tables, ctx),
         "16 bytes"),
        ("splits of 0", lambda: pad(q, kc, vc, tables, ctx, splits=0), "splits"),
        ("out of another shape", lambda: pad(q, kc, vc, tables, ctx, out=q[:1]), "out is"),
    ):
        c.raises(what, fn, word)


def main() -> int:
    c = Checks("paged_decode")
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    print(f"seed {seed}")
    # Contexts, one length a batch.
    for n in (1, 17, 1000, 4097):
        one(c, [n, n - 1 if n > 1 else 1], 32, 8)
    # Groups of 1, 4, 8, 16 and 20 query heads a key head, on the mixed batch.
    for hq, hk in ((8, 8), (32, 8), (64, 8), (32, 2), (40, 2)):
        one(c, MIX, hq, hk)
    one(c, MIX, 32, 8, dt=torch.float16)
    one(c, MIX, 40, 2, dt=torch.float16)
    # Head dimensions and block sizes.
    for d, bs in ((64, 16), (64, 32), (128, 32)):
        for dt in (torch.bfloat16, torch.float16):
            one(c, MIX, 32, 8, d, bs, dt)
    # fp8 caches with scales.
    one(c, MIX, 32, 8, 128, 16, torch.bfloat16, fp8=True)
    one(c, MIX, 64, 8, 64, 32, torch.bfloat16, fp8=True)
    one(c, MIX, 40, 2, 128, 32, torch.float16, fp8=True)
    one(c, MIX, 8, 8, 64, 16, torch.float16, fp8=True)
    one(c, [4097, 1000], 32, 8, 128, 16, torch.bfloat16, fp8=True)
    # Splits forced: one (a single launch), 7 and 64 (empty splits for the
    # short contexts; a second launch combines them).
    for splits in (1, 7, 64):
        one(c, MIX, 32, 8, splits=splits)
        one(c, MIX, 32, 8, 128, 16, torch.float16, fp8=True, splits=splits)
    # Outputs given (padded rows between guards), q as views, scale, max_context.
    one(c, MIX, 32, 8, given_out=True)
    one(c, MIX, 32, 8, 128, 16, torch.bfloat16, splits=1, given_out=True)
    one(c, MIX, 64, 8, 64, 32, torch.float16, fp8=True, splits=7, given_out=True)
    one(c, MIX, 32, 8, view="fused")
    one(c, MIX, 40, 2, 64, 16, torch.float16, fp8=True, view="heads-major")
    one(c, MIX, 32, 8, scale=0.3)
    one(c, MIX, 32, 8, 128, 32, torch.float16, max_context=True)
    refusals(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

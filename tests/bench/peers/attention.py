"""Peers of kernels/attention: fused_rope_cache (rotary embedding of q and k
in place, then k and v written into a paged KV cache) against PyTorch eager
(the rotation with tensor ops, the cache write with index_copy_, as a
model's native path does it) and a Triton kernel written for this
benchmark in the style of Triton's tutorials: one program per token, its
heads as the rows of a 2-D block, the pairs' halves as two loads, f32
arithmetic.

The inputs are as a LLaMA-style layer has them: q, k and v slices of one
fused QKV projection [T, (HQ + 2 HK) * D], a bf16 cos/sin table, caches of
blocks of 16 tokens and every token given a distinct random slot."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from peers import Case

import fly.kernels as fk

TOKENS = [1, 32, 512, 4096, 16384]
HEADS = [(32, 8), (64, 8)]      # (query heads, key/value heads)
D = 128
BLOCK_SIZE = 16                 # tokens of a cache block
MAX_POSITION = 8192
QUICK = [(1, 32, 8), (4096, 32, 8), (16384, 64, 8)]


def shapes(quick: bool):
    return QUICK if quick else [(t, hq, hk) for t in TOKENS for hq, hk in HEADS]


@triton.jit
def _rope_cache_fwd(Q, K, V, POS, COS_SIN, K_CACHE, V_CACHE, SLOT,
                    stride_qt, stride_qh, stride_kt, stride_kh, stride_vt, stride_vh,
                    stride_cs, stride_cb, stride_co, stride_ch, block_size,
                    HQ: tl.constexpr, HK: tl.constexpr, D: tl.constexpr, HALF: tl.constexpr,
                    IS_NEOX: tl.constexpr, BLOCK_HQ: tl.constexpr, BLOCK_HK: tl.constexpr):
    t = tl.program_id(0)
    pos = tl.load(POS + t)
    slot = tl.load(SLOT + t)
    r = tl.arange(0, HALF)                       # the pairs
    cos = tl.load(COS_SIN + pos * stride_cs + r).to(tl.float32)[None, :]
    sin = tl.load(COS_SIN + pos * stride_cs + HALF + r).to(tl.float32)[None, :]
    if IS_NEOX:
        i1 = r
        i2 = r + HALF
    else:
        i1 = 2 * r
        i2 = 2 * r + 1

    # The queries: heads x pairs.
    hq = tl.arange(0, BLOCK_HQ)[:, None]
    mq = hq < HQ
    qp = Q + t * stride_qt + hq * stride_qh
    x1 = tl.load(qp + i1[None, :], mask=mq, other=0.0).to(tl.float32)
    x2 = tl.load(qp + i2[None, :], mask=mq, other=0.0).to(tl.float32)
    tl.store(qp + i1[None, :], (x1 * cos - x2 * sin).to(Q.dtype.element_ty), mask=mq)
    tl.store(qp + i2[None, :], (x2 * cos + x1 * sin).to(Q.dtype.element_ty), mask=mq)

    # The keys, rotated in place and into the cache at the token's slot.
    hk = tl.arange(0, BLOCK_HK)[:, None]
    mk = hk < HK
    cached = mk & (slot >= 0)
    kp = K + t * stride_kt + hk * stride_kh
    y1 = tl.load(kp + i1[None, :], mask=mk, other=0.0).to(tl.float32)
    y2 = tl.load(kp + i2[None, :], mask=mk, other=0.0).to(tl.float32)
    o1 = (y1 * cos - y2 * sin).to(K.dtype.element_ty)
    o2 = (y2 * cos + y1 * sin).to(K.dtype.element_ty)
    tl.store(kp + i1[None, :], o1, mask=mk)
    tl.store(kp + i2[None, :], o2, mask=mk)
    at = (slot // block_size) * stride_cb + (slot % block_size) * stride_co + hk * stride_ch
    tl.store(K_CACHE + at + i1[None, :], o1, mask=cached)
    tl.store(K_CACHE + at + i2[None, :], o2, mask=cached)

    # The values, copied into the cache.
    d = tl.arange(0, D)[None, :]
    v = tl.load(V + t * stride_vt + hk * stride_vh + d, mask=cached, other=0.0)
    tl.store(V_CACHE + at + d, v, mask=cached)


def triton_rope_cache(q, k, v, pos, cos_sin, k_cache, v_cache, slots, is_neox=True):
    t, hq, d = q.shape
    hk = k.shape[1]
    assert cos_sin.shape[1] == d, "this peer rotates whole heads"
    _rope_cache_fwd[(t,)](q, k, v, pos, cos_sin, k_cache, v_cache, slots,
                          q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0),
                          v.stride(1), cos_sin.stride(0), k_cache.stride(0), k_cache.stride(1),
                          k_cache.stride(2), k_cache.size(1), HQ=hq, HK=hk, D=d,
                          HALF=cos_sin.shape[1] // 2, IS_NEOX=is_neox,
                          BLOCK_HQ=triton.next_power_of_2(hq), BLOCK_HK=triton.next_power_of_2(hk),
                          num_warps=4)


def torch_rope_cache(q, k, v, pos, cos_sin, k_cache, v_cache, slots, is_neox=True):
    rot = cos_sin.shape[1]
    half = rot // 2
    cos, sin = cos_sin.index_select(0, pos).unsqueeze(1).chunk(2, dim=-1)

    def rotate(x):
        r = x[..., :rot]
        if is_neox:
            x1, x2 = r[..., :half], r[..., half:]
            r.copy_(torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1))
        else:
            x1, x2 = r[..., 0::2], r[..., 1::2]
            r.copy_(torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2))

    rotate(q)
    rotate(k)
    hk, d = k.shape[1], k.shape[2]
    k_cache.view(-1, hk, d).index_copy_(0, slots, k)
    v_cache.view(-1, hk, d).index_copy_(0, slots, v)


def cos_sin_cache(rot: int, dtype):
    inv_freq = 1.0 / 10000.0 ** (torch.arange(0, rot, 2, device="cuda", dtype=torch.float32) / rot)
    freqs = torch.outer(torch.arange(MAX_POSITION, device="cuda", dtype=torch.float32), inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(dtype)


def cases(quick: bool) -> list[Case]:
    out = []
    dt = torch.bfloat16
    cos_sin = cos_sin_cache(D, dt)  # read only: one table for every copy, as in a model
    for t, hq, hk in shapes(quick):
        blocks = (t + BLOCK_SIZE - 1) // BLOCK_SIZE * 2   # a cache twice the tokens

        def make(t=t, hq=hq, hk=hk, blocks=blocks):
            qkv = torch.randn(t, (hq + 2 * hk) * D, device="cuda", dtype=dt)
            q = qkv[:, :hq * D].view(t, hq, D)
            k = qkv[:, hq * D:(hq + hk) * D].view(t, hk, D)
            v = qkv[:, (hq + hk) * D:].view(t, hk, D)
            pos = torch.randint(0, MAX_POSITION, (t,), device="cuda", dtype=torch.int64)
            slots = torch.randperm(blocks * BLOCK_SIZE, device="cuda")[:t].to(torch.int64)
            k_cache = torch.empty(blocks, BLOCK_SIZE, hk, D, device="cuda", dtype=dt)
            v_cache = torch.empty_like(k_cache)
            return (q, k, v, pos, cos_sin, k_cache, v_cache, slots)

        e = 2  # bytes of a bf16
        moved = (t * hq * D * e * 2         # q read and written
                 + t * hk * D * e * 2       # k read and written
                 + t * hk * D * e           # v read
                 + t * hk * D * e * 2       # k and v written to the caches
                 + t * 8 * 2                # positions and slots
                 + t * D * e)               # a cos/sin row a token
        out.append(Case(
            "fused_rope_cache", f"{t}x{hq}/{hk}x{D}", moved, make, {
                "fly": lambda a: fk.fused_rope_cache(*a),
                "torch": lambda a: torch_rope_cache(*a),
                "triton": lambda a: triton_rope_cache(*a),
            }))
    return out

"""A Triton flash attention, forward pass: the peer of fly.kernels.flash_attn
in tests/bench/attention.py, written for this benchmark after Triton's
fused-attention tutorial (FlashAttention-2's forward). One program per
BLOCK_M query rows of one (batch, head); the keys and values stream past
BLOCK_N at a time through an online softmax in base 2 (scores times
scale * log2(e), exp2), f32 sums, P rounded to the input type for P V.
With causal, the tutorial's two stages: the blocks left of the diagonal
without masks, then the diagonal's blocks masked. Configurations are
autotuned as the tutorial does on Hopper (BLOCK_M 128/64, BLOCK_N 64/128,
4 or 8 warps, 3 or 4 stages), keyed on the lengths, D and causal.

Supports q (B, S, H, D) and k, v (B, Sk, HK, D) of bf16 or f16, D 64 or
128, H a multiple of HK (query head h reads key head h // (H // HK)), any
strides, any lengths (keys past Sk and rows past S are masked), causal
top-left (key j <= query i, as SDPA's is_causal). The output is a new
(B, S, H, D) tensor of q's type. Run as a script, it checks itself against
SDPA in float64 on a few awkward shapes.
"""
from __future__ import annotations

import triton
import triton.language as tl

LOG2E = 1.4426950408889634


def _configs():
    c = []
    for bm in (128, 64):
        for bn in (64, 128):
            for warps in (4, 8):
                for stages in (3, 4):
                    # 8 warps pay only on the largest tile (the tutorial's rule on Hopper).
                    if warps == 8 and bm * bn < 128 * 128:
                        continue
                    c.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=warps,
                                           num_stages=stages))
    return c


@triton.jit
def _attend(acc, l_i, m_i, q, k_ptrs, v_ptrs, lo, hi, rows, cols, SK, stride_ks, stride_vs,
            qk_scale, MASKED: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_N: tl.constexpr):
    """Keys lo .. hi (lo a multiple of BLOCK_N) folded into the running sums
    (acc, l_i, m_i) of the block's rows. MASKED: keys past SK and, with
    CAUSAL, keys after a row's own position count for nothing; unmasked
    blocks must lie wholly inside both bounds."""
    for start in range(lo, hi, BLOCK_N):
        start = tl.multiple_of(start, BLOCK_N)
        keys = start + cols
        if MASKED:
            k = tl.load(k_ptrs + start * stride_ks, mask=keys[None, :] < SK, other=0.0)
        else:
            k = tl.load(k_ptrs + start * stride_ks)
        qk = tl.dot(q, k)
        if MASKED:
            keep = keys[None, :] < SK
            if CAUSAL:
                keep = keep & (keys[None, :] <= rows[:, None])
            # -1e6, not -inf: a row whose keys here are all masked keeps a
            # finite maximum and gets weights exp2(-1e6 - m) = 0.
            qk = tl.where(keep, qk * qk_scale, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_ptrs + start * stride_vs, mask=keys[:, None] < SK, other=0.0)
        else:
            v = tl.load(v_ptrs + start * stride_vs)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.autotune(configs=_configs(), key=["S", "SK", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_fwd(Q, K, V, Out, qk_scale,
              stride_qb, stride_qs, stride_qh, stride_qd,
              stride_kb, stride_ks, stride_kh, stride_kd,
              stride_vb, stride_vs, stride_vh, stride_vd,
              stride_ob, stride_os, stride_oh, stride_od,
              H, GROUP, S, SK,
              HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = bh % H
    hk = (h // GROUP).to(tl.int64)
    h = h.to(tl.int64)
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    d = tl.arange(0, HEAD_DIM)

    # The block's queries stay in registers; K is read as K^T (D x BLOCK_N).
    q_ptrs = Q + b * stride_qb + h * stride_qh + rows[:, None] * stride_qs + d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=rows[:, None] < S, other=0.0)
    k_ptrs = K + b * stride_kb + hk * stride_kh + cols[None, :] * stride_ks + d[:, None] * stride_kd
    v_ptrs = V + b * stride_vb + hk * stride_vh + cols[:, None] * stride_vs + d[None, :] * stride_vd

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # Stage 1, no masks: whole BLOCK_N blocks of keys every row sees (left
    # of the diagonal with causal). Stage 2, masked: the rest up to the
    # diagonal's end (causal) or to SK.
    if CAUSAL:
        hi1 = tl.minimum(start_m * BLOCK_M, SK) // BLOCK_N * BLOCK_N
        hi2 = tl.minimum((start_m + 1) * BLOCK_M, SK)
    else:
        hi1 = SK // BLOCK_N * BLOCK_N
        hi2 = SK
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_ptrs, v_ptrs, 0, hi1, rows, cols, SK,
                            stride_ks, stride_vs, qk_scale, False, CAUSAL, BLOCK_N)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_ptrs, v_ptrs, hi1, hi2, rows, cols, SK,
                            stride_ks, stride_vs, qk_scale, True, CAUSAL, BLOCK_N)

    acc = acc / l_i[:, None]
    o_ptrs = (Out + b * stride_ob + h * stride_oh + rows[:, None] * stride_os
              + d[None, :] * stride_od)
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=rows[:, None] < S)


def triton_attention(q, k, v, causal: bool, sm_scale: float):
    """softmax(sm_scale q k^T) v per (batch, head): q (B, S, H, D), k and v
    (B, Sk, HK, D), any strides; returns a new (B, S, H, D) of q's type."""
    b, s, h, d = q.shape
    sk, hk = k.shape[1], k.shape[2]
    assert d in (64, 128), "this peer has D 64 or 128"
    assert h % hk == 0 and tuple(v.shape) == tuple(k.shape) and k.shape[0] == b and sk > 0
    out = q.new_empty((b, s, h, d))
    grid = lambda meta: (triton.cdiv(s, meta["BLOCK_M"]), b * h)  # noqa: E731
    _attn_fwd[grid](q, k, v, out, sm_scale * LOG2E,
                    *q.stride(), *k.stride(), *v.stride(), *out.stride(),
                    h, h // hk, s, sk, HEAD_DIM=d, CAUSAL=bool(causal))
    return out


def _self_check() -> int:
    """Against SDPA's math backend on awkward shapes: partial blocks, GQA,
    causal, strided inputs, f16. Prints the worst error of each."""
    import torch
    import torch.nn.functional as F

    bad = 0
    for b, s, sk, h, hk, d, causal, dt in ((2, 300, 300, 8, 2, 128, True, torch.bfloat16),
                                           (1, 1000, 777, 4, 4, 64, False, torch.float16),
                                           (3, 1, 129, 6, 3, 128, False, torch.bfloat16),
                                           (1, 4097, 4097, 2, 1, 64, True, torch.bfloat16)):
        q = torch.randn(b, h, s, d, device="cuda", dtype=dt).transpose(1, 2)
        k, v = (torch.randn(b, hk, sk, d, device="cuda", dtype=dt).transpose(1, 2)
                for _ in range(2))
        got = triton_attention(q, k, v, causal, d ** -0.5)
        ref = F.scaled_dot_product_attention(
            *(t.double().transpose(1, 2) for t in (q, k, v)), is_causal=causal,
            enable_gqa=True).transpose(1, 2)
        err = float((got.double() - ref).abs().max())
        good = err <= (3e-2 if dt == torch.bfloat16 else 4e-3)
        bad += not good
        print(f"{'ok' if good else 'FAIL'} {b}x{s}x{sk} heads {h}/{hk} D {d} "
              f"{'causal ' if causal else ''}{str(dt)[6:]}: max |err| {err:.3g}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(_self_check())

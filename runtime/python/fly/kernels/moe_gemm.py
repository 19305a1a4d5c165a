"""A mixture-of-experts layer's two GEMMs on preshuffled expert weights
(kernels/moe/moe_gemm.fly, AMD's "MoE 2-stage" form):

    w1p, w2p = fly.kernels.moe_preshuffle_weights(w1, w2)     # once
    y = fly.kernels.moe_gemm_2stage(x, w1p, w2p, topk_weights, topk_ids)

computes, for each token t and its K chosen experts e_k with weights w_k,

    y[t] = sum_k w_k * W2[e_k] @ (silu(W1[e_k, :I] @ x[t]) * (W1[e_k, I:] @ x[t]))

w1 (E, 2I, H) holds each expert's gate rows then its up rows, w2 (E, H, I)
its down projection (vLLM's fused_moe layout). The tokens are taken in
moe_align_block_size's order (blocks of 64 entries of one expert); stage 1
writes the intermediate silu(gate) * up in that order (bfloat16 or float16,
as x), stage 2 adds each entry's weighted product into its token's row
(float32 atomics).
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel
from ._rows import accepts_dlpack, check_device, fly_type
from .moe import moe_align_block_size
from .preshuffle import preshuffle_b

BM = 64  # the kernels' block of sorted entries (moe_align's block_size)
_TILE = {"BM": BM, "BN": 128, "BK": 64, "WM": 1, "WN": 4}


def _bad(what: str) -> FlyError:
    return FlyError(what, Status.ARGUMENTS)


def moe_preshuffle_weights(w1: Any, w2: Any, target: Optional[str] = None) -> tuple:
    """(w1p, w2p): the experts' weights laid out for moe_gemm_2stage on the
    target (preshuffle_b's, expert by expert). The inner width I is padded
    to a multiple of 16 with zeros, and w1's gate and up rows are
    interleaved by 16 (gate 0-15, up 0-15, gate 16-31, ...), so that a
    lane holds a gate sum and its up sum."""
    import torch

    if w1.dim() != 3 or w2.dim() != 3 or w1.shape[0] != w2.shape[0] or \
            w1.shape[1] != 2 * w2.shape[2] or w1.shape[2] != w2.shape[1]:
        raise _bad(f"moe_preshuffle_weights: w1 is (E, 2I, H) and w2 (E, H, I), not "
                   f"{tuple(w1.shape)} and {tuple(w2.shape)}")
    e, i2, h = w1.shape
    i = i2 // 2
    ip = -(-i // 16) * 16
    g = torch.zeros((e, ip, h), dtype=w1.dtype, device=w1.device)
    u = torch.zeros_like(g)
    g[:, :i] = w1[:, :i]
    u[:, :i] = w1[:, i:]
    inter = torch.stack((g.view(e, ip // 16, 16, h), u.view(e, ip // 16, 16, h)), dim=2)
    w1i = inter.reshape(e, 2 * ip, h)
    w2i = torch.zeros((e, h, ip), dtype=w2.dtype, device=w2.device)
    w2i[:, :, :i] = w2
    w1p = torch.stack([preshuffle_b(w1i[x], target) for x in range(e)])
    w2p = torch.stack([preshuffle_b(w2i[x], target) for x in range(e)])
    return w1p, w2p


@accepts_dlpack
def moe_gemm_2stage(x: Any, w1p: Any, w2p: Any, topk_weights: Any, topk_ids: Any, *,
                    out_dtype: Optional[Any] = None) -> Any:
    """The experts' output for tokens x (T, H) of bfloat16 or float16
    (rows of 16-byte multiples), weights from moe_preshuffle_weights, and
    the router's choices: topk_weights (T, K) float32 and topk_ids (T, K)
    expert indices (entries outside 0 .. E-1 are left out). f32 sums; the
    result (T, H) of out_dtype (x's type by default, or float32)."""
    import torch

    check_device(x, w1p, w2p, topk_weights, topk_ids)
    if x.dim() != 2 or x.dtype not in (torch.bfloat16, torch.float16) or \
            w1p.dtype != x.dtype or w2p.dtype != x.dtype or w1p.dim() != 4 or w2p.dim() != 4:
        raise _bad(f"moe_gemm_2stage: x (T, H) of bfloat16 or float16 and the weights of "
                   f"moe_preshuffle_weights of its type, not {tuple(x.shape)} of {x.dtype}, "
                   f"{tuple(w1p.shape)} of {w1p.dtype}")
    t, h = x.shape
    e = w1p.shape[0]
    if topk_ids.dim() != 2 or topk_ids.shape[0] != t or tuple(topk_weights.shape) != \
            tuple(topk_ids.shape):
        raise _bad(f"moe_gemm_2stage: topk_weights and topk_ids are (T, K) for T = {t}, not "
                   f"{tuple(topk_weights.shape)} and {tuple(topk_ids.shape)}")
    k = topk_ids.shape[1]
    ip = w1p.shape[1] * 8
    od = out_dtype or x.dtype
    if t == 0 or k == 0:
        return torch.zeros((t, h), dtype=od, device=x.device)
    if x.stride(1) != 1 or (x.stride(0) * x.element_size()) % 16 or x.data_ptr() % 16:
        x = x.contiguous()
    weights = topk_weights.reshape(-1).float().contiguous()
    sorted_ids, expert_ids, total = moe_align_block_size(topk_ids, BM, e)
    n = t * k
    rows = n + e * (BM - 1)
    inter = torch.empty((rows, ip), dtype=x.dtype, device=x.device)
    out = torch.zeros((t, h), dtype=torch.float32, device=x.device)
    tt = fly_type(x.dtype)
    kernel("moe_gemm", {"STAGE": 1, "T": tt, "TO": tt, **_TILE}, x.device)(
        x, w1p, inter, sorted_ids, expert_ids, total, weights, k)
    kernel("moe_gemm", {"STAGE": 2, "T": tt, "TO": "f32", **_TILE}, x.device)(
        inter, w2p, out, sorted_ids, expert_ids, total, weights, k)
    return out if od == torch.float32 else out.to(od)

"""B preshuffled for the matrix units (examples/04-preshuffle-gemm.fly).

    bp = fly.kernels.preshuffle_b(w, "gfx942")    # w (N, K), once per weight
    mod.preshuffle_gemm(a, bp, c)                  # c = a @ w.T

The preshuffled B is a layout of B (N x K) in blocks of 16 x KA, each block
in the order a warp's lanes hold it as the MMA's B operand, so that one
16-byte load a lane gives the kernel its fragment:

    bp[nb, kb, 8 l + v] = w[16 nb + n(l, v), KA kb + k(l, v)]    (0 past w)

of shape (ceil(N / 16), ceil(K / KA), 8 * lanes), contiguous, where

* NVIDIA (KA = 16, 32 lanes): two mma.sync m16n8k16 B fragments side by
  side, n = 8 (v // 4) + l // 4, k = 2 (l % 4) + v % 2 + 8 ((v // 2) % 2);
* AMD (KA = 32, 64 lanes): the MFMA 16x16x32 B operand, n = l % 16,
  k = 8 (l // 16) + v (gfx942 feeds values 0-3 and 4-7 to two 16x16x16).
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status


def _vendor(target: Optional[str]) -> str:
    """"nvidia" or "amd" for a target ("sm_90", "gfx942"), a vendor's name,
    or None: the vendor of PyTorch's GPU."""
    if target is None:
        import torch

        return "amd" if getattr(torch.version, "hip", None) else "nvidia"
    t = str(target).lower()
    if t.startswith("sm_") or t == "nvidia":
        return "nvidia"
    if t.startswith("gfx") or t == "amd":
        return "amd"
    raise FlyError(f"preshuffle_b: unknown target {target!r} (an sm_NN or gfxNNN, or "
                   "'nvidia' or 'amd')", Status.ARGUMENTS)


def preshuffle_shape(vendor: str) -> tuple:
    """(KA, lanes, order): a block's depth, the lanes of a warp, and for
    each of the block's 8 * lanes values, in the lanes' order, the index
    n * KA + k of the element of the 16 x KA block it holds."""
    ka, lanes = (16, 32) if vendor == "nvidia" else (32, 64)
    order = []
    for l in range(lanes):
        for v in range(8):
            if vendor == "nvidia":
                n, k = 8 * (v // 4) + l // 4, 2 * (l % 4) + v % 2 + 8 * ((v // 2) % 2)
            else:
                n, k = l % 16, 8 * (l // 16) + v
            order.append(n * ka + k)
    return ka, lanes, order


def preshuffle_b(b: Any, target: Optional[str] = None) -> Any:
    """b (N, K), a 16-bit PyTorch tensor on the GPU, preshuffled for the
    target's matrix units (see the module's text); a new tensor."""
    import torch

    if b.dim() != 2:
        raise FlyError(f"preshuffle_b: b is a matrix (N, K), not of shape {tuple(b.shape)}",
                       Status.ARGUMENTS)
    if b.dtype not in (torch.bfloat16, torch.float16):
        raise FlyError(f"preshuffle_b: b holds bf16 or f16, not {b.dtype}",
                       Status.ARGUMENTS)
    ka, lanes, order = preshuffle_shape(_vendor(target))
    n, k = b.shape
    nb, kb = -(-n // 16), -(-k // ka)
    padded = torch.zeros((nb * 16, kb * ka), dtype=b.dtype, device=b.device)
    padded[:n, :k] = b
    blocks = padded.view(nb, 16, kb, ka).permute(0, 2, 1, 3).reshape(nb, kb, 16 * ka)
    index = torch.tensor(order, device=b.device)
    return blocks.index_select(2, index).contiguous()

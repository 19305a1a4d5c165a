"""Peers of kernels/norm: PyTorch eager and Triton kernels written for this
benchmark in the style of Triton's tutorials (02-fused-softmax,
05-layer-norm): one program per row, the row in registers as one block of
the next power of two, f32 statistics."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from peers import Case

import fly.kernels as fk

# LLM-typical shapes: tokens x hidden.
ROWS = [1, 32, 512, 4096, 32768]
HIDDEN = [1024, 4096, 8192, 16384]
QUICK = [(4096, 4096), (32768, 8192), (1, 8192)]


def shapes(quick: bool):
    return QUICK if quick else [(m, n) for m in ROWS for n in HIDDEN]


def _warps(block: int) -> int:
    return 4 if block <= 2048 else 8 if block <= 8192 else 16


@triton.jit
def _rms_norm_fwd(X, W, Y, stride_x, stride_y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


def triton_rms_norm(x, w, eps=1e-6):
    y = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _rms_norm_fwd[(m,)](x, w, y, x.stride(0), y.stride(0), n, eps, BLOCK=block,
                        num_warps=_warps(block))
    return y


def cases(quick: bool) -> list[Case]:
    out = []
    dt = torch.bfloat16
    for m, n in shapes(quick):
        def make(m=m, n=n):
            return (torch.randn(m, n, device="cuda", dtype=dt),
                    torch.randn(n, device="cuda", dtype=dt))
        out.append(Case(
            "rms_norm", f"{m}x{n}", 2 * m * n * 2 + n * 2, make, {
                "fly": lambda a: fk.rms_norm(a[0], a[1], 1e-6),
                "torch": lambda a, n=n: torch.nn.functional.rms_norm(a[0], (n,), a[1], 1e-6),
                "triton": lambda a: triton_rms_norm(a[0], a[1], 1e-6),
            }))
    return out

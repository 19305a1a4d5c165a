"""Peers of kernels/quant: PyTorch eager and Triton kernels written for this
benchmark in the style of Triton's tutorials: per-token quantisation one
program per row (the row in registers as one block of the next power of
two), per-block quantisation one program per row and GPP groups of 128, the
groups' largest magnitudes a reduction along the tile's second axis. All
take bf16 and give the scales in f32."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from peers import Case

import fly.kernels as fk

try:
    from triton.language.extra import libdevice
except ImportError:  # Triton before 3.0
    from triton.language.extra.cuda import libdevice

# LLM-typical shapes: tokens x hidden.
ROWS = [1, 32, 512, 4096, 32768]
HIDDEN = [1024, 4096, 8192, 16384]
QUICK = [(4096, 4096), (32768, 8192), (1, 8192)]
FP8 = torch.float8_e4m3fn
QMAX = {FP8: 448.0, torch.int8: 127.0}
TINY = 1e-10


def shapes(quick: bool):
    return QUICK if quick else [(m, n) for m in ROWS for n in HIDDEN]


def _warps(block: int) -> int:
    return 4 if block <= 2048 else 8 if block <= 8192 else 16


# ---- PyTorch eager ----------------------------------------------------------------------------

def _convert(v, dtype):
    qmax = QMAX[dtype]
    if dtype == torch.int8:
        return v.round().clamp(-qmax, qmax).to(torch.int8)
    return v.clamp(-qmax, qmax).to(dtype)


def torch_per_token_quant(x, dtype):
    scale = x.abs().amax(-1, keepdim=True).float().clamp_min(TINY) / QMAX[dtype]
    return _convert(x.float() / scale, dtype), scale


def torch_per_block_quant(x, dtype, group=128):
    m, n = x.shape
    g = x.view(m, n // group, group)  # the shapes here are multiples of 128
    scale = g.abs().amax(-1, keepdim=True).float().clamp_min(TINY) / QMAX[dtype]
    return _convert(g.float() / scale, dtype).view(m, n), scale.view(m, n // group)


# ---- Triton ------------------------------------------------------------------------------------

@triton.jit
def _per_token_quant(X, Q, S, stride_x, stride_q, N, QMAX: tl.constexpr, INT8: tl.constexpr,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10)
    v = x * (QMAX / amax)
    if INT8:
        v = libdevice.rint(v)
    v = tl.minimum(tl.maximum(v, -QMAX), QMAX)
    tl.store(Q + row * stride_q + cols, v.to(Q.dtype.element_ty), mask=mask)
    tl.store(S + row, amax / QMAX)


def triton_per_token_quant(x, dtype):
    m, n = x.shape
    q = torch.empty(m, n, dtype=dtype, device=x.device)
    s = torch.empty(m, 1, dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(n)
    _per_token_quant[(m,)](x, q, s, x.stride(0), q.stride(0), n, QMAX=QMAX[dtype],
                           INT8=dtype == torch.int8, BLOCK=block, num_warps=_warps(block))
    return q, s


@triton.jit
def _per_block_quant(X, Q, S, stride_x, stride_q, stride_s, N, G, QMAX: tl.constexpr,
                     GROUP: tl.constexpr, GPP: tl.constexpr):
    row = tl.program_id(0)
    gs = tl.program_id(1) * GPP + tl.arange(0, GPP)
    cols = gs[:, None] * GROUP + tl.arange(0, GROUP)[None, :]
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=1), 1e-10)
    v = x * (QMAX / amax)[:, None]
    v = tl.minimum(tl.maximum(v, -QMAX), QMAX)
    tl.store(Q + row * stride_q + cols, v.to(Q.dtype.element_ty), mask=mask)
    tl.store(S + row * stride_s + gs, amax / QMAX, mask=gs < G)


def triton_per_block_quant(x, dtype, group=128, gpp=8):
    m, n = x.shape
    g = triton.cdiv(n, group)
    q = torch.empty(m, n, dtype=dtype, device=x.device)
    s = torch.empty(m, g, dtype=torch.float32, device=x.device)
    _per_block_quant[(m, triton.cdiv(g, gpp))](x, q, s, x.stride(0), q.stride(0), s.stride(0), n,
                                               g, QMAX=QMAX[dtype], GROUP=group, GPP=gpp,
                                               num_warps=4)
    return q, s


# ---- cases -------------------------------------------------------------------------------------

def cases(quick: bool) -> list[Case]:
    out = []
    dt = torch.bfloat16
    for m, n in shapes(quick):
        def make(m=m, n=n):
            return torch.randn(m, n, device="cuda", dtype=dt)
        for qt, tag in ((FP8, "fp8"), (torch.int8, "int8")):
            out.append(Case(
                f"per_token_quant_{tag}", f"{m}x{n}", m * n * 2 + m * n + m * 4, make, {
                    "fly": lambda x, qt=qt: fk.per_token_quant(x, qt),
                    "torch": lambda x, qt=qt: torch_per_token_quant(x, qt),
                    "triton": lambda x, qt=qt: triton_per_token_quant(x, qt),
                }))
        g = -(-n // 128)
        out.append(Case(
            "per_block_quant_fp8", f"{m}x{n}", m * n * 2 + m * n + m * g * 4, make, {
                "fly": lambda x: fk.per_block_quant(x, 128, FP8),
                "torch": lambda x: torch_per_block_quant(x, FP8),
                "triton": lambda x: triton_per_block_quant(x, FP8),
            }))
    return out

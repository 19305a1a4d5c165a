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


def rms_norm_cases(quick: bool) -> list[Case]:
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


@triton.jit
def _add_rms_norm_fwd(X, R, W, H, Y, sx, sr, sh, sy, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(R + row * sr + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(H.dtype.element_ty)
    tl.store(H + row * sh + cols, h, mask=mask)
    hf = h.to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(hf * hf, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * sy + cols, (hf * rstd * w).to(Y.dtype.element_ty), mask=mask)


def triton_add_rms_norm(x, r, w, eps=1e-6):
    h, y = torch.empty_like(x), torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _add_rms_norm_fwd[(m,)](x, r, w, h, y, x.stride(0), r.stride(0), h.stride(0), y.stride(0),
                            n, eps, BLOCK=block, num_warps=_warps(block))
    return y, h


@triton.jit
def _layer_norm_fwd(X, W, B, Y, sx, sy, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * sy + cols, (d * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


def triton_layer_norm(x, w, b, eps=1e-5):
    y = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _layer_norm_fwd[(m,)](x, w, b, y, x.stride(0), y.stride(0), n, eps, BLOCK=block,
                          num_warps=_warps(block))
    return y


@triton.jit
def _softmax_fwd(X, Y, sx, sy, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * sx + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(Y + row * sy + cols, (e / tl.sum(e, axis=0)).to(Y.dtype.element_ty), mask=mask)


def triton_softmax(x):
    y = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _softmax_fwd[(m,)](x, y, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=_warps(block))
    return y


@triton.jit
def _softmax_bwd(DY, Y, DX, sdy, sy, sdx, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    dy = tl.load(DY + row * sdy + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(Y + row * sy + cols, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(dy * y, axis=0)
    tl.store(DX + row * sdx + cols, (y * (dy - dot)).to(DX.dtype.element_ty), mask=mask)


def triton_softmax_backward(dy, y):
    dx = torch.empty_like(y)
    m, n = y.shape
    block = triton.next_power_of_2(n)
    _softmax_bwd[(m,)](dy, y, dx, dy.stride(0), y.stride(0), dx.stride(0), n, BLOCK=block,
                       num_warps=_warps(block))
    return dx


@triton.jit
def _rms_norm_bwd(DY, X, W, DX, DWP, sdy, sx, sdx, M, N, eps, ROWS: tl.constexpr,
                  BLOCK: tl.constexpr):
    # Each program takes ROWS consecutive rows and keeps its part of dW in
    # registers; the partials are summed afterwards.
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(ROWS):
        row = pid * ROWS + i
        if row < M:
            x = tl.load(X + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(DY + row * sdy + cols, mask=mask, other=0.0).to(tl.float32)
            rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
            g = dy * w
            c = tl.sum(g * x, axis=0) / N * rstd * rstd
            tl.store(DX + row * sdx + cols, ((g - x * c) * rstd).to(DX.dtype.element_ty),
                     mask=mask)
            dw += dy * x * rstd
    tl.store(DWP + pid * N + cols, dw, mask=mask)


def triton_rms_norm_backward(dy, x, w, eps=1e-6):
    dx = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    programs = min(m, 4 * torch.cuda.get_device_properties(x.device).multi_processor_count)
    rows = triton.cdiv(m, programs)
    programs = triton.cdiv(m, rows)
    dwp = torch.empty(programs, n, dtype=torch.float32, device=x.device)
    _rms_norm_bwd[(programs,)](dy, x, w, dx, dwp, dy.stride(0), x.stride(0), dx.stride(0), m, n,
                               eps, ROWS=rows, BLOCK=block, num_warps=_warps(block))
    return dx, dwp.sum(0).to(x.dtype)


def torch_rms_norm_backward(dy, x, w, eps=1e-6):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    xhat = xf * rstd
    g = dy.float() * w.float()
    dx = rstd * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy.float() * xhat).sum(0).to(x.dtype)


def norm_cases(quick: bool) -> list[Case]:
    out = []
    dt = torch.bfloat16
    F = torch.nn.functional
    for m, n in shapes(quick):
        mn, e = m * n, 2

        def x2(m=m, n=n):
            return (torch.randn(m, n, device="cuda", dtype=dt),
                    torch.randn(m, n, device="cuda", dtype=dt),
                    torch.randn(n, device="cuda", dtype=dt),
                    torch.randn(n, device="cuda", dtype=dt))
        out.append(Case("add_rms_norm", f"{m}x{n}", 4 * mn * e + n * e, x2, {
            "fly": lambda a: fk.rms_norm(a[0], a[2], 1e-6, residual=a[1]),
            "torch": lambda a, n=n: F.rms_norm(a[0] + a[1], (n,), a[2], 1e-6),
            "triton": lambda a: triton_add_rms_norm(a[0], a[1], a[2], 1e-6),
        }))
        out.append(Case("layer_norm", f"{m}x{n}", 2 * mn * e + 2 * n * e, x2, {
            "fly": lambda a: fk.layer_norm(a[0], a[2], a[3], 1e-5),
            "torch": lambda a, n=n: F.layer_norm(a[0], (n,), a[2], a[3], 1e-5),
            "triton": lambda a: triton_layer_norm(a[0], a[2], a[3], 1e-5),
        }))
        out.append(Case("softmax", f"{m}x{n}", 2 * mn * e, x2, {
            "fly": lambda a: fk.softmax(a[0]),
            "torch": lambda a: torch.softmax(a[0], -1),
            "triton": lambda a: triton_softmax(a[0]),
        }))
        out.append(Case("softmax_backward", f"{m}x{n}", 3 * mn * e, x2, {
            "fly": lambda a: fk.softmax_backward(a[1], a[0]),
            "torch": lambda a: torch._softmax_backward_data(a[1], a[0], -1, dt),
            "triton": lambda a: triton_softmax_backward(a[1], a[0]),
        }))
        out.append(Case("rms_norm_backward", f"{m}x{n}", 3 * mn * e + 2 * n * e, x2, {
            "fly": lambda a: fk.rms_norm_backward(a[1], a[0], a[2], 1e-6),
            "torch": lambda a: torch_rms_norm_backward(a[1], a[0], a[2], 1e-6),
            "triton": lambda a: triton_rms_norm_backward(a[1], a[0], a[2], 1e-6),
        }))
    return out


def cases(quick: bool) -> list[Case]:
    return rms_norm_cases(quick) + norm_cases(quick)

"""Normalisations and softmax over the last dimension (kernels/norm/).

Every function takes tensors of bf16, f16 or f32 of any shape whose last
dimension is contiguous (other dimensions may be strided: a row stride is
fine; a tensor whose rows cannot be viewed as a matrix is copied), computes
in f32, and launches on PyTorch's current stream.
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status
from ._rows import (REGISTER_ELEMENTS, accepts_dlpack, as_rows, row_kernel, row_kernel_early,
                    row_plan, sm_count)


def _out(x: Any, out: Optional[Any], what: str, name: str = "out") -> Any:
    """out checked against x, or a new tensor like x."""
    if out is None:
        import torch

        return torch.empty_like(x)
    if out.shape != x.shape or out.dtype != x.dtype or out.device != x.device:
        raise FlyError(f"{what}: {name} must have the shape, dtype and device of the input "
                       f"({tuple(x.shape)}, {x.dtype}, {x.device}), not ({tuple(out.shape)}, "
                       f"{out.dtype}, {out.device})", Status.ARGUMENTS)
    return out


def _vector(v: Optional[Any], n: int, x: Any, what: str, name: str) -> None:
    """A weight or bias: n contiguous values of x's dtype on x's device, or
    None."""
    if v is None:
        return
    if v.shape != (n,) or v.dtype != x.dtype or v.device != x.device or (
            n > 1 and v.stride(0) != 1):
        raise FlyError(f"{what}: {name} must be {n} contiguous values of {x.dtype} on "
                       f"{x.device}, not {tuple(v.shape)} of {v.dtype} on {v.device}",
                       Status.ARGUMENTS)


class _Rows:
    """Tensors viewed as M x N matrices of rows, and written back where a
    view was not possible (a tensor whose rows are not evenly spaced)."""

    def __init__(self) -> None:
        self.back: list[tuple[Any, Any]] = []

    def input(self, t: Any, what: str) -> Any:
        return as_rows(t, what)

    def output(self, t: Any, what: str) -> Any:
        m = as_rows(t, what)
        if m.data_ptr() != t.data_ptr():  # a copy: written back by finish()
            self.back.append((t, m))
        return m

    def finish(self) -> None:
        for t, m in self.back:
            t.copy_(m.view(t.shape))


@accepts_dlpack
def rms_norm(x: Any, weight: Optional[Any] = None, eps: float = 1e-6, out: Optional[Any] = None,
             residual: Optional[Any] = None, residual_out: Optional[Any] = None) -> Any:
    """y = x / sqrt(mean(x^2, -1) + eps) * weight, over the last dimension.

    weight        x.shape[-1] values of x's dtype, or None
    out           where y goes (x's shape and dtype; may be x), else a new tensor
    residual      when given, the norm is of h = x + residual (rounded to x's
                  dtype), computed in the same kernel, and the call returns
                  (y, h); h goes to residual_out, which may be residual itself
                  (updated in place, as vLLM's fused_add_rms_norm does), else
                  to a new tensor
    """
    what = "rms_norm"
    y = _out(x, out, what)
    n = x.shape[-1] if x.dim() else 1
    _vector(weight, n, x, what, "weight")
    rows = _Rows()
    X, Y = rows.input(x, "x"), rows.output(y, "out")
    if residual is not None:
        r = _out(x, residual, what, "residual")
        h = _out(x, residual_out, what, "residual_out")
        R, H = rows.input(r, "residual"), rows.output(h, "residual_out")
        if X.numel():
            k = row_kernel_early("add_rms_norm", x.dtype, n, X.size(0), x.device, X, R, H, Y,
                                 weight)
            k(X, R, weight if weight is not None else X[0], H, Y, float(eps),
              int(weight is not None))
        rows.finish()
        return y, h
    if X.numel():
        k = row_kernel_early("rms_norm", x.dtype, n, X.size(0), x.device, X, Y, weight)
        k(X, weight if weight is not None else X[0], Y, float(eps), int(weight is not None))
    rows.finish()
    return y


def _partial_rows(device: Any, m: int, rows_per_block: int) -> int:
    """Rows of rms_norm_backward's dW partials: a few blocks per SM, each a
    row per row group (never more blocks than there are row groups)."""
    blocks = max(1, min(-(-m // rows_per_block), 4 * sm_count(device)))
    return blocks * rows_per_block


@accepts_dlpack
def rms_norm_backward(grad_out: Any, x: Any, weight: Optional[Any] = None,
                      eps: float = 1e-6) -> tuple[Any, Optional[Any]]:
    """The gradients of y = rms_norm(x, weight, eps): (dx, dweight), dweight
    None without a weight. rstd is recomputed from x."""
    import torch

    what = "rms_norm_backward"
    _out(x, grad_out, what, "grad_out")
    n = x.shape[-1] if x.dim() else 1
    _vector(weight, n, x, what, "weight")
    dx = torch.empty_like(x)
    rows = _Rows()
    DY, X, DX = rows.input(grad_out, "grad_out"), rows.input(x, "x"), rows.output(dx, "dx")
    m = X.size(0)
    k = row_kernel("rms_norm_backward", x.dtype, n, x.device, DY, X, DX, weight)
    consts = k.consts
    g, _, threads = row_plan(consts["CAP"], consts["VEC"])
    p = _partial_rows(x.device, m, threads // g)
    streamed = consts["CAP"] * consts["VEC"] > REGISTER_ELEMENTS
    dwp = (torch.zeros if streamed else torch.empty)(p, n, dtype=torch.float32, device=x.device)
    if X.numel():
        k(DY, X, weight if weight is not None else X[0], DX, dwp, float(eps),
          int(weight is not None))
    else:
        dwp.zero_()
    rows.finish()
    dw = dwp.sum(0).to(x.dtype) if weight is not None else None
    return dx, dw


@accepts_dlpack
def layer_norm(x: Any, weight: Optional[Any] = None, bias: Optional[Any] = None,
               eps: float = 1e-5, out: Optional[Any] = None) -> Any:
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last
    dimension (the biased variance, as torch.nn.functional.layer_norm)."""
    what = "layer_norm"
    y = _out(x, out, what)
    n = x.shape[-1] if x.dim() else 1
    _vector(weight, n, x, what, "weight")
    _vector(bias, n, x, what, "bias")
    rows = _Rows()
    X, Y = rows.input(x, "x"), rows.output(y, "out")
    if X.numel():
        k = row_kernel_early("layer_norm", x.dtype, n, X.size(0), x.device, X, Y, weight, bias)
        k(X, weight if weight is not None else X[0], bias if bias is not None else X[0], Y,
          float(eps), int(weight is not None), int(bias is not None))
    rows.finish()
    return y


@accepts_dlpack
def softmax(x: Any, out: Optional[Any] = None) -> Any:
    """softmax over the last dimension."""
    y = _out(x, out, "softmax")
    n = x.shape[-1] if x.dim() else 1
    rows = _Rows()
    X, Y = rows.input(x, "x"), rows.output(y, "out")
    if X.numel():
        row_kernel("softmax", x.dtype, n, x.device, X, Y)(X, Y)
    rows.finish()
    return y


@accepts_dlpack
def softmax_backward(grad_out: Any, y: Any, out: Optional[Any] = None) -> Any:
    """The gradient of y = softmax(x) over the last dimension, from y:
    dx = y * (grad_out - sum(grad_out * y, -1))."""
    what = "softmax_backward"
    _out(y, grad_out, what, "grad_out")
    dx = _out(y, out, what)
    n = y.shape[-1] if y.dim() else 1
    rows = _Rows()
    DY, Y, DX = rows.input(grad_out, "grad_out"), rows.input(y, "y"), rows.output(dx, "out")
    if Y.numel():
        row_kernel("softmax_backward", y.dtype, n, y.device, DY, Y, DX)(DY, Y, DX)
    rows.finish()
    return dx

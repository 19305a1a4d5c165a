"""Normalisations and softmax over the last dimension (kernels/norm/)."""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel
from ._rows import as_rows, check_device, row_consts


def _out_like(x: Any, out: Optional[Any], what: str) -> Any:
    import torch

    if out is None:
        return torch.empty_like(x)
    if out.shape != x.shape or out.dtype != x.dtype:
        raise FlyError(f"{what}: out must have the shape and dtype of x ({tuple(x.shape)}, "
                       f"{x.dtype}), not ({tuple(out.shape)}, {out.dtype})", Status.ARGUMENTS)
    return out


def rms_norm(x: Any, weight: Optional[Any] = None, eps: float = 1e-6, out: Optional[Any] = None,
             residual: Optional[Any] = None, residual_out: Optional[Any] = None) -> Any:
    """y = x / sqrt(mean(x^2, -1) + eps) * weight, over the last dimension.

    x        bf16, f16 or f32, any shape, last dimension contiguous
    weight   x.shape[-1] weights of x's dtype, or None
    out      where y goes (x's shape and dtype; may be x), else a new tensor
    residual when given, the norm is of h = x + residual, and the call
             returns (y, h): h goes to residual_out (may be residual itself,
             as vLLM's fused_add_rms_norm does) or a new tensor
    """
    if residual is not None:
        return _add_rms_norm(x, residual, weight, eps, out, residual_out)
    dev = check_device(x, weight, out)
    y = _out_like(x, out, "rms_norm")
    X, Y = as_rows(x, "x"), as_rows(y, "out")
    n = X.size(1)
    if weight is not None and (weight.dim() != 1 or weight.numel() != n or
                               weight.dtype != x.dtype):
        raise FlyError(f"rms_norm: weight must be {n} values of {x.dtype}, not "
                       f"{tuple(weight.shape)} of {weight.dtype}", Status.ARGUMENTS)
    if X.numel() == 0:
        return y
    k = kernel("rms_norm", row_consts("rms_norm", x.dtype, n, X, Y, weight), dev)
    k(X, weight if weight is not None else X[0], Y, float(eps), int(weight is not None))
    if Y.data_ptr() != y.data_ptr():  # out was not viewable as rows
        y.copy_(Y.view_as(y))
    return y


def _add_rms_norm(x: Any, residual: Any, weight: Optional[Any], eps: float,
                  out: Optional[Any], residual_out: Optional[Any]) -> Any:
    raise FlyError("rms_norm with a residual is not built yet", Status.NOT_FOUND)

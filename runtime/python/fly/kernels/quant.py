"""Dynamic quantisation to fp8 and int8 (kernels/quant/): per token (a scale
per row) and per block (a scale per group of consecutive elements of a row,
as blockscale fp8 GEMMs take their activations).

For each row (or group) of x:

    scale = max(max |x|, 1e-10) / QMAX        QMAX: 448 (float8_e4m3fn),
    q     = x / scale, converted, saturating        57344 (float8_e5m2), 127 (int8)

int8 rounds to nearest, ties to even; the 8-bit floats round to nearest and
saturate at +-QMAX. kernels/quant/scales.fly says more (NaN, infinities, and
the multiplication by 1 / scale the kernels do instead of dividing).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel
from ._rows import (accepts_dlpack, as_rows, check_device, fly_type, next_pow2, row_kernel,
                    sm_count, vector_width)

# The largest finite value of each quantised type, by Fly's name.
QMAX = {"f8e4m3": 448.0, "f8e5m2": 57344.0, "i8": 127.0}
QUANT_TINY = 1e-10  # the floor of max |x|: an all-zero row has finite scales
_INPUTS = ("bf16", "f16", "f32")


def _entry(kind: str, q: str) -> str:
    """The registry's entry for kind ("per_token_quant" ...) and Q: the 8-bit
    floats (sm_90 and later) and int8 (sm_80 too) are entries of their own,
    as their ahead-of-time bundles are made for different targets."""
    return f"{kind}_{'int8' if q == 'i8' else 'fp8'}"


def _types(x: Any, dtype: Any, what: str) -> tuple[Any, str, str]:
    """(dtype, Fly's name of x's type, of dtype), dtype None meaning
    float8_e4m3fn; refuses the types there are no kernels for."""
    import torch

    if dtype is None:
        dtype = torch.float8_e4m3fn
    if dtype not in (torch.float8_e4m3fn, torch.float8_e5m2, torch.int8):
        raise FlyError(f"{what}: dtype must be torch.float8_e4m3fn, torch.float8_e5m2 or "
                       f"torch.int8, not {dtype}", Status.ARGUMENTS)
    if x.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise FlyError(f"{what}: x must be bfloat16, float16 or float32, not {x.dtype}",
                       Status.ARGUMENTS)
    return dtype, fly_type(x.dtype), fly_type(dtype)


def _out(x: Any, out: Optional[Any], dtype: Any, what: str) -> Any:
    import torch

    if out is None:
        return torch.empty(x.shape, dtype=dtype, device=x.device)
    if out.shape != x.shape or out.dtype != dtype:
        raise FlyError(f"{what}: out must have the shape of x and the dtype asked for "
                       f"({tuple(x.shape)}, {dtype}), not ({tuple(out.shape)}, {out.dtype})",
                       Status.ARGUMENTS)
    return out


def _scale(x: Any, scale: Optional[Any], cols: int, what: str, column_major: bool = False) -> Any:
    """The scales' tensor, x.shape[:-1] + (cols,) of float32: scale itself
    when given (any strides), else a new one, row-major or (column_major)
    with the rows contiguous in each column."""
    import torch

    shape = tuple(x.shape[:-1]) + (cols,)
    if scale is None:
        if not column_major:
            return torch.empty(shape, dtype=torch.float32, device=x.device)
        rows = math.prod(shape[:-1])
        return torch.empty((cols, rows), dtype=torch.float32, device=x.device).t().view(shape)
    if tuple(scale.shape) != shape or scale.dtype != torch.float32:
        raise FlyError(f"{what}: scale must be {shape} of torch.float32, not "
                       f"{tuple(scale.shape)} of {scale.dtype}", Status.ARGUMENTS)
    return scale


def _matrix(t: Any, cols: int) -> Any:
    """t (..., cols) as a 2-D matrix of any strides, a view where its
    strides allow, else a contiguous copy (the caller copies results back)."""
    try:
        return t.view(-1, cols)
    except RuntimeError:
        return t.reshape(-1, cols).contiguous()


def _copy_back(dst: Any, src: Any) -> None:
    """Results written to src, a copy of dst made for the kernel, go to dst."""
    if src.data_ptr() != dst.data_ptr():
        dst.copy_(src.view(dst.shape))


@accepts_dlpack
def per_token_quant(x: Any, dtype: Any = None, out: Optional[Any] = None,
                    scale: Optional[Any] = None) -> tuple[Any, Any]:
    """(q, scale): x quantised with one scale per row (token).

    x      bf16, f16 or f32, any shape (..., N), last dimension contiguous
    dtype  torch.float8_e4m3fn (None, the default), torch.float8_e5m2 or
           torch.int8: q's type
    out    where q goes (x's shape, dtype), else a new tensor
    scale  where the scales go (x.shape[:-1] + (1,), float32, any strides),
           else a new tensor

    q * scale is x to within half a step of dtype (relative to the row's
    largest magnitude): scale = max(max |x_row|, 1e-10) / QMAX."""
    what = "per_token_quant"
    dtype, t, q = _types(x, dtype, what)
    dev = check_device(x, out, scale)
    if x.dim() == 0:
        raise FlyError(f"{what}: x must have at least one dimension", Status.ARGUMENTS)
    y = _out(x, out, dtype, what)
    s = _scale(x, scale, 1, what)
    n = x.shape[-1]
    if s.numel() == 0:
        return y, s
    if n == 0:  # no elements: the scale of an all-zero row
        s.fill_(QUANT_TINY / QMAX[q])
        return y, s
    X, Y, S = as_rows(x, "x"), as_rows(y, "out"), _matrix(s, 1)
    name = _entry(what, q)
    k = row_kernel(name, x.dtype, n, dev, X, Y, Q=q)
    k(X, Y, S[:, 0])
    _copy_back(y, Y)
    _copy_back(s, S)
    return y, s


@accepts_dlpack
def per_block_quant(x: Any, group_size: int = 128, dtype: Any = None,
                    out: Optional[Any] = None, scale: Optional[Any] = None,
                    column_major_scales: bool = False) -> tuple[Any, Any]:
    """(q, scale): x quantised with one scale per group of group_size
    consecutive elements of each row (1 x 128 blocks for DeepSeek-V3-style
    blockscale fp8 GEMMs); the last group of a row may be partial.

    x           bf16, f16 or f32, any shape (..., N), last dimension contiguous
    group_size  the elements of a group, a power of two (default 128)
    dtype       torch.float8_e4m3fn (None, the default), torch.float8_e5m2 or
                torch.int8: q's type
    out         where q goes (x's shape, dtype), else a new tensor
    scale       where the scales go: x.shape[:-1] + (ceil(N / group_size),)
                of float32, any strides (row-major, column-major, padded),
                else a new tensor
    column_major_scales  a new scale tensor is column-major: each group's
                scales of every row contiguous (the transpose of a
                contiguous tensor, as DeepGEMM reads A's scales)"""
    what = "per_block_quant"
    dtype, t, q = _types(x, dtype, what)
    dev = check_device(x, out, scale)
    if x.dim() == 0:
        raise FlyError(f"{what}: x must have at least one dimension", Status.ARGUMENTS)
    if not isinstance(group_size, int) or group_size < 1 or next_pow2(group_size) != group_size:
        raise FlyError(f"{what}: group_size must be a power of two, not {group_size!r}",
                       Status.ARGUMENTS)
    n = x.shape[-1]
    groups = -(-n // group_size)
    y = _out(x, out, dtype, what)
    s = _scale(x, scale, groups, what, column_major_scales)
    if s.numel() == 0:  # no rows, or rows of no elements
        return y, s
    X, Y, S = as_rows(x, "x"), as_rows(y, "out"), _matrix(s, groups)
    vec = min(vector_width(n, x.element_size(), X, Y), group_size)
    name = _entry(what, q)
    # group_plan of per_block_quant.fly: lanes a group (at most 32), groups
    # a block of 256 in a round, 4 vectors a thread in all. WIDE (a round a
    # thread) when four rounds would leave SMs without four blocks each.
    vectors = group_size // vec
    lanes = min(vectors, 32)
    rounds = max(4 // (vectors // lanes), 1)
    blocks = -(-X.size(0) * groups // ((256 // lanes) * rounds))
    wide = blocks < 4 * sm_count(dev)
    k = kernel(name, {"T": t, "Q": q, "GROUP": group_size, "VEC": vec, "WIDE": wide}, dev)
    k(X, Y, S)
    _copy_back(y, Y)
    _copy_back(s, S)
    return y, s

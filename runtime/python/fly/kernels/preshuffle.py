"""Preshuffled weights and the GEMM that reads them
(kernels/gemm/gemm_preshuffle.fly; examples/04-preshuffle-gemm.fly).

    bp = fly.kernels.preshuffle_b(w, "gfx942")    # w (N, K), once per weight
    c = fly.kernels.preshuffle_mm(a, bp, n=N)      # c = a @ w.T

The preshuffled B is a layout of B (N x K) in blocks of 16 x KA, each block
in the order a warp's lanes hold it as the MMA's B operand, so that one load
a lane gives the kernel its fragment:

    bp[nb, kb, V l + v] = w[16 nb + n(l, v), KA kb + k(l, v)]    (0 past w)

of shape (ceil(N / 16), ceil(K / KA), V * lanes), contiguous, where

* NVIDIA (KA = 16, 32 lanes, V = 8): two mma.sync m16n8k16 B fragments side
  by side, n = 8 (v // 4) + l // 4, k = 2 (l % 4) + v % 2 + 8 ((v // 2) % 2)
  (fp8 in the same order: the kernel converts it to f16);
* AMD (64 lanes): a lane's V = 16 bytes of one row, V = 8 for 16-bit types
  and 16 for fp8, KA = 4 V: n = l % 16, k = V (l // 16) + v (MFMA
  16x16x32's operand for 16-bit types; the kernel feeds a lane's values to
  its MFMAs in order). float8_e4m3fnuz, gfx942's own fp8 (its MFMA reads
  it), is laid out as float8_e4m3fn.
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel
from .gemm import _one
from ._rows import accepts_dlpack, check_device, fly_type

_TILE = {"BM": 64, "BN": 128, "BK": 64, "WM": 1, "WN": 4, "STAGES": 4}


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


def preshuffle_shape(vendor: str, elem_bytes: int = 2) -> tuple:
    """(KA, lanes, order): a block's depth, the lanes of a warp, and for
    each of the block's values, in the lanes' order (V a lane), the index
    n * KA + k of the element of the 16 x KA block it holds."""
    order = []
    if vendor == "nvidia":
        ka, lanes = 16, 32
        for l in range(lanes):
            for v in range(8):
                n, k = 8 * (v // 4) + l // 4, 2 * (l % 4) + v % 2 + 8 * ((v // 2) % 2)
                order.append(n * ka + k)
        return ka, lanes, order
    per = 16 // elem_bytes
    ka, lanes = 4 * per, 64
    for l in range(lanes):
        for v in range(per):
            order.append((l % 16) * ka + per * (l // 16) + v)
    return ka, lanes, order


def preshuffle_b(b: Any, target: Optional[str] = None) -> Any:
    """b (N, K) of bfloat16, float16 or float8_e4m3fn on the GPU (or, for
    AMD, float8_e4m3fnuz), preshuffled for the target's matrix units (see
    the module's text); a new tensor."""
    import torch

    if b.dim() != 2:
        raise FlyError(f"preshuffle_b: b is a matrix (N, K), not of shape {tuple(b.shape)}",
                       Status.ARGUMENTS)
    vendor = _vendor(target)
    types = (torch.bfloat16, torch.float16, torch.float8_e4m3fn) + \
        ((torch.float8_e4m3fnuz,) if vendor == "amd" else ())
    if b.dtype not in types:
        raise FlyError(f"preshuffle_b: b holds bfloat16, float16 or float8_e4m3fn (for AMD, "
                       f"float8_e4m3fnuz too), not {b.dtype}", Status.ARGUMENTS)
    ka, lanes, order = preshuffle_shape(vendor, b.element_size())
    n, k = b.shape
    nb, kb = -(-n // 16), -(-k // ka)
    # Bytes, so that index_select works for fp8 too.
    padded = torch.zeros((nb * 16, kb * ka), dtype=torch.uint8 if b.element_size() == 1
                         else b.dtype, device=b.device)
    padded[:n, :k] = b.view(torch.uint8) if b.element_size() == 1 else b
    blocks = padded.view(nb, 16, kb, ka).permute(0, 2, 1, 3).reshape(nb, kb, 16 * ka)
    index = torch.tensor(order, device=b.device)
    out = blocks.index_select(2, index).contiguous()
    return out.view(b.dtype) if b.element_size() == 1 else out


@accepts_dlpack
def preshuffle_mm(a: Any, bp: Any, n: Optional[int] = None, *, scale_a: Optional[Any] = None,
                  scale_b: Optional[Any] = None, blockwise: bool = False,
                  out: Optional[Any] = None, out_dtype: Optional[Any] = None) -> Any:
    """a @ b.T for a (M, K) and a weight b (N, K) preshuffled by
    preshuffle_b(b) for this GPU's target: bfloat16, float16, or
    float8_e4m3fn with per-token and per-channel scales (on AMD's gfx942,
    float8_e4m3fnuz too: its fp8 MFMA's own format, multiplied as it is,
    where float8_e4m3fn is converted to bfloat16 first),

        out[i, j] = scale_a[i] * scale_b[j] * sum_k a[i, k] * b[j, k]

    scale_a M float32 values (a column (M, 1) or a vector), scale_b N; both
    or neither (fp8 takes them). With blockwise (fp8), DeepSeek-V3's block
    scales: scale_a (M, ceil(K / 128)), one a row and 128 of K, scale_b
    (ceil(N / 128), ceil(K / 128)), one a 128 x 128 block of b,

        out[i, j] = sum_kb scale_a[i, kb] scale_b[j // 128, kb] sum_{k in kb} a[i, k] b[j, k]

    f32 sums; the result (M, N) of out_dtype (a's type, bfloat16 for fp8,
    by default; bfloat16, float16 or float32), written to out when given.
    n is b's N: by default 16 * bp.shape[0] (give it where N is not a
    multiple of 16)."""
    import torch

    check_device(a, bp)
    fnuz = a.dtype == torch.float8_e4m3fnuz
    fp8 = a.dtype == torch.float8_e4m3fn or fnuz
    if a.dim() != 2 or bp.dim() != 3 or a.dtype != bp.dtype or \
            a.dtype not in (torch.bfloat16, torch.float16, torch.float8_e4m3fn,
                            torch.float8_e4m3fnuz):
        raise FlyError(f"preshuffle_mm: a (M, K) and bp (preshuffle_b's) of one type, bfloat16, "
                       f"float16, float8_e4m3fn or float8_e4m3fnuz, not {tuple(a.shape)} of "
                       f"{a.dtype} and {tuple(bp.shape)} of {bp.dtype}", Status.ARGUMENTS)
    if fnuz and _vendor(None) != "amd":
        raise FlyError("preshuffle_mm: float8_e4m3fnuz is AMD gfx942's fp8 (its MFMA reads it); "
                       "this GPU's fp8 is float8_e4m3fn", Status.ARGUMENTS)
    if (scale_a is None) != (scale_b is None) or (fp8 and scale_a is None):
        raise FlyError("preshuffle_mm: scale_a and scale_b come together (fp8 takes them)",
                       Status.ARGUMENTS)
    m, k = a.shape
    n = 16 * bp.shape[0] if n is None else n
    if -(-n // 16) != bp.shape[0]:
        raise FlyError(f"preshuffle_mm: bp holds {bp.shape[0]} blocks of 16 rows, not "
                       f"ceil({n} / 16)", Status.ARGUMENTS)
    od = out_dtype or (out.dtype if out is not None else torch.bfloat16 if fp8 else a.dtype)
    if fly_type(od) not in ("bf16", "f16", "f32"):
        raise FlyError(f"preshuffle_mm: out_dtype is bfloat16, float16 or float32, not {od}",
                       Status.ARGUMENTS)
    if out is None:
        out = torch.empty((m, n), dtype=od, device=a.device)
    elif tuple(out.shape) != (m, n) or out.dtype != od or (n > 1 and out.stride(1) != 1):
        raise FlyError(f"preshuffle_mm: out is ({m}, {n}) of {od} with contiguous columns, "
                       f"not {tuple(out.shape)} of {out.dtype}", Status.ARGUMENTS)
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    # Rows of whole 16-byte chunks, the start aligned: a view where a has
    # them, else a copy whose padding past K is zeros (b's is too).
    pad = 16 // a.element_size()
    A = a
    if a.stride(1) != 1 or a.stride(0) % pad or a.data_ptr() % 16 or k % pad:
        kp = -(-k // pad) * pad
        A = torch.zeros((m, kp), dtype=a.dtype, device=a.device)
        A[:, :k] = a
    tile = dict(_TILE)
    if blockwise:
        kb = -(-k // 128)
        want_a, want_b = (m, kb), (-(-n // 128), kb)
        if not fp8 or scale_a is None or tuple(scale_a.shape) != want_a or \
                tuple(scale_b.shape) != want_b:
            raise FlyError(f"preshuffle_mm: blockwise scales are for fp8: scale_a {want_a} and "
                           f"scale_b {want_b} float32", Status.ARGUMENTS)
        sa, sb = scale_a.float().contiguous(), scale_b.float().contiguous()
        tile["BK"] = 128
    elif scale_a is None:
        sa = sb = _one(a.device).view(1, 1)  # unread: SCALED is false
    else:
        sa = scale_a.reshape(-1, 1).float().contiguous()
        sb = scale_b.reshape(-1, 1).float().contiguous()
        if sa.shape[0] != m or sb.shape[0] != n:
            raise FlyError(f"preshuffle_mm: scale_a holds M = {m} values and scale_b N = {n}, "
                           f"not {sa.shape[0]} and {sb.shape[0]}", Status.ARGUMENTS)
    consts = {"T": fly_type(a.dtype), "TD": fly_type(od), "SCALED": scale_a is not None,
              "BLOCK": blockwise, **tile}
    name = "preshuffle_mm_fp8_fnuz" if fnuz else "preshuffle_mm_fp8" if fp8 else "preshuffle_mm"
    kernel(name, consts, a.device)(A, bp, out, sa, sb)
    return out

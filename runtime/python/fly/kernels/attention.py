"""Attention (kernels/attention/): flash attention's forward pass, and the
rotary embedding of queries and keys fused with the write of keys and
values into a paged KV cache."""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel
from ._rows import accepts_dlpack, check_device, fly_type, sm_count

_TYPES = ("bf16", "f16", "f32")


def _bad(what: str) -> FlyError:
    return FlyError(f"fused_rope_cache: {what}", Status.ARGUMENTS)


def _heads(x: Any, name: str, tokens: int, d: int) -> Any:
    """x as tokens x heads x d without copying: [T, H, D] as it is, [T, H * D]
    split; its head dimension must be contiguous (x may be written in
    place, so it is never copied)."""
    if x.dim() == 2:
        if x.size(1) % d:
            raise _bad(f"{name} is {tuple(x.shape)}: its rows of {x.size(1)} are not whole "
                       f"heads of {d} (the head size of the caches)")
        if x.stride(1) != 1 and x.size(1) > 1:
            raise _bad(f"{name} must have contiguous rows (its strides are {x.stride()})")
        x = x.view(x.size(0), x.size(1) // d, d)
    if x.dim() != 3:
        raise _bad(f"{name} must be [tokens, heads, {d}] or [tokens, heads * {d}], not "
                   f"{tuple(x.shape)}")
    if x.size(0) != tokens or x.size(2) != d:
        raise _bad(f"{name} is {tuple(x.shape)}; expected [{tokens}, heads, {d}] ({tokens} "
                   f"tokens as q has, heads of {d} as the caches have)")
    if x.stride(2) != 1 and d > 1:
        raise _bad(f"{name} must have contiguous heads (its strides are {x.stride()})")
    return x


def _indices(x: Any, name: str, tokens: int) -> Any:
    """positions or slot_mapping as tokens contiguous int64 values."""
    import torch

    if x.dtype not in (torch.int64, torch.int32):
        raise _bad(f"{name} must be int64 (or int32), not {x.dtype}")
    if x.numel() != tokens:
        raise _bad(f"{name} has {x.numel()} values for {tokens} tokens")
    x = x.reshape(tokens)
    if x.dtype != torch.int64 or (tokens > 1 and x.stride(0) != 1):
        x = x.to(torch.int64).contiguous()
    return x


def _aligned(t: Any, nbytes: int) -> bool:
    """Whether t starts at a multiple of nbytes and each of its strides, but
    the last (contiguous) one, is a multiple of nbytes."""
    if t.data_ptr() % nbytes:
        return False
    return all(t.stride(i) * t.element_size() % nbytes == 0
               for i in range(t.dim() - 1) if t.size(i) > 1)


def _vector_width(d: int, rot: int, tensors: list, cos_sin: Any) -> int:
    """VEC: the elements of one access, 16 bytes' worth where the head size,
    the rotary size, the strides and the starts allow, else halved."""
    size = tensors[0].element_size()
    vec = 16 // size
    while vec > 1:
        if (d % (2 * vec) == 0 and rot % (2 * vec) == 0
                and all(_aligned(t, vec * size) for t in tensors)
                and _aligned(cos_sin, min(vec * cos_sin.element_size(), 16))):
            break
        vec //= 2
    return vec


@accepts_dlpack
def fused_rope_cache(q: Any, k: Any, v: Any, positions: Any, cos_sin_cache: Any, k_cache: Any,
                     v_cache: Any, slot_mapping: Any, is_neox: bool = True) -> None:
    """Rotary position embedding of q and k, in place, and the write of the
    rotated k and of v into a paged KV cache, in one launch (vLLM's
    rotary_embedding followed by reshape_and_cache).

    q             [T, HQ, D] or [T, HQ * D]: T tokens' queries, bf16, f16 or
                  f32; rows may be strided (a slice of a fused QKV tensor),
                  each head contiguous; rotated in place
    k             [T, HK, D] or [T, HK * D], likewise; rotated in place
    v             [T, HK, D] or [T, HK * D], of q's dtype; only read
    positions     T positions (int64; int32 is converted)
    cos_sin_cache [P, ROT]: row p holds the ROT/2 cosines, then the ROT/2
                  sines, of position p; float32 or q's dtype. ROT <= D is
                  the rotated part of each head (the rest is not changed);
                  a position outside 0 .. P - 1 uses the nearest row
    k_cache       [NB, BS, HK, D] paged cache of q's dtype: NB blocks of BS
    v_cache       tokens; each head contiguous
    slot_mapping  T slots (int64): block * BS + offset; a negative slot
                  (padding) or one past NB * BS skips the token's cache write
    is_neox       True: NeoX style (the halves of the rotated part are
                  paired); False: GPT-J style (neighbouring elements)
    """
    import torch

    dev = check_device(q, k, v, positions, cos_sin_cache, k_cache, v_cache, slot_mapping)
    if k_cache.dim() != 4:
        raise _bad(f"k_cache must be [blocks, block_size, kv_heads, head_size], not "
                   f"{tuple(k_cache.shape)}")
    if v_cache.shape != k_cache.shape:
        raise _bad(f"v_cache must have the shape of k_cache {tuple(k_cache.shape)}, not "
                   f"{tuple(v_cache.shape)}")
    d = k_cache.size(3)
    if q.dim() not in (2, 3):
        raise _bad(f"q must be [tokens, heads, {d}] or [tokens, heads * {d}], not "
                   f"{tuple(q.shape)}")
    tokens = q.size(0)
    q3 = _heads(q, "q", tokens, d)
    k3 = _heads(k, "k", tokens, d)
    v3 = _heads(v, "v", tokens, d)
    if v3.size(1) != k3.size(1):
        raise _bad(f"v has {v3.size(1)} heads and k {k3.size(1)}")
    if k_cache.size(2) != k3.size(1):
        raise _bad(f"k_cache holds {k_cache.size(2)} heads a token and k has {k3.size(1)}")
    t = fly_type(q.dtype)
    if t not in _TYPES:
        raise _bad(f"q must be bfloat16, float16 or float32, not {q.dtype}")
    for name, x in (("k", k), ("v", v), ("k_cache", k_cache), ("v_cache", v_cache)):
        if x.dtype != q.dtype:
            raise _bad(f"{name} must be {q.dtype} as q is, not {x.dtype}")
    for name, x in (("k_cache", k_cache), ("v_cache", v_cache)):
        if x.stride(3) != 1 and d > 1:
            raise _bad(f"{name} must have contiguous heads (its strides are {x.stride()})")
    if cos_sin_cache.dim() != 2:
        raise _bad(f"cos_sin_cache must be [positions, rotary_dim], not "
                   f"{tuple(cos_sin_cache.shape)}")
    rot = cos_sin_cache.size(1)
    if rot % 2 or rot == 0 or rot > d:
        raise _bad(f"cos_sin_cache has {rot} columns: the rotary dimension must be even, "
                   f"positive and at most the head size {d}")
    if cos_sin_cache.dtype not in (torch.float32, q.dtype):
        raise _bad(f"cos_sin_cache must be float32 or {q.dtype} as q is, not "
                   f"{cos_sin_cache.dtype}")
    if cos_sin_cache.size(0) == 0:
        raise _bad("cos_sin_cache has no positions")
    if cos_sin_cache.stride(1) != 1:
        cos_sin_cache = cos_sin_cache.contiguous()
    pos = _indices(positions, "positions", tokens)
    slots = _indices(slot_mapping, "slot_mapping", tokens)
    if tokens == 0:
        return None
    if k_cache.numel() == 0:
        raise _bad("k_cache and v_cache are empty")
    vec = _vector_width(d, rot, [q3, k3, v3, k_cache, v_cache], cos_sin_cache)
    if rot % (2 * vec) or d % (2 * vec):  # an odd half: no plan (VEC = 1 needs even sizes)
        raise _bad(f"head size {d} and rotary dimension {rot} must be even")
    consts = {"T": t, "CS": fly_type(cos_sin_cache.dtype), "D": d, "ROT": rot,
              "NEOX": bool(is_neox), "VEC": vec}
    kernel("fused_rope_cache", consts, dev)(q3, k3, v3, pos, cos_sin_cache, k_cache, v_cache,
                                            slots)
    return None


# log2(e): the kernel's softmax runs in base 2.
_LOG2E = 1.4426950408889634


def _flash_bad(what: str) -> FlyError:
    return FlyError(f"flash_attn: {what}", Status.ARGUMENTS)


def _tokens(x: Any) -> Any:
    """x (batch, seq, heads, D) as (batch seq) x (heads D) rows that TMA
    reads: contiguous and starting on 16 bytes, else copied."""
    if not x.is_contiguous() or x.data_ptr() % 16:
        x = x.contiguous() if not x.is_contiguous() else x.clone()
    b, s, h, d = x.shape
    return x.view(b * s, h * d)


def _qkv(q: Any, k: Any, v: Any, rank: int, what: str) -> None:
    """q, k and v are tensors of `rank` dimensions (`what` names them) and
    all bfloat16 or all float16."""
    import torch

    for t, name in ((q, "q"), (k, "k"), (v, "v")):
        if not isinstance(t, torch.Tensor) or t.dim() != rank:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise _flash_bad(f"{name} is {what}, not {got}")
    if q.dtype not in (torch.bfloat16, torch.float16) or k.dtype != q.dtype or v.dtype != q.dtype:
        raise _flash_bad(f"q, k and v are all bfloat16 or all float16, not {q.dtype}, {k.dtype} "
                         f"and {v.dtype}")


def _heads_and_out(q: Any, d: int, h: int, hk: int, out: Any, device: Any) -> Any:
    """Checks D and the heads; out as given (contiguous, of q's shape and
    type) or made."""
    import torch

    if d not in (64, 128, 256):
        raise _flash_bad(f"the head dimension D is 64, 128 or 256, not {d}")
    if hk == 0 or h % hk:
        raise _flash_bad(f"q's {h} heads are a whole number of k's and v's {hk} heads")
    if out is None:
        return torch.empty(q.shape, dtype=q.dtype, device=device)
    if (not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(q.shape) or
            out.dtype != q.dtype or not out.is_contiguous() or out.device != device):
        raise _flash_bad(f"out is a contiguous {q.dtype} tensor of q's shape {tuple(q.shape)} on "
                         f"{device}")
    return out


@accepts_dlpack
def flash_attn(q: Any, k: Any, v: Any, *, causal: bool = False,
               softmax_scale: Optional[float] = None, out: Optional[Any] = None,
               return_lse: bool = False, arch: Optional[str] = None) -> Any:
    """Flash attention's forward pass (kernels/attention/flash_attn.fly on
    Hopper GPUs, flash_attn_sm80.fly on the other NVIDIA GPUs from sm_80, or
    where arch="sm_80" asks for it; arch="sm_90a" asks for Hopper's;
    flash_attn_mfma.fly on AMD's gfx942 and gfx950, D 64 and 128): for q
    (batch, Sq, H, D) and k, v (batch, Sk, HK, D) of
    bfloat16 or float16 (H a multiple of HK: MHA, GQA or MQA; D 64, 128 or
    256, 256 on Hopper only),

        out[b, i, h] = sum_j softmax_j(scale q[b, i, h] . k[b, j, h // (H / HK)]) v[b, j, ...]

    with scale = softmax_scale (positive) or 1 / sqrt(D), over keys j <= i where causal
    (the top-left diagonal, as torch's scaled_dot_product_attention). out
    (batch, Sq, H, D) is q's type, written into `out` when given (contiguous,
    of that shape and type). With return_lse, also the log-sum-exp of each
    row's scaled scores, float32 (batch, H, Sq): (out, lse)."""
    import math

    import torch

    _qkv(q, k, v, 4, "(batch, seq, heads, D)")
    b, sq, h, d = q.shape
    if tuple(k.shape) != tuple(v.shape) or k.size(0) != b or k.size(3) != d:
        raise _flash_bad(f"k and v are (batch, Sk, HK, D) with q's batch and D: q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    sk, hk = k.size(1), k.size(2)
    device = check_device(q, k, v)
    out = _heads_and_out(q, d, h, hk, out, device)
    if sk == 0 and sq > 0:
        raise _flash_bad("k and v have no keys: a softmax over no scores")
    kind = _flash_kind(arch, device)
    lse = torch.empty((b, h, sq), dtype=torch.float32, device=device)
    if b == 0 or sq == 0 or h == 0:
        return (out, lse) if return_lse else out
    scale = _scale(softmax_scale, d)
    none = _no_offsets(device)
    _flash_launch(kind, q.dtype, d, causal, False, device, _tokens(q), _tokens(k), _tokens(v),
                  out.view(b * sq, h * d), lse.view(b * h, sq), none, none, sq, sk, h // hk,
                  scale)
    return (out, lse) if return_lse else out


_NO_OFFSETS: dict = {}


def _no_offsets(device: Any) -> Any:
    """The kernels' cu_q and cu_k where the sequences are of one length
    (unread): one int32, made once per GPU."""
    t = _NO_OFFSETS.get(device)
    if t is None:
        import torch

        t = _NO_OFFSETS[device] = torch.zeros(1, dtype=torch.int32, device=device)
    return t


def _scale(softmax_scale: Optional[float], d: int) -> float:
    """The scores' scale: softmax_scale, which must be positive (Hopper's
    kernel takes each row's maximum before scaling), or 1 / sqrt(D)."""
    import math

    if softmax_scale is None:
        return 1.0 / math.sqrt(d)
    if not softmax_scale > 0 or math.isinf(softmax_scale):
        raise _flash_bad(f"softmax_scale is a positive finite number, not {softmax_scale!r}")
    return float(softmax_scale)


def _flash_kind(arch: Optional[str], device: Any) -> str:
    """Which forward kernel runs on device: "mfma" (flash_attn_mfma.fly) on
    an AMD GPU (PyTorch built for ROCm), else "sm_90a" or "sm_80" as
    gemm._arch chooses among NVIDIA's (arch, when given, is one of those)."""
    import torch

    from .gemm import _arch

    if getattr(torch.version, "hip", None):
        if arch is not None:
            raise _flash_bad(f"arch chooses between NVIDIA kernels (\"sm_90a\", \"sm_80\"); an "
                             f"AMD GPU runs the MFMA kernel, not {arch!r}")
        return "mfma"
    return _arch(arch, device, "flash_attn")


def _flash_launch(kind: str, dtype: Any, d: int, causal: bool, varlen: bool, device: Any,
                  q2: Any, k2: Any, v2: Any, o2: Any, lse2: Any, cu_q: Any, cu_k: Any, sq: int,
                  sk: int, group: int, scale: float) -> None:
    """One launch of flash_attn (kind "sm_90a"), flash_attn_sm80 or
    flash_attn_mfma on the 2-D views (rows of tokens) q2, k2, v2, o2 and
    lse2."""
    if kind == "mfma":
        if d == 256:
            raise _flash_bad("the head dimension 256 runs on Hopper GPUs only: the MFMA "
                             "kernel takes D 64 and 128")
        # 128 query rows a block (4 wavefronts of 32), 64-key steps.
        consts = {"T": fly_type(dtype), "D": d, "WAVES": 4, "BN": 64, "CAUSAL": bool(causal),
                  "VARLEN": varlen}
        kernel("flash_attn_mfma", consts, device)(q2, k2, v2, o2, lse2, cu_q, cu_k, sq, sk,
                                                  group, scale * _LOG2E)
        return
    if kind == "sm_80" and d == 256:
        raise _flash_bad("the head dimension 256 runs on Hopper GPUs only (arch sm_90a): the "
                         "Ampere kernel's registers hold D 128 at most")
    if kind == "sm_80":
        # 64 query rows a block, 64-key steps in two stages. (At D 64, 128
        # rows ran 1.07-1.10x faster on an H100, but spill on sm_80.)
        consts = {"T": fly_type(dtype), "D": d, "WARPS": 4, "BN": 64, "STAGES": 2,
                  "CAUSAL": bool(causal), "VARLEN": varlen}
        kernel("flash_attn_sm80", consts, device)(q2, k2, v2, o2, lse2, cu_q, cu_k, sq, sk, group,
                                                  scale * _LOG2E)
        return
    # D 64: four stages of K and V (1.03-1.06x three at seq 4K-16K on an
    # H100); D 128: three fill shared memory; D 256: two of 64 keys.
    # D 64 and 128 run persistent, a block a multiprocessor walking the
    # tiles (1.0-1.25x a block a tile on an H100; causal: pairs of row
    # tiles of equal work, each tile's stores beside the next one's first
    # S, 1.02-1.27x at seq 512-16K). D 256's consumers have no registers to
    # spare for the walk.
    persistent = d != 256
    # D 64 without causal from 2K rows: tiles of 192 rows, three consumer
    # warpgroups taking turns (1.06-1.07x two at 4K-16K; 0.98x at 1K).
    # Not with varlen, whose offsets take the registers the three have.
    bm = 192 if d == 64 and not causal and not varlen and sq >= 2048 else 128
    # D 64 keeps two tiles' Q (shared memory has room beside 4 stages): the
    # walk loads the next tile's Q while this one runs (1.02-1.08x one; at
    # D 128 a second Q costs a stage, which lost 0.85-0.9x).
    consts = {"T": fly_type(dtype), "D": d, "BM": bm, "BN": 64 if d == 256 else 128,
              "STAGES": {64: 4, 128: 3, 256: 2}[d], "CAUSAL": bool(causal), "PINGPONG": True,
              "VARLEN": varlen, "PERSISTENT": persistent, "QBUF": 2 if d == 64 else 1}
    kernel("flash_attn", consts, device)(q2, k2, v2.t(), o2, lse2, cu_q, cu_k, sq, sk, group,
                                         scale * _LOG2E, sm_count(device))


def _rows(x: Any) -> Any:
    """x (tokens, heads, D) as tokens x (heads D) rows that TMA and cp.async
    read: contiguous and starting on 16 bytes, else copied."""
    if not x.is_contiguous() or x.data_ptr() % 16:
        x = x.contiguous() if not x.is_contiguous() else x.clone()
    t, h, d = x.shape
    return x.view(t, h * d)


@accepts_dlpack
def flash_attn_varlen(q: Any, k: Any, v: Any, cu_seqlens_q: Any, cu_seqlens_k: Any,
                      max_seqlen_q: Optional[int] = None, max_seqlen_k: Optional[int] = None, *,
                      causal: bool = False, softmax_scale: Optional[float] = None,
                      out: Optional[Any] = None, return_lse: bool = False,
                      arch: Optional[str] = None) -> Any:
    """flash_attn over B sequences of any lengths packed together, as
    FlashAttention's flash_attn_varlen_func: q (total_q, H, D) holds sequence
    b's queries in rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1, k and v
    (total_k, HK, D) its keys and values likewise (cu_seqlens_* int32, B + 1
    offsets from 0, on the GPU). Each sequence attends to its own keys
    (causal: key j <= query i, counted from the sequence's start, top-left
    as flash_attn); a sequence with queries and no keys gets zeros. out
    (total_q, H, D) of q's type; with return_lse also lse (H, total_q)
    float32 (-1e30 for a row with no keys). max_seqlen_q and max_seqlen_k,
    the longest sequences, size the grid: read from the offsets (a wait
    for the GPU) when not given."""
    import math

    import torch

    _qkv(q, k, v, 3, "(tokens, heads, D)")
    tq, h, d = q.shape
    if tuple(k.shape) != tuple(v.shape) or k.size(2) != d:
        raise _flash_bad(f"k and v are (tokens, HK, D) with q's D: q {tuple(q.shape)}, k "
                         f"{tuple(k.shape)}, v {tuple(v.shape)}")
    tk, hk = k.size(0), k.size(1)
    device = check_device(q, k, v, cu_seqlens_q, cu_seqlens_k)
    out = _heads_and_out(q, d, h, hk, out, device)
    for name, c in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if c.dtype != torch.int32 or c.dim() != 1 or c.numel() < 2:
            raise _flash_bad(f"{name} is int32 offsets, B + 1 of them, not "
                             f"{tuple(c.shape)} {c.dtype}")
    if cu_seqlens_k.numel() != cu_seqlens_q.numel():
        raise _flash_bad(f"cu_seqlens_q and cu_seqlens_k hold B + 1 offsets each, not "
                         f"{cu_seqlens_q.numel()} and {cu_seqlens_k.numel()}")
    kind = _flash_kind(arch, device)
    lse = torch.empty((h, tq), dtype=torch.float32, device=device)
    cu_q, cu_k = cu_seqlens_q.contiguous(), cu_seqlens_k.contiguous()
    if max_seqlen_q is None:
        max_seqlen_q = int((cu_q[1:] - cu_q[:-1]).max())
    if max_seqlen_k is None:
        max_seqlen_k = int((cu_k[1:] - cu_k[:-1]).max())
    if tq == 0 or h == 0 or max_seqlen_q <= 0:
        return (out, lse) if return_lse else out
    if tk == 0:
        out.zero_()
        lse.fill_(-1e30)
        return (out, lse) if return_lse else out
    scale = _scale(softmax_scale, d)
    _flash_launch(kind, q.dtype, d, causal, True, device, _rows(q), _rows(k), _rows(v),
                  out.view(tq, h * d), lse, cu_q, cu_k, int(max_seqlen_q),
                  max(int(max_seqlen_k), 1), h // hk, scale)
    return (out, lse) if return_lse else out


def _decode_bad(what: str) -> FlyError:
    return FlyError(f"paged_attention_decode: {what}", Status.ARGUMENTS)


# paged_decode's block: 4 warps, a step of 4 x 16 tokens (paged_decode_mfma's
# on AMD: 4 wavefronts, the same step).
_DECODE_WARPS = 4
_DECODE_STEP = 16 * _DECODE_WARPS
# The fewest tokens a split takes when the context is cut for parallelism.
_DECODE_MIN_SPLIT = 4 * _DECODE_STEP


def _decode_splits(units: int, max_context: int, sms: int, splits: Optional[int]) -> tuple:
    """(splits, split_tokens): the context cut into splits of split_tokens
    (a multiple of the block's step) so that units x splits blocks fill the
    GPU once, two blocks a multiprocessor (each takes about 100 KiB of
    shared memory), and no more (a second, partial round of blocks costs
    as much as a full one), no split shorter than _DECODE_MIN_SPLIT
    tokens; `splits` as given when it is (or fewer, where splits of whole
    steps need fewer: 7 of 1000 tokens are 6 of 192). On an H100, 0.96 of the copy
    rate over eight shapes of 2K-64K tokens against 0.92 for the rounding
    up of 2 x SMs / units."""
    ctx = max(max_context, 1)
    if splits is None:
        splits = max(1, min(2 * sms // units, -(-ctx // _DECODE_MIN_SPLIT)))
    tokens = -(-ctx // splits)
    tokens = -(-tokens // _DECODE_STEP) * _DECODE_STEP
    return -(-ctx // tokens), tokens


def _decode_kernel(t: str, kt: str, d: int, bs: int, split: bool) -> tuple:
    """(name, consts) of the kernel paged_attention_decode launches for q of
    type t and caches of kt: paged_decode_mfma.fly on an AMD GPU (PyTorch
    built for ROCm, as flash_attn chooses flash_attn_mfma), else
    paged_decode.fly; each with its fp8 entry for float8_e4m3fn caches."""
    import torch

    fp8 = kt == "f8e4m3"
    if getattr(torch.version, "hip", None):
        consts = {"T": t, "KT": kt, "D": d, "BS": bs, "WAVES": _DECODE_WARPS, "SPLIT": split}
        return ("paged_decode_mfma_fp8" if fp8 else "paged_decode_mfma"), consts
    consts = {"T": t, "KT": kt, "D": d, "BS": bs, "WARPS": _DECODE_WARPS,
              "STAGES": 4 if fp8 else 3, "SPLIT": split}
    return ("paged_decode_fp8" if fp8 else "paged_decode"), consts


@accepts_dlpack
def paged_attention_decode(q: Any, k_cache: Any, v_cache: Any, block_tables: Any,
                           context_lens: Any, *, softmax_scale: Optional[float] = None,
                           k_scale: float = 1.0, v_scale: float = 1.0,
                           max_context: Optional[int] = None, splits: Optional[int] = None,
                           out: Optional[Any] = None) -> Any:
    """Attention of one query token per sequence against a paged KV cache
    (kernels/attention/paged_decode.fly on NVIDIA GPUs from sm_80, fp8
    caches from sm_90; paged_decode_mfma.fly on AMD's gfx942 and gfx950,
    where PyTorch is ROCm's, with the same arguments and results):

        out[b, h] = sum_t softmax_t(scale q[b, h] . K[b, t]) V[b, t],  t < context_lens[b]

    q             (B, HQ, D) bfloat16 or float16, D 64 or 128; each head
                  contiguous
    k_cache       (NB, BS, HK, D) blocks of BS (16 or 32) tokens, of q's
    v_cache       dtype or float8_e4m3fn; token t of sequence b is row
                  t % BS of block block_tables[b, t // BS]; HQ a multiple of
                  HK (query head h reads head h // (HQ // HK)); the start and
                  strides multiples of 16 bytes
    block_tables  (B, MAXB) int32; only a sequence's first
                  ceil(context / BS) entries are read, and an entry outside
                  0 .. NB - 1 reads as a block of zeros
    context_lens  (B,) int32, each clamped to 0 .. MAXB BS; a sequence of no
                  tokens gets zeros
    softmax_scale the scale of the scores, 1 / sqrt(D) by default
    k_scale, v_scale  an 8-bit cache's scales: K = k_scale k_cache (1 for
                  16-bit caches); on gfx942 the NaN bytes of float8_e4m3fn
                  read as +-480 (its fp8 instructions are FNUZ's)
    max_context   the longest context (context_lens.max(), read from the GPU,
                  when not given): it sizes the grid
    splits        the pieces each context is cut into (then combined by a
                  second launch), or fewer where pieces of whole 64-token
                  steps need fewer; chosen from the shape when not given
    out           where to write (B, HQ, D) of q's dtype, heads contiguous
    """
    import math

    import torch

    if not isinstance(q, torch.Tensor) or q.dim() != 3:
        got = tuple(q.shape) if isinstance(q, torch.Tensor) else type(q).__name__
        raise _decode_bad(f"q is (batch, heads, D), not {got}")
    device = check_device(q, k_cache, v_cache, block_tables, context_lens)
    if q.dtype not in (torch.bfloat16, torch.float16):
        raise _decode_bad(f"q is bfloat16 or float16, not {q.dtype}")
    b, hq, d = q.shape
    if d not in (64, 128):
        raise _decode_bad(f"the head dimension D is 64 or 128, not {d}")
    if q.stride(2) != 1:
        raise _decode_bad(f"q's heads must be contiguous (its strides are {q.stride()})")
    if k_cache.dim() != 4 or k_cache.size(3) != d:
        raise _decode_bad(f"k_cache is (blocks, block_size, kv_heads, {d}), not "
                          f"{tuple(k_cache.shape)}")
    if tuple(v_cache.shape) != tuple(k_cache.shape) or v_cache.dtype != k_cache.dtype:
        raise _decode_bad(f"v_cache has k_cache's shape {tuple(k_cache.shape)} and dtype "
                          f"{k_cache.dtype}, not {tuple(v_cache.shape)} and {v_cache.dtype}")
    if k_cache.dtype not in (q.dtype, torch.float8_e4m3fn):
        raise _decode_bad(f"the caches are of q's dtype {q.dtype} or float8_e4m3fn, not "
                          f"{k_cache.dtype}")
    nb, bs, hk = k_cache.size(0), k_cache.size(1), k_cache.size(2)
    if bs not in (16, 32):
        raise _decode_bad(f"the block size is 16 or 32 tokens, not {bs}")
    if hk == 0 or hq % hk:
        raise _decode_bad(f"q's {hq} heads must be a multiple of the caches' {hk} heads")
    for name, c in (("k_cache", k_cache), ("v_cache", v_cache)):
        if c.stride(3) != 1 or not _aligned(c, 16):
            raise _decode_bad(f"{name} must have contiguous heads, start and strides on 16 bytes "
                              f"(its strides are {c.stride()})")
    if block_tables.dtype != torch.int32 or block_tables.dim() != 2 or block_tables.size(0) != b:
        raise _decode_bad(f"block_tables is ({b}, max_blocks) int32, not "
                          f"{tuple(block_tables.shape)} {block_tables.dtype}")
    if context_lens.dtype != torch.int32 or tuple(context_lens.shape) != (b,):
        raise _decode_bad(f"context_lens is ({b},) int32, not {tuple(context_lens.shape)} "
                          f"{context_lens.dtype}")
    if out is None:
        out = torch.empty((b, hq, d), dtype=q.dtype, device=device)
    elif (not isinstance(out, torch.Tensor) or tuple(out.shape) != (b, hq, d) or
          out.dtype != q.dtype or out.stride(2) != 1 or out.device != device):
        raise _decode_bad(f"out is a {q.dtype} tensor of q's shape {(b, hq, d)} on {device} "
                          f"with contiguous heads")
    if splits is not None and (not isinstance(splits, int) or splits < 1):
        raise _decode_bad(f"splits is a whole number of at least 1, not {splits!r}")
    if b == 0 or hq == 0:
        return out
    if block_tables.stride(1) != 1 and block_tables.size(1) > 1:
        block_tables = block_tables.contiguous()
    if nb == 0 or block_tables.size(1) == 0:
        return out.zero_()
    context_lens = context_lens.contiguous()
    if max_context is None:
        max_context = int(context_lens.max())
    max_context = min(max(int(max_context), 0), block_tables.size(1) * bs)
    group = hq // hk
    from ._rows import sm_count

    units = hk * -(-group // 16) * b
    n, tokens = _decode_splits(units, max_context, sm_count(device), splits)
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(d)
    t = fly_type(q.dtype)
    name, consts = _decode_kernel(t, fly_type(k_cache.dtype), d, bs, n > 1)
    kern = kernel(name, consts, device)
    if n == 1:
        none = torch.empty((1, d), dtype=torch.float32, device=device)
        kern(q, k_cache, v_cache, block_tables, context_lens, out, none, none[:, :1], group,
             tokens, 1, scale * _LOG2E, float(k_scale), float(v_scale))
        return out
    part = torch.empty((b * hq * n, d), dtype=torch.float32, device=device)
    lse = torch.empty((b * hq, n), dtype=torch.float32, device=device)
    kern(q, k_cache, v_cache, block_tables, context_lens, out, part, lse, group, tokens, n,
         scale * _LOG2E, float(k_scale), float(v_scale))
    kernel("paged_decode_reduce", {"T": t, "D": d}, device)(part, lse, out)
    return out

"""Mixture-of-experts routing (kernels/moe/): the router's top-k softmax and
the token order the expert GEMMs consume, with vLLM's shapes and meanings."""
from __future__ import annotations

import operator
from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel, library
from ._registry import aot_values
from ._rows import (accepts_dlpack, as_rows, check_device, fly_type, next_pow2, vector_width)

# Entries of topk_ids a block of moe_align takes (ALIGN_TILE of
# kernels/moe/moe_align.fly); more than one tile takes moe_align_count first.
ALIGN_TILE = 2048
# The most experts moe_align handles (its ECAP, the counting table's width).
ALIGN_MAX_EXPERTS = 512


def _bad(what: str) -> FlyError:
    return FlyError(what, Status.ARGUMENTS)


def _whole_number(v: Any, name: str, fn: str) -> int:
    """v as an int: an int or anything with __index__ (a NumPy integer, a
    0-d integer tensor), not a bool or a float."""
    if not isinstance(v, bool):
        try:
            return operator.index(v)
        except TypeError:
            pass
    raise _bad(f"{fn}: {name} must be a whole number, not {v!r}")


def _check_out(t: Any, name: str, shape: Any, dtype: Any, dev: Any, fn: str) -> None:
    """An output tensor given in out=: of dtype on dev, rows contiguous; of
    shape (a tuple), or a vector of at least shape elements (an int)."""
    import torch

    if not isinstance(t, torch.Tensor):
        raise _bad(f"{fn}: out's {name} must be a torch.Tensor, not {type(t).__name__}")
    if t.dtype != dtype or t.device != dev:
        raise _bad(f"{fn}: out's {name} must be {dtype} on {dev}, not {t.dtype} on {t.device}")
    if isinstance(shape, tuple):
        if tuple(t.shape) != shape or (shape[1] > 1 and t.stride(1) != 1):
            raise _bad(f"{fn}: out's {name} must be {list(shape)} with contiguous rows, not "
                       f"{list(t.shape)} with strides {list(t.stride())}")
    elif t.dim() != 1 or t.numel() < shape or (t.numel() > 1 and t.stride(0) != 1):
        raise _bad(f"{fn}: out's {name} must be a contiguous vector of at least {shape} "
                   f"elements, not {list(t.shape)} with strides {list(t.stride())}")


def _ladder_cap(name: str, const: str, need: int, **fixed: Any) -> int:
    """The smallest value of const (a power-of-two capacity) among kernel
    `name`'s ahead-of-time specialisations with the fixed consts that is at
    least need; else need's power of two, compiled on first use."""
    key = (name, const, need, tuple(fixed.items()))
    cap = _CAPS.get(key)
    if cap is None:
        ladder = aot_values(library().entry(name), const, **fixed)
        cap = _CAPS[key] = next((c for c in ladder if c >= need), next_pow2(need))
    return cap


_CAPS: dict[tuple, int] = {}  # _ladder_cap's answers: a lookup after the first call


@accepts_dlpack
def topk_gating_softmax(gating_output: Any, topk: int, renormalize: bool = False,
                        with_token_expert_indices: bool = False,
                        out: Optional[tuple] = None) -> Any:
    """The router's choice: softmax over the experts, then the topk largest
    probabilities per token, largest first (of equal ones the lower expert
    first), as vLLM's topk_softmax.

    gating_output  [T, E] logits (any leading dimensions are flattened into
                   T), bf16, f16 or f32, last dimension contiguous; the
                   softmax is computed in f32
    topk           K, from 1 to E
    renormalize    divide the K weights by their sum
    out            where the results go, instead of new tensors: a tuple of
                   [T, K] tensors, each row contiguous (topk_weights f32,
                   topk_ids i32[, token_expert_indices i32])
    Returns (topk_weights f32 [T, K], topk_ids i32 [T, K]), and with
    with_token_expert_indices (or a third tensor in out) also vLLM's
    token_expert_indices, i32 [T, K] holding k * T + t.
    """
    import torch

    fn = "topk_gating_softmax"
    if not isinstance(gating_output, torch.Tensor):
        raise _bad(f"{fn}: gating_output must be a torch.Tensor, not {type(gating_output).__name__}")
    if gating_output.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise _bad(f"{fn}: gating_output must be bf16, f16 or f32, not {gating_output.dtype}")
    if gating_output.dim() == 0:
        raise _bad(f"{fn}: gating_output must be [tokens, experts], not a scalar")
    dev = check_device(gating_output)
    X = as_rows(gating_output, "gating_output")
    tokens, experts = X.shape
    if experts == 0:
        raise _bad(f"{fn}: gating_output has no experts (its last dimension is 0)")
    k = _whole_number(topk, "topk", fn)
    if not 1 <= k <= experts:
        raise _bad(f"{fn}: topk must be from 1 to the number of experts ({experts}), not {k}")
    if out is None:
        weights = torch.empty((tokens, k), dtype=torch.float32, device=dev)
        ids = torch.empty((tokens, k), dtype=torch.int32, device=dev)
        src = (torch.empty((tokens, k), dtype=torch.int32, device=dev)
               if with_token_expert_indices else None)
    else:
        names = ("topk_weights", "topk_ids", "token_expert_indices")
        dtypes = (torch.float32, torch.int32, torch.int32)
        if not isinstance(out, (tuple, list)) or len(out) not in (2, 3):
            raise _bad(f"{fn}: out must be (topk_weights, topk_ids[, token_expert_indices])")
        for t, name, dt in zip(out, names, dtypes):
            _check_out(t, name, (tokens, k), dt, dev, fn)
        weights, ids = out[0], out[1]
        src = out[2] if len(out) == 3 else None
    if tokens > 0:
        t = fly_type(X.dtype)
        vec = vector_width(experts, X.element_size(), X)
        kmax = 8 if k <= 8 else next_pow2(k)
        cap = _ladder_cap("topk_gating", "CAP", max(experts, vec), T=t, VEC=vec, KMAX=kmax)
        g = kernel("topk_gating", {"T": t, "VEC": vec, "CAP": cap, "KMAX": kmax}, dev)
        g(X, weights, ids, src if src is not None else ids, int(bool(renormalize)),
          int(src is not None))
    if src is not None:
        return weights, ids, src
    return weights, ids


@accepts_dlpack
def moe_align_block_size(topk_ids: Any, block_size: int, num_experts: int,
                         out: Optional[tuple] = None) -> Any:
    """The order the expert GEMMs read tokens in, as vLLM's
    moe_align_block_size: the flat indices of topk_ids sorted by expert
    (stable: increasing within an expert), each expert's run padded with
    topk_ids.numel() to a multiple of block_size.

    topk_ids     [T, K] expert indices (any shape; flattened); int32, or
                 another integer type (then converted, a copy); entries
                 outside 0 .. num_experts - 1 are left out
    block_size   the GEMM's block of rows, at least 1
    num_experts  E, from 1 to 512
    out          where the results go, instead of new tensors: a tuple of
                 three contiguous i32 vectors of at least the sizes below,
                 written whole (past the padded length sorted_token_ids
                 holds T*K and expert_ids 0)
    Returns (sorted_token_ids i32 [T*K + E*(block_size-1)], expert_ids i32
    [ceil(that / block_size)]: the expert of each block, 0 past the padded
    length, num_tokens_post_padded i32 [1]: the padded length).
    """
    import torch

    fn = "moe_align_block_size"
    if not isinstance(topk_ids, torch.Tensor):
        raise _bad(f"{fn}: topk_ids must be a torch.Tensor, not {type(topk_ids).__name__}")
    if topk_ids.dtype.is_floating_point or topk_ids.dtype.is_complex or topk_ids.dtype == torch.bool:
        raise _bad(f"{fn}: topk_ids must hold integers (int32), not {topk_ids.dtype}")
    bs = _whole_number(block_size, "block_size", fn)
    e = _whole_number(num_experts, "num_experts", fn)
    if bs < 1:
        raise _bad(f"{fn}: block_size must be at least 1, not {bs}")
    if not 1 <= e <= ALIGN_MAX_EXPERTS:
        raise _bad(f"{fn}: num_experts must be from 1 to {ALIGN_MAX_EXPERTS}, not {e}")
    dev = check_device(topk_ids)
    ids = topk_ids.reshape(-1)
    if ids.dtype != torch.int32:
        ids = ids.to(torch.int32)
    ids = ids.contiguous()
    n = ids.numel()
    if n + e * bs >= 2**31:
        raise _bad(f"{fn}: topk_ids.numel() + num_experts * block_size must stay below 2^31 "
                   f"({n} + {e} * {bs})")
    room = n + e * (bs - 1)
    blocks = -(-room // bs)
    if out is None:
        sorted_ids = torch.empty(room, dtype=torch.int32, device=dev)
        expert_ids = torch.empty(blocks, dtype=torch.int32, device=dev)
        total = torch.empty(1, dtype=torch.int32, device=dev)
    else:
        names = ("sorted_token_ids", "expert_ids", "num_tokens_post_padded")
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            raise _bad(f"{fn}: out must be (sorted_token_ids, expert_ids, "
                       f"num_tokens_post_padded)")
        for t, name, least in zip(out, names, (room, blocks, 1)):
            _check_out(t, name, least, torch.int32, dev, fn)
        sorted_ids, expert_ids, total = out
    if n == 0:  # nothing to sort (and no pointer to hand the kernel)
        sorted_ids.fill_(0)
        expert_ids.zero_()
        total.zero_()
        return sorted_ids, expert_ids, total
    ecap = _ladder_cap("moe_align", "ECAP", max(e, 32), BS=bs)
    tiles = -(-n // ALIGN_TILE)
    if tiles > 1:
        counts = torch.empty((tiles, e), dtype=torch.int32, device=dev)
        kernel("moe_align_count", {"ECAP": ecap}, dev)(ids, counts, e)
    else:
        counts = ids.view(1, n)  # not read with a single tile
    kernel("moe_align", {"BS": bs, "ECAP": ecap}, dev)(ids, counts, sorted_ids, expert_ids,
                                                       total, e)
    return sorted_ids, expert_ids, total

"""Peers of kernels/moe: PyTorch eager and Triton kernels written for this
benchmark in the style of Triton's tutorials.

topk_gating: softmax over the experts in f32, the K largest, renormalised
(as Mixtral and Qwen3 route). Triton: one program per block of tokens, the
block's logits a [tokens, experts] tile in registers, K rounds of argmax.

moe_align: the classic counting sort in Triton, four launches: per tile of
128 entries a count per expert (and the padding value written over the
tile's share of the output), per expert a prefix sum over the tiles, one
program for the prefix sum over the experts and the block's experts, and per
tile the scatter (an entry's rank in its tile from a comparison of all pairs,
so the order is stable, as Fly's). PyTorch: a stable argsort and index
arithmetic, with no host synchronisation.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from peers import Case

import fly.kernels as fk

TOKENS = [1, 32, 512, 4096, 32768]
ROUTES = [(8, 2), (64, 6), (128, 8), (256, 8)]
QUICK_GATING = [(4096, 256, 8), (32, 8, 2), (32768, 64, 6)]
ALIGN_TOKENS = [32, 512, 4096, 16384]
ALIGN_EXPERTS = [64, 256]
QUICK_ALIGN = [(512, 256), (16384, 256)]
ALIGN_K = 8
ALIGN_BS = 64


# ---- topk_gating -------------------------------------------------------------------


@triton.jit
def _topk_softmax(X, W, I, M, E, stride_x, K: tl.constexpr, RENORM: tl.constexpr,
                  BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    inside = (rows[:, None] < M) & (cols[None, :] < E)
    x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=inside,
                other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=1)
    e = tl.where(inside, tl.exp(x - m[:, None]), 0.0)
    p = e / tl.sum(e, axis=1)[:, None]
    p = tl.where(cols[None, :] < E, p, -1.0)
    ks = tl.arange(0, BLOCK_K)
    w = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    ids = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int32)
    for k in tl.static_range(K):
        best = tl.max(p, axis=1)
        arg = tl.argmax(p, axis=1)  # of equal ones, the lowest index
        w = tl.where(ks[None, :] == k, best[:, None], w)
        ids = tl.where(ks[None, :] == k, arg[:, None], ids)
        p = tl.where(cols[None, :] == arg[:, None], -1.0, p)
    if RENORM:
        w = w / tl.sum(w, axis=1)[:, None]
    out = (rows[:, None] < M) & (ks[None, :] < K)
    tl.store(W + rows[:, None] * K + ks[None, :], w, mask=out)
    tl.store(I + rows[:, None] * K + ks[None, :], ids, mask=out)


def triton_topk_gating(x, k, renormalize=True):
    m, e = x.shape
    w = torch.empty((m, k), dtype=torch.float32, device=x.device)
    i = torch.empty((m, k), dtype=torch.int32, device=x.device)
    block_e = triton.next_power_of_2(e)
    block_t = max(1, min(128, 4096 // block_e))
    _topk_softmax[(triton.cdiv(m, block_t),)](x, w, i, m, e, x.stride(0), K=k,
                                              RENORM=renormalize, BLOCK_T=block_t,
                                              BLOCK_E=block_e,
                                              BLOCK_K=triton.next_power_of_2(k), num_warps=4)
    return w, i


def torch_topk_gating(x, k, renormalize=True):
    p = torch.softmax(x, dim=-1, dtype=torch.float32)
    w, i = torch.topk(p, k, dim=-1)
    if renormalize:
        w = w / w.sum(dim=-1, keepdim=True)
    return w, i.to(torch.int32)


def gating_cases(quick: bool) -> list[Case]:
    shapes = QUICK_GATING if quick else [(t, e, k) for t in TOKENS for e, k in ROUTES]
    out = []
    for t, e, k in shapes:
        def make(t=t, e=e):
            return torch.randn(t, e, device="cuda", dtype=torch.bfloat16)
        out.append(Case(
            "topk_gating", f"{t}x{e} k{k}", t * e * 2 + t * k * 8, make, {
                "fly": lambda x, k=k: fk.topk_gating_softmax(x, k, True),
                "torch": lambda x, k=k: torch_topk_gating(x, k, True),
                "triton": lambda x, k=k: triton_topk_gating(x, k, True),
            }))
    return out


# ---- moe_align ---------------------------------------------------------------------

ALIGN_TILE = 128  # entries per Triton program


@triton.jit
def _align_count(Ids, Counts, Sorted, N, E, room, TILE: tl.constexpr, BLOCK_E: tl.constexpr):
    """Counts[pid, e] = the tile's entries of expert e; Sorted gets N over the
    tile's share of it (the last tile also up to its end)."""
    pid = tl.program_id(0)
    j = pid * TILE + tl.arange(0, TILE)
    e = tl.load(Ids + j, mask=j < N, other=-1)
    experts = tl.arange(0, BLOCK_E)
    hits = (e[:, None] == experts[None, :]).to(tl.int32)
    tl.store(Counts + pid * E + experts, tl.sum(hits, axis=0), mask=experts < E)
    last = pid == tl.num_programs(0) - 1
    hi = tl.where(last, room, (pid + 1) * TILE)
    for p0 in range(pid * TILE, hi, TILE):
        p = p0 + tl.arange(0, TILE)
        tl.store(Sorted + p, tl.full((TILE,), 0, tl.int32) + N, mask=p < hi)


@triton.jit
def _align_scan_tiles(Counts, Totals, P, E, BLOCK_P: tl.constexpr, BLOCK_E: tl.constexpr):
    """Counts[p, e] becomes the count of e in tiles before p; Totals[e] the
    count of e in all."""
    pid = tl.program_id(0)
    p = tl.arange(0, BLOCK_P)
    experts = pid * BLOCK_E + tl.arange(0, BLOCK_E)
    mask = (p[:, None] < P) & (experts[None, :] < E)
    c = tl.load(Counts + p[:, None] * E + experts[None, :], mask=mask, other=0)
    inclusive = tl.cumsum(c, axis=0)
    tl.store(Counts + p[:, None] * E + experts[None, :], inclusive - c, mask=mask)
    tl.store(Totals + experts, tl.sum(c, axis=0), mask=experts < E)


@triton.jit
def _align_scan_experts(Totals, Starts, ExpertIds, Total, E, blocks, BS: tl.constexpr,
                        BLOCK_E: tl.constexpr, CHUNK: tl.constexpr):
    experts = tl.arange(0, BLOCK_E)
    t = tl.load(Totals + experts, mask=experts < E, other=0)
    padded = (t + BS - 1) // BS * BS
    ends = tl.cumsum(padded, axis=0)
    tl.store(Starts + experts, ends - padded, mask=experts < E)
    total = tl.sum(padded, axis=0)
    tl.store(Total, total)
    ends = tl.where(experts < E, ends, total + 1)
    for b0 in range(0, blocks, CHUNK):
        b = b0 + tl.arange(0, CHUNK)
        pos = b * BS
        expert = tl.sum((ends[None, :] <= pos[:, None]).to(tl.int32), axis=1)
        tl.store(ExpertIds + b, tl.where(pos < total, expert, 0), mask=b < blocks)


@triton.jit
def _align_scatter(Ids, Counts, Starts, Sorted, N, E, TILE: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, TILE)
    j = pid * TILE + r
    e = tl.load(Ids + j, mask=j < N, other=-1)
    valid = (e >= 0) & (e < E)
    same = (e[:, None] == e[None, :]) & (r[None, :] < r[:, None])
    rank = tl.sum(same.to(tl.int32), axis=1)
    ex = tl.where(valid, e, 0)
    base = tl.load(Starts + ex, mask=valid, other=0) + tl.load(Counts + pid * E + ex,
                                                              mask=valid, other=0)
    tl.store(Sorted + base + rank, j, mask=valid)


def triton_moe_align(ids, bs, e):
    flat = ids.reshape(-1)
    n = flat.numel()
    room = n + e * (bs - 1)
    blocks = triton.cdiv(room, bs)
    dev = ids.device
    tiles = max(1, triton.cdiv(n, ALIGN_TILE))
    counts = torch.empty((tiles, e), dtype=torch.int32, device=dev)
    totals = torch.empty(e, dtype=torch.int32, device=dev)
    starts = torch.empty(e, dtype=torch.int32, device=dev)
    sorted_ids = torch.empty(room, dtype=torch.int32, device=dev)
    expert_ids = torch.empty(blocks, dtype=torch.int32, device=dev)
    total = torch.empty(1, dtype=torch.int32, device=dev)
    block_e = triton.next_power_of_2(e)
    _align_count[(tiles,)](flat, counts, sorted_ids, n, e, room, TILE=ALIGN_TILE,
                           BLOCK_E=block_e)
    block_p = triton.next_power_of_2(tiles)
    scan_e = max(1, min(block_e, 16384 // block_p))
    _align_scan_tiles[(triton.cdiv(e, scan_e),)](counts, totals, tiles, e, BLOCK_P=block_p,
                                                BLOCK_E=scan_e)
    _align_scan_experts[(1,)](totals, starts, expert_ids, total, e, blocks, BS=bs,
                              BLOCK_E=block_e, CHUNK=64)
    _align_scatter[(tiles,)](flat, counts, starts, sorted_ids, n, e, TILE=ALIGN_TILE)
    return sorted_ids, expert_ids, total


# The MoE 2-stage GEMMs (the peer of fly.kernels.moe_gemm_2stage): a
# Triton tiled matmul after the tutorial's, whose rows are gathered in
# moe_align's order; stage 1 keeps a gate and an up accumulator and writes
# silu(gate) * up, stage 2 adds the router-weighted product into each
# token's row with atomics. One program per BM sorted entries (one expert)
# and BN columns; a program past the padded length returns.
@triton.jit
def _moe_stage(a_ptr, b_ptr, c_ptr, w_ptr, sorted_ptr, expert_ptr, total_ptr, N, K, valid, topk,
               sam, sbe, sbn, scm, INNER, STAGE: tl.constexpr, BM: tl.constexpr,
               BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(0)
    if pid_m * BM >= tl.load(total_ptr):
        return
    rm = pid_m * BM + tl.arange(0, BM)
    ids = tl.load(sorted_ptr + rm)
    live = ids < valid
    if STAGE == 1:
        rows = tl.where(live, ids // topk, 0)
    else:
        rows = rm
    e = tl.load(expert_ptr + pid_m)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rows[:, None] * sam + rk[None, :]
    b = b_ptr + e * sbe + (rn % N)[None, :] * sbn + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    up = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        if STAGE == 1:
            u = tl.load(b + INNER * sbn, mask=rk[:, None] < K - k * BK, other=0.0)
            up = tl.dot(x, u, up)
        a += BK
        b += BK
    if STAGE == 1:
        h = acc * tl.sigmoid(acc) * up
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :], h.to(c_ptr.dtype.element_ty),
                 mask=rn[None, :] < N)
    else:
        w = tl.load(w_ptr + ids, mask=live, other=0.0)
        tok = tl.where(live, ids // topk, 0)
        tl.atomic_add(c_ptr + tok[:, None] * scm + rn[None, :], acc * w[:, None],
                      mask=live[:, None] & (rn[None, :] < N))


def triton_moe_2stage(x, w1, w2, weights, ids, bm=64, bn=64, bk=64):
    """The layer's output (f32) for x (T, H), w1 (E, 2I, H) gate then up
    rows, w2 (E, H, I), the router's weights and ids (T, K): moe_align in
    Triton, then the two stages."""
    t, h = x.shape
    e, i2, _ = w1.shape
    i = i2 // 2
    k = ids.shape[1]
    sorted_ids, expert_ids, total = triton_moe_align(ids, bm, e)
    rows = sorted_ids.numel()
    inter = torch.empty((rows, i), dtype=x.dtype, device=x.device)
    out = torch.zeros((t, h), dtype=torch.float32, device=x.device)
    w = weights.reshape(-1).float().contiguous()
    blocks = triton.cdiv(rows, bm)
    _moe_stage[(triton.cdiv(i, bn), blocks)](
        x, w1, inter, w, sorted_ids, expert_ids, total, i, h, t * k, k, x.stride(0),
        w1.stride(0), w1.stride(1), inter.stride(0), i, STAGE=1, BM=bm, BN=bn, BK=bk)
    _moe_stage[(triton.cdiv(h, bn), blocks)](
        inter, w2, out, w, sorted_ids, expert_ids, total, h, i, t * k, k, inter.stride(0),
        w2.stride(0), w2.stride(1), out.stride(0), 0, STAGE=2, BM=bm, BN=bn, BK=bk)
    return out


def torch_moe_align(ids, bs, e):
    flat = ids.reshape(-1).long()
    n = flat.numel()
    room = n + e * (bs - 1)
    blocks = -(-room // bs)
    counts = torch.bincount(flat, minlength=e)
    padded = (counts + bs - 1) // bs * bs
    ends = torch.cumsum(padded, 0)
    starts = ends - padded
    order = torch.argsort(flat, stable=True)
    expert = flat[order]
    rank = torch.arange(n, device=ids.device) - (torch.cumsum(counts, 0) - counts)[expert]
    sorted_ids = torch.full((room,), n, dtype=torch.int32, device=ids.device)
    sorted_ids[starts[expert] + rank] = order.to(torch.int32)
    pos = torch.arange(blocks, device=ids.device) * bs
    expert_ids = torch.searchsorted(ends, pos, right=True)
    expert_ids = torch.where(pos < ends[-1], expert_ids, 0).to(torch.int32)
    return sorted_ids, expert_ids, ends[-1:].to(torch.int32)


def align_cases(quick: bool) -> list[Case]:
    shapes = QUICK_ALIGN if quick else [(t, e) for t in ALIGN_TOKENS for e in ALIGN_EXPERTS]
    out = []
    for t, e in shapes:
        def make(t=t, e=e):  # distinct experts per token, as a router gives
            return torch.argsort(torch.rand(t, e, device="cuda"), dim=1)[:, :ALIGN_K].to(
                torch.int32).contiguous()
        n = t * ALIGN_K
        room = n + e * (ALIGN_BS - 1)
        written = room + -(-room // ALIGN_BS) + 1
        out.append(Case(
            "moe_align", f"{t}x{ALIGN_K} e{e}", 4 * (n + written), make, {
                "fly": lambda a, e=e: fk.moe_align_block_size(a, ALIGN_BS, e),
                "torch": lambda a, e=e: torch_moe_align(a, ALIGN_BS, e),
                "triton": lambda a, e=e: triton_moe_align(a, ALIGN_BS, e),
            }))
    return out


def cases(quick: bool) -> list[Case]:
    return gating_cases(quick) + align_cases(quick)

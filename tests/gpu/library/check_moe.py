#!/usr/bin/env python3
"""GPU checks of kernels/moe through fly.kernels, on fresh random inputs,
outputs poisoned and guarded.

topk_gating_softmax against a float64 reference: the experts of each token
sorted by logit, largest first, ties to the lower expert (a stable sort; the
softmax is monotonic, so this is the order of the probabilities, and it is
the order the kernel promises, so ids are compared exactly, ties included:
bf16 logits tie often). Weights (f32) against the float64 softmax of the
kernel's own experts, to 1e-5. T = 1, 7, 300, 4096; E from 6 to 384 (every
kind of specialisation: 16-byte loads, single elements, masked tails); rows
padded and starts offset; -inf logits; all-equal logits.

moe_align_block_size against a plain-Python reference of the same layout
(exact): sorted by expert, stable within an expert, each run padded with
T*K to a multiple of the block, the expert of each block, the padded
length. One tile (2048 entries) and several; experts with no tokens, one
expert with nearly all of them, entries of no expert (-1, E).
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
TOKENS = [1, 7, 300, 4096]
# (experts, top k): the models' (8, 2), (64, 6), (128, 8), (256, 8), and
# odd ones: fewer experts than a 16-byte vector, a count no vector divides,
# K = 1, K = E, and a CAP of 512.
ROUTES = [(8, 2), (64, 6), (128, 8), (256, 8), (6, 3), (60, 4), (16, 1), (8, 8), (384, 8)]


def gating_layouts(t, e):
    """(name, offset in elements, row stride) of the logits tried."""
    yield "contiguous", 0, e
    yield "offset by 1 element, rows padded by 3", 1, e + 3
    yield "offset by 8 elements, rows padded by 8", 8, e + 8


def ref_order(x):
    """The experts of each row by logit, largest first, ties to the lower
    expert."""
    return torch.sort(x.to(torch.float64), dim=-1, descending=True, stable=True).indices


def ref_weights(x, ids, renormalize):
    p = torch.softmax(x.to(torch.float64), dim=-1)
    w = torch.gather(p, 1, ids.long())
    return w / w.sum(-1, keepdim=True) if renormalize else w


def check_gating_case(c: Checks, x, k: int, renormalize: bool, src: bool, what: str,
                      guarded_out: bool = True) -> None:
    t = x.shape[0]
    if guarded_out:
        gw = Guarded((t, k), torch.float32)
        gi = Guarded((t, k), torch.int32)
        gs = Guarded((t, k), torch.int32) if src else None
        out = (gw.tensor, gi.tensor) + ((gs.tensor,) if src else ())
        got = fk.topk_gating_softmax(x, k, renormalize, out=out)
    else:
        got = fk.topk_gating_softmax(x, k, renormalize, with_token_expert_indices=src)
    torch.cuda.synchronize()
    w, i = got[0], got[1]
    order = ref_order(x)[:, :k].to(torch.int32)
    c.equal(f"{what}: ids", i, order)
    c.close(f"{what}: weights", w, ref_weights(x, order, renormalize), 1e-5, 1e-5)
    if src:
        expect = (torch.arange(k, device="cuda", dtype=torch.int32)[None, :] * t +
                  torch.arange(t, device="cuda", dtype=torch.int32)[:, None])
        c.equal(f"{what}: token_expert_indices", got[2], expect)
    if guarded_out:
        c.ok(f"{what}: guards", gw.guards_intact() and gi.guards_intact() and
             (gs is None or gs.guards_intact()))


def check_gating(c: Checks) -> None:
    n = 0
    for dt in DTYPES:
        for e, k in ROUTES:
            for t in TOKENS:
                for name, off, rs in gating_layouts(t, e):
                    n += 1
                    renormalize = n % 2 == 0
                    src = n % 3 == 0
                    x = Guarded((t, e), dt, off, rs).fill(rand((t, e), dt, scale=2.0))
                    what = (f"topk_gating {dt} T={t} E={e} K={k} {name}"
                            f"{' renormalized' if renormalize else ''}")
                    check_gating_case(c, x.tensor, k, renormalize, src, what)
                    c.ok(what + ": input untouched", x.guards_intact())
    # Special rows: all logits equal (ties everywhere: experts 0 .. K-1), most
    # of them -inf (masked experts; K past the finite ones picks -inf ones,
    # of weight 0), large logits (exp underflows for most), a 3-D input and
    # new outputs.
    x = torch.zeros((5, 64), dtype=torch.bfloat16, device="cuda")
    check_gating_case(c, x, 8, False, True, "topk_gating all logits equal")
    x = rand((33, 16), torch.float32)
    x[:, torch.arange(16, device="cuda") % 4 != 0] = float("-inf")
    check_gating_case(c, x, 8, True, False, "topk_gating 12 of 16 logits -inf, K > finite")
    x = rand((300, 128), torch.float16, scale=30.0)
    check_gating_case(c, x, 8, False, False, "topk_gating logits of scale 30")
    x = rand((2, 3, 256), torch.bfloat16)
    got = fk.topk_gating_softmax(x, 8, True, with_token_expert_indices=True)
    torch.cuda.synchronize()
    flat = x.reshape(6, 256)
    c.equal("topk_gating 3-D input, new outputs: ids", got[1], ref_order(flat)[:, :8].to(torch.int32))
    c.close("topk_gating 3-D input, new outputs: weights", got[0],
            ref_weights(flat, got[1], True), 1e-5, 1e-5)
    c.raises("topk_gating refuses topk > E",
             lambda: fk.topk_gating_softmax(rand((4, 8), torch.float32), 9), "topk")
    c.raises("topk_gating refuses integer logits",
             lambda: fk.topk_gating_softmax(torch.zeros((4, 8), dtype=torch.int32,
                                                        device="cuda"), 2), "gating_output")
    c.raises("topk_gating refuses an out of the wrong shape",
             lambda: fk.topk_gating_softmax(rand((4, 8), torch.float32), 2,
                                            out=(torch.empty((4, 3), device="cuda"),
                                                 torch.empty((4, 2), dtype=torch.int32,
                                                             device="cuda"))), "topk_weights")


def ref_align(ids: list, e: int, bs: int, room: int, blocks: int):
    """(sorted_token_ids, expert_ids, padded length) of the flat ids."""
    n = len(ids)
    runs = [[] for _ in range(e)]
    for i, x in enumerate(ids):
        if 0 <= x < e:
            runs[x].append(i)
    sorted_ids = [n] * room
    expert_ids = [0] * blocks
    pos = 0
    for x in range(e):
        sorted_ids[pos:pos + len(runs[x])] = runs[x]
        padded = -(-len(runs[x]) // bs) * bs
        for b in range(pos // bs, (pos + padded) // bs):
            expert_ids[b] = x
        pos += padded
    return sorted_ids, expert_ids, pos


def random_ids(t: int, k: int, e: int, kind: str):
    """[t, k] expert ids of one of several kinds of routing."""
    if kind == "uniform":
        return torch.randint(0, e, (t, k), dtype=torch.int32, device="cuda")
    if kind == "half the experts idle":
        used = torch.randperm(e, device="cuda")[:max(1, e // 2)]
        return used[torch.randint(0, used.numel(), (t, k), device="cuda")].to(torch.int32)
    if kind == "one expert takes most":
        ids = torch.randint(0, e, (t, k), dtype=torch.int32, device="cuda")
        hot = torch.rand((t, k), device="cuda") < 0.9
        return torch.where(hot, torch.full_like(ids, e // 2), ids)
    if kind == "some of no expert":
        return torch.randint(-1, e + 2, (t, k), dtype=torch.int32, device="cuda")
    # distinct experts per token, as a router gives
    return torch.argsort(torch.rand((t, e), device="cuda"), dim=1)[:, :k].to(torch.int32)


def check_align_case(c: Checks, ids, e: int, bs: int, what: str, extra: int = 0) -> None:
    n = ids.numel()
    room = n + e * (bs - 1)
    blocks = -(-room // bs)
    gs = Guarded((room + extra,), torch.int32)
    ge = Guarded((blocks + extra,), torch.int32)
    gt = Guarded((1,), torch.int32)
    fk.moe_align_block_size(ids, bs, e, out=(gs.tensor, ge.tensor, gt.tensor))
    torch.cuda.synchronize()
    flat = ids.reshape(-1).tolist()
    rs, re, rt = ref_align(flat, e, bs, room + extra, blocks + extra)
    c.equal(f"{what}: sorted_token_ids", gs.tensor.cpu(), torch.tensor(rs, dtype=torch.int32))
    c.equal(f"{what}: expert_ids", ge.tensor.cpu(), torch.tensor(re, dtype=torch.int32))
    c.equal(f"{what}: num_tokens_post_padded", gt.tensor.cpu(), torch.tensor([rt], dtype=torch.int32))
    c.ok(f"{what}: guards", gs.guards_intact() and ge.guards_intact() and gt.guards_intact())


def check_align(c: Checks) -> None:
    kinds = ["router", "uniform", "half the experts idle", "one expert takes most",
             "some of no expert"]
    n = 0
    for e in [1, 8, 60, 64, 128, 256, 512]:
        for bs in [16, 32, 64, 128]:
            for t in TOKENS:
                for k in sorted({1, min(2, e), min(8, e)}):
                    kind = kinds[n % len(kinds)]
                    if kind == "router" and k > e:
                        kind = "uniform"
                    n += 1
                    ids = random_ids(t, k, e, kind)
                    check_align_case(c, ids, e, bs, f"moe_align E={e} BS={bs} T={t} K={k} {kind}",
                                     extra=5 if n % 4 == 0 else 0)
    # The edges of a tile (2048 entries), many tiles, int64 ids, bad arguments.
    for entries in [2047, 2048, 2049, 4096, 4097, 65536 * 2]:
        ids = random_ids(entries // 8 + 1, 8, 256, "router").reshape(-1)[:entries]
        check_align_case(c, ids, 256, 64, f"moe_align {entries} entries, E=256 BS=64")
    ids = torch.randint(0, 64, (300, 6), dtype=torch.int64, device="cuda")
    got = fk.moe_align_block_size(ids, 64, 64)
    torch.cuda.synchronize()
    rs, re, rt = ref_align(ids.reshape(-1).tolist(), 64, 64, 1800 + 64 * 63, -(-(1800 + 64 * 63) // 64))
    c.equal("moe_align int64 ids, new outputs: sorted_token_ids", got[0].cpu(),
            torch.tensor(rs, dtype=torch.int32))
    c.equal("moe_align int64 ids, new outputs: expert_ids", got[1].cpu(),
            torch.tensor(re, dtype=torch.int32))
    c.equal("moe_align int64 ids, new outputs: total", got[2].cpu(),
            torch.tensor([rt], dtype=torch.int32))
    c.raises("moe_align refuses 513 experts",
             lambda: fk.moe_align_block_size(random_ids(4, 2, 8, "uniform"), 64, 513), "num_experts")
    c.raises("moe_align refuses block_size 0",
             lambda: fk.moe_align_block_size(random_ids(4, 2, 8, "uniform"), 0, 8), "block_size")
    c.raises("moe_align refuses float ids",
             lambda: fk.moe_align_block_size(torch.zeros(8, device="cuda"), 16, 8), "topk_ids")


def main() -> int:
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    c = Checks("moe")
    check_gating(c)
    check_align(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

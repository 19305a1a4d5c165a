#!/usr/bin/env python3
"""The paged-attention decode benchmark: fly.kernels.paged_attention_decode
against PyTorch (the pages gathered with index_select, then SDPA with
enable_gqa), a Triton split-K flash decoding written for this benchmark
(below), and torch's device-to-device copy of as many bytes as the caches
read, in one process on the GPU.

    python3 tests/bench/paged_decode.py [--graph] [--quick] [--impl fly,triton,torch,copy]

Not a test: figures depend on the machine. Per case, one bf16 query token
for each of B sequences of one context length, D 128, 32 or 64 query heads
over 8 key heads (and 32 over 32), caches of bf16 or float8_e4m3fn (with
scales) in blocks of 16 tokens, each sequence's blocks a random
permutation of the cache's:

* inputs are fresh random data (never zeros); the cases of 4K tokens and
  more read 64 MiB or more of K and V (past L2), the smallest (1 x 1K)
  measures latency and sits in L2;
* each implementation runs once to warm up (Triton autotunes then; its
  output and Fly's are compared with PyTorch's, a difference over 5e-2
  printed), then CUDA events time batches of launches, the
  implementations' batches in turn (clocks that move under the power cap
  move for all alike), and each one's median batch time per launch is
  kept; PyTorch's time includes its gather (how it reads a paged cache);
* --graph: each implementation's batch of launches (but the copy's) is
  captured in a CUDA graph and replayed (the GPU's time alone, as serving engines run their
  decode steps); without it the host's cost of each call is in the time,
  which dominates the small cases (tens of microseconds a call);
* GB/s = the K and V bytes the contexts hold (B ctx HK D elem 2) / time;
  the copy moves a buffer of that size, its rate counted as read plus
  write (2 bytes / time). The table's last columns are Fly over the copy
  rate, over Triton and over PyTorch; lines "bench NAME VALUE UNIT" give
  the geometric means (over the copy: contexts of 4K and more).

The Triton peer: one program per (sequence, key head, split) loads the
query heads of its group as the rows of a tile padded to 16, then walks
its split's tokens BLOCK_N at a time (each token's block from the table),
S = Q K^T and O += P V by tl.dot with an online softmax in base 2, fp8
converted to the 16-bit type and its scales folded into the score's scale
and the output; a second kernel combines the splits by their log-sum-exp.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, HERE)

from peers import fly_kernels, geomean, gpu_torch  # noqa: E402

D = 128
BS = 16                       # tokens of a cache block
K_SCALE, V_SCALE = 0.05, 0.02  # an fp8 cache holds randn / scale
# (cache, query heads, key heads, batch, context)
CASES = [
    ("bf16", 32, 8, 1, 1024),
    ("bf16", 32, 8, 32, 1024),
    ("bf16", 32, 8, 1, 32768),
    ("bf16", 32, 8, 8, 4096),
    ("bf16", 32, 8, 64, 4096),
    ("bf16", 32, 8, 16, 16384),
    ("bf16", 64, 8, 4, 16384),
    ("bf16", 64, 8, 32, 4096),
    ("bf16", 32, 32, 4, 4096),
    ("fp8", 32, 8, 1, 32768),
    ("fp8", 32, 8, 16, 16384),
    ("fp8", 64, 8, 64, 4096),
    ("fp8", 32, 32, 8, 4096),
]
QUICK = [("bf16", 32, 8, 16, 16384), ("bf16", 64, 8, 32, 4096), ("fp8", 32, 8, 1, 32768)]

try:
    import triton
    import triton.language as tl
except Exception as e:  # noqa: BLE001 - the benchmark then times the others
    triton = None
    NO_TRITON = f"{type(e).__name__}: {e}"

if triton is not None:
    def _split_configs():
        return [triton.Config({"BLOCK_N": bn}, num_warps=4, num_stages=st)
                for bn in (32, 64, 128) for st in (2, 3)]

    @triton.autotune(configs=_split_configs(), key=["GROUP", "D", "split_tokens", "ONE_SPLIT"])
    @triton.jit
    def _decode_split(Q, K, V, TABLES, LENS, OUT, PART_O, PART_LSE, qk_scale, v_scale,
                      stride_qb, stride_qh, stride_kn, stride_ks, stride_kh,
                      stride_vn, stride_vs, stride_vh, stride_tb, stride_ob, stride_oh,
                      HQ, GROUP, split_tokens, splits,
                      D: tl.constexpr, BS: tl.constexpr, GROUP_PAD: tl.constexpr,
                      ONE_SPLIT: tl.constexpr, BLOCK_N: tl.constexpr):
        b = tl.program_id(0)
        hk = tl.program_id(1)
        s = tl.program_id(2)
        ctx = tl.load(LENS + b)
        lo = s * split_tokens
        hi = tl.minimum(lo + split_tokens, ctx)
        r = tl.arange(0, GROUP_PAD)
        d = tl.arange(0, D)
        heads = hk * GROUP + r
        real = r < GROUP

        # The group's queries, rows past the group zero.
        b64 = b.to(tl.int64)
        q = tl.load(Q + b64 * stride_qb + heads[:, None] * stride_qh + d[None, :],
                    mask=real[:, None], other=0.0)
        table = TABLES + b64 * stride_tb
        k_head = K + hk.to(tl.int64) * stride_kh
        v_head = V + hk.to(tl.int64) * stride_vh
        m = tl.zeros([GROUP_PAD], dtype=tl.float32) - float("inf")
        l = tl.zeros([GROUP_PAD], dtype=tl.float32)
        acc = tl.zeros([GROUP_PAD, D], dtype=tl.float32)
        # Every step holds a live token (start < hi), so m is finite after it.
        for start in range(lo, hi, BLOCK_N):
            t = start + tl.arange(0, BLOCK_N)
            live = t < hi
            page = tl.load(table + t // BS, mask=live, other=0).to(tl.int64)
            k = tl.load(k_head + (page * stride_kn + (t % BS) * stride_ks)[:, None] + d[None, :],
                        mask=live[:, None], other=0.0)
            qk = tl.dot(q, tl.trans(k.to(q.dtype))) * qk_scale
            qk = tl.where(live[None, :], qk, float("-inf"))
            m_new = tl.maximum(m, tl.max(qk, 1))
            p = tl.math.exp2(qk - m_new[:, None])
            alpha = tl.math.exp2(m - m_new)
            l = l * alpha + tl.sum(p, 1)
            v = tl.load(v_head + (page * stride_vn + (t % BS) * stride_vs)[:, None] + d[None, :],
                        mask=live[:, None], other=0.0)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(q.dtype), v.to(q.dtype), acc)
            m = m_new

        # An empty split (or context) leaves l = 0: zeros, and no weight.
        o = acc / tl.where(l > 0, l, 1.0)[:, None] * v_scale
        if ONE_SPLIT:
            tl.store(OUT + b64 * stride_ob + heads[:, None] * stride_oh + d[None, :],
                     o.to(OUT.dtype.element_ty), mask=real[:, None])
        else:
            row = (b64 * HQ + heads) * splits + s
            tl.store(PART_O + row[:, None] * D + d[None, :], o, mask=real[:, None])
            tl.store(PART_LSE + row, tl.where(l > 0, m + tl.math.log2(l), float("-inf")),
                     mask=real)

    @triton.jit
    def _decode_reduce(PART_O, PART_LSE, OUT, stride_ob, stride_oh, HQ, splits,
                       D: tl.constexpr, SPLITS_PAD: tl.constexpr):
        """out[b, h] = the splits' outputs weighted by exp2(lse - max lse)."""
        b = tl.program_id(0).to(tl.int64)
        h = tl.program_id(1)
        row = b * HQ + h
        s = tl.arange(0, SPLITS_PAD)
        d = tl.arange(0, D)
        live = s < splits
        lse = tl.load(PART_LSE + row * splits + s, mask=live, other=float("-inf"))
        top = tl.max(lse, 0)
        w = tl.where(lse > float("-inf"), tl.math.exp2(lse - top), 0.0)
        o = tl.load(PART_O + (row * splits + s)[:, None] * D + d[None, :], mask=live[:, None],
                    other=0.0)
        total = tl.sum(w, 0)
        out = tl.sum(o * w[:, None], 0) / tl.where(total > 0, total, 1.0)
        tl.store(OUT + b * stride_ob + h * stride_oh + d, out.to(OUT.dtype.element_ty))


_SMS: dict = {}


def triton_paged_decode(q, k_cache, v_cache, tables, lens, max_context: int, scale: float,
                        k_scale: float, v_scale: float, out):
    """out (B, HQ, D) = decode attention of q (B, HQ, D) over the paged
    caches (NB, BS, HK, D) of q's dtype or fp8 (real = stored * scale);
    heads contiguous, other strides free. The context is cut into splits
    so that B HK splits programs fill the GPU about twice, no split under
    512 tokens."""
    import torch

    b, hq, d = q.shape
    hk = k_cache.size(2)
    dev = q.device.index if q.device.index is not None else torch.cuda.current_device()
    if dev not in _SMS:
        _SMS[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    ctx = max(max_context, 1)
    splits = max(1, min(-(-2 * _SMS[dev] // (b * hk)), -(-ctx // 512)))
    tokens = -(-ctx // splits)
    tokens = -(-tokens // 128) * 128  # whole steps of the largest BLOCK_N
    splits = -(-ctx // tokens)
    if splits > 1:
        part = torch.empty((b * hq * splits, d), device=q.device, dtype=torch.float32)
        lse = torch.empty((b * hq * splits,), device=q.device, dtype=torch.float32)
    else:
        part = lse = out  # not read
    _decode_split[(b, hk, splits)](
        q, k_cache, v_cache, tables, lens, out, part, lse, scale * k_scale * 1.4426950408889634,
        v_scale, q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        k_cache.stride(2), v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        tables.stride(0), out.stride(0), out.stride(1), hq, hq // hk, tokens, splits,
        D=d, BS=k_cache.size(1), GROUP_PAD=max(16, triton.next_power_of_2(hq // hk)),
        ONE_SPLIT=splits == 1)
    if splits > 1:
        _decode_reduce[(b, hq)](part, lse, out, out.stride(0), out.stride(1), hq, splits, D=d,
                                SPLITS_PAD=triton.next_power_of_2(splits))
    return out


def torch_paged_decode(q, k_cache, v_cache, tables, ctx: int, scale: float, k_scale: float,
                       v_scale: float):
    """The same in PyTorch for B sequences of ctx tokens each (ctx a
    multiple of the block size): the pages gathered with index_select into
    (B, ctx, HK, D), fp8 converted to q's type with k_scale folded into the
    scale and v_scale applied to the output, then SDPA with enable_gqa."""
    import torch
    import torch.nn.functional as F

    b, hq, d = q.shape
    bs, hk = k_cache.size(1), k_cache.size(2)
    idx = tables[:, :ctx // bs].reshape(-1)

    def pages(cache):
        if cache.element_size() == 1:  # gathered as bytes, then converted
            got = cache.view(torch.uint8).index_select(0, idx).view(cache.dtype).to(q.dtype)
        else:
            got = cache.index_select(0, idx)
        return got.view(b, ctx, hk, d).transpose(1, 2)

    o = F.scaled_dot_product_attention(q.unsqueeze(2), pages(k_cache), pages(v_cache),
                                       scale=scale * k_scale, enable_gqa=True)
    o = o.squeeze(2)
    return o * v_scale if v_scale != 1.0 else o


def first_line(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def make_case(torch, kind: str, hq: int, hk: int, b: int, ctx: int):
    """q, k_cache, v_cache, block_tables, context_lens, scales: every
    sequence ctx tokens, the cache exactly their blocks, shuffled."""
    blocks = b * ctx // BS
    fp8 = kind == "fp8"

    def cache(scale):
        x = torch.empty((blocks, BS, hk, D), device="cuda", dtype=torch.bfloat16).normal_()
        if not fp8:
            return x
        return (x / scale).clamp(-448, 448).to(torch.float8_e4m3fn)

    k, v = cache(K_SCALE), cache(V_SCALE)
    tables = torch.randperm(blocks, device="cuda").to(torch.int32).view(b, ctx // BS)
    lens = torch.full((b,), ctx, device="cuda", dtype=torch.int32)
    q = torch.randn(b, hq, D, device="cuda", dtype=torch.bfloat16)
    scales = (K_SCALE, V_SCALE) if fp8 else (1.0, 1.0)
    return q, k, v, tables, lens, scales


def run_case(torch, fk, only: set, kind, hq, hk, b, ctx, batches: int, graph: bool) -> tuple:
    """(name -> median seconds per launch, the K and V bytes read). With
    graph, each implementation's batch of launches is one CUDA graph,
    replayed: the GPU's time alone, as a serving engine's decode step runs
    (without, launches back to back: the host's cost included)."""
    q, k, v, tables, lens, (ks, vs) = make_case(torch, kind, hq, hk, b, ctx)
    scale = 1 / math.sqrt(D)
    nbytes = k.numel() * k.element_size() * 2
    outs = {n: torch.empty_like(q) for n in ("fly", "triton")}
    src = torch.empty(nbytes, device="cuda", dtype=torch.uint8).random_(0, 255)
    dst = torch.empty_like(src)
    fns = {}
    if fk is not None and hasattr(fk, "paged_attention_decode"):
        fns["fly"] = lambda: fk.paged_attention_decode(q, k, v, tables, lens, k_scale=ks,
                                                       v_scale=vs, max_context=ctx,
                                                       out=outs["fly"])
    if triton is not None:
        fns["triton"] = lambda: triton_paged_decode(q, k, v, tables, lens, ctx, scale, ks, vs,
                                                    outs["triton"])
    fns["torch"] = lambda: torch_paged_decode(q, k, v, tables, ctx, scale, ks, vs)
    fns["copy"] = lambda: dst.copy_(src)
    live, results = {}, {}
    for name, fn in fns.items():
        if only and name not in only:
            continue
        try:
            results[name] = fn()
            torch.cuda.synchronize()
            live[name] = fn
        except Exception as e:  # noqa: BLE001 - reported, the others still run
            print(f"# {name} {kind} {hq}/{hk} {b}x{ctx}: n/a: {first_line(e)}", flush=True)
    ref = results.get("torch")
    for name in ("fly", "triton"):
        if ref is not None and name in results:
            diff = float((results[name].float() - ref.float()).abs().max())
            if not diff <= 5e-2:
                print(f"# {name} {kind} {hq}/{hk} {b}x{ctx}: differs from torch by {diff:.3g}",
                      flush=True)
    per = 10
    if graph:
        for n, f in list(live.items()):
            if n == "copy":  # the reference rate: the copy engine's, as launched
                continue
            try:
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    for _ in range(per):
                        f()
                g.replay()
                torch.cuda.synchronize()
                live[n] = g.replay
            except Exception as e:  # noqa: BLE001 - reported, the others still run
                print(f"# {n} {kind} {hq}/{hk} {b}x{ctx}: no graph: {first_line(e)}", flush=True)
                del live[n]
    times = {n: [] for n in live}
    for _ in range(batches):
        for n, f in live.items():
            st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            st.record()
            if graph and n != "copy":
                f()
            else:
                for _ in range(per):
                    f()
            en.record()
            en.synchronize()
            times[n].append(st.elapsed_time(en) / 1e3 / per)
    return {n: statistics.median(t) for n, t in times.items()}, nbytes


def report(rows, machine: str) -> None:
    """The table of rows (case, bytes, name -> seconds), then the geometric
    means of Fly over each peer and the "bench" lines."""
    print(f"\n{machine}; D {D}, blocks of {BS} tokens; GB/s = K and V bytes / median time; "
          f"copy: 2 x bytes / time")
    names = ("fly", "triton", "torch")
    head = (f"{'cache':<5} {'heads':>6} {'B':>3} {'ctx':>6} {'MiB':>6}"
            + "".join(f" {n + ' us':>10} {'GB/s':>6}" for n in names)
            + f" {'copy':>6} {'/copy':>6} {'/triton':>8} {'/torch':>7}")
    print(head)
    print("-" * len(head))
    over: dict[str, list] = {"copy": [], "triton": [], "torch": []}
    for (kind, hq, hk, b, ctx), nbytes, t in rows:
        rate = {n: nbytes / s / 1e9 for n, s in t.items()}
        if "copy" in t:
            rate["copy"] = 2 * nbytes / t["copy"] / 1e9
        fly = rate.get("fly")
        cells = "".join(f" {t[n] * 1e6:>10.1f} {rate[n]:>6.0f}" if n in t
                        else f" {'-':>10} {'-':>6}" for n in names)
        ratios = ""
        for peer, w in (("copy", 6), ("triton", 8), ("torch", 7)):
            if fly and peer in rate:
                ratios += f" {fly / rate[peer]:>{w}.2f}"
                if peer != "copy" or ctx >= 4096:
                    over[peer].append(fly / rate[peer])
            else:
                ratios += f" {'-':>{w}}"
        copy = f" {rate['copy']:>6.0f}" if "copy" in rate else f" {'-':>6}"
        print(f"{kind:<5} {f'{hq}/{hk}':>6} {b:>3} {ctx:>6} {nbytes / 2**20:>6.0f}{cells}"
              f"{copy}{ratios}")
    print()
    for peer, xs in over.items():
        if xs:
            print(f"fly / {peer}: geomean {geomean(xs):.3f}, min {min(xs):.3f} over {len(xs)}"
                  + (" (contexts of 4K and more)" if peer == "copy" else ""))
    for peer in ("copy", "triton"):
        if over[peer]:
            print(f"bench paged_decode_over_{peer} {geomean(over[peer]):.3f} ratio")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="three cases, fewer batches")
    ap.add_argument("--impl", default="", help="only these (fly,triton,torch,copy)")
    ap.add_argument("--graph", action="store_true",
                    help="time CUDA graphs of the launches (the GPU's time alone)")
    args = ap.parse_args()
    torch = gpu_torch()
    if torch is None:
        return 77
    fk = fly_kernels()
    only = set(filter(None, args.impl.split(",")))
    if fk is None:
        print("# fly: n/a: fly.kernels did not load")
    elif not hasattr(fk, "paged_attention_decode"):
        print("# fly: n/a: fly.kernels has no paged_attention_decode")
    if triton is None:
        print(f"# triton: n/a: {NO_TRITON}")
    gpu = torch.cuda.get_device_name()
    batches = 5 if args.quick else 10
    rows = []
    for case in QUICK if args.quick else CASES:
        t, nbytes = run_case(torch, fk, only, *case, batches, args.graph)
        rows.append((case, nbytes, t))
        torch.cuda.empty_cache()
        line = "  ".join(f"{n} {s * 1e6:8.1f} us" for n, s in t.items())
        print(f"# {case[0]} {case[1]}/{case[2]} {case[3]}x{case[4]}: {line}", flush=True)

    report(rows, f"GPU: {gpu}; torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

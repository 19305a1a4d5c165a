#!/usr/bin/env python3
"""The MoE 2-stage benchmark: fly.kernels.moe_gemm_2stage (kernels/moe/
moe_gemm.fly, including its moe_align_block_size) against a Triton MoE
written for this benchmark after Triton's matmul tutorial (peers/moe.py:
its moe_align, then the two stages with gathered rows, silu * up fused and
the weighted atomic adds) and the same layer in PyTorch on cuBLAS (per
expert: the routed tokens gathered, W1, silu * up, W2, weighted and added
back with index_add_), in one process on the GPU.

    python3 tests/bench/moe_gemm.py [--quick]

Not a test: figures depend on the machine. Per case: T tokens of hidden
width H, E experts of inner width I, K experts a token chosen by a random
router; bf16; inputs fresh random data; each implementation warmed up,
then CUDA events time batches of launches in turn and the median is kept.
TFLOP/s = 2 T K (2 I H + H I) / time. The last columns are Fly over
Triton and over the PyTorch layer; "bench NAME VALUE UNIT" lines feed
tests/gpu/run.py.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "runtime", "python"))
sys.path.insert(0, HERE)

from peers import fly_kernels, geomean, gpu_torch, median_launch_time  # noqa: E402

CASES = [(16, 8, 2, 4096, 1792), (256, 8, 2, 4096, 1792), (2048, 8, 2, 4096, 1792),
         (8192, 8, 2, 4096, 1792), (2048, 64, 6, 2048, 1408)]
QUICK = CASES[1:3]


def torch_layer(torch, x, w1, w2, weights, ids):
    t, h = x.shape
    i = w2.shape[2]
    out = torch.zeros((t, h), dtype=torch.float32, device=x.device)
    flat = ids.reshape(-1)
    for e in range(w1.shape[0]):
        sel = (flat == e).nonzero().squeeze(1)
        if sel.numel() == 0:
            continue
        tok = sel // ids.shape[1]
        gu = x[tok] @ w1[e].t()
        hid = torch.nn.functional.silu(gu[:, :i]) * gu[:, i:]
        out.index_add_(0, tok, (hid @ w2[e].t()).float() * weights.reshape(-1)[sel, None])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    torch = gpu_torch()
    if torch is None:
        return 77
    fk = fly_kernels()
    if fk is None:
        return 1
    torch.manual_seed(0)
    from peers.moe import triton_moe_2stage

    print(f"GPU: {torch.cuda.get_device_name()}; bf16; TFLOP/s = 2 T K (3 I H) / median time")
    head = (f"{'T':>6} {'E':>4} {'K':>3} {'H':>6} {'I':>6} {'fly':>8} {'triton':>8} {'torch':>8} "
            f"{'/triton':>8} {'/torch':>8}")
    print(head)
    print("-" * len(head))
    ratios: dict = {"triton": [], "torch": []}
    for t, e, k, h, i in (QUICK if args.quick else CASES):
        x = torch.randn((t, h), device="cuda").to(torch.bfloat16)
        w1 = (torch.randn((e, 2 * i, h), device="cuda") * 0.02).to(torch.bfloat16)
        w2 = (torch.randn((e, h, i), device="cuda") * 0.02).to(torch.bfloat16)
        weights, ids = torch.softmax(torch.randn((t, e), device="cuda"), -1).topk(k, -1)
        ids = ids.to(torch.int32)
        w1p, w2p = fk.moe_preshuffle_weights(w1, w2)
        ref = torch_layer(torch, x, w1, w2, weights, ids)
        got = triton_moe_2stage(x, w1, w2, weights, ids)
        assert (got - ref).abs().max() <= 2e-2 * ref.abs().max() + 1e-3, "the Triton peer is wrong"
        flops = 2 * t * k * 3 * i * h
        times = {"fly": median_launch_time(torch, lambda: fk.moe_gemm_2stage(
                     x, w1p, w2p, weights, ids, out_dtype=torch.float32)),
                 "triton": median_launch_time(torch, lambda: triton_moe_2stage(x, w1, w2, weights,
                                                                              ids)),
                 "torch": median_launch_time(torch, lambda: torch_layer(torch, x, w1, w2, weights,
                                                                       ids))}
        tf = {n: flops / v / 1e12 for n, v in times.items()}
        for n in ratios:
            ratios[n].append(tf["fly"] / tf[n])
        print(f"{t:>6} {e:>4} {k:>3} {h:>6} {i:>6} {tf['fly']:8.1f} {tf['triton']:8.1f} "
              f"{tf['torch']:8.1f} {tf['fly'] / tf['triton']:8.2f} {tf['fly'] / tf['torch']:8.2f}",
              flush=True)
        del x, w1, w2, w1p, w2p
        torch.cuda.empty_cache()
    print()
    for n, rs in ratios.items():
        g = geomean(rs)
        print(f"moe_gemm_2stage / {n} geomean {g:.3f} over {len(rs)}")
        print(f"bench moe_gemm_over_{n} {g:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

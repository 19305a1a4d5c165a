#!/usr/bin/env python3
"""The grouped GEMM benchmark: fly.kernels.grouped_gemm against
torch._grouped_mm (where the installed PyTorch has it) and a loop of
torch.matmul over the groups (cuBLAS, one launch a group, the group sizes
known to the host), in one process on the GPU.

    python3 tests/bench/grouped_gemm.py [--dtype bf16,f16] [--impl fly,grouped_mm,loop]

Not a test: figures depend on the machine. Per case, the rows of a mixture
of experts' layer: T tokens each routed to its top-k of E experts (the
experts drawn at random, so the groups are uneven, as routing makes them),
a (T k, K) the tokens' rows grouped by expert, b (E, N, K) the experts'
weights, out (T k, N) in the input type:

* Mixtral's layers (E = 8, top-2 of 4096 tokens, N = 14336, K = 4096 and
  back), DeepSeek-MoE's (E = 64, top-6 of 4096 tokens, N = 1408 or 2048,
  K = 2048);
* each implementation runs once to warm up, then CUDA events time batches
  of launches, the median batch's time per launch kept (the weights of a
  case pass the L2 cache many times over, so one copy of the inputs);
* TFLOP/s = 2 (T k) N K / time. fly_bm64 and fly_bm128 launch the kernel
  with one tile height each (the wrapper picks between them by the rows a
  group averages), to check that choice. Lines "bench NAME VALUE UNIT"
  give Fly over each peer.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, HERE)

from peers import fly_kernels, geomean, gpu_torch, median_launch_time  # noqa: E402

# (E, top-k, tokens, N, K)
CASES = [(8, 2, 4096, 14336, 4096), (8, 2, 4096, 4096, 14336),
         (64, 6, 4096, 1408, 2048), (64, 6, 4096, 2048, 2048), (64, 6, 512, 2048, 2048)]


def routed(torch, experts: int, topk: int, tokens: int) -> list[int]:
    """The rows each expert receives when each token picks topk experts at
    random (without repeats)."""
    picks = torch.rand(tokens, experts).topk(topk, dim=1).indices.reshape(-1)
    return torch.bincount(picks, minlength=experts).tolist()


def impls(torch, fk, sizes: list[int], only: set) -> dict:
    """name -> fn(a, b, offs, c) computing c = the grouped product."""
    out = {}
    if fk is not None:
        out["fly"] = lambda a, b, offs, c: fk.grouped_gemm(a, b, offs, out=c)
        from fly.kernels._rows import fly_type, sm_count

        def tile(bm):
            def fn(a, b, offs, c):
                e, n, k = b.shape
                t = fly_type(a.dtype)
                consts = {"T": t, "TD": t, "BM": bm, "BN": 128, "BK": 64, "STAGES": 6,
                          "PAIR": True}
                one = torch.ones(1, device=a.device)
                fk.kernel("grouped_gemm", consts, a.device)(
                    a, b.view(e * n, k), c, offs, one, one, sm_count(a.device))
            return fn
        out["fly_bm64"] = tile(64)
        out["fly_bm128"] = tile(128)
    if hasattr(torch, "_grouped_mm"):
        out["grouped_mm"] = lambda a, b, offs, c: c.copy_(
            torch._grouped_mm(a, b.transpose(-2, -1), offs=offs))
    starts = [0] + list(itertools.accumulate(sizes))

    def loop(a, b, offs, c):
        for g in range(len(sizes)):
            s, e = starts[g], starts[g + 1]
            if e > s:
                torch.matmul(a[s:e], b[g].t(), out=c[s:e])
    out["loop"] = loop
    return {k: v for k, v in out.items() if not only or k in only}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--impl", default="", help="only these (fly,fly_bm64,fly_bm128,"
                    "grouped_mm,loop)")
    args = ap.parse_args()
    torch = gpu_torch()
    if torch is None:
        return 77
    fk = fly_kernels()
    only = set(filter(None, args.impl.split(",")))
    torch.manual_seed(0)
    rows = []
    for dname in filter(None, args.dtype.split(",")):
        dt = {"bf16": torch.bfloat16, "f16": torch.float16}[dname]
        for (E, topk, tokens, n, k) in CASES:
            sizes = routed(torch, E, topk, tokens)
            m = sum(sizes)
            a = (torch.randn(m, k, device="cuda") * 0.5).to(dt)
            b = (torch.randn(E, n, k, device="cuda") * 0.5).to(dt)
            offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
            c = torch.empty(m, n, device="cuda", dtype=dt)
            res = {}
            for name, fn in impls(torch, fk, sizes, only).items():
                try:
                    t = median_launch_time(torch, lambda: fn(a, b, offs, c))
                    res[name] = 2 * m * n * k / t / 1e12
                except Exception as e:  # noqa: BLE001 - a peer that cannot run is reported
                    print(f"# {dname} E={E} {m}x{n}x{k} {name}: {type(e).__name__}: {e}",
                          flush=True)
            rows.append((dname, E, topk, m, n, k, res))
            print(f"# {dname} E={E} top-{topk} {m}x{n}x{k}: " +
                  "  ".join(f"{a_} {v:7.1f}" for a_, v in res.items()), flush=True)
            del a, b, c
            torch.cuda.empty_cache()
    print(f"\nGPU: {torch.cuda.get_device_name()}; TFLOP/s = 2 (T k) N K / median time")
    names = ["fly", "fly_bm64", "fly_bm128", "grouped_mm", "loop"]
    head = f"{'type':<5} {'E':>3} {'rows':>6} {'N':>6} {'K':>6} " + " ".join(
        f"{x:>10}" for x in names) + f" {'/grp_mm':>8} {'/loop':>8}"
    print(head)
    print("-" * len(head))
    ratios: dict[tuple, list] = {}
    for dname, E, topk, m, n, k, r in rows:
        f = lambda v: f"{v:10.1f}" if v else f"{'-':>10}"  # noqa: E731
        q = lambda x, y: f"{x / y:8.2f}" if x and y else f"{'-':>8}"  # noqa: E731
        fly = r.get("fly")
        print(f"{dname:<5} {E:>3} {m:>6} {n:>6} {k:>6} " + " ".join(f(r.get(x)) for x in names) +
              f" {q(fly, r.get('grouped_mm'))} {q(fly, r.get('loop'))}")
        for peer in ("grouped_mm", "loop"):
            if fly and r.get(peer):
                ratios.setdefault((dname, peer), []).append(fly / r[peer])
    print()
    for (dname, peer), rs in sorted(ratios.items()):
        g = geomean(rs)
        print(f"{dname} fly/{peer} geomean {g:.3f}  min {min(rs):.3f}  over {len(rs)}")
        print(f"bench grouped_gemm_{dname}_over_{peer} {g:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The attention benchmark: fly.kernels.flash_attn (forward; "fly_sm80" is
its Ampere kernel, arch="sm_80", which FA2 is the peer of) against
PyTorch's scaled_dot_product_attention with each backend this PyTorch has
on the GPU (flash, cuDNN, memory-efficient) and a Triton flash attention
after Triton's fused-attention tutorial (tests/bench/peers/flash_attention.py),
each probed once per case ("n/a" and why otherwise), in one process on the
GPU.

    python3 tests/bench/attention.py [--quick] [--impl fly,fly_sm80,flash,cudnn,efficient,triton]

Not a test: figures depend on the machine. Per case, q, k, v of bf16
(batch, seq, heads, D) (SDPA gets the (batch, heads, seq, D) views of the
same memory, Triton the tensors themselves), 16 query heads over 16 key
heads, batch x seq = 16K tokens (seq 512 to 16K), D 64 and 128, causal and
not:

* inputs are fresh random data (never zeros), 64 MiB or more a tensor at
  16K tokens (past L2);
* each implementation runs once to warm up (Triton autotunes then), then
  CUDA events time batches of launches, the implementations' batches in
  turn (clocks that move under the power cap move for all alike), and
  each one's median batch time per launch is kept;
* TFLOP/s = 4 batch heads seq² D / time, halved for causal (the work a
  causal pass does). The table's last columns are Fly over the fastest
  SDPA backend and Fly over Triton; lines "bench NAME VALUE UNIT" give
  the geometric means (and the Ampere kernel's over SDPA's flash backend,
  FlashAttention-2).
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from peers import geomean  # noqa: E402


def first_line(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two shapes, fewer batches")
    ap.add_argument("--impl", default="fly,fly_sm80,flash,cudnn,efficient,triton")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import fly.kernels as fk

    if not torch.cuda.is_available():
        print("no GPU: nothing to time")
        return 77
    impls = args.impl.split(",")
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    triton_attention = None
    if "triton" in impls:
        try:
            from peers.flash_attention import triton_attention
        except Exception as e:  # noqa: BLE001 - reported, the others still run
            print(f"# triton: n/a: {first_line(e)}")
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"TFLOP/s = 4 B H S^2 D / time (causal: half)")
    cases = [(s, d, c) for d in (128, 64) for c in (False, True)
             for s in (512, 1024, 2048, 4096, 8192, 16384)]
    if args.quick:
        cases = [(4096, 128, False), (4096, 128, True)]
    batches = 5 if args.quick else 10
    rows = []
    for s, d, causal in cases:
        b, h = max(1, 16384 // s), 16
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
        out = torch.empty_like(q)
        fns = {}
        if "fly" in impls:
            fns["fly"] = lambda: fk.flash_attn(q, k, v, causal=causal, out=out)
        if "fly_sm80" in impls:
            fns["fly_sm80"] = lambda: fk.flash_attn(q, k, v, causal=causal, out=out, arch="sm_80")
        probe = {}
        for name, be in backends.items():
            if name not in impls:
                continue

            def sdpa(be=be):
                with sdpa_kernel(be):
                    F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
            probe[name] = sdpa
        if triton_attention is not None:
            probe["triton"] = lambda: triton_attention(q, k, v, causal, 1 / math.sqrt(d))
        for name, fn in probe.items():
            try:
                fn()
                torch.cuda.synchronize()
                fns[name] = fn
            except Exception as e:  # noqa: BLE001 - reported, the others still run
                print(f"# {name} {b}x{s} D {d}: n/a: {first_line(e)}")
        for f in fns.values():
            f()
        torch.cuda.synchronize()
        times = {n: [] for n in fns}
        per = 5
        for _ in range(batches):
            for n, f in fns.items():
                st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                st.record()
                for _ in range(per):
                    f()
                en.record()
                en.synchronize()
                times[n].append(st.elapsed_time(en) / 1e3 / per)
        flops = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
        rows.append(((b, s, d, causal), {n: flops / statistics.median(t) / 1e12
                                         for n, t in times.items()}))
    names = [n for n in ["fly", "fly_sm80"] + list(backends) + ["triton"] if n in impls]
    print(f"{'B':>3}{'S':>7}{'D':>5}{'causal':>8}" + "".join(f"{n:>11}" for n in names)
          + f"{'fly/best':>10}{'fly/triton':>12}")
    over_best, over_triton, sm80_over_fa2 = [], [], []
    for (b, s, d, causal), r in rows:
        sdpa = [r[n] for n in backends if n in r]
        best = max(sdpa) if sdpa else 0.0
        fly, tri = r.get("fly", 0.0), r.get("triton", 0.0)
        if best and fly:
            over_best.append(fly / best)
        if tri and fly:
            over_triton.append(fly / tri)
        if r.get("fly_sm80") and r.get("flash"):
            sm80_over_fa2.append(r["fly_sm80"] / r["flash"])
        print(f"{b:>3}{s:>7}{d:>5}{str(causal):>8}" +
              "".join(f"{r[n]:>11.1f}" if n in r else f"{'n/a':>11}" for n in names) +
              (f"{fly / best:>10.3f}" if best and fly else f"{'-':>10}") +
              (f"{fly / tri:>12.3f}" if tri and fly else f"{'-':>12}"))
    if over_best:
        g = geomean(over_best)
        print(f"fly / best SDPA backend: geomean {g:.3f}, min {min(over_best):.3f} "
              f"over {len(over_best)}")
        print(f"bench flash_attn_over_sdpa {g:.3f} ratio")
    if over_triton:
        g = geomean(over_triton)
        print(f"fly / triton: geomean {g:.3f}, min {min(over_triton):.3f} over {len(over_triton)}")
        print(f"bench flash_attn_over_triton {g:.3f} ratio")
    if sm80_over_fa2:
        g = geomean(sm80_over_fa2)
        print(f"fly_sm80 (the Ampere kernel) / flash (FA2): geomean {g:.3f}, min "
              f"{min(sm80_over_fa2):.3f} over {len(sm80_over_fa2)}")
        print(f"bench flash_attn_sm80_over_fa2 {g:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The GEMM benchmark: fly.kernels.gemm against cuBLAS (torch.matmul; for
fp8 torch._scaled_mm, per tensor, or rowwise with --dtype fp8row; fp8e5m2
is A e5m2 by W e4m3 per tensor, a backward pass's gradient by a weight,
against torch._scaled_mm of the same pair) and a Triton GEMM after
Triton's tutorial (tests/bench/peers/gemm.py), in one process on the GPU.
--dtype blockscale times fly.kernels.blockscale_mm (fp8, 1 x 128 scales of
A, 128 x 128 of W) against torch._scaled_mm's blockwise form where this
PyTorch has it (probed once; "n/a" and why otherwise) and a Triton
blockscale GEMM (peers/gemm.py).

    python3 tests/bench/gemm.py [--quick] [--dtype bf16,f16,fp8,fp8row,fp8e5m2,blockscale]
                                [--impl fly,cublas,triton]
    python3 tests/bench/gemm.py --dtype bf16,f16 --impl fly_sm80,cublas   # the Ampere path
    python3 tests/bench/gemm.py --dtype bf16,fp8row --impl preshuffle,example04,cublas

Not a test: figures depend on the machine. Per case, C = A . W^T with A
(M x K) and W (N x K) both K-major ("TN", as a linear layer computes),
C (M x N) row-major in the input type (bf16 for fp8):

* inputs are fresh random data (never zeros), enough copies of A and W
  that together they exceed four times the L2 cache, each launch taking
  the next copy;
* each implementation runs once to warm up (Triton autotunes then), then
  CUDA events time batches of launches, the implementations' batches in
  turn (so clocks that move under the power cap during a run move for
  all of them alike), and each one's median batch time per launch is
  kept; every implementation writes into a preallocated C;
* TFLOP/s = 2 M N K / time. The table's last columns are Fly over cuBLAS
  and over Triton, and the geometric means over the sweep; lines
  "bench NAME VALUE UNIT" feed tests/gpu/run.py's table.
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

L2_BYTES = 50 * 2**20
SQUARE = [4096, 8192]
SWEEP_M = [1, 16, 128, 1024, 4096, 16384]
SWEEP_NK = [(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (4096, 14336),
            (128256, 4096)]
QUICK_M = [16, 4096]
QUICK_NK = [(4096, 4096), (14336, 4096)]


def shapes(quick: bool):
    out = [("square", n, n, n) for n in SQUARE]
    ms, nks = (QUICK_M, QUICK_NK) if quick else (SWEEP_M, SWEEP_NK)
    out += [("sweep", m, n, k) for m in ms for (n, k) in nks]
    return out


def time_launches(torch, fns: dict, n_inputs: int, batches: int = 10) -> dict:
    """Median seconds per launch of each of fns (name -> fn(i), launching
    on the i-th input copy), their batches timed in turn; a function that
    raises, warming up or later, is reported and left out."""
    per = max(n_inputs, 5)
    times: dict = {}
    live = {}
    for name, fn in fns.items():
        try:
            fn(0)
            torch.cuda.synchronize()
            live[name] = fn
        except Exception as e:  # noqa: BLE001 - a peer that cannot run is reported, not fatal
            print(f"# {name}: {type(e).__name__}: {e}", flush=True)
    for b in range(batches):
        for name, fn in list(live.items()):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            try:
                s.record()
                for j in range(per):
                    fn((b * per + j) % n_inputs)
                e.record()
                e.synchronize()
            except Exception as err:  # noqa: BLE001 - reported, not fatal
                print(f"# {name}: {type(err).__name__}: {err}", flush=True)
                del live[name]
                times.pop(name, None)
                continue
            times.setdefault(name, []).append(s.elapsed_time(e) / 1e3 / per)
    return {name: statistics.median(t) for name, t in times.items()}


def impls(torch, dtype_name: str, fk, only: set):
    """name -> fn(a, w, c) computing c = a @ w.T."""
    from peers.gemm import triton_matmul

    out = {}
    if dtype_name == "blockscale":
        return blockscale_impls(torch, fk, only)
    if dtype_name == "fp8row":
        # Rowwise scales: one a row of A, one a row of W (a column of C).
        rows = {}

        def scales(a, w):
            key = (a.shape[0], w.shape[0])
            if key not in rows:
                rows[key] = (torch.rand((a.shape[0], 1), device="cuda") + 0.5,
                             torch.rand((1, w.shape[0]), device="cuda") + 0.5)
            return rows[key]

        out["cublas"] = lambda a, w, c: torch._scaled_mm(a, w.t(), *scales(a, w),
                                                         out_dtype=c.dtype, out=c)
        if fk is not None and hasattr(fk, "scaled_mm"):
            out["fly"] = lambda a, w, c: fk.scaled_mm(a, w.t(), *scales(a, w), out=c)
        if fk is not None and hasattr(fk, "preshuffle_mm"):
            # kernels/gemm/gemm_preshuffle.fly's fp8 form, the same scales.
            out["preshuffle"] = preshuffle_impl(fk, lambda a, w: dict(
                zip(("scale_a", "scale_b"), scales(a, w))))
    elif dtype_name in ("fp8", "fp8e5m2"):
        one = torch.ones((), device="cuda")
        out["cublas"] = lambda a, w, c: torch._scaled_mm(a, w.t(), scale_a=one, scale_b=one,
                                                         out_dtype=c.dtype, out=c)
        if fk is not None and hasattr(fk, "scaled_mm"):
            out["fly"] = lambda a, w, c: fk.scaled_mm(a, w.t(), one, one, out=c)
    else:
        out["cublas"] = lambda a, w, c: torch.matmul(a, w.t(), out=c)
        out["triton"] = lambda a, w, c: triton_matmul(a, w.t(), c)
        if fk is not None and hasattr(fk, "gemm"):
            out["fly"] = lambda a, w, c: fk.gemm(a, w.t(), out=c)
            # The Ampere path (cp.async, ldmatrix, mma.sync), forced on any GPU.
            out["fly_sm80"] = lambda a, w, c: fk.gemm(a, w.t(), out=c, arch="sm_80")
        if fk is not None and hasattr(fk, "preshuffle_mm"):
            # kernels/gemm/gemm_preshuffle.fly (fly.kernels.preshuffle_mm),
            # and examples/04-preshuffle-gemm.fly.
            out["preshuffle"] = preshuffle_impl(fk, None)
            out["example04"] = preshuffle_impl(fk, None, example=True)
    # The Ampere path and the preshuffle GEMMs only when asked for (--impl
    # fly_sm80,preshuffle,example04): not what fly.kernels.gemm runs on an H100.
    extra = ("fly_sm80", "preshuffle", "example04")
    return {k: v for k, v in out.items() if (k in only if only else k not in extra)}


def preshuffle_impl(fk, scales, example: bool = False):
    """fly.kernels.preshuffle_mm (scales(a, w): its scale arguments, or
    None), or with example the example's kernel: its bundle from
    $FLY_PRESHUFFLE_BUNDLE (else build/gpu/04-preshuffle-gemm.flyb), loaded
    on first use. Each W is preshuffled once (fly.kernels.preshuffle_b),
    the first time it comes: outside the warm-up's timing only for the
    first copy (the median of the batches leaves the one that pays for the
    rest out)."""
    state: dict = {}

    def run(a, w, c):
        if example and "mod" not in state:
            import fly

            path = os.environ.get("FLY_PRESHUFFLE_BUNDLE",
                                  os.path.join(REPO, "build", "gpu", "04-preshuffle-gemm.flyb"))
            state["mod"] = fly.load(path)
        key = (w.data_ptr(), tuple(w.shape))
        bps = state.setdefault("bp", {})
        if key not in bps:
            if any(k[1] != key[1] for k in bps):
                bps.clear()  # a new shape: the last one's copies are gone
            bps[key] = fk.preshuffle_b(w)
        if example:
            state["mod"].preshuffle_gemm(a, bps[key], c)
        else:
            fk.preshuffle_mm(a, bps[key], w.shape[0], out=c, **(scales(a, w) if scales else {}))

    return run


def blockscale_impls(torch, fk, only: set):
    """name -> fn(a, w, c) computing c = the blockwise-scaled a @ w.T, with
    scales in torch._scaled_mm's layouts: scale_a (M, K/128) M-major,
    scale_b (K/128, N/128) the transpose of a row-major (N/128, K/128)."""
    from peers.gemm import triton_blockscale_matmul

    made = {}

    def scales(a, w):
        key = (a.shape[0], w.shape[0], a.shape[1])
        if key not in made:
            kb, nb = -(-a.shape[1] // 128), -(-w.shape[0] // 128)
            made[key] = (torch.rand((kb, a.shape[0]), device="cuda").t() + 0.5,
                         torch.rand((nb, kb), device="cuda").t() + 0.5)
        return made[key]

    def cublas(a, w, c):
        sa, sb = scales(a, w)
        return torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=c.dtype, out=c)

    out = {"triton": lambda a, w, c: triton_blockscale_matmul(a, w.t(), *scales(a, w), c)}
    # torch._scaled_mm takes block scales from PyTorch 2.9 on, where its
    # build and the GPU allow: probed once on a small product.
    try:
        a = torch.randn((256, 256), device="cuda").to(torch.float8_e4m3fn)
        cublas(a, a, torch.empty((256, 256), dtype=torch.bfloat16, device="cuda"))
        torch.cuda.synchronize()
        out["cublas"] = cublas
    except Exception as e:  # noqa: BLE001 - a peer that cannot run is reported, not fatal
        print(f"# torch._scaled_mm blockwise (torch {torch.__version__}): n/a: "
              f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
    if fk is not None and hasattr(fk, "blockscale_mm"):
        out["fly"] = lambda a, w, c: fk.blockscale_mm(a, w.t(), *scales(a, w), out=c)
    if fk is not None and hasattr(fk, "preshuffle_mm"):
        # The preshuffle GEMM's blockwise form: scale_b as (N/128, K/128).
        out["preshuffle"] = preshuffle_impl(fk, lambda a, w: {
            "scale_a": scales(a, w)[0], "scale_b": scales(a, w)[1].t(), "blockwise": True})
    return {k: v for k, v in out.items() if (k in only if only else k != "preshuffle")}


def run(torch, dtype_name, m, n, k, fns) -> dict:
    e4m3, e5m2 = torch.float8_e4m3fn, torch.float8_e5m2
    # A's type and W's.
    dt_a, dt_w = {"bf16": (torch.bfloat16,) * 2, "f16": (torch.float16,) * 2,
                  "fp8": (e4m3, e4m3), "fp8row": (e4m3, e4m3), "fp8e5m2": (e5m2, e4m3),
                  "blockscale": (e4m3, e4m3)}[dtype_name]
    fp8 = dtype_name.startswith("fp8") or dtype_name == "blockscale"
    elem = 1 if fp8 else 2
    per = (m * k + n * k) * elem
    copies = max(2, min(32, math.ceil(4 * L2_BYTES / per)))
    mk = lambda r, c, dt: (torch.randn(r, c, device="cuda") * 0.5).to(dt)  # noqa: E731
    A = [mk(m, k, dt_a) for _ in range(copies)]
    W = [mk(n, k, dt_w) for _ in range(copies)]
    C = torch.empty(m, n, device="cuda", dtype=torch.bfloat16 if fp8 else dt_a)
    print(f"# {dtype_name} {m}x{n}x{k}", flush=True)
    calls = {name: (lambda i, fn=fn: fn(A[i], W[i], C)) for name, fn in fns.items()}
    times = time_launches(torch, calls, copies)
    res = {name: 2 * m * n * k / t / 1e12 for name, t in times.items()}
    del A, W, C
    torch.cuda.empty_cache()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bf16,fp8")
    ap.add_argument("--impl", default="",
                    help="only these (fly,cublas,triton; fly_sm80: the Ampere path)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--shape", default="", help="only M,N,K (e.g. 4096,4096,4096)")
    args = ap.parse_args()
    torch = gpu_torch()
    if torch is None:
        return 77
    fk = fly_kernels()
    only = set(filter(None, args.impl.split(",")))
    gpu = torch.cuda.get_device_name()
    rows = []
    for dname in filter(None, args.dtype.split(",")):
        fns = impls(torch, dname, fk, only)
        for kind, m, n, k in shapes(args.quick):
            if args.shape and args.shape != f"{m},{n},{k}":
                continue
            r = run(torch, dname, m, n, k, fns)
            rows.append((dname, kind, m, n, k, r))
            line = "  ".join(f"{a} {v:7.1f}" for a, v in r.items())
            print(f"# {dname} {m}x{n}x{k}: {line}", flush=True)
    print(f"\nGPU: {gpu}; TFLOP/s = 2MNK / median time; C = A W^T, A and W K-major")
    head = f"{'type':<10} {'M':>6} {'N':>7} {'K':>6} {'fly':>7} {'cublas':>7} {'triton':>7} " \
           f"{'/cublas':>8} {'/triton':>8}"
    print(head)
    print("-" * len(head))
    ratios: dict[tuple, list] = {}
    for dname, kind, m, n, k, r in rows:
        fly, cb, tr = r.get("fly"), r.get("cublas"), r.get("triton")
        f = lambda v: f"{v:7.1f}" if v else f"{'-':>7}"  # noqa: E731
        q = lambda a, b: f"{a / b:8.2f}" if a and b else f"{'-':>8}"  # noqa: E731
        print(f"{dname:<10} {m:>6} {n:>7} {k:>6} {f(fly)} {f(cb)} {f(tr)} {q(fly, cb)} "
              f"{q(fly, tr)}")
        for peer, v in (("cublas", cb), ("triton", tr)):
            if fly and v:
                ratios.setdefault((dname, kind, peer), []).append(fly / v)
        for extra, tag in (("fly_sm80", "sm80"), ("preshuffle", "preshuffle"),
                           ("example04", "example04")):
            if r.get(extra) and cb:
                print(f"{'':<10} {'':>6} {'':>7} {'':>6} {tag} {r[extra]:7.1f} "
                      f"{r[extra] / cb:8.2f} of cublas")
                ratios.setdefault((dname, kind, "cublas", tag), []).append(r[extra] / cb)
    print()
    for (dname, kind, peer, *tag), rs in sorted(ratios.items()):
        g = geomean(rs)
        name = {"sm80": "fly_sm80"}.get(tag[0], tag[0]) if tag else "fly"
        print(f"{dname} {kind:<6} {name}/{peer} geomean {g:.3f}  min {min(rs):.3f}  over {len(rs)}")
        print(f"bench gemm_{dname}_{kind}{'_' + tag[0] if tag else ''}_over_{peer} {g:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

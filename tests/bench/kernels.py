#!/usr/bin/env python3
"""The kernel library's benchmark: each kernel of fly.kernels against PyTorch
eager and a Triton kernel for the same operation, in one process on the GPU.

    python3 tests/bench/kernels.py [--family norm,quant] [--quick] [--op rms_norm]

Not a test: figures depend on the machine. What it does, per case:

* the inputs are fresh random data (never zeros); enough copies of them are
  made that together they exceed four times the L2 cache, and each launch
  takes the next copy, so that every launch reads from DRAM as in a model;
* each implementation runs once to warm up (compiling Triton, loading
  Fly's bundle), then is timed with CUDA events around batches of launches,
  and the median of the batches' per-launch times is kept;
* GB/s is the bytes the operation must move (each input read once, each
  output written once) over that time; the device-to-device copy rate
  (torch's copy_ of 1 GiB) is measured in the same run as the ceiling.

The peers live in tests/bench/peers/FAMILY.py: each module has
cases(quick) -> list of Case. Triton's kernels there are written for this
benchmark after Triton's tutorials. The last lines are the table: GB/s of
each implementation, Fly over the copy rate, over PyTorch and over Triton,
and per operation the geometric mean of Fly / Triton; lines "bench NAME
VALUE UNIT" feed tests/gpu/run.py's table.
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
sys.path.insert(0, HERE)

from peers import Case, geomean, gpu_torch  # noqa: E402,F401 - the peers' cases

FAMILIES = ["norm", "quant", "attention", "moe"]
L2_BYTES = 50 * 2**20  # H100: 50 MiB; rotating 4x this keeps inputs out of L2


def copy_rate(torch) -> float:
    """Device-to-device copy, GB/s (read + write), median of 20."""
    n = 2**28  # 1 GiB of f32
    a = torch.empty(n, device="cuda")
    a.uniform_()
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    del a, b
    return 2 * n * 4 / statistics.median(times) / 1e9


def time_impl(torch, fn, inputs: list, batches: int = 15, graph: bool = False) -> float:
    """Median seconds per launch of fn over the rotated inputs: CUDA events
    around batches of launches issued back to back (the host's launch cost
    included, as a program calling it eagerly sees it), or with graph=True
    around the replay of a CUDA graph of one batch (the GPU's time alone)."""
    fn(inputs[0])  # warm-up: compile, load
    torch.cuda.synchronize()
    k = len(inputs)
    per_batch = max(k, 10)
    run = None
    if graph:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn(inputs[0])  # allocations of the outputs happen before the capture
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for i in range(per_batch):
                fn(inputs[i % k])
        run = g.replay
    times = []
    i = 0
    for _ in range(batches):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        if run is not None:
            run()
        else:
            for _ in range(per_batch):
                fn(inputs[i % k])
                i += 1
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / per_batch)
    return statistics.median(times)


def run_case(torch, case: Case, only: set, graph: bool) -> dict:
    copies = max(2, min(64, math.ceil(4 * L2_BYTES / max(case.bytes, 1))))
    inputs = [case.make() for _ in range(copies)]
    out = {}
    for name, fn in case.impls.items():
        if only and name not in only:
            continue
        try:
            t = time_impl(torch, fn, inputs, graph=graph)
            out[name] = case.bytes / t / 1e9
        except Exception as e:  # noqa: BLE001 - a peer that cannot run is reported, not fatal
            print(f"# {case.op} {case.shape} {name}: {type(e).__name__}: {e}", flush=True)
    del inputs
    torch.cuda.empty_cache()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default=",".join(FAMILIES))
    ap.add_argument("--op", default="", help="only these operations (comma-separated)")
    ap.add_argument("--impl", default="", help="only these implementations (fly,torch,triton)")
    ap.add_argument("--quick", action="store_true", help="fewer shapes")
    ap.add_argument("--graph", action="store_true",
                    help="time CUDA graphs of the launches: the GPU's time without the host's")
    args = ap.parse_args()
    torch = gpu_torch()
    if torch is None:
        return 77
    ops = set(filter(None, args.op.split(",")))
    only = set(filter(None, args.impl.split(",")))
    gpu = torch.cuda.get_device_name()
    copy = copy_rate(torch)
    print(f"# {gpu}; device-to-device copy {copy:.0f} GB/s", flush=True)
    print(f"bench copy_gbs {copy:.1f} GB/s")
    rows = []
    for fam in filter(None, args.family.split(",")):
        try:
            mod = importlib.import_module(f"peers.{fam}")
        except ModuleNotFoundError as e:
            print(f"# family {fam}: no peers ({e})")
            continue
        for case in mod.cases(args.quick):
            if ops and case.op not in ops:
                continue
            r = run_case(torch, case, only, args.graph)
            rows.append((case, r))
            fly = r.get("fly")
            line = "  ".join(f"{k} {v:7.0f}" for k, v in r.items())
            print(f"# {case.op:<24} {case.shape:<18} {line}", flush=True)
    # The table.
    mode = "CUDA graphs (GPU time)" if args.graph else "eager launches (host cost included)"
    print(f"\nGPU: {gpu}; copy {copy:.0f} GB/s; GB/s = bytes moved / median time; {mode}")
    head = f"{'op':<24} {'shape':<18} {'fly':>7} {'torch':>7} {'triton':>7} {'/copy':>6} " \
           f"{'/torch':>7} {'/triton':>7}"
    print(head)
    print("-" * len(head))
    by_op: dict[str, list[float]] = {}
    for case, r in rows:
        fly, tor, tri = r.get("fly"), r.get("torch"), r.get("triton")
        f = lambda v: f"{v:7.0f}" if v else f"{'-':>7}"
        ratio = lambda a, b, w=7: f"{a / b:{w}.2f}" if a and b else f"{'-':>{w}}"
        print(f"{case.op:<24} {case.shape:<18} {f(fly)} {f(tor)} {f(tri)} "
              f"{ratio(fly, copy, 6)} {ratio(fly, tor)} {ratio(fly, tri)}")
        if fly and tri:
            by_op.setdefault(case.op, []).append(fly / tri)
    print()
    for op, rs in by_op.items():
        g = geomean(rs)
        print(f"{op:<24} fly/triton geomean {g:.2f}  min {min(rs):.2f}  over {len(rs)} shapes")
        print(f"bench {op}_over_triton_geomean {g:.3f} ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The peers of the kernel library's benchmark (tests/bench/kernels.py), one
module per family of kernels/: each has cases(quick) -> list of Case."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Case:
    """One operation on one shape.

    make()      fresh inputs: a tuple (or dict) handed to every implementation
    impls       name -> fn(inputs), one launch each ("fly", "torch", "triton")
    bytes       what the operation must move, once
    """
    op: str
    shape: str
    bytes: int
    make: Callable[[], Any]
    impls: dict[str, Callable[[Any], Any]] = field(default_factory=dict)


def gpu_torch():
    """PyTorch when it and a GPU are here, else None (the benchmarks then
    print why and exit 77, skipped)."""
    try:
        import torch
    except ImportError:
        print("no PyTorch: skipped")
        return None
    if not torch.cuda.is_available():
        print("no GPU: skipped")
        return None
    torch.manual_seed(0)
    return torch


def fly_kernels():
    """fly.kernels, or None (said why) when it cannot be imported: the
    benchmark then times the peers alone."""
    try:
        import fly.kernels as fk
    except Exception as e:  # noqa: BLE001 - any failure to load is reported, not fatal
        print(f"# fly.kernels: {e}")
        return None
    return fk


def median_launch_time(torch, fn, batches: int = 10, per: int = 5) -> float:
    """Median seconds per launch of fn(): one warm-up, then `batches` CUDA
    event-timed batches of `per` launches."""
    import statistics

    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(per):
            fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / per)
    return statistics.median(times)


def geomean(xs) -> float:
    """The geometric mean of positive numbers (NaN for none)."""
    import math

    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")

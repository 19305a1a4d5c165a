"""Micro-benchmarks of launches from Python.

    from fly import bench
    t = bench.launch_overhead(mod.empty)              # median µs per launch
    gbs = bench.bandwidth(lambda: mod.vector_add(A, B, C), 3 * A.nbytes)

    python3 -m fly.bench BUNDLE [KERNEL]              # see --help

Launch overhead is the host's time per launch: `count` launches back to
back timed with time.perf_counter, then one synchronisation (its cost is
spread over the count), repeated, and the median repeat taken. For an
empty kernel the GPU keeps up with the host, so this is what a launch
costs the Python program. Without a GPU, host_overhead times the same
argument packing and checks through Kernel.launch_config on a module
without a device.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass
class Timing:
    median_us: float  # per call, the median of the repeats
    min_us: float
    repeats_us: list[float]

    def __str__(self) -> str:
        return f"{self.median_us:.2f} µs (min {self.min_us:.2f}, {len(self.repeats_us)} repeats)"


def _synchronizer(kernel: Any = None) -> Callable[[], object]:
    """torch.cuda.synchronize when PyTorch is in use, else the module's device."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.synchronize
    if kernel is not None and kernel.module.device is not None:
        return kernel.module.device.synchronize
    return lambda: None


def time_calls(fn: Callable[..., object], *args: Any, count: int = 10000, repeats: int = 7,
               warmup: int = 100, synchronize: Optional[Callable[[], object]] = None,
               **kwargs: Any) -> Timing:
    """Median µs per fn(*args, **kwargs) over `repeats` runs of `count` calls,
    each run ended by synchronize()."""
    sync = synchronize or (lambda: None)
    for _ in range(warmup):
        fn(*args, **kwargs)
    sync()
    per_call = []
    for _ in range(repeats):
        loop = range(count)
        t0 = time.perf_counter()
        if kwargs:
            for _ in loop:
                fn(*args, **kwargs)
        else:
            for _ in loop:
                fn(*args)
        sync()
        per_call.append((time.perf_counter() - t0) / count * 1e6)
    return Timing(statistics.median(per_call), min(per_call), per_call)


def launch_overhead(kernel: Any, *args: Any, count: int = 10000, repeats: int = 7,
                    **launch: Any) -> Timing:
    """Host µs per launch of kernel(*args, **launch), back to back."""
    return time_calls(kernel, *args, count=count, repeats=repeats,
                      synchronize=_synchronizer(kernel), **launch)


def host_overhead(kernel: Any, *args: Any, count: int = 10000, repeats: int = 7) -> Timing:
    """µs per argument packing and check (Kernel.launch_config): what the
    binding and libflyrt cost before the driver, with or without a GPU."""
    return time_calls(kernel.launch_config, *args, count=count, repeats=repeats)


def bandwidth(fn: Callable[[], object], nbytes: int, *, count: int = 20, repeats: int = 5,
              synchronize: Optional[Callable[[], object]] = None) -> float:
    """GB/s (1e9 bytes) moved by fn, which moves nbytes per call: the median
    over repeats of `count` calls timed on the host between synchronisations
    (one call of a large kernel takes milliseconds, so launch cost vanishes)."""
    t = time_calls(fn, count=count, repeats=repeats, warmup=2,
                   synchronize=synchronize or _synchronizer())
    return nbytes / (t.median_us * 1e-6) / 1e9


def _main(argv: Optional[list[str]] = None) -> int:
    import fly

    p = argparse.ArgumentParser(prog="python3 -m fly.bench",
                                description="Launch overhead of a bundle's kernel from Python.")
    p.add_argument("bundle", help="a .flyb file")
    p.add_argument("kernel", nargs="?", help="the kernel (default: the bundle's only one)")
    p.add_argument("--size", type=int, default=1 << 20,
                   help="elements of each 1-D tensor argument (default 2^20)")
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--target", help="without a GPU: the target to check arguments for")
    a = p.parse_args(argv)
    gpu = fly.device_count() > 0
    mod = fly.load(a.bundle, target=None if gpu else (a.target or "sm_90"))
    names = sorted({e.name for e in mod.kernels})
    kernel = mod.kernel(a.kernel or names[0])
    args: list[Any] = []
    for prm in kernel.params:
        if prm.kind == "const":
            continue
        if prm.kind != "tensor" or prm.rank != 1:
            print(f"{kernel.name}: only kernels of 1-D tensors are benchmarked here "
                  f"({prm})")
            return 2
        args.append(_vector(prm.dtype, a.size, gpu))
    if gpu:
        t = launch_overhead(kernel, *args, count=a.count, repeats=a.repeats)
        print(f"{kernel.name}: launch from Python {t}")
    t = host_overhead(kernel, *args, count=a.count, repeats=a.repeats)
    print(f"{kernel.name}: argument packing and checks (launch_config) {t}")
    return 0


class _FakeArray:
    """A 1-D array at a made-up address, for host-side timing without a GPU
    (never dereferenced: a module without a device does not launch)."""

    def __init__(self, typestr: str, n: int) -> None:
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr,
                                         "data": (1 << 32, False), "version": 3}


def _vector(dtype: str, n: int, gpu: bool) -> Any:
    if gpu:
        import torch

        return torch.zeros(n, dtype=getattr(torch, {"f32": "float32", "f16": "float16",
                                                     "f64": "float64", "i32": "int32"}[dtype]),
                           device="cuda")
    return _FakeArray({"f32": "<f4", "f16": "<f2", "f64": "<f8", "i32": "<i4"}[dtype], n)


if __name__ == "__main__":
    sys.exit(_main())

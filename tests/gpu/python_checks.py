#!/usr/bin/env python3
"""The example kernels through the Python binding (fly) on a real GPU.

    python3 tests/gpu/python_checks.py --artifacts DIR [--quick]

DIR holds libflyrt.so and the bundles 01-vector-add.flyb, 02-tiled-copy.flyb,
03-tiled-mma.flyb, 04-preshuffle-gemm.flyb, 05-row-softmax.flyb and
empty.flyb (tests/gpu/kernels/empty.fly), compiled for the GPU's target, and
carried.flyb when it is there. FLYRT_LIBRARY, when set, names the library instead; the fly package
is taken from runtime/python of this repository unless PYTHONPATH already
provides one.

Each example runs on fresh random inputs with its output poisoned (NaN)
before the launch and is compared with PyTorch in float64, with the sizes
and tolerances the C check (flyrt_check.c) uses. Then: arguments through DLPack
and the CUDA Array Interface, explicit streams, launches from several
threads, the errors of bad launches, a CUDA graph captured and replayed,
and the benchmarks: launch overhead of the empty kernel from Python, and
the vector add's bandwidth at 2^28 floats against torch.add. Prints one
line per check ("ok ..." or "FAIL ...") and per figure ("bench NAME VALUE
UNIT"), then a table; exits 0 when all pass, 1 on a failure, 77 when there
is no GPU (or no PyTorch).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

failures = 0
figures: list[tuple[str, float, str]] = []


def report(ok: bool, what: str) -> bool:
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
    failures += not ok
    return ok


def figure(name: str, value: float, unit: str) -> None:
    print(f"bench {name} {value:.3f} {unit}", flush=True)
    figures.append((name, value, unit))


def setup(artifacts: Path):
    """Imports torch and fly, or exits 77 when there is nothing to run on."""
    if not os.environ.get("FLYRT_LIBRARY"):
        os.environ["FLYRT_LIBRARY"] = str(artifacts / "libflyrt.so")
    try:
        import fly  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "runtime" / "python"))
    import fly

    try:
        import torch
    except ImportError:
        print("no PyTorch: skipped")
        sys.exit(77)
    if not torch.cuda.is_available() or fly.device_count() == 0:
        print("no GPU: skipped")
        sys.exit(77)
    torch.cuda.init()
    return fly, torch


def check(name: str, fn) -> None:
    """Runs one group of checks; an exception is a failure, not the end."""
    try:
        fn()
    except Exception:
        report(False, f"{name}: raised\n{traceback.format_exc()}")


def close(torch, name: str, got, want, tol: float) -> bool:
    got, want = got.double(), want.double()
    if torch.isnan(got).any():
        return report(False, f"{name}: NaN left in the output (elements not written)")
    err = ((got - want).abs().max() / want.abs().max()).item()
    return report(err <= tol, f"{name}: max relative error {err:.2e} (tolerance {tol:.0e})")


def nan(torch, *shape, dtype=None):
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype or torch.float32)


# ---- the examples ------------------------------------------------------------------


def check_examples(fly, torch, mods) -> None:
    n = 1 << 22
    A, B = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    C = nan(torch, n)
    mods["vadd"].vector_add(A, B, C)
    torch.cuda.synchronize()
    close(torch, "vector_add", C, A.double() + B.double(), 1e-6)

    # D is (M, N) stored column-major: the transpose of a row-major (N, M)
    # tensor, whose strides (1, M) the binding passes as they are.
    M, N = 512, 768
    S = torch.randn(M, N, device="cuda")
    Dt = nan(torch, N, M)
    mods["copy"].tiled_copy_2d(S, Dt.t())
    torch.cuda.synchronize()
    close(torch, "tiled_copy_2d", Dt.t(), S, 0)

    M, N, K = 256, 384, 512
    Ah = torch.randn(M, K, device="cuda", dtype=torch.float16)
    Bh = torch.randn(N, K, device="cuda", dtype=torch.float16)
    Cf = nan(torch, M, N)
    mods["mma"].gemm_tile(Ah, Bh, Cf)
    torch.cuda.synchronize()
    close(torch, "gemm_tile (mma.sync)", Cf, Ah.double() @ Bh.double().t(), 1e-5)

    check_preshuffle(fly, torch, mods["preshuffle"])

    M, N = 300, 1000
    X = torch.randn(M, N, device="cuda") * 4
    Y = nan(torch, M, N)
    mods["softmax"].row_softmax(X, Y)
    torch.cuda.synchronize()
    close(torch, "row_softmax", Y, torch.softmax(X.double(), 1), 1e-5)


def check_preshuffle(fly, torch, mod) -> None:
    """examples/04-preshuffle-gemm.fly: C = A B^T with B preshuffled by
    fly.kernels.preshuffle_b, against float64; odd shapes (partial tiles,
    K not a multiple of the step), A an offset view with padded rows, C a
    view inside a poisoned buffer whose border must stay untouched."""
    from fly.kernels import preshuffle_b

    gemm = mod.preshuffle_gemm
    for M, N, K in ((1024, 1024, 1024), (300, 200, 328), (7, 33, 8), (128, 4096, 520)):
        big = torch.randn(M + 3, K + 24, device="cuda", dtype=torch.bfloat16)
        A = big[3:, 8:8 + K]
        B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        out = nan(torch, M + 4, N + 24, dtype=torch.bfloat16)
        C = out[2:2 + M, 8:8 + N]
        gemm(A, preshuffle_b(B, mod.device.target), C)
        torch.cuda.synchronize()
        name = f"preshuffle_gemm {M}x{N}x{K}"
        close(torch, name, C, A.double() @ B.double().t(), 1e-2)
        border = out.clone()
        border[2:2 + M, 8:8 + N] = float("nan")
        report(bool(torch.isnan(border).all()), f"{name}: C's border untouched")


def check_scalars(fly, torch, mods) -> None:
    """tests/gpu/kernels/carried.fly, when the artifacts have it: an i32 and
    an f32 scalar. out[t] = scale * (2^n + n(n-1)/2 + t)."""
    if "carried" not in mods:
        return
    n, scale, size = 10, 0.5, 1000
    out = nan(torch, size)
    mods["carried"].carried(n, scale, out)
    torch.cuda.synchronize()
    t = torch.arange(size, device="cuda", dtype=torch.float64)
    want = scale * (2**n + n * (n - 1) / 2 + t)
    close(torch, "carried (i32 and f32 scalars)", out, want, 1e-6)


# ---- other ways in -----------------------------------------------------------------


class DLPackOnly:
    """An array offering only DLPack (as JAX or CuPy would)."""

    def __init__(self, t) -> None:
        self.t = t
        self.exports = 0

    def __dlpack__(self, stream=None):
        self.exports += 1
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class CAIOnly:
    """An array offering only __cuda_array_interface__ (as Numba would)."""

    def __init__(self, t) -> None:
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def check_interfaces(fly, torch, mods) -> None:
    vadd = mods["vadd"].vector_add
    n = 1 << 20
    A, B = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    want = A.double() + B.double()

    C = nan(torch, n)
    wrapped = [DLPackOnly(A), DLPackOnly(B), DLPackOnly(C)]
    vadd(*wrapped)
    torch.cuda.synchronize()
    close(torch, "vector_add through DLPack", C, want, 1e-6)
    report(all(w.exports == 1 for w in wrapped), "DLPack: each array exported once")

    C = nan(torch, n)
    vadd(CAIOnly(A), CAIOnly(B), CAIOnly(C))
    torch.cuda.synchronize()
    close(torch, "vector_add through __cuda_array_interface__", C, want, 1e-6)

    # 2-D with strides: the copy through CAI (strides in bytes) and DLPack.
    M, N = 256, 512
    S = torch.randn(M, N, device="cuda")
    Dt = nan(torch, N, M)
    mods["copy"].tiled_copy_2d(CAIOnly(S), DLPackOnly(Dt.t()))
    torch.cuda.synchronize()
    close(torch, "tiled_copy_2d through CAI and DLPack (strided)", Dt.t(), S, 0)

    # A sub-tensor: data_ptr includes the storage offset.
    big = torch.randn(2 * n, device="cuda")
    C = nan(torch, n)
    vadd(big[n:], B, C)
    torch.cuda.synchronize()
    close(torch, "vector_add of a view at an offset", C, big[n:].double() + B.double(), 1e-6)


def check_streams(fly, torch, mods) -> None:
    vadd = mods["vadd"].vector_add
    n = 1 << 22
    A, B = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    want = A.double() + B.double()
    torch.cuda.synchronize()
    for how in ("torch.cuda.Stream", "int handle", "__cuda_stream__", "current stream"):
        s = torch.cuda.Stream()
        C = nan(torch, n)
        torch.cuda.synchronize()
        if how == "torch.cuda.Stream":
            vadd(A, B, C, stream=s)
        elif how == "int handle":
            vadd(A, B, C, stream=s.cuda_stream)
        elif how == "__cuda_stream__":
            class Proto:
                def __cuda_stream__(self):
                    return (0, s.cuda_stream)
            vadd(A, B, C, stream=Proto())
        else:
            with torch.cuda.stream(s):
                vadd(A, B, C)
        s.synchronize()  # only that stream: the result must be there
        close(torch, f"vector_add on a side stream ({how})", C, want, 1e-6)

    # Several threads launching one kernel at once, each on its own stream
    # with its own tensors: the per-thread argument buffers must not mix.
    results = {}

    def worker(i: int) -> None:
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            a = torch.full((n,), float(i), device="cuda")
            b = torch.full((n,), 0.5, device="cuda")
            c = torch.full((n,), float("nan"), device="cuda")
            for _ in range(200):
                vadd(a, b, c)
        s.synchronize()
        results[i] = c

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = len(results) == 8 and all(
        bool((results[i] == i + 0.5).all()) for i in range(8))
    report(ok, "vector_add from 8 threads at once, 200 launches each")


def check_errors(fly, torch, mods) -> None:
    vadd = mods["vadd"].vector_add
    n = 1 << 20
    A = torch.randn(n, device="cuda")

    def expect(what: str, status, text: str, *args, **kw) -> None:
        try:
            vadd(*args, **kw)
        except fly.FlyError as e:
            report(e.status == status and text in str(e), f"error: {what}: {e}")
            return
        report(False, f"error: {what}: no exception")

    expect("f16 tensor", fly.Status.ARGUMENTS, "not f16", A.half(), A, A)
    expect("CPU tensor", fly.Status.ARGUMENTS, "CPU", A.cpu(), A, A)
    expect("two arguments", fly.Status.ARGUMENTS, "takes 3 arguments", A, A)
    expect("2-D tensor", fly.Status.ARGUMENTS, "flattened", A.view(1024, -1), A, A)
    expect("strided view", fly.Status.ARGUMENTS, "stride", A[::2], A[::2], A[::2])
    expect("a list", fly.Status.ARGUMENTS, "not an array", [1.0], A, A)
    try:
        import numpy

        expect("a NumPy array (host memory, DLPack)", fly.Status.ARGUMENTS, "kDLCPU",
               numpy.zeros(n, numpy.float32), A, A)
    except ImportError:
        pass
    # The module still works after the errors.
    C = nan(torch, n)
    vadd(A, A, C)
    torch.cuda.synchronize()
    close(torch, "vector_add after the errors", C, 2 * A.double(), 1e-6)


def check_graph(fly, torch, mods) -> None:
    """A capture of several launches, replayed on new inputs: nothing in the
    launch path may synchronise, allocate or load while capturing."""
    vadd = mods["vadd"].vector_add
    softmax = mods["softmax"].row_softmax
    n, M, N = 1 << 20, 64, 1000
    A, B, C = torch.randn(n, device="cuda"), torch.randn(n, device="cuda"), nan(torch, n)
    D = nan(torch, n)
    X, Y = torch.randn(M, N, device="cuda"), nan(torch, M, N)
    # Warm up on a side stream, as PyTorch asks before capturing.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vadd(A, B, C)
        softmax(X, Y)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    refused = None
    with torch.cuda.graph(g):
        vadd(A, B, C)
        vadd(C, B, D)  # depends on the first
        # A launch the kernel's `require` refuses, during the capture: the
        # runtime refuses it before the driver hears of it, so the capture
        # goes on and holds only the good launches.
        try:
            vadd(A, B[:1000], C)
        except fly.FlyError as e:
            refused = e
        softmax(X, Y)
    report(refused is not None and refused.status == fly.Status.LAUNCH_REFUSED
           and "A, B and C have the same length" in refused.message,
           f"graph capture: a launch with mismatched lengths is refused ({refused})")
    for replay in range(3):
        A.copy_(torch.randn(n, device="cuda"))
        X.copy_(torch.randn(M, N, device="cuda") * 4)
        C.fill_(float("nan"))
        D.fill_(float("nan"))
        Y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        close(torch, f"graph replay {replay}: vector_add", C, A.double() + B.double(), 1e-6)
        close(torch, f"graph replay {replay}: vector_add of its output", D,
              A.double() + 2 * B.double(), 1e-6)
        close(torch, f"graph replay {replay}: row_softmax", Y, torch.softmax(X.double(), 1),
              1e-5)


# ---- benchmarks --------------------------------------------------------------------


def bench(fly, torch, mods, quick: bool) -> None:
    from fly import bench as fb

    count, repeats = (2000, 3) if quick else (10000, 7)
    empty = mods["empty"].empty
    t = fb.launch_overhead(empty, count=count, repeats=repeats)
    figure("python_launch_us", t.median_us, "us")
    report(True, f"empty kernel from Python: {t}")

    n = 1 << 20
    A, B, C = (torch.zeros(n, device="cuda") for _ in range(3))
    vadd = mods["vadd"].vector_add
    t = fb.launch_overhead(vadd, A, B, C, count=count, repeats=repeats)
    figure("python_vadd_launch_us", t.median_us, "us")
    report(True, f"vector_add of three tensors from Python: {t} (goal: at most 8 µs)")
    s = torch.cuda.current_stream().cuda_stream
    t = fb.launch_overhead(vadd, A, B, C, count=count, repeats=repeats, stream=s)
    figure("python_vadd_launch_stream_us", t.median_us, "us")
    t = fb.host_overhead(vadd, A, B, C, count=count, repeats=repeats)
    figure("python_vadd_config_us", t.median_us, "us")

    one = torch.zeros(1, device="cuda")
    t = fb.time_calls(one.add_, 1.0, count=count, repeats=repeats,
                      synchronize=torch.cuda.synchronize)
    figure("torch_add_launch_us", t.median_us, "us")

    n = 1 << 26 if quick else 1 << 28
    A, B = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    C = nan(torch, n)
    nbytes = 3 * 4 * n
    gbs = fb.bandwidth(lambda: vadd(A, B, C), nbytes)
    torch.cuda.synchronize()
    close(torch, f"vector_add of 2^{n.bit_length() - 1} floats", C, A.double() + B.double(), 1e-6)
    figure("python_vadd_gbs", gbs, "GB/s")
    gbs_torch = fb.bandwidth(lambda: torch.add(A, B, out=C), nbytes)
    figure("torch_add_gbs", gbs_torch, "GB/s")
    figure("python_vadd_over_torch", gbs / gbs_torch, "ratio")
    report(gbs > 0.8 * gbs_torch,
           f"vector_add bandwidth {gbs:.0f} GB/s, torch.add {gbs_torch:.0f} GB/s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--artifacts", required=True, type=Path,
                   help="libflyrt.so and the bundles")
    p.add_argument("--quick", action="store_true", help="fewer launches, smaller benchmark")
    p.add_argument("--no-bench", action="store_true", help="checks only")
    a = p.parse_args()
    fly, torch = setup(a.artifacts.resolve())
    # Fresh inputs on every run; the seed is printed so a failure can be replayed.
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    print(f"seed {seed}")
    mods = {}
    for key, name in (("vadd", "01-vector-add"), ("copy", "02-tiled-copy"),
                      ("mma", "03-tiled-mma"), ("preshuffle", "04-preshuffle-gemm"),
                      ("softmax", "05-row-softmax"),
                      ("empty", "empty")):
        mods[key] = fly.load(a.artifacts / f"{name}.flyb")
    if (a.artifacts / "carried.flyb").exists():  # tests/gpu/kernels/carried.fly
        mods["carried"] = fly.load(a.artifacts / "carried.flyb")
    dev = mods["vadd"].device
    print(f"fly {fly.runtime_version()} on {dev.name} ({dev.target}), PyTorch "
          f"{torch.__version__}, Python {sys.version.split()[0]}")
    check("examples", lambda: check_examples(fly, torch, mods))
    check("scalars", lambda: check_scalars(fly, torch, mods))
    check("interfaces", lambda: check_interfaces(fly, torch, mods))
    check("streams", lambda: check_streams(fly, torch, mods))
    check("errors", lambda: check_errors(fly, torch, mods))
    check("graph", lambda: check_graph(fly, torch, mods))
    if not a.no_bench:
        check("bench", lambda: bench(fly, torch, mods, a.quick))
    if figures:
        width = max(len(n) for n, _, _ in figures)
        print(f"\n{'benchmark':<{width}}  {'value':>10}  unit")
        for name, value, unit in figures:
            print(f"{name:<{width}}  {value:>10.2f}  {unit}")
    print(f"\n{failures} failure(s)" if failures else "\nall checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

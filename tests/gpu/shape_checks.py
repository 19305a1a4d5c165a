#!/usr/bin/env python3
"""Every example on shapes that are not multiples of its tile, and on views
at every offset, with guard regions around the outputs.

    python3 tests/gpu/shape_checks.py --artifacts DIR

DIR holds libflyrt.so and the examples' bundles, as for python_checks.py.
Each launch is either right or refused before it starts, never anything
else: the output is a view into a larger buffer whose guard elements
before and after it are filled with a sentinel; after the launch the
result is compared with PyTorch in float64 and every guard element must
still hold the sentinel. A refused launch (FLYRT_ERROR_LAUNCH_REFUSED from
a `require`, FLYRT_ERROR_ARGUMENTS for an alignment the kernel's vector
accesses need) must leave the output untouched too. After all of it, the
CUDA context must still work. Prints "ok ..." or "FAIL ..." per group and a
summary line with the counts; exits 0 when all pass, 1 on a failure, 77
without a GPU.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from python_checks import check, report, setup  # noqa: E402

GUARD = 64           # elements of guard on each side of an output
SENTINEL = -12345.0  # what a guard element holds, and must still hold
counts = {"right": 0, "refused": 0}


def guarded(torch, n, offset=0, dtype=None):
    """A buffer of GUARD + offset + n + GUARD elements filled with the
    sentinel, and the n-element view at GUARD + offset (NaN, the poison)."""
    buf = torch.full((2 * GUARD + offset + n,), SENTINEL, device="cuda",
                     dtype=dtype or torch.float32)
    view = buf[GUARD + offset:GUARD + offset + n]
    view.fill_(float("nan"))
    return buf, view


def guards_intact(torch, buf, offset, n) -> bool:
    before = buf[:GUARD + offset]
    after = buf[GUARD + offset + n:]
    return bool((before == SENTINEL).all() and (after == SENTINEL).all())


def launch(fly, fn, *args):
    """Runs the launch: "right" to be checked, or "refused" with the status."""
    try:
        fn(*args)
        return None
    except fly.FlyError as e:
        if e.status in (fly.Status.LAUNCH_REFUSED, fly.Status.ARGUMENTS):
            return e
        raise


def vector_add(fly, torch, mods) -> None:
    k = mods["vadd"].vector_add
    bad = []
    sizes = [1, 2, 3, 4, 5, 7, 255, 1023, 1024, 1025, 2047, 4099, 1 << 20 | 4, 1000003]
    for n in sizes:
        for off in range(16):
            A = torch.randn(off + n, device="cuda")[off:]
            B = torch.randn(off + n, device="cuda")[off:]
            buf, C = guarded(torch, n, off)
            err = launch(fly, k, A, B, C)
            torch.cuda.synchronize()
            if err is not None:
                counts["refused"] += 1
                if off % 4 == 0 or not torch.isnan(C).all():
                    bad.append(f"n={n} offset={off}: refused ({err.message}) or wrote")
            else:
                counts["right"] += 1
                if not torch.equal(C, A + B):  # one f32 addition, rounded as IEEE says
                    bad.append(f"n={n} offset={off}: wrong sum")
            if not guards_intact(torch, buf, off, n):
                bad.append(f"n={n} offset={off}: a guard element was written")
    # Lengths that disagree are refused with the kernel's message.
    A, B = torch.randn(100, device="cuda"), torch.randn(99, device="cuda")
    buf, C = guarded(torch, 100)
    err = launch(fly, k, A, B, C)
    torch.cuda.synchronize()
    if err is None or "A, B and C have the same length" not in err.message:
        bad.append("lengths 100, 99, 100 were not refused")
    if not guards_intact(torch, buf, 0, 100) or not torch.isnan(C).all():
        bad.append("a refused launch wrote its output")
    report(not bad, f"vector_add: {len(sizes)} lengths x 16 offsets, guards intact"
           + ("" if not bad else ": " + "; ".join(bad[:5])))


def matrix(torch, rows, cols, offset, dtype=None, fill=None):
    """A rows x cols row-major view at `offset` elements into a guarded buffer."""
    buf, flat = guarded(torch, rows * cols, offset, dtype)
    view = flat.view(rows, cols)
    if fill is not None:
        view.copy_(fill)
    return buf, view


def tiled_copy(fly, torch, mods) -> None:
    k = mods["copy"].tiled_copy_2d
    bad = []
    for M, N in [(32, 32), (64, 96), (33, 32), (32, 33), (1, 1), (31, 64), (96, 65)]:
        for off in range(16):
            S = torch.randn(off + M * N, device="cuda")[off:].view(M, N)
            buf, Dt = matrix(torch, N, M, off)   # D is M x N column-major
            err = launch(fly, k, S, Dt.t())
            torch.cuda.synchronize()
            whole = M % 32 == 0 and N % 32 == 0
            if err is not None:
                counts["refused"] += 1
                if whole or not torch.isnan(Dt).all():
                    bad.append(f"{M}x{N} offset {off}: refused ({err.message}) or wrote")
            else:
                counts["right"] += 1
                if not whole or not torch.equal(Dt.t(), S):
                    bad.append(f"{M}x{N} offset {off}: ran and is wrong")
            if not guards_intact(torch, buf, off, M * N):
                bad.append(f"{M}x{N} offset {off}: a guard element was written")
    report(not bad, "tiled_copy_2d: 7 shapes x 16 offsets, guards intact"
           + ("" if not bad else ": " + "; ".join(bad[:5])))


def gemm(fly, torch, mods) -> None:
    k = mods["mma"].gemm_tile
    bad = []
    for M, N, K in [(64, 64, 32), (128, 64, 64), (65, 64, 32), (64, 65, 32), (64, 64, 33),
                    (1, 1, 1)]:
        for off in range(16):
            A = torch.randn(off + M * K, device="cuda", dtype=torch.float16)[off:].view(M, K)
            B = torch.randn(off + N * K, device="cuda", dtype=torch.float16)[off:].view(N, K)
            buf, C = matrix(torch, M, N, off)
            err = launch(fly, k, A, B, C)
            torch.cuda.synchronize()
            whole = M % 64 == 0 and N % 64 == 0 and K % 32 == 0
            if err is not None:
                counts["refused"] += 1
                if (whole and off % 8 == 0) or not torch.isnan(C).all():
                    bad.append(f"{M}x{N}x{K} offset {off}: refused ({err.message}) or wrote")
            else:
                counts["right"] += 1
                want = A.double() @ B.double().t()
                errv = ((C.double() - want).abs().max() / want.abs().max()).item()
                if not whole or errv > 1e-5:
                    bad.append(f"{M}x{N}x{K} offset {off}: ran, error {errv:.1e}")
            if not guards_intact(torch, buf, off, M * N):
                bad.append(f"{M}x{N}x{K} offset {off}: a guard element was written")
    report(not bad, "gemm_tile: 6 shapes x 16 offsets, guards intact"
           + ("" if not bad else ": " + "; ".join(bad[:5])))


def softmax(fly, torch, mods) -> None:
    k = mods["softmax"].row_softmax
    bad = []
    for M, N in [(1, 1), (1, 257), (3, 255), (17, 1000), (5, 4097)]:
        for off in range(16):
            X = (torch.randn(off + M * N, device="cuda") * 4)[off:].view(M, N)
            buf, Y = matrix(torch, M, N, off)
            err = launch(fly, k, X, Y)
            torch.cuda.synchronize()
            if err is not None:
                bad.append(f"{M}x{N} offset {off}: refused ({err.message})")
                continue
            counts["right"] += 1
            want = torch.softmax(X.double(), 1)
            if ((Y.double() - want).abs().max()).item() > 1e-5:
                bad.append(f"{M}x{N} offset {off}: wrong")
            if not guards_intact(torch, buf, off, M * N):
                bad.append(f"{M}x{N} offset {off}: a guard element was written")
    X = torch.randn(4, 8, device="cuda")
    buf, Y = matrix(torch, 3, 8, 0)
    err = launch(fly, k, X, Y)
    torch.cuda.synchronize()
    if err is None or "Y has the shape of X" not in err.message:
        bad.append("X 4x8 with Y 3x8 was not refused")
    if not guards_intact(torch, buf, 0, 24):
        bad.append("a refused launch wrote past Y")
    report(not bad, "row_softmax: 5 shapes x 16 offsets, guards intact"
           + ("" if not bad else ": " + "; ".join(bad[:5])))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifacts", required=True)
    args = ap.parse_args()
    art = Path(args.artifacts)
    fly, torch = setup(art)
    mods = {name: fly.load(str(art / f"{file}.flyb")) for name, file in
            [("vadd", "01-vector-add"), ("copy", "02-tiled-copy"), ("mma", "03-tiled-mma"),
             ("softmax", "05-row-softmax")]}
    for name, fn in [("vector_add", vector_add), ("tiled_copy_2d", tiled_copy),
                     ("gemm_tile", gemm), ("row_softmax", softmax)]:
        check(name, lambda fn=fn: fn(fly, torch, mods))
    # The context is alive: a plain PyTorch operation and a launch still work.
    A = torch.randn(1000, device="cuda")
    C = torch.empty_like(A)
    mods["vadd"].vector_add(A, A, C)
    torch.cuda.synchronize()
    report(torch.equal(C, A + A), "the CUDA context is alive after all of it")
    print(f"launches: {counts['right']} ran and were checked, {counts['refused']} refused")
    import python_checks
    return 1 if python_checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""GPU checks of kernels/norm through fly.kernels: each kernel against a
float64 PyTorch reference, on fresh random inputs, over row lengths from 1
to 262144 (odd ones included), offset starts and padded rows, outputs
poisoned and guarded. Tolerances: common.TOL, by output dtype."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
# (rows, row length): odd lengths, the register plans' edges, streamed rows.
SHAPES = [(3, 1), (5, 7), (64, 127), (7, 128), (33, 1000), (17, 4096), (9, 4097),
          (4, 16384), (3, 65536 + 3), (2, 262144), (300, 64)]


def layouts(m, n):
    """(name, offset in elements, row stride) of the inputs tried."""
    yield "contiguous", 0, n
    yield "offset by 1 element, rows padded by 3", 1, n + 3
    yield "offset by 8 elements, rows padded by 8", 8, n + 8


def ref_rms_norm(x, w, eps):
    x64 = x.to(torch.float64)
    y = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)
    return y * w.to(torch.float64) if w is not None else y


def check_rms_norm(c: Checks) -> None:
    eps = 1e-6
    for dt in DTYPES:
        atol, rtol = tol(dt)
        for m, n in SHAPES:
            for name, off, rs in layouts(m, n):
                x = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt))
                w = rand((n,), dt) if (m + n) % 2 else None
                y = Guarded((m, n), dt, off, rs)
                fk.rms_norm(x.tensor, w, eps, out=y.tensor)
                torch.cuda.synchronize()
                what = f"rms_norm {dt} {m}x{n} {name}{' no weight' if w is None else ''}"
                c.close(what, y.tensor, ref_rms_norm(x.tensor, w, eps), atol, rtol)
                c.ok(what + ": guards", y.guards_intact() and x.guards_intact())
    # Shapes of more dimensions, a new output, and in place.
    x = rand((2, 3, 4096), torch.bfloat16)
    w = rand((4096,), torch.bfloat16)
    c.close("rms_norm 3-D input, new output", fk.rms_norm(x, w), ref_rms_norm(x, w, 1e-6),
            *tol(torch.bfloat16))
    ref = ref_rms_norm(x, w, 1e-6)
    fk.rms_norm(x, w, out=x)
    c.close("rms_norm in place", x, ref, *tol(torch.bfloat16))
    c.raises("rms_norm refuses a weight of the wrong length",
             lambda: fk.rms_norm(x, w[:100]), "weight")


def main() -> int:
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    c = Checks("norm")
    check_rms_norm(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

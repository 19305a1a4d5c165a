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


def ref_layer_norm(x, w, b, eps):
    x64 = x.to(torch.float64)
    mean = x64.mean(-1, keepdim=True)
    y = (x64 - mean) * torch.rsqrt((x64 - mean).pow(2).mean(-1, keepdim=True) + eps)
    y = y * w.to(torch.float64) if w is not None else y
    return y + b.to(torch.float64) if b is not None else y


def ref_softmax(x):
    return torch.softmax(x.to(torch.float64), -1)


def ref_softmax_backward(dy, y):
    dy64, y64 = dy.to(torch.float64), y.to(torch.float64)
    return y64 * (dy64 - (dy64 * y64).sum(-1, keepdim=True))


def sweep(c: Checks, name: str, run, shapes=SHAPES, dtypes=DTYPES):
    """run(dt, m, n, off, rs, what) for every dtype, shape and layout."""
    for dt in dtypes:
        for m, n in shapes:
            for lname, off, rs in layouts(m, n):
                run(dt, m, n, off, rs, f"{name} {dt} {m}x{n} {lname}")


def check_layer_norm(c: Checks) -> None:
    def run(dt, m, n, off, rs, what):
        eps = 1e-5
        x = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt) + 3.0)  # a mean far from 0
        w = rand((n,), dt) if (m + n) % 2 else None
        b = rand((n,), dt) if (m + n) % 3 else None
        y = Guarded((m, n), dt, off, rs)
        fk.layer_norm(x.tensor, w, b, eps, out=y.tensor)
        torch.cuda.synchronize()
        atol, rtol = tol(dt)
        c.close(what, y.tensor, ref_layer_norm(x.tensor, w, b, eps), atol, rtol)
        c.ok(what + ": guards", y.guards_intact() and x.guards_intact())
    sweep(c, "layer_norm", run)
    x = rand((3, 5, 1000), torch.float16)
    c.close("layer_norm 3-D, new output", fk.layer_norm(x), ref_layer_norm(x, None, None, 1e-5),
            *tol(torch.float16))


def check_add_rms_norm(c: Checks) -> None:
    def run(dt, m, n, off, rs, what):
        eps = 1e-6
        x = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt))
        r = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt))
        w = rand((n,), dt) if (m + n) % 2 else None
        y = Guarded((m, n), dt, off, rs)
        h = Guarded((m, n), dt, off, rs)
        h_ref = (x.tensor.to(torch.float64) + r.tensor.to(torch.float64)).to(dt)
        y_ref = ref_rms_norm(h_ref, w, eps)
        got_y, got_h = fk.rms_norm(x.tensor, w, eps, out=y.tensor, residual=r.tensor,
                                   residual_out=h.tensor)
        torch.cuda.synchronize()
        atol, rtol = tol(dt)
        c.close(what + ": h", h.tensor, h_ref, atol, rtol)
        c.close(what + ": y", y.tensor, y_ref, atol, rtol)
        c.ok(what + ": returns out and residual_out",
             got_y.data_ptr() == y.tensor.data_ptr() and got_h.data_ptr() == h.tensor.data_ptr())
        c.ok(what + ": guards", all(g.guards_intact() for g in (x, r, y, h)))
    sweep(c, "rms_norm+residual", run)
    # The residual updated in place, as vLLM does.
    x, r = rand((64, 4096), torch.bfloat16), rand((64, 4096), torch.bfloat16)
    w = rand((4096,), torch.bfloat16)
    h_ref = (x.double() + r.double()).to(torch.bfloat16)
    y, h = fk.rms_norm(x, w, residual=r, residual_out=r)
    c.ok("rms_norm+residual in place: h is residual", h.data_ptr() == r.data_ptr())
    c.close("rms_norm+residual in place: h", r, h_ref, *tol(torch.bfloat16))
    c.close("rms_norm+residual in place: y", y, ref_rms_norm(h_ref, w, 1e-6), *tol(torch.bfloat16))


def check_rms_norm_backward(c: Checks) -> None:
    def run(dt, m, n, off, rs, what):
        eps = 1e-6
        x = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt))
        dy = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt))
        w = rand((n,), dt) if (m + n) % 2 else None
        x64 = x.tensor.double().requires_grad_()
        w64 = w.double().requires_grad_() if w is not None else None
        ref = ref_rms_norm(x64, w64, eps)
        ref.backward(dy.tensor.double())
        dx, dw = fk.rms_norm_backward(dy.tensor, x.tensor, w, eps)
        torch.cuda.synchronize()
        atol, rtol = tol(dt)
        c.close(what + ": dx", dx, x64.grad, atol * 4, rtol * 4)
        if w is not None:
            # dW sums m rows: its rounding grows with m, relative to the sum
            # of magnitudes.
            scale = (dy.tensor.double() * x64.detach() *
                     torch.rsqrt(x64.detach().pow(2).mean(-1, keepdim=True) + eps)).abs().sum(0)
            err = (dw.double() - w64.grad).abs()
            bad = int((err > atol + rtol * w64.grad.abs() + 1e-5 * scale).sum())
            c.ok(what + ": dw", bad == 0 and dw.dtype == dt,
                 f"max error {float(err.max()):.3g}, {bad} outside")
        else:
            c.ok(what + ": no dw without weight", dw is None)
        c.ok(what + ": guards", x.guards_intact() and dy.guards_intact())
    sweep(c, "rms_norm_backward", run,
          shapes=[(3, 1), (5, 7), (64, 127), (7, 128), (33, 1000), (1000, 4096), (9, 4097),
                  (4, 16384), (3, 65536 + 3)])


def check_softmax(c: Checks) -> None:
    def run(dt, m, n, off, rs, what):
        x = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt, 4.0))
        y = Guarded((m, n), dt, off, rs)
        fk.softmax(x.tensor, out=y.tensor)
        torch.cuda.synchronize()
        atol, rtol = tol(dt)
        c.close(what, y.tensor, ref_softmax(x.tensor), atol / 8, rtol)
        c.ok(what + ": guards", y.guards_intact() and x.guards_intact())
    sweep(c, "softmax", run)
    x = torch.full((4, 3000), -1e30, device="cuda")
    x[:, 7] = 5.0
    c.close("softmax of a row with one finite peak", fk.softmax(x), ref_softmax(x), 1e-6, 1e-6)
    x = rand((7, 300), torch.float32) * 1e3
    c.close("softmax of large values", fk.softmax(x), ref_softmax(x), 1e-6, 1e-5)


def check_softmax_backward(c: Checks) -> None:
    def run(dt, m, n, off, rs, what):
        y = Guarded((m, n), dt, off, rs).fill(torch.softmax(rand((m, n), torch.float32, 3.0), -1)
                                              .to(dt))
        dy = Guarded((m, n), dt, off, rs).fill(rand((m, n), dt))
        dx = Guarded((m, n), dt, off, rs)
        fk.softmax_backward(dy.tensor, y.tensor, out=dx.tensor)
        torch.cuda.synchronize()
        atol, rtol = tol(dt)
        c.close(what, dx.tensor, ref_softmax_backward(dy.tensor, y.tensor), atol / 8, rtol)
        c.ok(what + ": guards", all(g.guards_intact() for g in (y, dy, dx)))
    sweep(c, "softmax_backward", run)


class DLPackOnly:
    """An array that offers DLPack and nothing else, as CuPy's or JAX's do."""

    def __init__(self, t) -> None:
        self.t = t

    def __dlpack__(self, stream=None, **kwargs):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def check_dlpack(c: Checks) -> None:
    x = rand((33, 1000), torch.float16)
    w = rand((1000,), torch.float16)
    y = torch.empty_like(x)
    got = fk.rms_norm(DLPackOnly(x), DLPackOnly(w), out=DLPackOnly(y))
    torch.cuda.synchronize()
    c.close("rms_norm of DLPack arrays", y, ref_rms_norm(x, w, 1e-6), *tol(torch.float16))
    c.ok("rms_norm of DLPack arrays returns a torch tensor on out's memory",
         isinstance(got, torch.Tensor) and got.data_ptr() == y.data_ptr())
    c.close("softmax of a DLPack array", fk.softmax(DLPackOnly(x)), ref_softmax(x),
            *tol(torch.float16))


def check_errors(c: Checks) -> None:
    x = rand((4, 64), torch.bfloat16)
    c.raises("a CPU tensor is refused", lambda: fk.softmax(x.cpu()), "")
    c.raises("out of another dtype is refused", lambda: fk.softmax(x, out=x.float()), "out")
    c.raises("a bias of the wrong dtype is refused",
             lambda: fk.layer_norm(x, bias=x[0].float()), "bias")
    c.raises("an f64 tensor is refused", lambda: fk.softmax(x.double()), "float64")


def main() -> int:
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    c = Checks("norm")
    only = set(sys.argv[1:])
    for name, fn in [("rms_norm", check_rms_norm), ("add_rms_norm", check_add_rms_norm),
                     ("rms_norm_backward", check_rms_norm_backward),
                     ("layer_norm", check_layer_norm), ("softmax", check_softmax),
                     ("softmax_backward", check_softmax_backward), ("dlpack", check_dlpack),
                     ("errors", check_errors)]:
        if not only or name in only:
            fn(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

"""What the kernel library's GPU checks share (tests/gpu/library/check_*.py).

Each check compares a kernel of fly.kernels with a float64 PyTorch
reference on fresh random inputs (never zeros), writing into outputs
poisoned with NaN (or 0x7F bytes) that sit between guard regions, which
must be untouched afterwards. Each prints "ok ..." / "FAIL ..." lines and
exits 0 when all passed, 1 otherwise, 77 without a GPU.
"""
from __future__ import annotations

import math
import sys

SKIPPED = 77

try:
    import torch
except ImportError:  # pragma: no cover - the GPU machine has PyTorch
    torch = None


def need_gpu() -> None:
    if torch is None or not torch.cuda.is_available():
        print("no GPU (or no PyTorch): skipped")
        sys.exit(SKIPPED)


# Tolerances per dtype, for results computed in f32 and rounded once to the
# output type: a few units in the last place of the type, relative, plus an
# absolute part for values near 0 (cancellation in x - mean, exp of very
# negative numbers).
TOL = {
    "torch.float32": (1e-5, 1e-5),
    "torch.float16": (2e-3, 2e-3),
    "torch.bfloat16": (1.6e-2, 1.6e-2),
}


def tol(dtype) -> tuple[float, float]:
    """(atol, rtol) for outputs of dtype."""
    return TOL[str(dtype)]


class Checks:
    """Counts checks and failures; each check prints one line."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.failures = 0

    def ok(self, what: str, good: bool, detail: str = "") -> bool:
        self.count += 1
        if not good:
            self.failures += 1
        print(f"{'ok' if good else 'FAIL'} {self.name}: {what}{' (' + detail + ')' if detail else ''}",
              flush=True)
        return good

    def close(self, what: str, got, ref, atol: float, rtol: float) -> bool:
        """got (any dtype) against ref (float64): |got - ref| <= atol + rtol |ref|
        everywhere, NaN nowhere unless ref has it there."""
        g = got.to(torch.float64)
        r = ref.to(torch.float64)
        if g.shape != r.shape:
            return self.ok(what, False, f"shape {tuple(g.shape)}, expected {tuple(r.shape)}")
        bad_nan = torch.isnan(g) & ~torch.isnan(r)
        err = (g - r).abs()
        allowed = atol + rtol * r.abs()
        over = (err > allowed) | bad_nan
        n_over = int(over.sum())
        worst = float(torch.nan_to_num(err, nan=math.inf).max()) if g.numel() else 0.0
        return self.ok(what, n_over == 0,
                       f"max error {worst:.3g}, atol {atol:g}, rtol {rtol:g}" +
                       (f", {n_over} of {g.numel()} outside" if n_over else ""))

    def equal(self, what: str, got, ref) -> bool:
        same = got.shape == ref.shape and bool(torch.equal(got.cpu(), ref.cpu()))
        diff = "" if same else f"{int((got.cpu() != ref.cpu()).sum()) if got.shape == ref.shape else 'shape'} differ"
        return self.ok(what, same, diff)

    def raises(self, what: str, fn, contains: str = "") -> bool:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - any refusal is what is checked
            return self.ok(what, contains in str(e), f"{type(e).__name__}: {e}")
        return self.ok(what, False, "no error raised")

    def finish(self) -> int:
        print(f"{self.name}: {self.count - self.failures} of {self.count} checks passed", flush=True)
        return 1 if self.failures else 0


def rand(shape, dtype, scale: float = 1.0, device: str = "cuda"):
    """Fresh random values (normal, never all zeros) of dtype."""
    return (torch.randn(shape, dtype=torch.float32, device=device) * scale).to(dtype)


class Guarded:
    """A tensor placed inside a larger buffer, with GUARD elements before and
    after it and, for padded rows, the gaps between its rows: all of that
    holds a byte pattern which guards_intact() checks afterwards. offset
    (elements) moves the tensor's start, so that an odd offset leaves it
    unaligned; row_stride (>= the last dimension) pads its rows."""

    GUARD = 1024

    def __init__(self, shape, dtype, offset: int = 0, row_stride=None, poison=True) -> None:
        shape = tuple(shape)
        n_last = shape[-1] if shape else 1
        rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
        rs = row_stride if row_stride is not None else n_last
        span = (rows - 1) * rs + n_last if rows and n_last else 0
        total = self.GUARD * 2 + offset + span
        self.buffer = torch.empty(total, dtype=dtype, device="cuda")
        raw = self.buffer.view(torch.uint8)
        raw.copy_(torch.arange(raw.numel(), device="cuda").remainder(251).to(torch.uint8))
        self.pattern = raw.clone()
        strides = [1] * len(shape)
        if len(shape) >= 2:
            strides[-2] = rs
            for d in range(len(shape) - 3, -1, -1):
                strides[d] = strides[d + 1] * shape[d + 1]
        self.tensor = self.buffer.as_strided(shape, strides, self.GUARD + offset)
        # Which bytes belong to the tensor's elements.
        inside = torch.zeros(total, dtype=torch.bool, device="cuda")
        if self.tensor.numel():
            idx = torch.arange(total, device="cuda").as_strided(shape, strides, self.GUARD + offset)
            inside[idx.reshape(-1)] = True
        self.outside = ~inside.repeat_interleave(self.buffer.element_size())
        if poison:
            self.poison()

    def poison(self) -> None:
        """The tensor's elements become NaN (floats) or 0x7F bytes (integers,
        8-bit floats), so that an element the kernel forgets is seen."""
        t = self.tensor
        if t.dtype.is_floating_point and t.element_size() >= 2:
            t.fill_(float("nan"))
        else:
            t.view(torch.uint8).fill_(0x7F)

    def fill(self, values) -> "Guarded":
        self.tensor.copy_(values)
        return self

    def guards_intact(self) -> bool:
        raw = self.buffer.view(torch.uint8)
        return bool(torch.equal(raw[self.outside], self.pattern[self.outside]))

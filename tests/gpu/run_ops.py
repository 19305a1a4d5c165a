#!/usr/bin/env python3
"""The numerical checks of the golden operation tests, on a real GPU.

    python3 tests/gpu/run_ops.py --artifacts DIR [FILE.fly ...]

A golden test of tests/cli/compile/golden/ that carries `// GPU:` lines is
also a GPU test: the build compiles the whole file (its `// -----` marks are
comments to flyc) into DIR/ops/NAME.flyb, and each block of consecutive
`// GPU:` lines is Python run here against it:

    // GPU: x = randn(1003) * 8
    // GPU: y = out(1003)
    // GPU: floor_f32(x, y)
    // GPU: check(y, np.floor(f64(x)))

The bundle is for sm_90 unless the file says otherwise in a line
`// TARGET: sm_90a` (wgmma and setmaxnreg need the `a` variant).

The names a block sees:
  - every kernel of the bundle, called with torch tensors and numbers (the
    launch rule of its launch block applies);
  - randn(*shape, dtype=torch.float32, scale=1), rand, randint(lo, hi, *shape,
    dtype=torch.int32): fresh random inputs (never zeros), each a view at an
    odd offset inside a larger allocation;
  - out(*shape, dtype=torch.float32): an output filled with a poison value
    (NaN, or 0x5A bytes for integers), with poisoned guard regions on both
    sides that must still hold the poison when the block ends;
  - f64(t): a tensor (or a numpy array) as float64 numpy (the reference's
    precision);
  - check(actual, expected, atol=0, rtol=0, what=""): compares in float64;
    exact when both tolerances are 0;
  - np and torch.
A block passes when it runs without an exception and every guard is intact.
Prints "ok FILE:LINE" or "FAIL FILE:LINE: why" per block; exits 0 when all
pass, 1 on a failure, 77 without a GPU (or PyTorch).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "cli" / "compile" / "golden"
GUARD = 64  # elements of poison on each side of an output
SKIPPED = 77


def blocks(path: Path):
    """(line, code) of each run of `// GPU:` lines."""
    cur, start = [], 0
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"^// GPU: ?(.*)$", line)
        if m:
            if not cur:
                start = n
            cur.append(m.group(1))
        elif cur:
            yield start, "\n".join(cur)
            cur = []
    if cur:
        yield start, "\n".join(cur)


class Harness:
    """The names of one block, and its guards."""

    def __init__(self, torch, np):
        self.torch, self.np = torch, np
        self.guards = []  # (storage, poison bytes, view start, view end)
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(int.from_bytes(os.urandom(8), "little") & (2**62))

    def _placed(self, t):
        """t copied into a bigger allocation at an odd offset: an offset view."""
        flat = self.torch.empty(t.numel() + 7, dtype=t.dtype, device="cuda")
        view = flat[3 : 3 + t.numel()].view(t.shape)
        view.copy_(t)
        return view

    def randn(self, *shape, dtype=None, scale=1.0):
        dtype = dtype or self.torch.float32
        t = self.torch.randn(*shape, generator=self.gen, device="cuda", dtype=self.torch.float32)
        return self._placed((t * scale).to(dtype))

    def rand(self, *shape, dtype=None, lo=0.0, hi=1.0):
        dtype = dtype or self.torch.float32
        t = self.torch.rand(*shape, generator=self.gen, device="cuda", dtype=self.torch.float32)
        return self._placed((lo + (hi - lo) * t).to(dtype))

    def randint(self, lo, hi, *shape, dtype=None):
        dtype = dtype or self.torch.int32
        t = self.torch.randint(lo, hi, shape, generator=self.gen, device="cuda", dtype=self.torch.int64)
        return self._placed(t.to(dtype))

    def out(self, *shape, dtype=None):
        torch = self.torch
        dtype = dtype or torch.float32
        n = 1
        for s in shape:
            n *= s
        buf = torch.empty(n + 2 * GUARD, dtype=dtype, device="cuda")
        if dtype.is_floating_point:
            buf.fill_(float("nan"))
        else:
            buf.view(torch.uint8).fill_(0x5A)
        poison = buf.view(torch.uint8).clone()
        self.guards.append((buf, poison, GUARD, GUARD + n))
        return buf[GUARD : GUARD + n].view(shape)

    def f64(self, t):
        if isinstance(t, (int, float)):
            return self.np.float64(t)
        if not isinstance(t, self.torch.Tensor):  # a numpy array (a reference)
            return self.np.asarray(t, dtype=self.np.float64)
        return t.detach().to("cpu").to(self.torch.float64).numpy()

    def check(self, actual, expected, atol=0.0, rtol=0.0, what=""):
        np = self.np
        a, e = self.f64(actual), np.asarray(expected, dtype=np.float64)
        if a.shape != e.shape:
            e = np.broadcast_to(e, a.shape)
        same_nan = np.isnan(a) & np.isnan(e)
        close = np.isclose(a, e, atol=atol, rtol=rtol, equal_nan=False) | same_nan | (a == e)
        if not close.all():
            bad = np.argwhere(~close)[:3]
            shown = ", ".join(f"[{tuple(int(i) for i in b)}] {a[tuple(b)]!r} != {e[tuple(b)]!r}" for b in bad)
            raise AssertionError(f"{what or 'check'}: {int((~close).sum())} of {a.size} differ: {shown}")

    def guards_intact(self):
        torch = self.torch
        torch.cuda.synchronize()
        for buf, poison, lo, hi in self.guards:
            now = buf.view(torch.uint8)
            size = buf.element_size()
            for a, b in ((0, lo * size), (hi * size, now.numel())):
                if not torch.equal(now[a:b], poison[a:b]):
                    return False
        return True


def self_test(torch, np) -> bool:
    """The harness can fail: a wrong value, a NaN left in an output and a
    write into a guard region are each caught."""
    h = Harness(torch, np)
    y = h.out(5)
    y.fill_(1.0)
    caught = 0
    for actual, expected in ((y, np.full(5, 2.0)), (h.out(3), np.zeros(3))):
        try:
            h.check(actual, expected, atol=0.5)
        except AssertionError:
            caught += 1
    ok_value = caught == 2
    torch.cuda.synchronize()
    intact_before = h.guards_intact()
    base = h.guards[0][0]
    base[0] = 7.0  # a write into the first output's left guard
    return ok_value and intact_before and not h.guards_intact()


def run_file(fly, torch, np, path: Path, bundle: Path) -> int:
    failures = 0
    mod = fly.load(str(bundle))
    for line, code in blocks(path):
        where = f"{path.relative_to(REPO)}:{line}"
        h = Harness(torch, np)
        names = {"np": np, "torch": torch, "randn": h.randn, "rand": h.rand, "randint": h.randint,
                 "out": h.out, "f64": h.f64, "check": h.check}
        kernels = {e.name for e in mod.kernels}
        for name in set(re.findall(r"\b([A-Za-z_]\w*)\b", code)) & kernels:
            if name not in names:
                names[name] = getattr(mod, name)
        try:
            exec(compile(code, where, "exec"), names)
            torch.cuda.synchronize()
            if not h.guards_intact():
                raise AssertionError("a kernel wrote outside its output (a guard region changed)")
            print(f"ok   {where}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next block runs
            failures += 1
            print(f"FAIL {where}: {e}", flush=True)
            traceback.print_exc(limit=2)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    art = Path(args.artifacts)
    try:
        import numpy as np
        import torch
    except ImportError:
        print("no PyTorch: skipped")
        return SKIPPED
    if not torch.cuda.is_available():
        print("no GPU: skipped")
        return SKIPPED
    os.environ.setdefault("FLYRT_LIBRARY", str(art / "libflyrt.so"))
    sys.path.insert(0, str(REPO / "runtime" / "python"))
    import fly

    if not self_test(torch, np):
        print("FAIL the harness does not catch a wrong value, a NaN or a guard write")
        return 1
    print("ok   the harness catches a wrong value, an unwritten output and a guard write")
    files = [Path(f).resolve() for f in args.files] or sorted(GOLDEN.glob("*.fly"))
    failures, ran = 0, 0
    for path in files:
        if not any(True for _ in blocks(path)):
            continue
        bundle = art / "ops" / (path.stem + ".flyb")
        if not bundle.exists():
            print(f"FAIL {path.relative_to(REPO)}: no bundle {bundle}")
            failures += 1
            continue
        ran += 1
        failures += run_file(fly, torch, np, path, bundle)
    print(f"{ran} files of GPU operation checks, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

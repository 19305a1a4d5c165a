#!/usr/bin/env python3
"""Runs the example kernels' PTX on an NVIDIA GPU and checks them against PyTorch.

    python3 tests/gpu/check_ptx.py DIR

DIR holds the PTX that `flyc compile EXAMPLE --emit=ptx --target=sm_90` wrote,
one file per example (01-vector-add.ptx ...). Until the runtime lands this
script loads them with the CUDA driver through ctypes and passes the kernel
parameters as the compiler lays them out: for each tensor its pointer, then
the values of its `?` shape leaves, then of its `?` stride leaves. Inputs are
fresh random numbers, outputs are poisoned (NaN) before each launch, and the
result is compared with PyTorch in float64. Exits 0 when every check passes,
77 when there is no GPU.
"""
import ctypes
import sys

try:
    import torch
except ImportError:
    print("no PyTorch: skipped")
    sys.exit(77)


def driver():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        print("no CUDA driver: skipped")
        sys.exit(77)
    return cuda


def check(cuda, rc, what):
    if rc != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(rc, ctypes.byref(name))
        raise RuntimeError(f"{what}: {name.value.decode() if name.value else rc}")


class Module:
    def __init__(self, cuda, path):
        self.cuda = cuda
        with open(path, "rb") as f:
            image = f.read() + b"\0"
        self.mod = ctypes.c_void_p()
        check(cuda, cuda.cuModuleLoadData(ctypes.byref(self.mod), image), f"loading {path}")

    def launch(self, name, grid, block, args):
        fn = ctypes.c_void_p()
        check(self.cuda, self.cuda.cuModuleGetFunction(ctypes.byref(fn), self.mod, name.encode()),
              name)
        holders = []
        for a in args:
            if isinstance(a, torch.Tensor):
                holders.append(ctypes.c_uint64(a.data_ptr()))
            else:
                holders.append(ctypes.c_int32(a))
        params = (ctypes.c_void_p * len(holders))(
            *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = tuple(block) + (1,) * (3 - len(block))
        check(self.cuda, self.cuda.cuLaunchKernel(fn, *grid, *block, 0, None, params, None),
              f"launching {name}")
        torch.cuda.synchronize()


def close(name, got, want, tol):
    err = ((got.double() - want.double()).abs().max() / want.double().abs().max()).item()
    ok = err <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max relative error {err:.2e} (tolerance {tol:.0e})")
    return ok


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    cuda = driver()
    torch.cuda.init()
    d = sys.argv[1]
    ok = True

    n = 1 << 22
    A, B = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    C = torch.full((n,), float("nan"), device="cuda")
    Module(cuda, f"{d}/01-vector-add.ptx").launch("vector_add", (n // 1024,), (256,),
                                                  [A, n, B, n, C, n])
    ok &= close("vector_add", C, A.double() + B.double(), 1e-6)

    M, N = 512, 768
    S = torch.randn(M, N, device="cuda")
    D = torch.full((N, M), float("nan"), device="cuda")   # (M, N) stored column-major
    Module(cuda, f"{d}/02-tiled-copy.ptx").launch("tiled_copy_2d", (N // 32, M // 32), (256,),
                                                  [S, M, N, N, D, M, N, M])
    ok &= close("tiled_copy_2d", D.t(), S, 0)

    M, N, K = 256, 384, 512
    Ah = torch.randn(M, K, device="cuda", dtype=torch.float16)
    Bh = torch.randn(N, K, device="cuda", dtype=torch.float16)
    Cf = torch.full((M, N), float("nan"), device="cuda")
    Module(cuda, f"{d}/03-tiled-mma.ptx").launch("gemm_tile", (N // 64, M // 64), (128,),
                                                 [Ah, M, K, K, Bh, N, K, K, Cf, M, N, N])
    ok &= close("gemm_tile (mma.sync)", Cf, Ah.double() @ Bh.double().t(), 1e-5)

    M, N = 300, 1000
    X = torch.randn(M, N, device="cuda") * 4
    Y = torch.full((M, N), float("nan"), device="cuda")
    Module(cuda, f"{d}/04-row-softmax.ptx").launch("row_softmax", (M,), (256,),
                                                   [X, M, N, N, Y, M, N, N])
    ok &= close("row_softmax", Y, torch.softmax(X.double(), 1), 1e-5)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Peers of kernels/gemm: cuBLAS through torch.matmul (bf16, f16) and
torch._scaled_mm (fp8), and a Triton GEMM written for this benchmark after
Triton's matrix-multiplication tutorial: one program per BM x BN tile of C,
tiles grouped GROUP_M at a time down M for L2 reuse, a loop over K of
tl.dot on BK-deep slices, f32 accumulation, with the tutorial's autotune
configurations (those for CUDA) keyed on M, N and K."""
from __future__ import annotations

import triton
import triton.language as tl


def _configs():
    c = []
    for bm, bn, bk, stages, warps in (
        (128, 256, 64, 3, 8),
        (64, 256, 32, 4, 4),
        (128, 128, 32, 4, 4),
        (128, 64, 32, 4, 4),
        (64, 128, 32, 4, 4),
        (128, 32, 32, 4, 4),
        (64, 32, 32, 5, 2),
        (32, 64, 32, 5, 2),
        # Larger K steps for 16-bit inputs, as the tutorial also lists.
        (128, 256, 128, 3, 8),
        (256, 128, 128, 3, 8),
        (256, 64, 128, 4, 4),
        (64, 256, 128, 4, 4),
        (128, 128, 128, 4, 4),
        (128, 64, 64, 4, 4),
        (64, 128, 64, 4, 4),
        (128, 32, 64, 4, 4),
    ):
        c.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}, num_stages=stages,
                               num_warps=warps))
    return c


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    size_m = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % size_m)
    pid_n = (pid % per_group) // size_m
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        a += BK * sak
        b += BK * sbk
    c = acc.to(c_ptr.dtype.element_ty)
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, c,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def triton_matmul(a, b, out):
    """out = a @ b: a (M, K), b (K, N), any strides; out (M, N)."""
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _matmul[grid](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  out.stride(0), out.stride(1))
    return out

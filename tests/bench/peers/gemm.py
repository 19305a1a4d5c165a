"""Peers of kernels/gemm: cuBLAS through torch.matmul (bf16, f16) and
torch._scaled_mm (fp8), and a Triton GEMM written for this benchmark after
Triton's matrix-multiplication tutorial: one program per BM x BN tile of C,
tiles grouped GROUP_M at a time down M for L2 reuse, a loop over K of
tl.dot on BK-deep slices, f32 accumulation, with the tutorial's autotune
configurations (those for CUDA) keyed on M, N and K; and its blockscale
form (triton_blockscale_matmul): fp8 with DeepSeek-V3's 1 x 128 and
128 x 128 block scales, each 128-deep step's sums scaled into the
accumulator."""
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


@triton.jit
def _tile_of(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """Program pid's tile of C, in groups of GROUP_M tile rows (the
    tutorial's order, for L2 reuse)."""
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    first_m = pid // per_group * GROUP_M
    size_m = min(tiles_m - first_m, GROUP_M)
    return first_m + ((pid % per_group) % size_m), (pid % per_group) // size_m


@triton.jit
def _store_tile(c_ptr, acc, pid_m, pid_n, M, N, scm, scn, BM: tl.constexpr, BN: tl.constexpr):
    """The tile's f32 sums to C in its type, masked at C's edges."""
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BM, BN, GROUP_M)
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
    _store_tile(c_ptr, acc, pid_m, pid_n, M, N, scm, scn, BM, BN)


def triton_matmul(a, b, out):
    """out = a @ b: a (M, K), b (K, N), any strides; out (M, N)."""
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _matmul[grid](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  out.stride(0), out.stride(1))
    return out


def _blockscale_configs():
    # BK is the scale block (128: one scale of each operand per step); BN
    # 64 or 128, so that a tile's columns share one scale of b.
    c = []
    for bm, bn, stages, warps in ((128, 128, 3, 8), (128, 128, 4, 4), (64, 128, 4, 4),
                                  (128, 64, 4, 4), (64, 64, 5, 4), (64, 128, 3, 4)):
        c.append(triton.Config({"BM": bm, "BN": bn, "BK": 128, "GROUP_M": 8}, num_stages=stages,
                               num_warps=warps))
    return c


@triton.autotune(configs=_blockscale_configs(), key=["M", "N", "K"])
@triton.jit
def _blockscale_matmul(a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr, M, N, K, sam, sak, sbk, sbn, scm,
                       scn, ssam, ssak, ssbk, ssbn,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BM, BN, GROUP_M)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    # The scales of the tile's rows (one per row and K block) and of its
    # columns' block of b (one per K block).
    sa = sa_ptr + rm * ssam
    sb = sb_ptr + (pid_n * BN // 128) * ssbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0)
        s = tl.load(sa + k * ssak) * tl.load(sb + k * ssbk)
        # The block's sums, promoted into the f32 accumulator by its scales.
        acc += tl.dot(x, y) * s[:, None]
        a += BK * sak
        b += BK * sbk
    _store_tile(c_ptr, acc, pid_m, pid_n, M, N, scm, scn, BM, BN)


def triton_blockscale_matmul(a, b, scale_a, scale_b, out):
    """out = the blockwise-scaled a @ b (DeepSeek-V3's, torch._scaled_mm's
    blockwise form): a (M, K) and b (K, N) of float8_e4m3fn, scale_a
    (M, ceil(K / 128)) one per row and 128 of K, scale_b (ceil(K / 128),
    ceil(N / 128)) one per 128 x 128 block, any strides; out (M, N). A
    Triton kernel in the style of the tutorial's matmul: each 128-deep K
    step's tl.dot scaled by its row and block scales into an f32
    accumulator."""
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _blockscale_matmul[grid](a, b, out, scale_a, scale_b, M, N, K, a.stride(0), a.stride(1),
                             b.stride(0), b.stride(1), out.stride(0), out.stride(1),
                             scale_a.stride(0), scale_a.stride(1), scale_b.stride(0),
                             scale_b.stride(1))
    return out

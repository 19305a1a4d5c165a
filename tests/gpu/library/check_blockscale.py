#!/usr/bin/env python3
"""GPU checks of kernels/gemm/gemm_blockscale.fly through fly.kernels.blockscale_mm
(and scaled_mm given block scales): the blockwise-scaled fp8 product of
DeepSeek-V3,

    D[i, j] = sum_kb SA[i, kb] SB[kb, j // 128] sum_{k in block kb} A[i, k] B[k, j]

against a float64 PyTorch reference computed from the dequantised operands
(each fp8 value times its block's scale), on fresh random inputs quantised
per block: A by 1 x 128 groups (a torch quantiser, or
fly.kernels.per_block_quant), B = W^T with W (N, K) by 128 x 128 blocks.
The inputs' magnitudes vary from block to block (a factor e^(2 g), g
normal, for each of A's groups and W's blocks), so a scale applied to the
wrong rows, columns or K block shows. Shapes: M, N, K from 1 to 4097, K
not a multiple of 128 (a partial last block), every tile the wrapper picks
(clusters of two blocks at 8193 x 8200 and 1280 x 50688) and the
192-row tile on one block; A and W as padded-row and transposed views,
scales column-major (torch's), row-major and padded; outputs of each type
poisoned with NaN inside guard regions that must be untouched afterwards,
at odd offsets and padded rows.

Tolerance: a product of two e4m3 values is exact in f32, but wgmma adds
the fp8 products of one K block with fewer bits than f32 (about 14 on
Hopper, which is why the kernel promotes each block's sums into an f32
accumulator); the check allows 1e-3 of the terms' magnitude
sum_k |a_ik b_kj| (dequantised), as check_gemm.py does for fp8, plus the
output type's rounding (TOL of common.py) relative to the result and, for
bf16 and f16, to that magnitude.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly.kernels as fk  # noqa: E402

F8 = torch.float8_e4m3fn
QMAX = 448.0
BLOCK = 128


def blocks(x: int) -> int:
    return -(-x // BLOCK)


def varied(rows: int, k: int, block_rows: int):
    """Normal values (rows, K) times e^(2 g) per block of block_rows x 128
    (g normal): magnitudes that differ from block to block."""
    g = torch.randn((blocks(rows) if block_rows > 1 else rows, blocks(k)), device="cuda")
    scale = torch.exp(2.0 * g)
    if block_rows > 1:
        scale = scale.repeat_interleave(BLOCK, 0)[:rows]
    return torch.randn((rows, k), device="cuda") * scale.repeat_interleave(BLOCK, 1)[:, :k]


def quant_groups(x):
    """x (M, K) by 1 x 128 groups: (q f8 (M, K), s f32 (M, ceil(K / 128)))."""
    m, k = x.shape
    kp = blocks(k) * BLOCK
    xp = torch.zeros((m, kp), device="cuda")
    xp[:, :k] = x
    s = xp.view(m, -1, BLOCK).abs().amax(-1).clamp(min=1e-10) / QMAX
    q = (xp.view(m, -1, BLOCK) / s.unsqueeze(-1)).view(m, kp)[:, :k].to(F8)
    return q, s


def quant_blocks(w):
    """w (N, K) by 128 x 128 blocks: (q f8 (N, K), s f32 (ceil(N / 128),
    ceil(K / 128)))."""
    n, k = w.shape
    np_, kp = blocks(n) * BLOCK, blocks(k) * BLOCK
    wp = torch.zeros((np_, kp), device="cuda")
    wp[:n, :k] = w
    v = wp.view(np_ // BLOCK, BLOCK, kp // BLOCK, BLOCK)
    s = v.abs().amax(dim=(1, 3)).clamp(min=1e-10) / QMAX
    q = (v / s[:, None, :, None]).view(np_, kp)[:n, :k].to(F8)
    return q, s


def dequant(q, s, block_rows: int):
    """q's values times their blocks' scales, float64."""
    rows, k = q.shape
    e = s.to(torch.float64)
    if block_rows > 1:
        e = e.repeat_interleave(BLOCK, 0)[:rows]
    return q.to(torch.float64) * e.repeat_interleave(BLOCK, 1)[:, :k]


def layout(x, form: str):
    """x (R, C) as a view of the given form holding the same values:
    'rows' contiguous, 'padded' rows of a wider tensor, 'cols' the
    transpose of a contiguous (C, R) tensor."""
    if form == "rows":
        return x.contiguous()
    if form == "padded":
        buf = torch.empty((x.shape[0], x.shape[1] + 16), dtype=x.dtype, device="cuda")
        buf[:, :x.shape[1]] = x
        return buf[:, :x.shape[1]]
    return x.t().contiguous().t()


def check(c: Checks, what: str, d: Guarded, ref, mag, out_dtype) -> None:
    atol, rtol = tol(out_dtype)
    got = d.tensor.to(torch.float64)
    err = (got - ref).abs()
    allowed = rtol * ref.abs() + (1e-3 + (atol if out_dtype != torch.float32 else 0.0)) * mag
    bad = (err > allowed) | torch.isnan(got)
    if out_dtype == torch.float16:
        # Sums past f16's range (the inputs' magnitudes vary by e^(2 g) a
        # block) round to an infinity of their sign, as a conversion of the
        # f32 sum does; within the tolerance of the edge, either.
        edge = ref.abs() + allowed >= 65520.0
        inf = torch.isinf(got) & (torch.sign(got) == torch.sign(ref))
        bad = torch.where(edge, ~(inf | (err <= allowed)), bad)
        err = torch.where(edge & inf, torch.zeros_like(err), err)
    worst = float(err.max()) if err.numel() else 0.0
    c.ok(what, not bool(bad.any()) and d.guards_intact(),
         f"max error {worst:.3g}" + (f", {int(bad.sum())} outside" if bad.any() else "")
         + ("" if d.guards_intact() else ", a guard changed"))


def one(c: Checks, m: int, n: int, k: int, out_dtype=torch.bfloat16, a_form: str = "rows",
        w_form: str = "rows", sa_form: str = "cols", sb_form: str = "rows", offset: int = 0,
        pad: int = 0, fly_quant: bool = False, via_scaled_mm: bool = False,
        bias: bool = False, activation=None) -> None:
    """One product: A (M, K) by groups, W (N, K) by blocks, b = W^T."""
    x = varied(m, k, 1)
    if fly_quant:
        # The library's quantiser: scales column-major, as torch._scaled_mm
        # and DeepGEMM read A's.
        qa, sa = fk.per_block_quant(x.to(torch.bfloat16), column_major_scales=True)
    else:
        qa, sa = quant_groups(x)
    qw, sw = quant_blocks(varied(n, k, BLOCK))
    a = layout(qa, a_form)
    b = layout(qw, w_form).t()                    # (K, N): a view of W
    scale_a = layout(sa, sa_form)                 # (M, ceil(K / 128))
    scale_b = layout(sw, sb_form).t()             # (ceil(K / 128), ceil(N / 128))
    bv = (torch.randn(n, device="cuda") * 4).to(out_dtype) if bias else None
    d = Guarded((m, n), out_dtype, offset=offset, row_stride=n + pad)
    if via_scaled_mm:
        fk.scaled_mm(a, b, scale_a, scale_b, bias=bv, activation=activation, out=d.tensor)
    else:
        fk.blockscale_mm(a, b, scale_a, scale_b, bias=bv, activation=activation, out=d.tensor)
    torch.cuda.synchronize()
    da, dw = dequant(qa, sa, 1), dequant(qw, sw, BLOCK)
    ref, mag = da @ dw.t(), da.abs() @ dw.abs().t()
    if bias:
        ref = ref + bv.to(torch.float64)
        mag = mag + bv.abs().to(torch.float64)
    if activation == "silu":
        # The sums' error carried through silu (slope at most ~1.1).
        ref, mag = torch.nn.functional.silu(ref), 1.2 * mag
    what = (f"{m}x{n}x{k} e4m3->{str(out_dtype)[6:]} a:{a_form} w:{w_form} sa:{sa_form} "
            f"sb:{sb_form} offset {offset} pad {pad}" + (" per_block_quant" if fly_quant else "")
            + (" scaled_mm" if via_scaled_mm else "") + (" bias" if bias else "")
            + (f" {activation}" if activation else ""))
    check(c, what, d, ref, mag, out_dtype)


def one_block_tiles_of_192(c: Checks) -> None:
    """The kernel itself with tiles of 192 x 128 on one block each (a
    registry bundle the wrapper does not pick): 4096^3, 32 K steps over 4
    stages, 704 tiles on the multiprocessors, several products in a row.
    Its three scale warps once took turns counted within each tile, and a
    warp coming back to a stage after 5 steps (past a tile's end) wrote its
    scales while the consumers still read the step before: a launch
    failure on the first product here."""
    m = n = k = 4096
    qa, sa = quant_groups(varied(m, k, 1))
    qw, sw = quant_blocks(varied(n, k, BLOCK))
    da, dw = dequant(qa, sa, 1), dequant(qw, sw, BLOCK)
    ref, mag = da @ dw.t(), da.abs() @ dw.abs().t()
    kern = fk.kernel("blockscale_mm", {"T": "f8e4m3", "TD": "bf16", "BM": 192, "BN": 128,
                                       "STAGES": 4, "PAIR": True, "BIAS": False, "ACT": 0,
                                       "TMA_STORE": True, "CLUSTER": 1})
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    stand_in = torch.zeros(1, dtype=torch.bfloat16, device="cuda")
    for rep in range(3):
        d = Guarded((m, n), torch.bfloat16, offset=8, row_stride=n + 8)
        kern(qa, qw, d.tensor, sa, sw, sms, stand_in)
        torch.cuda.synchronize()
        check(c, f"{m}x{n}x{k} tiles of 192 x 128 on one block each, product {rep + 1} of 3",
              d, ref, mag, torch.bfloat16)


def empty_k(c: Checks) -> None:
    """K = 0: no products, the result is the bias (or zeros)."""
    a = torch.empty((5, 0), dtype=F8, device="cuda")
    b = torch.empty((0, 6), dtype=F8, device="cuda")
    sa = torch.empty((5, 0), device="cuda")
    sb = torch.empty((0, 1), device="cuda")
    d = fk.blockscale_mm(a, b, sa, sb)
    c.ok("K = 0 gives zeros", d.shape == (5, 6) and not bool(d.float().abs().sum()))
    bv = torch.randn(6, device="cuda").to(torch.bfloat16)
    d = fk.blockscale_mm(a, b, sa, sb, bias=bv)
    c.ok("K = 0 with a bias gives the bias", bool((d == bv.expand(5, 6)).all()))


def refusals(c: Checks) -> None:
    m, n, k = 4, 8, 300
    a = torch.randn((m, k), device="cuda").to(F8)
    b = torch.randn((n, k), device="cuda").to(F8).t()
    sa = torch.ones((m, 3), device="cuda")
    sb = torch.ones((3, 1), device="cuda")
    bs = fk.blockscale_mm
    c.raises("a of bfloat16", lambda: bs(a.to(torch.bfloat16), b, sa, sb), "float8_e4m3fn")
    c.raises("a and b of different K", lambda: bs(a, b[:7], sa, sb), "(K, N)")
    c.raises("scale_a of the wrong shape", lambda: bs(a, b, torch.ones((m, 2), device="cuda"), sb),
             "scale_a is a float32 tensor of shape (4, 3)")
    c.raises("scale_a of float16", lambda: bs(a, b, sa.half(), sb), "scale_a")
    c.raises("scale_a of one dimension", lambda: bs(a, b, sa[:, 0], sb), "scale_a")
    c.raises("scale_b transposed ((N/128, K/128) rather than (K/128, N/128))",
             lambda: bs(a, b, sa, sb.t()), "scale_b is a float32 tensor of shape (3, 1)")
    c.raises("scale_b on the CPU", lambda: bs(a, b, sa, sb.cpu()), "GPU")
    c.raises("an out of the wrong shape",
             lambda: bs(a, b, sa, sb, out=torch.empty((m, n + 1), dtype=torch.bfloat16,
                                                      device="cuda")), "out is")
    c.raises("an int8 out_dtype", lambda: bs(a, b, sa, sb, out_dtype=torch.int8), "out_dtype")
    c.raises("an unknown activation", lambda: bs(a, b, sa, sb, activation="tanh"), "activation")
    c.raises("a bias of the wrong length",
             lambda: bs(a, b, sa, sb, bias=torch.ones(n + 1, device="cuda")), "bias")
    c.raises("scaled_mm with block scales and split_k",
             lambda: fk.scaled_mm(a, b, sa, sb, split_k=2), "split_k")
    c.raises("scaled_mm with block scales and an e5m2 a (the blockscale kernel's are e4m3)",
             lambda: fk.scaled_mm(a.float().to(torch.float8_e5m2), b, sa, sb), "float8_e4m3fn")


def main() -> int:
    c = Checks("blockscale")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    sizes = [1, 17, 1000, 4097]
    shapes = sorted({(m, 256, 512) for m in sizes} | {(256, n, 512) for n in sizes} |
                    {(256, 256, k) for k in [1, 17, 100, 128, 129, 1000, 4097]} |
                    {(1, 1, 1), (4096, 4096, 4096), (4097, 4095, 1000), (333, 1000, 7168)})
    for (m, n, k) in shapes:
        one(c, m, n, k)
    # Each output type, odd offsets and padded rows (single stores: PAIR off).
    for od in (torch.bfloat16, torch.float16, torch.float32):
        one(c, 1000, 4097, 1000, od, offset=3, pad=5)
        one(c, 333, 520, 777, od, offset=2, pad=6)
    # D stored by TMA (start and rows on 16 bytes) at an offset, partial
    # tiles of both tile sizes, each output type, the epilogue.
    for od, offset in ((torch.bfloat16, 8), (torch.float16, 8), (torch.float32, 4)):
        one(c, 1000, 4104, 1000, od, offset=offset, pad=offset)
        one(c, 17, 520, 777, od, offset=offset, pad=offset)
    one(c, 4097, 4104, 1000, bias=True, activation="silu", offset=8, pad=8)
    # Clusters of two blocks sharing B's stages. Tiles of 192 x 128 (three
    # consumer warpgroups; the wrapper's choice where they fill the
    # machine, D stored by TMA): 8193 rows are 22 clusters' pairs of tile
    # rows, the last pair's first tile with 1 row in its third consumer's
    # slab and its second wholly past M; each output type, 32 K steps (a
    # block's scale warps turn over its tiles), the epilogue. Tiles of 128
    # x 128 (30 or more a multiprocessor): D stored from the registers (D
    # on 4 bytes), and by TMA at 1280 x 50688 (a sixth of 192-row
    # clusters' rows past M). Single stores (odd N): one block a tile.
    for od, offset in ((torch.bfloat16, 8), (torch.float16, 8), (torch.float32, 4)):
        one(c, 8193, 8200, 300, od, offset=offset, pad=offset)
    one(c, 4097, 8200, 4096, offset=8, pad=8)
    one(c, 8193, 8200, 1000, bias=True, activation="silu", offset=8, pad=8)
    one(c, 8193, 8200, 300, offset=2, pad=2)
    one(c, 1280, 50688, 300, offset=8, pad=8)
    one(c, 8191, 8197, 260, offset=3, pad=5)
    one_block_tiles_of_192(c)
    # Calls of one signature are replayed (fly.kernels.gemm's _REPLAYS):
    # each of three, with fresh operands and scales, gets its own result.
    for _ in range(3):
        one(c, 64, 1024, 512, offset=8, pad=8)
        one(c, 64, 1024, 512, offset=8, pad=8, via_scaled_mm=True)
    # Operand and scale layouts: padded and transposed views, scales
    # row-major, column-major and padded.
    for a_form, w_form, sa_form, sb_form in (("padded", "padded", "rows", "cols"),
                                             ("cols", "rows", "padded", "padded"),
                                             ("rows", "cols", "cols", "rows")):
        one(c, 333, 517, 777, torch.bfloat16, a_form, w_form, sa_form, sb_form, 1, 8)
    # The library's own quantiser feeding the product.
    one(c, 1000, 4096, 4096, fly_quant=True)
    one(c, 17, 1000, 1000, fly_quant=True)
    # scaled_mm recognises block scales by their shapes.
    one(c, 1000, 4097, 1000, via_scaled_mm=True)
    one(c, 17, 256, 129, via_scaled_mm=True)
    # The fused epilogue: a bias, and silu (the tile sizes the wrapper picks).
    for (m, n, k) in ((4096, 4096, 1000), (1000, 4098, 1000), (17, 258, 4095)):
        one(c, m, n, k, bias=True)
        one(c, m, n, k, bias=True, activation="silu")
    empty_k(c)
    refusals(c)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

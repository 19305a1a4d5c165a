#!/usr/bin/env python3
"""GPU checks of kernels/attention through fly.kernels: fused_rope_cache
against a float64 PyTorch reference, on fresh random inputs: 1, 7 and 300
tokens; 32/8, 8/8 and 1/1 query/key heads; heads of 64 and 128 rotated
whole, and partial rotations (compiled on first use); both styles; q, k and
v as strided slices of a fused QKV tensor (padded rows, an odd start), or
tensors of their own. The caches are poisoned and guarded: only the slots
of the slot mapping may change (some tokens are padding, slot -1), and the
parts of q and k past the rotary dimension, and v, must not change at all.
Tolerances: common.TOL, by dtype."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Checks, Guarded, need_gpu, rand, tol  # noqa: E402

need_gpu()
import torch  # noqa: E402

import fly  # noqa: E402
import fly.kernels as fk  # noqa: E402

BS = 16  # tokens a cache block
# (q dtype, cos_sin_cache dtype)
TYPES = [(torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32),
         (torch.float16, torch.float16), (torch.float32, torch.float32)]
TOKENS = [1, 7, 300]
HEADS = [(32, 8), (8, 8), (1, 1)]


def cos_sin_cache(positions: int, rot: int, dtype, base: float = 10000.0):
    """vLLM's table: row p holds cos(p f_i), then sin(p f_i), f_i = base^(-2i/rot)."""
    inv_freq = 1.0 / base ** (torch.arange(0, rot, 2, dtype=torch.float64, device="cuda") / rot)
    freqs = torch.outer(torch.arange(positions, dtype=torch.float64, device="cuda"), inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(dtype)


def ref_rope(x, cs_rows, rot: int, neox: bool):
    """x [T, H, D] rotated (float64): the first rot elements of each head by
    the rows cs_rows [T, rot] (cosines, then sines)."""
    y = x.to(torch.float64).clone()
    half = rot // 2
    c = cs_rows[:, :half].to(torch.float64)[:, None, :]
    s = cs_rows[:, half:rot].to(torch.float64)[:, None, :]
    if neox:
        x1, x2 = y[..., :half].clone(), y[..., half:rot].clone()
        y[..., :half] = x1 * c - x2 * s
        y[..., half:rot] = x2 * c + x1 * s
    else:
        x1, x2 = y[..., 0:rot:2].clone(), y[..., 1:rot:2].clone()
        y[..., 0:rot:2] = x1 * c - x2 * s
        y[..., 1:rot:2] = x2 * c + x1 * s
    return y


def slot_mapping(tokens: int, blocks: int, gen) -> torch.Tensor:
    """A random injective map of the tokens to cache slots, every third
    token padding (-1); the first is always cached."""
    perm = torch.randperm(blocks * BS, generator=gen)[:tokens]
    perm[2::3] = -1
    return perm.to(torch.int64).cuda()


class Problem:
    """One call's inputs: q, k, v as views of one fused QKV buffer (guarded,
    rows padded by pad elements, starting off elements in) or as tensors of
    their own; the caches poisoned and guarded; the originals kept."""

    def __init__(self, dt, cdt, tokens, hq, hk, d, rot, fused=True, pad=0, off=0,
                 positions_out_of_range=False, gen=None):
        self.dt, self.tokens, self.hq, self.hk, self.d, self.rot = dt, tokens, hq, hk, d, rot
        w = (hq + 2 * hk) * d
        self.qkv = Guarded((tokens, w), dt, off, w + pad).fill(rand((tokens, w), dt))
        if fused:
            t = self.qkv.tensor
            self.q = t[:, :hq * d].view(tokens, hq, d)
            self.k = t[:, hq * d:(hq + hk) * d].view(tokens, hk, d)
            self.v = t[:, (hq + hk) * d:].view(tokens, hk, d)
        else:
            self.q, self.k, self.v = (rand((tokens, h, d), dt) for h in (hq, hk, hk))
        self.q0, self.k0, self.v0 = self.q.clone(), self.k.clone(), self.v.clone()
        self.qkv0 = self.qkv.tensor.clone()
        npos = 4096
        self.cos_sin = cos_sin_cache(npos, rot, cdt)
        self.positions = torch.randint(0, npos, (tokens,), generator=gen).cuda()
        if positions_out_of_range and tokens >= 3:
            self.positions[1] = npos + 17  # the last row is used
            self.positions[2] = -5         # the first
        self.blocks = (tokens + BS - 1) // BS + 3
        self.slots = slot_mapping(tokens, self.blocks, gen)
        shape = (self.blocks, BS, hk, d)
        self.k_cache = Guarded(shape, dt)
        self.v_cache = Guarded(shape, dt)
        self.kc0 = self.k_cache.tensor.clone()
        self.vc0 = self.v_cache.tensor.clone()

    def run(self, neox: bool, **kw) -> None:
        fk.fused_rope_cache(self.q, self.k, self.v, kw.get("positions", self.positions),
                            self.cos_sin, self.k_cache.tensor, self.v_cache.tensor,
                            kw.get("slots", self.slots), is_neox=neox)
        torch.cuda.synchronize()

    def check(self, c: Checks, what: str, neox: bool) -> None:
        atol, rtol = tol(self.dt)
        rows = self.cos_sin[self.positions.clamp(0, self.cos_sin.size(0) - 1)]
        rq = ref_rope(self.q0, rows, self.rot, neox)
        rk = ref_rope(self.k0, rows, self.rot, neox)
        rot = self.rot
        c.close(f"{what}: q rotated", self.q[..., :rot], rq[..., :rot], atol, rtol)
        c.close(f"{what}: k rotated", self.k[..., :rot], rk[..., :rot], atol, rtol)
        c.equal(f"{what}: q, k past the rotary dimension and v unchanged",
                torch.cat([self.q[..., rot:].flatten(), self.k[..., rot:].flatten(),
                           self.v.flatten()]),
                torch.cat([self.q0[..., rot:].flatten(), self.k0[..., rot:].flatten(),
                           self.v0.flatten()]))
        cached = self.slots >= 0
        slots = self.slots[cached]
        blk, off = slots // BS, slots % BS
        kc, vc = self.k_cache.tensor, self.v_cache.tensor
        c.equal(f"{what}: k_cache holds k, rotated, at the slots", kc[blk, off], self.k[cached])
        c.equal(f"{what}: v_cache holds v at the slots", vc[blk, off], self.v0[cached])
        others = torch.ones(self.blocks * BS, dtype=torch.bool, device="cuda")
        others[slots] = False
        flat = (self.blocks * BS, self.hk, self.d)
        c.equal(f"{what}: the other slots of the caches unchanged",
                torch.cat([kc.reshape(flat)[others].view(torch.uint8).flatten(),
                           vc.reshape(flat)[others].view(torch.uint8).flatten()]),
                torch.cat([self.kc0.reshape(flat)[others].view(torch.uint8).flatten(),
                           self.vc0.reshape(flat)[others].view(torch.uint8).flatten()]))
        c.ok(f"{what}: guards", self.qkv.guards_intact() and self.k_cache.guards_intact()
             and self.v_cache.guards_intact())


def compiled_here(c: Checks, what: str, fn) -> bool:
    """Runs fn, a call that needs a specialisation compiled on first use;
    where no compiler is here (libflyc), says so and skips it."""
    try:
        fn()
    except fly.FlyError as e:
        if "compiler" in str(e) and "libflyc" in str(e):
            print(f"skip {c.name}: {what}: no compiler here for a specialisation not built "
                  f"ahead of time ({e})", flush=True)
            return False
        raise
    return True


def check_fused_rope_cache(c: Checks, gen) -> None:
    # The ahead-of-time specialisations: whole heads rotated.
    for dt, cdt in TYPES:
        for tokens in TOKENS:
            for hq, hk in HEADS:
                for d in (64, 128):
                    for neox in (True, False):
                        p = Problem(dt, cdt, tokens, hq, hk, d, d, fused=True,
                                    pad=8 if tokens % 2 else 0, gen=gen)
                        p.run(neox)
                        p.check(c, f"{dt} cos_sin {cdt} T={tokens} HQ={hq} HK={hk} D={d} "
                                   f"{'neox' if neox else 'gptj'} fused qkv", neox)
    # Tensors of their own, positions out of range (clamped), int32 indices.
    for neox in (True, False):
        p = Problem(torch.bfloat16, torch.bfloat16, 7, 8, 2, 128, 128, fused=False,
                    positions_out_of_range=True, gen=gen)
        p.run(neox, positions=p.positions.to(torch.int32), slots=p.slots.to(torch.int32))
        p.check(c, f"bf16 separate q, k, v, positions out of range, int32 indices "
                   f"{'neox' if neox else 'gptj'}", neox)
    # Compiled on first use: partial rotation, odd head sizes, an odd start (VEC 1).
    jit = [(torch.bfloat16, torch.bfloat16, 128, 64, 0), (torch.float16, torch.float32, 128, 32, 0),
           (torch.bfloat16, torch.float32, 80, 32, 0), (torch.bfloat16, torch.bfloat16, 96, 24, 0),
           (torch.bfloat16, torch.bfloat16, 64, 64, 1), (torch.float32, torch.float32, 64, 16, 1)]
    for dt, cdt, d, rot, off in jit:
        for neox in (True, False):
            for tokens, (hq, hk) in ((7, (32, 8)), (300, (1, 1))):
                p = Problem(dt, cdt, tokens, hq, hk, d, rot, fused=True, pad=2 * off,
                            off=off, gen=gen)
                what = (f"{dt} cos_sin {cdt} T={tokens} HQ={hq} HK={hk} D={d} ROT={rot} "
                        f"{'neox' if neox else 'gptj'} start +{off}")
                if not compiled_here(c, what, lambda: p.run(neox)):
                    break
                p.check(c, what, neox)
    # Refusals.
    p = Problem(torch.bfloat16, torch.bfloat16, 7, 8, 2, 64, 64, gen=gen)
    kc, vc = p.k_cache.tensor, p.v_cache.tensor
    c.raises("refuses k of another dtype", lambda: fk.fused_rope_cache(
        p.q, p.k.float(), p.v, p.positions, p.cos_sin, kc, vc, p.slots), "k must be")
    c.raises("refuses caches of other heads", lambda: fk.fused_rope_cache(
        p.q, p.k, p.v, p.positions, p.cos_sin, kc[:, :, :1], vc[:, :, :1], p.slots), "heads")
    c.raises("refuses a slot mapping of another length", lambda: fk.fused_rope_cache(
        p.q, p.k, p.v, p.positions, p.cos_sin, kc, vc, p.slots[:3]), "slot_mapping")
    c.raises("refuses a rotary dimension past the head", lambda: fk.fused_rope_cache(
        p.q, p.k, p.v, p.positions, cos_sin_cache(16, 128, torch.bfloat16), kc, vc, p.slots),
        "rotary")
    c.raises("refuses float positions", lambda: fk.fused_rope_cache(
        p.q, p.k, p.v, p.positions.float(), p.cos_sin, kc, vc, p.slots), "positions")


def main() -> int:
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    print(f"seed {seed}")
    c = Checks("attention")
    check_fused_rope_cache(c, gen)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

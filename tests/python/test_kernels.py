"""fly.kernels without a GPU: the registry, the bundles make built from it,
the specialisation chosen for a problem, and the launches the kernels'
rules give (modules without a device compute them exactly as on a GPU)."""
from __future__ import annotations

import json
import os
import tempfile
import unittest

import bundles  # noqa: F401 - points fly at the build tree
from bundles import REPO, example
from fakes import FAKE_BASE, CudaArray, DLPackArray

import fly
from fly.kernels import _registry
from fly.kernels._rows import next_pow2, vector_width
from fly.kernels.preshuffle import preshuffle_shape

LIBRARY = os.environ.get("FLY_KERNELS_DIR", str(REPO / "build" / "kernels"))
REGISTRY = str(REPO / "kernels" / "registry.json")


def matrix(m: int, n: int, row_stride: int = 0, ptr: int = FAKE_BASE) -> CudaArray:
    """An m x n f32 matrix at ptr whose rows are row_stride elements apart."""
    return CudaArray((m, n), "<f4", (4 * (row_stride or n), 4), ptr=ptr)


def vector(n: int, ptr: int = FAKE_BASE) -> CudaArray:
    return CudaArray((n,), "<f4", None, ptr=ptr)


class Registry(unittest.TestCase):
    def setUp(self) -> None:
        self.kernels = _registry.load(REGISTRY)

    def test_entries_name_existing_sources_and_python_functions(self) -> None:
        import fly.kernels as fk

        for name, e in self.kernels.items():
            self.assertTrue((REPO / "kernels" / e["file"]).is_file(), name)
            self.assertTrue(callable(getattr(fk, e["python"], None)),
                            f"{name}: fly.kernels.{e['python']}")
            self.assertTrue(e["aot"], name)

    def test_plans_expand_and_specs_are_named_in_the_consts_order(self) -> None:
        e = self.kernels["softmax"]
        specs = list(_registry.aot_specs(e))
        self.assertIn({"T": "bf16", "VEC": 8, "CAP": 512}, specs)
        self.assertEqual(_registry.spec_name(e, {"CAP": 512, "T": "bf16", "VEC": 8}),
                         "T=bf16_VEC=8_CAP=512")
        e = self.kernels["rms_norm"]  # the plan extended by a list of its own
        self.assertIn({"T": "f32", "VEC": 1, "CAP": 64, "EARLY": True},
                      list(_registry.aot_specs(e)))
        self.assertEqual(_registry.aot_values(e, "CAP", T="f32", VEC=1)[-1], 1048576)

    def test_a_bad_registry_is_refused_with_the_kernel_named(self) -> None:
        cases = [({"k": {"file": "x.fly", "kernel": "k", "consts": [], "targets": []}}, "'aot'"),
                 ({"k": {"file": "x.fly", "kernel": "k", "consts": ["A"], "targets": [],
                         "aot": [{"plan": "nope"}]}}, "no plan"),
                 ({"k": {"file": "x.fly", "kernel": "k", "consts": ["A"], "targets": [],
                         "aot": [{"B": [1]}]}}, "no const")]
        for kernels, message in cases:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump({"kernels": kernels}, f)
            try:
                with self.assertRaises(ValueError) as cm:
                    _registry.load(f.name)
                self.assertIn(message, str(cm.exception))
                self.assertIn("'k'", str(cm.exception))
            finally:
                os.unlink(f.name)


@unittest.skipUnless(os.path.isdir(os.path.join(LIBRARY, "bundles")),
                     "the kernel library's bundles are not built (FLY_BUILD_KERNELS=OFF)")
class Bundles(unittest.TestCase):
    def test_every_ahead_of_time_specialisation_has_its_bundle(self) -> None:
        for name, e in _registry.load(REGISTRY).items():
            for consts in _registry.aot_specs(e):
                path = os.path.join(LIBRARY, "bundles", name,
                                    _registry.spec_name(e, consts) + ".flyb")
                self.assertTrue(os.path.isfile(path), path)

    def test_a_bundle_holds_its_specialisation_for_each_target(self) -> None:
        e = _registry.load(REGISTRY)["softmax"]
        consts = {"T": "f32", "VEC": 4, "CAP": 64}
        path = os.path.join(LIBRARY, "bundles", "softmax", _registry.spec_name(e, consts) + ".flyb")
        for target in e["targets"]:
            mod = fly.load(path, device=fly.NO_DEVICE, target=target)
            k = mod.kernel("softmax", "T=f32 VEC=4 CAP=64")
            self.assertEqual(k.consts, {"T": "f32", "VEC": 4, "CAP": 64})


@unittest.skipUnless((REPO / "build" / "python" / "fly" / "_kernels").is_dir(),
                     "the staged package is not built (FLY_BUILD_KERNELS=OFF)")
class StagedPackage(unittest.TestCase):
    def test_the_staged_package_runs_from_its_own_files(self) -> None:
        """build/python/fly holds libflyrt and the library: a program that
        puts only its parent on the path finds both, and no source tree."""
        import subprocess
        import sys

        code = ("import fly, fly.kernels as fk, os; lib = fk.library(); "
                "k = fk.kernel('softmax', {'T': 'f32', 'VEC': 4, 'CAP': 64}, "
                "device=fly.NO_DEVICE, target='sm_90'); "
                "print(os.path.relpath(lib.root, os.path.dirname(fly.__file__)), k.spec)")
        env = {k: v for k, v in os.environ.items()
               if k not in ("FLYRT_LIBRARY", "FLY_KERNELS_DIR", "FLY_KERNELS_SOURCE",
                            "PYTHONPATH")}
        env["PYTHONPATH"] = str(REPO / "build" / "python")
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd="/",
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), ["_kernels", "T=f32", "VEC=4", "CAP=64"])


class Selection(unittest.TestCase):
    class Tensor:
        """What vector_width reads of a tensor."""

        def __init__(self, ptr: int, stride0: int, dim: int = 2) -> None:
            self.ptr, self.stride0, self.dims = ptr, stride0, dim

        def data_ptr(self) -> int:
            return self.ptr

        def dim(self) -> int:
            return self.dims

        def stride(self, i: int) -> int:
            return self.stride0 if i == 0 else 1

    def test_16_bytes_an_access_when_length_strides_and_starts_allow(self) -> None:
        t = self.Tensor
        self.assertEqual(vector_width(4096, 2, t(FAKE_BASE, 4096)), 8)
        self.assertEqual(vector_width(4096, 4, t(FAKE_BASE, 4096), None), 4)
        self.assertEqual(vector_width(4097, 2, t(FAKE_BASE, 4097)), 1)   # the length
        self.assertEqual(vector_width(4096, 2, t(FAKE_BASE, 4100)), 1)   # a row stride
        self.assertEqual(vector_width(4096, 2, t(FAKE_BASE + 2, 4096)), 1)  # a start
        self.assertEqual(vector_width(4096, 2, t(FAKE_BASE, 4096), t(FAKE_BASE + 8, 7, 1)), 1)

    def test_next_pow2(self) -> None:
        self.assertEqual([next_pow2(n) for n in (0, 1, 2, 3, 512, 513)], [1, 1, 2, 4, 512, 1024])


class Launches(unittest.TestCase):
    """The row plan of kernels/common/rows.fly, as the launch rules give it."""

    def kernel(self, name: str, vec: int, cap: int):
        consts = {"T": "f32", "VEC": vec, "CAP": cap}
        if "EARLY" in _registry.load(REGISTRY)[name]["consts"]:
            consts["EARLY"] = False
        return fly.kernels.kernel(name, consts, device=fly.NO_DEVICE, target="sm_90")

    def test_short_rows_share_a_block_long_ones_get_a_block_each(self) -> None:
        # CAP 8: 2 threads a row, 64 rows a block of 128.
        cfg = self.kernel("softmax", 4, 8).launch_config(matrix(1000, 32), matrix(1000, 32))
        self.assertEqual((cfg.grid[0], cfg.block[0]), (16, 128))
        # CAP 1024: 256 threads a row, a block a row.
        cfg = self.kernel("softmax", 4, 1024).launch_config(matrix(77, 4096), matrix(77, 4096))
        self.assertEqual((cfg.grid[0], cfg.block[0]), (77, 256))
        # CAP 4096 (16384 f32): 512 threads holding 8 vectors each.
        cfg = self.kernel("softmax", 4, 4096).launch_config(matrix(3, 16384), matrix(3, 16384))
        self.assertEqual((cfg.grid[0], cfg.block[0]), (3, 512))
        # Streamed: 1024 threads a row.
        cfg = self.kernel("softmax", 4, 1048576).launch_config(matrix(2, 65536),
                                                               matrix(2, 65536))
        self.assertEqual((cfg.grid[0], cfg.block[0]), (2, 1024))

    def test_the_python_mirror_of_the_row_plan_agrees_with_the_kernels(self) -> None:
        from fly.kernels._rows import row_plan

        e = _registry.load(REGISTRY)["softmax"]
        for cap in _registry.aot_values(e, "CAP", T="f32", VEC=4):
            g, _, threads = row_plan(cap, 4)
            n = min(cap * 4, 65536)
            m = 4 * (threads // g)
            cfg = self.kernel("softmax", 4, cap).launch_config(matrix(m, n), matrix(m, n))
            self.assertEqual((cfg.grid[0], cfg.block[0]), (4, threads), f"CAP {cap}")
            # The norms' EARLY specialisations: 2 vectors a thread.
            g, _, threads = row_plan(cap, 4, 2)
            m = 4 * (threads // g)
            k = fly.kernels.kernel("rms_norm", {"T": "f32", "VEC": 4, "CAP": cap, "EARLY": True},
                                   device=fly.NO_DEVICE, target="sm_90")
            cfg = k.launch_config(matrix(m, n), vector(n), matrix(m, n), 1e-6, 1)
            self.assertEqual((cfg.grid[0], cfg.block[0]), (4, threads), f"EARLY CAP {cap}")

    def test_rules_refuse_what_the_specialisation_cannot_do(self) -> None:
        k = self.kernel("softmax", 4, 64)
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(matrix(4, 300), matrix(4, 300))  # 75 vectors > CAP 64
        self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
        self.assertIn("at most CAP * VEC", cm.exception.message)
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(matrix(4, 250, 252), matrix(4, 250, 252))  # 4 does not divide 250
        self.assertIn("VEC divides the row length", cm.exception.message)
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(matrix(4, 256), matrix(5, 256))
        self.assertIn("Y has the shape of X", cm.exception.message)
        with self.assertRaises(fly.FlyError) as cm:  # rows 16-byte aligned for VEC 4
            k.launch_config(matrix(4, 256, 258), matrix(4, 256))
        self.assertIn("'X'", cm.exception.message)

    def test_matrices_past_32_bit_offsets_are_refused(self) -> None:
        k = self.kernel("softmax", 4, 1048576)
        big = matrix(65536, 32768)  # 2^31 elements: the last is 2^31 - 1 from the first
        k.launch_config(big, big)
        big = matrix(65537, 32768)
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(big, big)
        # The runtime's check of the kernel's 32-bit offsets (the bundle's
        # max_span), before the launch block's own.
        self.assertEqual(cm.exception.status, fly.Status.ARGUMENTS)
        self.assertIn("argument 'X': the kernel's offsets into it are 32-bit and reach "
                      "2147483648 elements", cm.exception.message)

    def test_weights_are_checked_when_given(self) -> None:
        k = self.kernel("rms_norm", 4, 64)
        x = matrix(8, 256)
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(x, vector(100), x, 1e-6, 1)
        self.assertIn("W has one weight per column", cm.exception.message)
        k.launch_config(x, vector(100), x, 1e-6, 0)  # no weights: W is not read

    def test_backward_partials_set_the_grid(self) -> None:
        k = self.kernel("rms_norm_backward", 4, 1024)  # 256 threads a row
        x = matrix(1000, 4096)
        cfg = k.launch_config(x, x, vector(4096), x, matrix(264, 4096), 1e-6, 1)
        self.assertEqual((cfg.grid[0], cfg.block[0]), (264, 256))
        k = self.kernel("rms_norm_backward", 4, 8)  # 2 threads a row: 64 rows a block
        x = matrix(1000, 32)
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(x, x, vector(32), x, matrix(40, 32), 1e-6, 1)
        self.assertIn("positive multiple of R rows", cm.exception.message)
        cfg = k.launch_config(x, x, vector(32), x, matrix(128, 32), 1e-6, 1)
        self.assertEqual(cfg.grid[0], 2)


class GemmSplitRules(unittest.TestCase):
    """gemm_tn's launch rule with split K (kernels/gemm/gemm.fly): SPLIT
    units a tile, at most the blocks given; Work and Count sized for every
    tile refused when short, with its message."""

    def setUp(self) -> None:
        consts = {"T": "bf16", "TD": "bf16", "BM": 64, "BN": 128, "BK": 64, "STAGES": 6,
                  "PAIR": True, "SPLIT": 4, "BIAS": False, "ACT": 0, "RES": False, "CLUSTER": 1,
                  "PINGPONG": False, "TMA_STORE": True}
        self.k = fly.kernels.kernel("gemm", consts, device=fly.NO_DEVICE, target="sm_90a")

    def args(self, m=16, n=4096, k=11008, work=None, count=None, blocks=132):
        bf = lambda *s: DLPackArray(s, code=4, bits=16)  # noqa: E731
        f32 = DLPackArray((1,), code=2, bits=32)
        tiles = -(-m // 64) * -(-n // 128)
        return (bf(m, k), bf(n, k), bf(m, n), f32, f32, blocks, 1.0, bf(n), bf(m, n), 0.0,
                DLPackArray((work if work is not None else tiles * 64 * 128,), code=2, bits=32),
                DLPackArray((count if count is not None else tiles,), code=0, bits=32))

    def test_the_grid_is_the_units_or_the_blocks_given(self) -> None:
        self.assertEqual(self.k.launch_config(*self.args()).grid[0], 128)   # 32 tiles x 4
        self.assertEqual(self.k.launch_config(*self.args(n=8192)).grid[0], 132)

    def test_short_workspaces_are_refused(self) -> None:
        for args, message in ((self.args(work=32 * 64 * 128 - 1), "Work holds BM x BN values"),
                              (self.args(count=31), "Count holds a count a consumer")):
            with self.assertRaises(fly.FlyError) as cm:
                self.k.launch_config(*args)
            self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
            self.assertIn(message, cm.exception.message)


class FlashAttnRules(unittest.TestCase):
    """flash_attn's launch rule (kernels/attention/flash_attn.fly): a tile
    for each 128 query rows of each head of each batch, a block each, or
    PERSISTENT at most `blocks` blocks walking them (causal: pairs of row
    tiles), and the shapes the views of q, k, v (its transpose), out and
    lse must have."""

    CONSTS = {"T": "bf16", "D": 128, "BM": 128, "BN": 128, "STAGES": 3, "CAUSAL": False,
              "PINGPONG": True, "VARLEN": False, "PERSISTENT": True, "QBUF": 1}

    def setUp(self) -> None:
        self.k = fly.kernels.kernel("flash_attn", self.CONSTS, device=fly.NO_DEVICE,
                                    target="sm_90a")

    @staticmethod
    def bf16(r: int, c: int, strides=None) -> DLPackArray:
        return DLPackArray((r, c), code=4, bits=16, strides=strides)

    def args(self, b=2, sq=300, sk=777, h=4, hk=2, lse_rows=None, group=None, blocks=132,
             d=128):
        none = DLPackArray((1,), code=0, bits=32)
        return (self.bf16(b * sq, h * d), self.bf16(b * sk, hk * d),
                self.bf16(hk * d, b * sk, (1, hk * d)), self.bf16(b * sq, h * d),
                DLPackArray((lse_rows or b * h, sq), code=2, bits=32), none, none, sq, sk,
                group or h // hk, 0.1, blocks)

    def test_a_block_per_tile_or_per_multiprocessor(self) -> None:
        # 3 row tiles x 4 heads x 2 batches: 24 tiles.
        cfg = self.k.launch_config(*self.args())
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((24, 1, 1), 384))
        cfg = self.k.launch_config(*self.args(blocks=10))
        self.assertEqual(tuple(cfg.grid), (10, 1, 1))
        # D 64 in tiles of 192 rows: three consumers, 512 threads.
        three = fly.kernels.kernel("flash_attn", {**self.CONSTS, "D": 64, "BM": 192,
                                                  "STAGES": 4, "QBUF": 2},
                                   device=fly.NO_DEVICE, target="sm_90a")
        cfg = three.launch_config(*self.args(sq=1000, d=64))
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((48, 1, 1), 512))   # 6 x 4 x 2
        # Causal and persistent: pairs of row tiles, ceil(3 / 2) a head.
        pairs = fly.kernels.kernel("flash_attn", {**self.CONSTS, "CAUSAL": True},
                                   device=fly.NO_DEVICE, target="sm_90a")
        self.assertEqual(tuple(pairs.launch_config(*self.args()).grid), (16, 1, 1))
        self.assertEqual(tuple(pairs.launch_config(*self.args(blocks=7)).grid), (7, 1, 1))
        each = fly.kernels.kernel("flash_attn", {**self.CONSTS, "D": 256, "BN": 64, "STAGES": 2,
                                                 "PERSISTENT": False},
                                  device=fly.NO_DEVICE, target="sm_90a")
        d256 = list(self.args(blocks=10))
        d256[:5] = (self.bf16(600, 1024), self.bf16(1554, 512), self.bf16(512, 1554, (1, 512)),
                    self.bf16(600, 1024), DLPackArray((8, 300), code=2, bits=32))
        self.assertEqual(tuple(each.launch_config(*d256).grid), (24, 1, 1))

    def test_wrong_shapes_are_refused(self) -> None:
        for args, message in ((self.args(group=3), "group is the query heads a key head"),
                              (self.args(lse_rows=7), "LSE is (B H) x sq"),
                              (self.args(blocks=0), "blocks, the most a persistent grid has"),
                              (self.args()[:7] + (0,) + self.args()[8:], "at least 1")):
            with self.assertRaises(fly.FlyError) as cm:
                self.k.launch_config(*args)
            self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
            self.assertIn(message, cm.exception.message)


class PagedDecodeRules(unittest.TestCase):
    """paged_decode's launch rule (kernels/attention/paged_decode.fly): a
    block for each split of each group of up to 16 query heads of each
    sequence, the shapes the caches, tables and parts must have; and the
    wrapper's choice of splits."""

    def setUp(self) -> None:
        consts = {"T": "bf16", "KT": "bf16", "D": 128, "BS": 16, "WARPS": 4, "STAGES": 3,
                  "SPLIT": True}
        self.k = fly.kernels.kernel("paged_decode", consts, device=fly.NO_DEVICE, target="sm_90")

    def args(self, b=3, hq=40, hk=2, nb=50, bs=16, maxb=9, splits=5, tokens=64, lse_cols=None,
             group=None, block_stride=None):
        d = 128
        strides = (block_stride, hk * d, d, 1) if block_stride else None
        cache = DLPackArray((nb, bs, hk, d), code=4, bits=16, strides=strides)
        return (DLPackArray((b, hq, d), code=4, bits=16), cache, cache,
                DLPackArray((b, maxb), code=0, bits=32), DLPackArray((b,), code=0, bits=32),
                DLPackArray((b, hq, d), code=4, bits=16),
                DLPackArray((b * hq * splits, d), code=2, bits=32),
                DLPackArray((b * hq, lse_cols or splits), code=2, bits=32),
                group or hq // hk, tokens, splits, 0.1, 1.0, 1.0)

    def test_a_block_per_split_group_of_16_heads_and_sequence(self) -> None:
        # 40 query heads over 2 key heads: groups of 20, two blocks of heads each.
        cfg = self.k.launch_config(*self.args())
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((5, 4, 3), 128))

    def test_wrong_shapes_are_refused(self) -> None:
        for args, message in ((self.args(group=4), "group is the query heads a key head"),
                              (self.args(bs=32), "the caches' blocks hold BS tokens"),
                              (self.args(tokens=100), "multiple of the block's step"),
                              (self.args(lse_cols=4), "Lpart is (B HQ) x splits")):
            with self.assertRaises(fly.FlyError) as cm:
                self.k.launch_config(*args)
            self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
            self.assertIn(message, cm.exception.message)

    def test_caches_past_32_bit_offsets_are_refused(self) -> None:
        # 50 blocks 50M elements apart: offsets past 2^31 (the runtime's
        # check of the bundle's max_span, before the launch block's).
        with self.assertRaises(fly.FlyError) as cm:
            self.k.launch_config(*self.args(block_stride=50_000_000))
        self.assertEqual(cm.exception.status, fly.Status.ARGUMENTS)
        self.assertIn("argument 'K_cache': the kernel's offsets into it are 32-bit",
                      cm.exception.message)

    def test_the_wrapper_fills_the_machine_once(self) -> None:
        from fly.kernels.attention import _decode_splits

        # 8 blocks of heads: 33 splits would make 264 blocks, two a
        # multiprocessor of 132; splits of a whole number of 64-token steps
        # make it 32 of 2048 tokens.
        self.assertEqual(_decode_splits(8, 65536, 132, None), (32, 2048))
        # Enough blocks without splitting; short contexts are not cut below 256 tokens.
        self.assertEqual(_decode_splits(512, 4096, 132, None), (1, 4096))
        self.assertEqual(_decode_splits(8, 600, 132, None), (3, 256))
        # Given splits are kept, or fewer where splits of whole steps need
        # fewer (7 of 143 tokens are 6 of 192).
        self.assertEqual(_decode_splits(8, 1000, 132, 7), (6, 192))
        self.assertEqual(_decode_splits(8, 0, 132, None), (1, 64))


class FlashAttnVarlenRules(unittest.TestCase):
    """flash_attn's and flash_attn_sm80's launch rules with VARLEN: B
    sequences from the cu_q and cu_k offsets, a block for each 128 (64) rows
    of the longest, LSE (H, the rows of Q)."""

    def kernel(self, name, consts):
        return fly.kernels.kernel(name, {**consts, "VARLEN": True}, device=fly.NO_DEVICE,
                                  target="sm_90a" if name == "flash_attn" else "sm_90")

    def args(self, tq=1000, tk=900, h=4, hk=2, offsets=4, k_offsets=None, lse=None, v_t=True):
        d = 128
        bf16 = FlashAttnRules.bf16
        v = bf16(hk * d, tk, (1, hk * d)) if v_t else bf16(tk, hk * d)
        # Hopper's (V transposed) takes the persistent grid's most blocks.
        return (bf16(tq, h * d), bf16(tk, hk * d), v, bf16(tq, h * d),
                DLPackArray(lse or (h, tq), code=2, bits=32),
                DLPackArray((offsets,), code=0, bits=32),
                DLPackArray((k_offsets or offsets,), code=0, bits=32), 700, 650, h // hk,
                0.1) + ((1000,) if v_t else ())

    HOPPER = {"T": "bf16", "D": 128, "BM": 128, "BN": 128, "STAGES": 3, "PINGPONG": True,
              "PERSISTENT": True, "QBUF": 1}

    def test_a_block_per_rows_of_the_longest_sequence(self) -> None:
        hopper = self.kernel("flash_attn", {**self.HOPPER, "CAUSAL": True, "PERSISTENT": False})
        cfg = hopper.launch_config(*self.args())
        # ceil(700 / 128) tiles, 4 heads, 3 sequences: 72 tiles.
        self.assertEqual(tuple(cfg.grid), (72, 1, 1))
        ampere = self.kernel("flash_attn_sm80", {"T": "bf16", "D": 128, "WARPS": 4, "BN": 64,
                                                 "STAGES": 2, "CAUSAL": False})
        cfg = ampere.launch_config(*self.args(v_t=False))
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((11, 4, 3), 128))

    def test_wrong_shapes_are_refused(self) -> None:
        k = self.kernel("flash_attn", {**self.HOPPER, "CAUSAL": False})
        for args, message in ((self.args(k_offsets=5), "cu_q and cu_k hold B + 1 offsets"),
                              (self.args(offsets=1), "cu_q and cu_k hold B + 1 offsets"),
                              (self.args(lse=(8, 1000)), "VARLEN: LSE is H x (the rows of Q)")):
            with self.assertRaises(fly.FlyError) as cm:
                k.launch_config(*args)
            self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
            self.assertIn(message, cm.exception.message)


class FlashAttnMfmaRules(unittest.TestCase):
    """flash_attn_mfma's launch rule (kernels/attention/flash_attn_mfma.fly,
    AMD's gfx942 and gfx950, from its ahead-of-time bundle, arrays in ROCm
    memory): a block of 4 wavefronts for each 128 query rows, V as K is
    (not transposed), and the shapes refused with their messages; and
    flash_attn choosing it where PyTorch is ROCm's."""

    ROCM = (10, 0)   # kDLROCM

    def kernel(self, varlen=False):
        consts = {"T": "bf16", "D": 128, "WAVES": 4, "BN": 64, "CAUSAL": True, "VARLEN": varlen}
        return fly.kernels.kernel("flash_attn_mfma", consts, device=fly.NO_DEVICE,
                                  target="gfx942")

    def args(self, varlen=False):
        def bf16(r, c):
            return DLPackArray((r, c), code=4, bits=16, device=self.ROCM)

        def i32(n):
            return DLPackArray((n,), code=0, bits=32, device=self.ROCM)

        if varlen:   # 3 sequences, the longest 700 queries and 650 keys
            return [bf16(1000, 512), bf16(900, 256), bf16(900, 256), bf16(1000, 512),
                    DLPackArray((4, 1000), code=2, bits=32, device=self.ROCM), i32(4), i32(4),
                    700, 650, 2, 0.1]
        return [bf16(600, 512), bf16(1554, 256), bf16(1554, 256), bf16(600, 512),
                DLPackArray((8, 300), code=2, bits=32, device=self.ROCM), i32(1), i32(1), 300,
                777, 2, 0.1]

    def test_a_block_of_four_wavefronts_per_128_rows(self) -> None:
        cfg = self.kernel().launch_config(*self.args())
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((3, 4, 2), 256))
        cfg = self.kernel(True).launch_config(*self.args(True))
        self.assertEqual(tuple(cfg.grid), (6, 4, 3))   # ceil(700 / 128), 4 heads, 3 sequences

    def test_wrong_shapes_are_refused(self) -> None:
        for i, bad, message in (
                (2, DLPackArray((1554, 128), code=4, bits=16, device=self.ROCM),
                 "V is K's shape"),
                (9, 3, "group is the query heads a key head"),
                (4, DLPackArray((8, 301), code=2, bits=32, device=self.ROCM),
                 "LSE is (B H) x sq")):
            args = self.args()
            args[i] = bad
            with self.assertRaises(fly.FlyError) as cm:
                self.kernel().launch_config(*args)
            self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
            self.assertIn(message, cm.exception.message)

    def test_rocm_pytorch_runs_the_mfma_kernel(self) -> None:
        # The choice reads torch.version.hip: without PyTorch (CI installs
        # none; the GPU machine has it) there is nothing to choose from.
        try:
            import torch
        except ImportError:
            self.skipTest("PyTorch is not installed")
        from unittest import mock

        from fly.kernels import attention

        with mock.patch.object(torch.version, "hip", "6.2.0"):
            self.assertEqual(attention._flash_kind(None, 0), "mfma")
            with self.assertRaises(fly.FlyError) as cm:
                attention._flash_kind("sm_80", 0)
            self.assertIn("an AMD GPU runs the MFMA kernel", cm.exception.message)


class PagedDecodeMfmaRules(unittest.TestCase):
    """paged_decode_mfma's launch rule (kernels/attention/paged_decode_mfma.fly,
    AMD's gfx942 and gfx950, arrays in ROCm memory): paged_decode's grid,
    a block of 4 wavefronts, the shapes refused with their messages (also a
    cache of no blocks, since a masked token reads block 0, and one of 2^31
    elements or more: 32-bit offsets); and paged_attention_decode choosing
    it, and its fp8 entry, where PyTorch is ROCm's."""

    ROCM = (10, 0)   # kDLROCM

    def kernel(self, kt="bf16"):
        name = "paged_decode_mfma_fp8" if kt == "f8e4m3" else "paged_decode_mfma"
        consts = {"T": "bf16", "KT": kt, "D": 128, "BS": 16, "WAVES": 4, "SPLIT": True}
        return fly.kernels.kernel(name, consts, device=fly.NO_DEVICE, target="gfx942")

    def args(self, b=3, hq=40, hk=2, nb=50, bs=16, maxb=9, splits=5, tokens=64, lse_cols=None,
             group=None, fp8=False, block_stride=None):
        d = 128
        rocm = self.ROCM
        strides = (block_stride, hk * d, d, 1) if block_stride else None
        cache = DLPackArray((nb, bs, hk, d), code=10 if fp8 else 4, bits=8 if fp8 else 16,
                            strides=strides, device=rocm)
        return (DLPackArray((b, hq, d), code=4, bits=16, device=rocm), cache, cache,
                DLPackArray((b, maxb), code=0, bits=32, device=rocm),
                DLPackArray((b,), code=0, bits=32, device=rocm),
                DLPackArray((b, hq, d), code=4, bits=16, device=rocm),
                DLPackArray((b * hq * splits, d), code=2, bits=32, device=rocm),
                DLPackArray((b * hq, lse_cols or splits), code=2, bits=32, device=rocm),
                group or hq // hk, tokens, splits, 0.1, 1.0, 1.0)

    def test_a_block_of_four_wavefronts_per_split_group_of_16_heads_and_sequence(self) -> None:
        # 40 query heads over 2 key heads: groups of 20, two blocks of heads each.
        cfg = self.kernel().launch_config(*self.args())
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((5, 4, 3), 256))
        cfg = self.kernel("f8e4m3").launch_config(*self.args(fp8=True, hq=2, splits=1))
        self.assertEqual((tuple(cfg.grid), cfg.block[0]), ((1, 2, 3), 256))

    def test_wrong_shapes_are_refused(self) -> None:
        for args, message in ((self.args(group=4), "group is the query heads a key head"),
                              (self.args(bs=32), "the caches' blocks hold BS tokens"),
                              (self.args(nb=0), "the caches hold at least one block"),
                              (self.args(tokens=100), "multiple of the block's step"),
                              (self.args(lse_cols=4), "Lpart is (B HQ) x splits")):
            with self.assertRaises(fly.FlyError) as cm:
                self.kernel().launch_config(*args)
            self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
            self.assertIn(message, cm.exception.message)
        with self.assertRaises(fly.FlyError) as cm:  # 32-bit offsets: max_span
            self.kernel().launch_config(*self.args(block_stride=50_000_000))
        self.assertEqual(cm.exception.status, fly.Status.ARGUMENTS)
        self.assertIn("argument 'K_cache': the kernel's offsets into it are 32-bit",
                      cm.exception.message)

    def test_rocm_pytorch_runs_the_mfma_kernel(self) -> None:
        # The choice reads torch.version.hip: without PyTorch (CI installs
        # none; the GPU machine has it) there is nothing to choose from.
        try:
            import torch
        except ImportError:
            self.skipTest("PyTorch is not installed")
        from unittest import mock

        from fly.kernels import attention

        registry = _registry.load(REGISTRY)

        def shipped(name, consts):
            e = registry[name]
            return any(_registry.spec_name(e, s) == _registry.spec_name(e, consts)
                       for s in _registry.aot_specs(e))

        with mock.patch.object(torch.version, "hip", "6.2.0"):
            for kt, want in (("bf16", "paged_decode_mfma"), ("f8e4m3", "paged_decode_mfma_fp8")):
                name, consts = attention._decode_kernel("bf16", kt, 128, 16, True)
                self.assertEqual(name, want)
                self.assertEqual(consts["WAVES"] * 16, attention._DECODE_STEP)
                self.assertTrue(shipped(name, consts), consts)
        with mock.patch.object(torch.version, "hip", None):
            name, consts = attention._decode_kernel("f16", "f16", 64, 32, False)
            self.assertEqual(name, "paged_decode")
            self.assertTrue(shipped(name, consts), consts)


class BlockscaleRules(unittest.TestCase):
    """gemm_blockscale's launch rule (kernels/gemm/gemm_blockscale.fly): the
    grid, and each precondition on the scales' shapes and spans refused with
    its message (DLPack stand-ins: fp8 has no __cuda_array_interface__
    type)."""

    def setUp(self) -> None:
        self.consts = {"T": "f8e4m3", "TD": "bf16", "BM": 128, "BN": 128, "STAGES": 5,
                       "PAIR": True, "BIAS": True, "ACT": 0, "TMA_STORE": True, "CLUSTER": 1}
        self.k = fly.kernels.kernel("blockscale_mm", self.consts, device=fly.NO_DEVICE,
                                    target="sm_90a")

    @staticmethod
    def f8(m: int, k: int) -> DLPackArray:
        return DLPackArray((m, k), code=10, bits=8, strides=(320, 1))  # float8_e4m3fn

    @staticmethod
    def f32(m: int, n: int, strides=None) -> DLPackArray:
        return DLPackArray((m, n), code=2, bits=32, strides=strides)

    @staticmethod
    def bf16(*shape: int) -> DLPackArray:
        return DLPackArray(shape, code=4, bits=16)

    def args(self, m=1000, n=520, k=300, sa=None, sb=None, bias=None, blocks=132):
        """A (M, K), B (N, K), D, SA (M, ceil(K/128)) M-major, SB
        (ceil(N/128), ceil(K/128)), blocks, Bias."""
        kb = -(-k // 128)
        return (self.f8(m, k), self.f8(n, k), self.bf16(m, n),
                sa or self.f32(m, kb, (1, m)), sb or self.f32(-(-n // 128), kb), blocks,
                self.bf16(n if bias is None else bias))

    def refused(self, args, message: str) -> None:
        with self.assertRaises(fly.FlyError) as cm:
            self.k.launch_config(*args)
        self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
        self.assertIn(message, cm.exception.message)

    def test_the_grid_is_the_tiles_or_the_blocks_given(self) -> None:
        cfg = self.k.launch_config(*self.args())
        self.assertEqual((cfg.grid[0], cfg.block[0]), (8 * 5, 384))  # 128 x 128 tiles
        cfg = self.k.launch_config(*self.args(m=4096, n=4096, k=4096))
        self.assertEqual(cfg.grid[0], 132)

    def test_clusters_of_two_take_pairs_of_tile_rows(self) -> None:
        k = fly.kernels.kernel("blockscale_mm", {**self.consts, "CLUSTER": 2},
                               device=fly.NO_DEVICE, target="sm_90a")
        # 1100 rows: 5 pairs of 128-row tiles (the last one's second past M)
        # by 5 columns, a cluster of two blocks each (9 x 5 tiles alone).
        cfg = k.launch_config(*self.args(m=1100))
        self.assertEqual((cfg.grid[0], cfg.block[0], k.cluster), (2 * 5 * 5, 384, (2, 1, 1)))
        cfg = k.launch_config(*self.args(m=8192, n=8192, k=4096, blocks=133))
        self.assertEqual(cfg.grid[0], 132)                       # whole clusters
        with self.assertRaises(fly.FlyError) as cm:
            k.launch_config(*self.args(blocks=1))
        self.assertIn("blocks is at least a cluster", cm.exception.message)

    def test_three_consumer_warpgroups_at_192_rows(self) -> None:
        k = fly.kernels.kernel("blockscale_mm", {**self.consts, "BM": 192, "STAGES": 4,
                                                 "BIAS": False, "CLUSTER": 2},
                               device=fly.NO_DEVICE, target="sm_90a")
        # 1100 rows: 3 pairs of 192-row tiles by 5 columns; 512 threads.
        cfg = k.launch_config(*self.args(m=1100))
        self.assertEqual((cfg.grid[0], cfg.block[0], k.cluster), (2 * 3 * 5, 512, (2, 1, 1)))

    def test_the_wrapper_picks_the_tile_that_fills_the_machine(self) -> None:
        from fly.kernels.gemm import _BLOCKSCALE_TILES, _blockscale_tile

        def bm(m, n, pair=True, tma=True):
            t = _BLOCKSCALE_TILES[_blockscale_tile(m, n, 132, pair, tma)]
            return t["BM"], t["CLUSTER"]
        # 192 x 128 in clusters where its tiles fill whole waves and few
        # rows lie past M; by TMA only.
        for m, n in ((8192, 8192), (16384, 4096), (4096, 14336), (6144, 4096)):
            self.assertEqual(bm(m, n), (192, 2), (m, n))
        self.assertEqual(bm(8192, 8192, tma=False), (128, 2))
        self.assertEqual(bm(8192, 8192, pair=False, tma=False), (128, 1))
        # 4096^3: the last of 6 waves of 192-row tiles a third full.
        self.assertEqual(bm(4096, 4096), (128, 1))
        # 1024 rows: an eighth of three 384-row units past M.
        self.assertEqual(bm(1024, 128256), (128, 2))
        # Too few tiles of 128 rows for the machine: 64 rows.
        self.assertEqual(bm(128, 4096), (64, 1))

    def test_wrong_scales_are_refused(self) -> None:
        self.refused(self.args(sa=self.f32(1000, 2)), "SA is M x ceil(K / 128)")
        self.refused(self.args(sa=self.f32(999, 3)), "SA is M x ceil(K / 128)")
        self.refused(self.args(sb=self.f32(3, 5)), "SB is ceil(N / 128) x ceil(K / 128)")
        with self.assertRaises(fly.FlyError) as cm:  # the runtime's check (max_span)
            self.k.launch_config(*self.args(sa=self.f32(1000, 3, (3000000, 1))))
        self.assertEqual(cm.exception.status, fly.Status.ARGUMENTS)
        self.assertIn("argument 'SA': the kernel's offsets into it are 32-bit",
                      cm.exception.message)

    def test_other_preconditions(self) -> None:
        self.refused(self.args(k=0), "K is at least 1")
        self.refused(self.args(bias=519), "Bias holds a value for each of D's N columns")
        self.refused(self.args(blocks=0), "blocks is at least 1")
        a = self.args()
        self.refused((a[0], self.f8(520, 288)) + a[2:], "A is M x K, B is N x K")


def tv_layout(atom: str, operand: int) -> tuple:
    """The TV layout text of an MMA atom's operand (0 A, 1 B, 2 C) in
    sema/check/fly_atoms.def, as (shape, stride) nested tuples."""
    import ast
    import re

    text = (REPO / "sema" / "check" / "fly_atoms.def").read_text()
    row = re.search(r'FLY_MMA_ATOM\(\w+, "' + re.escape(atom) + r'",(.*?)\)\n', text, re.S)
    tvs = re.findall(r'"([^"]*:[^"]*)"', row.group(1))
    shape, stride = tvs[operand].split(":")
    return ast.literal_eval(shape.replace(")", ",)")), ast.literal_eval(stride.replace(")", ",)"))


def layout_at(shape, stride, i: int) -> int:
    """The layout's value at the flat (colexicographic) coordinate i."""
    if isinstance(shape, int):
        return (i % shape) * stride
    out = 0
    for s, d in zip(shape, stride):
        size = size_of(s)
        out += layout_at(s, d, i % size)
        i //= size
    return out


def size_of(shape) -> int:
    if isinstance(shape, int):
        return shape
    n = 1
    for s in shape:
        n *= size_of(s)
    return n


class Preshuffle(unittest.TestCase):
    """fly.kernels.preshuffle_b's order and examples/04-preshuffle-gemm.fly's
    launch rules (the numbers themselves are checked on the GPU:
    tests/gpu/python_checks.py)."""

    def test_the_order_is_the_mma_atoms_b_operand(self) -> None:
        # NVIDIA: two m16n8k16 B tiles (8 x 16, index n + 8 k) side by side,
        # values 0-3 the first, 4-7 the second.
        shape, stride = tv_layout("nv.mma_sync_16x8x16", 1)
        ka, lanes, order = preshuffle_shape("nvidia")
        self.assertEqual((ka, lanes), (16, 32))
        for l in range(lanes):
            for v in range(8):
                idx = layout_at(shape, stride, l + lanes * (v % 4))
                n, k = 8 * (v // 4) + idx % 8, idx // 8
                self.assertEqual(order[8 * l + v], n * ka + k, (l, v))
        # AMD: MFMA 16x16x32's B (16 x 32, index n + 16 k).
        shape, stride = tv_layout("amd.mfma_16x16x32", 1)
        ka, lanes, order = preshuffle_shape("amd")
        self.assertEqual((ka, lanes), (32, 64))
        for l in range(lanes):
            for v in range(8):
                idx = layout_at(shape, stride, l + lanes * v)
                self.assertEqual(order[8 * l + v], (idx % 16) * ka + idx // 16, (l, v))
        for vendor in ("nvidia", "amd"):
            ka, lanes, order = preshuffle_shape(vendor)
            self.assertEqual(sorted(order), list(range(16 * ka)), vendor)

    def test_an_unknown_target_is_refused(self) -> None:
        from fly.kernels.preshuffle import _vendor

        self.assertEqual((_vendor("sm_80"), _vendor("gfx950"), _vendor("amd")),
                         ("nvidia", "amd", "amd"))
        with self.assertRaises(fly.FlyError) as cm:
            _vendor("tpu")
        self.assertIn("unknown target 'tpu'", cm.exception.message)

    def args(self, m: int, n: int, k: int, ka: int, lanes: int, nb: int = 0):
        """A (rows 8-aligned even where K is not), Bp and C, on the target's
        kind of device."""
        dev = (2, 0) if lanes == 32 else (10, 0)

        def bf16(*shape, strides=None):
            return DLPackArray(shape, code=4, bits=16, strides=strides, device=dev)

        return (bf16(m, k, strides=(-(-k // 8) * 8, 1)),
                bf16(nb or -(-n // 16), -(-k // ka), 8 * lanes), bf16(m, n))

    def test_launch_rules(self) -> None:
        for target, ka, lanes in (("sm_90", 16, 32), ("gfx942", 32, 64)):
            mod = fly.load(example("04-preshuffle-gemm", f"--target={target}"),
                           target=target, device=fly.NO_DEVICE)
            kern = mod.preshuffle_gemm
            cfg = kern.launch_config(*self.args(300, 200, 328, ka, lanes))
            self.assertEqual((tuple(cfg.grid)[:2], cfg.block[0]), ((10, 1), 4 * lanes), target)
            for bad, message in ((self.args(300, 200, 328, ka, lanes, nb=12),
                                  "Bp is B preshuffled for this target"),
                                 (self.args(300, 200, 324, ka, lanes), "K is a multiple of 8")):
                with self.assertRaises(fly.FlyError) as cm:
                    kern.launch_config(*bad)
                self.assertEqual(cm.exception.status, fly.Status.LAUNCH_REFUSED)
                self.assertIn(message, cm.exception.message)

if __name__ == "__main__":
    unittest.main()

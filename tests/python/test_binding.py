"""The Python binding (runtime/python/fly) on a machine without a GPU.

Bundles are compiled from examples/*.fly with flyc and loaded into modules
without a device (target sm_90): those find kernels, check arguments and
compute launch configurations as a GPU's would, and refuse to launch.
Arrays are stand-ins with made-up pointers (fakes.py).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import sys
import threading
import unittest

import bundles  # first: it points the tests at the build tree
from bundles import example, merge, with_checksum
from fakes import CudaArray

import fly
from fly import _native

VECTOR_ADD = "01-vector-add"
TILED_COPY = "02-tiled-copy"
TILED_MMA = "03-tiled-mma"
ROW_SOFTMAX = "05-row-softmax"

SCALARS = """
// Scalars of several types, and a tensor of static shape.
kernel scale(n: i32, alpha: f32, beta: f64, small: i8, big: i64, X: tensor<f32>,
             W: tensor<f32, (4, 8):(8, 1)>) {
    let t = block_idx.x * 128 + thread_idx.x;
    if t < n {
        X[t].store(X[t].load() * alpha);
    }
}

launch scale {
    grid = ceil_div(n, 128);
    block = 128;
}
"""


def load(name: str, *options: str) -> fly.Module:
    return fly.load(example(name, *options), target="sm_90")


def vec(n: int, typestr: str = "<f4", **kw) -> CudaArray:
    return CudaArray((n,), typestr, **kw)


class FlyTestCase(unittest.TestCase):
    def assertFails(self, status: fly.Status, *texts: str):
        """A context expecting a FlyError of `status` whose message holds texts."""
        test = self

        class Expect:
            def __enter__(self):
                return self

            def __exit__(self, kind, e, tb):
                test.assertIsNotNone(e, f"no error; expected {status.name}")
                test.assertIsInstance(e, fly.FlyError)
                test.assertEqual(e.status, status, str(e))
                for t in texts:
                    test.assertIn(t, str(e))
                self.exception = e
                return True

        return Expect()


class TestLibrary(FlyTestCase):
    def test_versions(self):
        self.assertRegex(fly.runtime_version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(_native.flyrt().flyrtBundleFormatVersion(), 1)

    def test_struct_layout(self):
        # fly/runtime.h on a 64-bit machine: what the packer's offsets assume.
        self.assertEqual(ctypes.sizeof(_native.FlyrtTensor), 8 + 4 + 4 + 2 * 16 * 8)
        self.assertEqual(ctypes.sizeof(_native.FlyrtArg), 8 + ctypes.sizeof(_native.FlyrtTensor))
        self.assertEqual(_native.FlyrtArg.u.offset, 8)
        self.assertEqual(ctypes.sizeof(_native.FlyrtLaunchConfig), 28)
        # ... align, stride_align, max_span and the padding to 8 bytes.
        self.assertEqual(ctypes.sizeof(_native.FlyrtParamInfo), 8 + 4 + 4 + 8 + 8 + 8 + 256 + 16)

    def test_packed_tensor_reads_back_through_ctypes(self):
        # The packer writes with struct; libflyrt reads the C layout, as
        # ctypes does here.
        k = load(TILED_MMA).gemm_tile
        args = (CudaArray((256, 512), "<f2", ptr=0x1000),
                CudaArray((384, 512), "<f2", strides=(2048, 2), ptr=0x2000),
                CudaArray((256, 384), "<f4", ptr=0x3000))
        k.launch_config(*args)
        argv = k._tls.buffers.argv
        t = argv[1].u.tensor
        self.assertEqual(argv[1].kind, _native.ARG_TENSOR)
        self.assertEqual((t.data, t.dtype, t.rank), (0x2000, _native.DTYPE["f16"], 2))
        self.assertEqual((list(t.shape[:2]), list(t.stride[:2])), ([384, 512], [1024, 1]))
        self.assertEqual(argv[2].u.tensor.dtype, _native.DTYPE["f32"])

    def test_import_needs_neither_torch_nor_numpy(self):
        code = "import sys, fly; print('torch' in sys.modules, 'numpy' in sys.modules)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=bundles.python_env())
        self.assertEqual(r.stdout.strip(), "False False", r.stderr)

    def test_missing_library(self):
        env = bundles.python_env(FLYRT_LIBRARY="/nonexistent/libflyrt.so")
        code = ("import fly\ntry:\n    fly.device_count()\nexcept fly.LibraryNotFoundError as e:\n"
                "    print(e)")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertIn("libflyrt not found", r.stdout, r.stderr)
        self.assertIn("/nonexistent/libflyrt.so", r.stdout)
        self.assertIn("Set FLYRT_LIBRARY", r.stdout)

    def test_library_in_lib_folder_of_the_package(self):
        # A copy of the package with lib/libflyrt.so inside, and no variable.
        pkg = bundles.workdir() / "site" / "fly"
        shutil.copytree(bundles.REPO / "runtime" / "python" / "fly", pkg,
                        ignore=shutil.ignore_patterns("__pycache__"))
        (pkg / "lib").mkdir()
        shutil.copy(os.environ["FLYRT_LIBRARY"], pkg / "lib" / "libflyrt.so")
        env = {k: v for k, v in os.environ.items() if k != "FLYRT_LIBRARY"}
        env["PYTHONPATH"] = str(pkg.parent)
        code = "import fly, fly._native as n; fly.device_count(); print(n.flyrt().path)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertEqual(r.stdout.strip(), str(pkg / "lib" / "libflyrt.so"), r.stderr)


class TestDevices(FlyTestCase):
    def setUp(self):
        if fly.device_count() > 0:
            self.skipTest("this machine has a GPU")

    def test_count(self):
        self.assertEqual(fly.device_count(), 0)

    def test_device_without_driver(self):
        with self.assertFails(fly.Status.NO_DRIVER, "no GPU driver", "libcuda.so.1") as e:
            fly.Device(0)
        self.assertEqual(e.exception.status_name, "FLYRT_ERROR_NO_DRIVER")
        self.assertIsInstance(e.exception, RuntimeError)

    def test_load_without_target_says_how(self):
        with self.assertFails(fly.Status.NO_DRIVER, "give a target", "target='sm_90'"):
            fly.load(example(VECTOR_ADD))

    def test_no_device_needs_a_target(self):
        with self.assertFails(fly.Status.INVALID_VALUE, "needs a target"):
            fly.load(example(VECTOR_ADD), device=fly.NO_DEVICE)

    def test_bad_device_argument(self):
        with self.assertFails(fly.Status.INVALID_VALUE, "give an ordinal"):
            fly.load(example(VECTOR_ADD), device="tpu:0")


class TestLoad(FlyTestCase):
    def test_from_path_and_bytes(self):
        path = example(VECTOR_ADD)
        data = path.read_bytes()
        for source in (path, str(path), data, bytearray(data), memoryview(data)):
            mod = fly.load(source, target="sm_90")
            self.assertEqual(mod.target, "sm_90")
            self.assertIsNone(mod.device)
            self.assertEqual([(e.name, e.spec) for e in mod.kernels],
                             [("vector_add", "BLOCK=256 VEC=4")])
        self.assertEqual(fly.load(path, target="sm_90").name, str(path))
        self.assertEqual(fly.load(data, target="sm_90").name, "<bytes>")

    def test_bundle_facts(self):
        mod = load(VECTOR_ADD)
        self.assertTrue(mod.compiler.startswith("flyc "), mod.compiler)
        self.assertRegex(mod.source_hash, r"^[0-9a-f]{64}$")
        self.assertEqual(mod.targets, ("sm_90",))
        self.assertEqual(mod.kernels[0].image_kind, "ptx")
        self.assertIn("vector_add", repr(mod))
        self.assertIn("vector_add", dir(mod))

    def test_several_targets(self):
        path = example(VECTOR_ADD, "--target=sm_90,sm_80")
        self.assertEqual(fly.load(path, target="sm_80").target, "sm_80")
        mod = fly.load(path, target="sm_90")
        self.assertEqual(mod.targets, ("sm_80", "sm_90"))
        self.assertEqual([e.target for e in mod.kernels], ["sm_90"])

    def test_kernels_are_cached(self):
        mod = load(VECTOR_ADD)
        self.assertIs(mod.vector_add, mod.kernel("vector_add"))
        self.assertIs(mod.kernel("vector_add", "BLOCK=256"), mod.kernel("vector_add"))
        self.assertIn("vector_add", mod.__dict__)  # an attribute after the first access

    def test_several_specialisations(self):
        a = example(VECTOR_ADD).read_bytes()
        b = example(VECTOR_ADD, "-DBLOCK=128").read_bytes()
        mod = fly.load(merge(a, b), target="sm_90")
        self.assertEqual([e.spec for e in mod.kernels], ["BLOCK=256 VEC=4", "BLOCK=128 VEC=4"])
        self.assertEqual(mod.kernel("vector_add", "BLOCK=128").spec, "BLOCK=128 VEC=4")
        self.assertEqual(mod.kernel("vector_add", {"BLOCK": 256}).consts,
                         {"BLOCK": 256, "VEC": 4})
        self.assertEqual(mod.kernel("vector_add", "VEC=4 BLOCK=128").consts["BLOCK"], 128)
        cfg = mod.kernel("vector_add", "BLOCK=128").launch_config(*[vec(1 << 20)] * 3)
        self.assertEqual(cfg.grid, (2048, 1, 1))
        self.assertEqual(cfg.block, (128, 1, 1))


class TestSignature(FlyTestCase):
    def test_vector_add(self):
        k = load(VECTOR_ADD).vector_add
        self.assertEqual((k.name, k.spec), ("vector_add", "BLOCK=256 VEC=4"))
        self.assertEqual([(p.name, p.kind) for p in k.params],
                         [("A", "tensor"), ("B", "tensor"), ("C", "tensor"), ("BLOCK", "const"),
                          ("VEC", "const")])
        a = k.params[0]
        self.assertEqual((a.dtype, a.type, a.layout, a.rank), ("f32", "f32", "(?,):(1,)", 1))
        # Its 128-bit accesses need 16-byte aligned pointers.
        # Its offsets are 32-bit: it spans at most 2^31 elements.
        self.assertEqual((a.shape, a.stride, a.align, a.stride_align, a.max_span),
                         ((None,), (1,), 16, 0, 2**31))
        self.assertIsNone(a.value)
        self.assertEqual(k.params[3].value, 256)
        self.assertEqual(k.consts, {"BLOCK": 256, "VEC": 4})
        self.assertEqual(k.signature,
                         "vector_add(A: tensor<f32, (?,):(1,)>, B: tensor<f32, (?,):(1,)>, "
                         "C: tensor<f32, (?,):(1,)>, const BLOCK: int = 256, "
                         "const VEC: int = 4)")
        self.assertIn(k.signature, repr(k))

    def test_cluster(self):
        # The launch block's cluster, as compiled; (1, 1, 1) without one.
        src = ("kernel k(R: tensor<i32>) { cluster_sync(); }\n"
               "launch k { grid = 4; block = 32; cluster = (2, 1, 1); }\n")
        k = fly.load(bundles.source("clustered", src), target="sm_90").k
        self.assertEqual(k.cluster, (2, 1, 1))
        self.assertEqual(k.launch_config(vec(4, "<i4")).grid, (4, 1, 1))
        self.assertEqual(load("01-vector-add").vector_add.cluster, (1, 1, 1))

    def test_tiled_mma(self):
        k = load(TILED_MMA).gemm_tile
        a, b, c = k.params[:3]
        self.assertEqual((a.dtype, b.dtype, c.dtype), ("f16", "f16", "f32"))
        self.assertEqual((a.layout, a.rank, a.shape, a.stride),
                         ("(?,?):(?,1)", 2, (None, None), (None, 1)))
        self.assertEqual(k.consts, {"BM": 64, "BN": 64, "BK": 32, "WARPS_M": 2, "WARPS_N": 2})

    def test_tiled_copy_column_major(self):
        d = load(TILED_COPY).tiled_copy_2d.params[1]
        self.assertEqual((d.name, d.layout, d.stride), ("D", "(?,?):(1,?)", (1, None)))

    def test_scalars(self):
        k = fly.load(bundles.source("scalars", SCALARS), target="sm_90").scale
        self.assertEqual([(p.name, p.kind, p.dtype) for p in k.params],
                         [("n", "scalar", "i32"), ("alpha", "scalar", "f32"),
                          ("beta", "scalar", "f64"), ("small", "scalar", "i8"),
                          ("big", "scalar", "i64"), ("X", "tensor", "f32"),
                          ("W", "tensor", "f32")])
        w = k.params[6]
        self.assertEqual((w.shape, w.stride), ((4, 8), (8, 1)))
        self.assertEqual(str(k.params[0]), "n: i32")


class TestBundleErrors(FlyTestCase):
    def test_missing_file(self):
        with self.assertFails(fly.Status.IO, "cannot open", "/nonexistent/x.flyb"):
            fly.load("/nonexistent/x.flyb", target="sm_90")

    def test_not_a_bundle(self):
        with self.assertFails(fly.Status.BAD_BUNDLE, "not a Fly bundle"):
            fly.load(b"this is not a bundle, but it is long enough to have a header" * 4,
                     target="sm_90")
        text = bundles.workdir() / "text.flyb"
        text.write_text("kernel k() {}\n" * 20)
        with self.assertFails(fly.Status.BAD_BUNDLE, "not a Fly bundle", str(text)):
            fly.load(text, target="sm_90")

    def test_truncated(self):
        data = example(VECTOR_ADD).read_bytes()
        with self.assertFails(fly.Status.BAD_BUNDLE, "truncated"):
            fly.load(data[:100], target="sm_90")
        with self.assertFails(fly.Status.BAD_BUNDLE):
            fly.load(data[:-1], target="sm_90")

    def test_corrupted_byte(self):
        data = bytearray(example(VECTOR_ADD).read_bytes())
        for at in (200, len(data) // 2, len(data) - 1):
            bad = bytearray(data)
            bad[at] ^= 0x20
            with self.assertFails(fly.Status.BAD_BUNDLE, "checksum does not match"):
                fly.load(bytes(bad), target="sm_90")

    def test_wrong_version(self):
        data = bytearray(example(VECTOR_ADD).read_bytes())
        struct.pack_into("<I", data, 8, 2)
        with self.assertFails(fly.Status.VERSION, "format version 2", "reads version 1"):
            fly.load(with_checksum(data), target="sm_90")

    def test_no_image_for_target(self):
        with self.assertFails(fly.Status.NO_IMAGE, "no image for gfx942", "sm_90 ptx"):
            fly.load(example(VECTOR_ADD), target="gfx942")

    def test_missing_kernel(self):
        mod = load(VECTOR_ADD)
        with self.assertFails(fly.Status.NOT_FOUND, "no kernel 'nope'", "it has: vector_add"):
            mod.kernel("nope")
        with self.assertRaises(AttributeError) as e:
            mod.nope  # noqa: B018
        self.assertIsInstance(e.exception, fly.KernelNotFoundError)
        self.assertIn("no kernel 'nope'", str(e.exception))
        self.assertFalse(hasattr(mod, "nope"))
        self.assertFalse(hasattr(mod, "_private"))

    def test_ambiguous_and_unknown_spec(self):
        a = example(VECTOR_ADD).read_bytes()
        b = example(VECTOR_ADD, "-DBLOCK=128").read_bytes()
        mod = fly.load(merge(a, b), target="sm_90")
        with self.assertFails(fly.Status.NOT_FOUND, "has 2 specialisations",
                              "name the const bindings of one",
                              "'BLOCK=256 VEC=4', 'BLOCK=128 VEC=4'"):
            mod.kernel("vector_add")
        with self.assertFails(fly.Status.NOT_FOUND, "matching 'VEC=4'"):
            mod.kernel("vector_add", "VEC=4")
        self.assertFalse(hasattr(mod, "vector_add"))  # ambiguous as an attribute too
        with self.assertFails(fly.Status.NOT_FOUND, "no specialisation 'BLOCK=64'"):
            mod.kernel("vector_add", {"BLOCK": 64})
        with self.assertFails(fly.Status.NOT_FOUND, "no specialisation 'SIZE=1'"):
            mod.kernel("vector_add", "SIZE=1")


class TestArgumentErrors(FlyTestCase):
    def setUp(self):
        self.vadd = load(VECTOR_ADD).vector_add
        self.scale = fly.load(bundles.source("scalars", SCALARS), target="sm_90").scale

    def scalars(self, n=1000, alpha=1.0, beta=0.5, small=1, big=2, X=None, W=None):
        return (n, alpha, beta, small, big, X or vec(1000),
                W or CudaArray((4, 8), ptr=0x10000))

    def test_argument_count(self):
        with self.assertFails(fly.Status.ARGUMENTS, "vector_add: takes 3 arguments (A, B, C), "
                              "2 given"):
            self.vadd.launch_config(vec(1024), vec(1024))
        with self.assertFails(fly.Status.ARGUMENTS, "takes 3 arguments", "4 given"):
            self.vadd(vec(1024), vec(1024), vec(1024), vec(1024))

    def test_dtype(self):
        with self.assertFails(fly.Status.ARGUMENTS, "vector_add: argument 'B': the kernel takes "
                              "f32 elements, not f16"):
            self.vadd.launch_config(vec(1024), vec(1024, "<f2"), vec(1024))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'A'", "'<u4'",
                              "which have no Fly type"):
            self.vadd.launch_config(vec(1024, "<u4"), vec(1024), vec(1024))
        with self.assertFails(fly.Status.ARGUMENTS, "'>f4'"):
            self.vadd.launch_config(vec(1024, ">f4"), vec(1024), vec(1024))

    def test_rank(self):
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'C'", "(?,):(1,)", "flattened",
                              "32x32"):
            self.vadd.launch_config(vec(1024), vec(1024), CudaArray((32, 32)))
        with self.assertFails(fly.Status.ARGUMENTS, "17 dimensions", "at most 16"):
            self.vadd.launch_config(CudaArray((1,) * 17), vec(1024), vec(1024))

    def test_static_leaves(self):
        # Every second float: stride 2 where the layout says 1.
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'A'", "layout is (?,):(1,)",
                              "its stride is 1; the tensor's is 2"):
            self.vadd.launch_config(vec(1024, strides=(8,)), vec(1024), vec(1024))
        # The transpose of a row-major matrix, where a row-major one is taken.
        copy = load(TILED_COPY).tiled_copy_2d
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'S'", "(?,?):(?,1)",
                              "the tensor's is 1x64"):
            copy.launch_config(CudaArray((64, 64), strides=(4, 256)), CudaArray((64, 64)))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'W'", "(4,8):(8,1)",
                              "its shape is 4x8; the tensor's is 4x4"):
            self.scale.launch_config(*self.scalars(W=CudaArray((4, 4))))

    def test_dynamic_leaf_beyond_32_bits(self):
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'A'",
                              "does not fit the 32-bit integer"):
            self.vadd.launch_config(vec(1 << 31), vec(1024), vec(1024))

    def test_byte_strides_not_whole_elements(self):
        with self.assertFails(fly.Status.ARGUMENTS, "a stride of 6 bytes",
                              "4-byte elements"):
            self.vadd.launch_config(vec(1024, strides=(6,)), vec(1024), vec(1024))

    def test_null_pointer_and_mask(self):
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'C': a null pointer"):
            self.vadd.launch_config(vec(1024), vec(1024), vec(1024, ptr=0))
        with self.assertFails(fly.Status.ARGUMENTS, "has a mask"):
            self.vadd.launch_config(vec(1024), vec(1024), vec(1024, mask=vec(1024)))
        with self.assertFails(fly.Status.ARGUMENTS, "lacks or mangles 'shape'"):
            bad = CudaArray((4,))
            del bad.__cuda_array_interface__["shape"]
            self.vadd.launch_config(bad, vec(1024), vec(1024))

    def test_scalar_ranges(self):
        self.scale.launch_config(*self.scalars(n=2**31 - 1, small=-128, big=-(2**63)))
        with self.assertFails(fly.Status.ARGUMENTS, "scale: argument 'n': 2147483648 does not "
                              "fit i32"):
            self.scale.launch_config(*self.scalars(n=2**31))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'small': 128 does not fit i8"):
            self.scale.launch_config(*self.scalars(small=128))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'big': 9223372036854775808 does "
                              "not fit i64"):
            self.scale.launch_config(*self.scalars(big=2**63))
        with self.assertFails(fly.Status.ARGUMENTS, f"{2**80} does not fit i32"):
            self.scale.launch_config(*self.scalars(n=2**80))

    def test_scalar_kinds(self):
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'n': the kernel takes i32, not a "
                              "floating number (1.5)"):
            self.scale.launch_config(*self.scalars(n=1.5))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'n': the kernel takes a number "
                              "(i32), not a str"):
            self.scale.launch_config(*self.scalars(n="1000"))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'n': the kernel takes a number "
                              "(i32), not a tensor"):
            self.scale.launch_config(*self.scalars(n=vec(4)))
        # Integers go to float parameters; bools and __index__ objects are integers.
        cfg = self.scale.launch_config(*self.scalars(n=True, alpha=2, beta=3))
        self.assertEqual(cfg.grid, (1, 1, 1))

        class Index:
            def __index__(self):
                return 300

        self.assertEqual(self.scale.launch_config(*self.scalars(n=Index())).grid, (3, 1, 1))

    def test_not_an_array(self):
        for what, arg in (("list", [1.0, 2.0]), ("NoneType", None), ("int", 5),
                          ("object", object())):
            with self.assertFails(fly.Status.ARGUMENTS, "argument 'A'"):
                self.vadd.launch_config(arg, vec(1024), vec(1024))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'A': a list is not an array",
                              "__dlpack__", "__cuda_array_interface__"):
            self.vadd.launch_config([1.0], vec(1024), vec(1024))
        with self.assertFails(fly.Status.ARGUMENTS, "the kernel takes a tensor, not an integer"):
            self.vadd.launch_config(5, vec(1024), vec(1024))
        with self.assertFails(fly.Status.ARGUMENTS, "the kernel takes a tensor, not an integer"):
            self.vadd.launch_config(2**70, vec(1024), vec(1024))

    def test_launch_refused(self):
        # The kernel's own requirements, with its own messages and where they
        # are written.
        copy = load(TILED_COPY).tiled_copy_2d
        with self.assertFails(fly.Status.LAUNCH_REFUSED, "tiled_copy_2d: launch refused: "
                              "the matrix is a whole number of BM x BN tiles",
                              "02-tiled-copy.fly:"):
            copy.launch_config(CudaArray((16, 64)), CudaArray((16, 64), strides=(4, 64)))
        with self.assertFails(fly.Status.LAUNCH_REFUSED, "D has the shape of S"):
            copy.launch_config(CudaArray((64, 64)), CudaArray((32, 64), strides=(4, 128)))
        with self.assertFails(fly.Status.LAUNCH_REFUSED, "A, B and C have the same length"):
            self.vadd.launch_config(vec(1024), vec(1024), vec(1000))
        # An empty tensor: no blocks, a launch that does nothing.
        self.assertEqual(self.vadd.launch_config(vec(0), vec(0), vec(0)).grid, (0, 1, 1))

    def test_launch_options(self):
        with self.assertFails(fly.Status.INVALID_VALUE, "grid=-1", "2**32 - 1"):
            self.vadd(vec(1024), vec(1024), vec(1024), grid=-1)
        with self.assertFails(fly.Status.INVALID_VALUE, "one to three components"):
            self.vadd(vec(1024), vec(1024), vec(1024), block=(1, 2, 3, 4))
        with self.assertFails(fly.Status.INVALID_VALUE, "stream='x'"):
            self.vadd(vec(1024), vec(1024), vec(1024), stream="x")
        with self.assertRaises(TypeError):
            self.vadd(vec(1024), vec(1024), vec(1024), blocks=128)

    def test_checks_do_not_stick(self):
        # A failed launch leaves nothing behind in the kernel's buffers.
        with self.assertFails(fly.Status.ARGUMENTS):
            self.vadd.launch_config(vec(1024), vec(1024, "<f2"), vec(1024))
        self.assertEqual(self.vadd.launch_config(vec(2048), vec(2048), vec(2048)).grid,
                         (2, 1, 1))


class TestLaunchConfig(FlyTestCase):
    def test_vector_add(self):
        k = load(VECTOR_ADD).vector_add
        self.assertEqual(k.launch_config(vec(1 << 20), vec(1 << 20), vec(1 << 20)),
                         fly.LaunchConfig((1024, 1, 1), (256, 1, 1), 0))
        self.assertEqual(k.launch_config(vec(1000), vec(1000), vec(1000)).grid, (1, 1, 1))
        self.assertEqual(k.launch_config(vec(1025), vec(1025), vec(1025)).grid, (2, 1, 1))
        k128 = load(VECTOR_ADD, "-DBLOCK=128").vector_add
        cfg = k128.launch_config(vec(1 << 20), vec(1 << 20), vec(1 << 20))
        self.assertEqual((cfg.grid, cfg.block), ((2048, 1, 1), (128, 1, 1)))

    def test_tiled_mma(self):
        k = load(TILED_MMA).gemm_tile
        M, N, K = 256, 384, 512
        A = CudaArray((M, K), "<f2")
        B = CudaArray((N, K), "<f2", strides=(2 * K, 2))  # explicit, the same as None
        C = CudaArray((M, N), "<f4")
        self.assertEqual(k.launch_config(A, B, C),
                         fly.LaunchConfig((N // 64, M // 64, 1), (128, 1, 1), 0))
        # A leading dimension larger than a row (a slice of a wider matrix).
        A = CudaArray((M, K), "<f2", strides=(2 * 2 * K, 2))
        self.assertEqual(k.launch_config(A, B, C).grid, (6, 4, 1))

    def test_tiled_copy_and_softmax(self):
        copy = load(TILED_COPY).tiled_copy_2d
        M, N = 512, 768
        cfg = copy.launch_config(CudaArray((M, N)), CudaArray((M, N), strides=(4, 4 * M)))
        self.assertEqual(cfg, fly.LaunchConfig((N // 32, M // 32, 1), (256, 1, 1), 0))
        softmax = load(ROW_SOFTMAX).row_softmax
        cfg = softmax.launch_config(CudaArray((300, 1000)), CudaArray((300, 1000)))
        self.assertEqual(cfg, fly.LaunchConfig((300, 1, 1), (256, 1, 1), 0))

    def test_cuda_array_interface_v2(self):
        k = load(VECTOR_ADD).vector_add
        a = vec(4096, version=2)
        del a.__cuda_array_interface__["strides"]  # v2 may leave it out
        self.assertEqual(k.launch_config(a, a, a).grid, (4, 1, 1))

    def test_threads(self):
        # Each thread has its own argument buffers: concurrent calls with
        # different sizes must each see their own.
        k = load(VECTOR_ADD).vector_add
        errors = []

        def work(i: int) -> None:
            n = 1024 * (i + 1)
            a = vec(n)
            for _ in range(300):
                g = k.launch_config(a, a, a).grid
                if g != (i + 1, 1, 1):
                    errors.append((i, g))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class TestLaunch(FlyTestCase):
    def test_no_device(self):
        k = load(VECTOR_ADD).vector_add
        a = vec(1024)
        with self.assertFails(fly.Status.NO_DEVICE, "vector_add: its module was made for "
                              "target sm_90 without a device") as e:
            k(a, a, a)
        self.assertEqual(e.exception.status_name, "FLYRT_ERROR_NO_DEVICE")
        for kw in ({"grid": 4}, {"block": (128, 1)}, {"shared": 1024}, {"stream": 0},
                   {"grid": (0, 2), "block": 64, "shared": 0}):
            with self.assertFails(fly.Status.NO_DEVICE):
                k(a, a, a, **kw)

    def test_no_arguments(self):
        empty = fly.load(bundles.source("empty", "kernel empty() {}\n"
                                        "launch empty { grid = 1; block = 1; }\n"),
                         target="sm_90").empty
        self.assertEqual(empty.launch_config(), fly.LaunchConfig((1, 1, 1), (1, 1, 1), 0))
        with self.assertFails(fly.Status.NO_DEVICE):
            empty()
        with self.assertFails(fly.Status.ARGUMENTS, "takes 0 arguments", "1 given"):
            empty(1)


class TestCompile(FlyTestCase):
    def test_path_with_consts(self):
        src = bundles.REPO / "examples" / f"{VECTOR_ADD}.fly"
        mod = fly.compile(src, target="sm_90", BLOCK=128)
        self.assertIsNone(mod.device)
        self.assertEqual(mod.name, str(src))
        k = mod.vector_add
        self.assertEqual(k.spec, "BLOCK=128 VEC=4")
        self.assertEqual(k.launch_config(vec(1 << 20), vec(1 << 20), vec(1 << 20)).grid,
                         (2048, 1, 1))
        self.assertEqual(fly.compile(str(src), "sm_90", VEC=2, BLOCK=64).vector_add.consts,
                         {"BLOCK": 64, "VEC": 2})

    def test_source_text(self):
        mod = fly.compile(SCALARS, target="sm_90")
        self.assertEqual(mod.name, "<source>.fly")
        self.assertEqual([p.name for p in mod.scale.params][:2], ["n", "alpha"])

    def test_several_targets(self):
        src = bundles.REPO / "examples" / f"{ROW_SOFTMAX}.fly"
        mod = fly.compile(src, target=["sm_90", "sm_80"])
        self.assertEqual((mod.target, mod.targets), ("sm_90", ("sm_80", "sm_90")))

    def test_bundle_bytes(self):
        data = fly.compile_bundle(bundles.REPO / "examples" / f"{VECTOR_ADD}.fly", "sm_90")
        self.assertEqual(data[:8], b"FLYBNDL\n")
        self.assertEqual(fly.load(data, target="sm_90").vector_add.spec, "BLOCK=256 VEC=4")

    def test_errors_carry_the_diagnostics(self):
        bad = "kernel broken(A: tensor<f32>) {\n    let x = nope + 1;\n}\n"
        with self.assertRaises(fly.CompileError) as e:
            fly.compile(bad, target="sm_90", filename="broken.fly")
        self.assertIsInstance(e.exception, fly.FlyError)
        self.assertEqual((e.exception.status, e.exception.status_name), (1, "FLYC_ERROR_SOURCE"))
        self.assertIn("broken.fly:2:", e.exception.diagnostics)
        self.assertIn("nope", str(e.exception))

    def test_target_limits_raise(self):
        # 80 KiB of shared memory, which gfx942 cannot hold: an error located
        # in the source, and the interpreter goes on (LLVM's code generator
        # used to end the process; the semantic pass now refuses it first).
        big = ("kernel big(A: tensor<f32>) {\n"
               "    let s = smem<f32>(20480:1);\n"
               "    s[thread_idx.x].store(A[thread_idx.x].load());\n"
               "    A[thread_idx.x].store(s[thread_idx.x + 1].load());\n"
               "}\n"
               "launch big { grid = 1; block = 64; }\n")
        with self.assertRaises(fly.CompileError) as e:
            fly.compile(big, target="gfx942", filename="big.fly")
        self.assertEqual(e.exception.status, 1)
        self.assertIn("big.fly:2:13: error: this shared tile of 81920 bytes brings the kernel's "
                      "static shared memory to 81920 bytes, over the 65536 bytes (64 KiB) a "
                      "block has on gfx942", e.exception.diagnostics)
        self.assertNotIn("<unknown>", e.exception.diagnostics)
        self.assertEqual(fly.compile_bundle(big, "gfx950")[:8], b"FLYBNDL\n")

    def test_bad_option(self):
        src = bundles.REPO / "examples" / f"{VECTOR_ADD}.fly"
        with self.assertRaises(fly.CompileError) as e:
            fly.compile(src, target="sm_90", options=["--bogus-option"])
        self.assertEqual(e.exception.status, 2)
        self.assertIn("--bogus-option", e.exception.diagnostics)
        with self.assertRaises(fly.CompileError) as e:
            fly.compile(src, target="sm_1")
        self.assertIn("sm_1", str(e.exception))

    def test_bad_const_value(self):
        with self.assertFails(fly.Status.INVALID_VALUE, "must be an int"):
            fly.compile(SCALARS, target="sm_90", BLOCK=[1])

    def test_without_target_and_gpu(self):
        if fly.device_count() > 0:
            self.skipTest("this machine has a GPU")
        with self.assertFails(fly.Status.NO_DRIVER, "give a target"):
            fly.compile(bundles.REPO / "examples" / f"{VECTOR_ADD}.fly")


class TestBench(FlyTestCase):
    def test_host_overhead(self):
        from fly import bench

        k = load(VECTOR_ADD).vector_add
        a = vec(1 << 20)
        t = bench.host_overhead(k, a, a, a, count=50, repeats=3)
        self.assertGreater(t.median_us, 0)
        self.assertEqual(len(t.repeats_us), 3)
        self.assertIn("µs", str(t))

    def test_command_line(self):
        env = bundles.python_env()
        r = subprocess.run([sys.executable, "-m", "fly.bench", str(example(VECTOR_ADD)),
                            "--count", "20", "--repeats", "2"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("vector_add: argument packing and checks", r.stdout)


if __name__ == "__main__":
    unittest.main()

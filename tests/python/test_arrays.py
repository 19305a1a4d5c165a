"""How the binding reads arrays and streams: DLPack capsules built here
through ctypes, PyTorch's tensors through a stand-in torch module (the
real one is not needed: the binding only reads a tensor's attributes), and
the stream= forms. No GPU: modules have no device (target sm_90).
"""
from __future__ import annotations

import sys
import types
import unittest

import bundles  # noqa: F401 (first: it points the tests at the build tree)
from bundles import example
from fakes import FAKE_BASE, DLPackArray, capsule_named
from test_binding import VECTOR_ADD, TILED_MMA, FlyTestCase, vec

import fly
from fly import _arrays, _streams


def vadd() -> fly.Kernel:
    return fly.load(example(VECTOR_ADD), target="sm_90").vector_add


class TestDLPack(FlyTestCase):
    def setUp(self):
        self.k = vadd()

    def tensor(self, i: int):
        return self.k._tls.buffers.argv[i].u.tensor

    def test_read_and_released(self):
        arrays = [DLPackArray((1 << 20,), ptr=FAKE_BASE + i * 4096) for i in range(3)]
        self.assertEqual(self.k.launch_config(*arrays).grid, (1024, 1, 1))
        for i, a in enumerate(arrays):
            self.assertEqual((a.exports, a.deleted), (1, 1))
            # The consumer renames the capsule, so that it no longer frees the tensor.
            self.assertTrue(capsule_named(a.capsule, b"used_dltensor"))
            t = self.tensor(i)
            self.assertEqual((t.data, t.dtype, t.rank, t.shape[0], t.stride[0]),
                             (FAKE_BASE + i * 4096, fly._native.DTYPE["f32"], 1, 1 << 20, 1))
        # A module without a device asks for no stream synchronisation.
        self.assertEqual(arrays[0].streams, [None])

    def test_byte_offset_and_strides(self):
        g = fly.load(example(TILED_MMA), target="sm_90").gemm_tile
        A = DLPackArray((256, 512), code=2, bits=16, strides=(1024, 1), byte_offset=256)
        B = DLPackArray((384, 512), code=2, bits=16)  # NULL strides: row-major
        C = DLPackArray((256, 384), versioned=True)
        self.assertEqual(g.launch_config(A, B, C).grid, (6, 4, 1))
        argv = g._tls.buffers.argv
        a, b = argv[0].u.tensor, argv[1].u.tensor
        self.assertEqual((a.data, list(a.stride[:2])), (FAKE_BASE + 256, [1024, 1]))
        self.assertEqual(list(b.stride[:2]), [512, 1])
        self.assertTrue(capsule_named(C.capsule, b"used_dltensor_versioned"))
        self.assertEqual([x.deleted for x in (A, B, C)], [1, 1, 1])

    def test_host_memory(self):
        a = DLPackArray((1024,), device=(1, 0))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'A'", "kDLCPU memory",
                              "DLPack device type 1", "needs kDLCUDA memory"):
            self.k.launch_config(a, vec(1024), vec(1024))
        self.assertEqual(a.exports, 0)  # refused on __dlpack_device__, before exporting

    def test_device_only_in_the_capsule(self):
        a = DLPackArray((1024,), device=(10, 0), report_device=False)
        with self.assertFails(fly.Status.ARGUMENTS, "kDLROCM memory"):
            self.k.launch_config(a, vec(1024), vec(1024))
        self.assertEqual((a.exports, a.deleted), (1, 1))  # exported, then released

    def test_cuda_managed_and_host_pinned_memory(self):
        for device in ((13, 0), (3, 0)):
            a = DLPackArray((1024,), device=device)
            self.assertEqual(self.k.launch_config(a, a, a).grid, (1, 1, 1))

    def test_element_types(self):
        for (code, bits, lanes), text in (((1, 32, 1), "uint32"), ((2, 32, 4), "float32x4"),
                                          ((5, 64, 1), "complex64")):
            a = DLPackArray((1024,), code=code, bits=bits, lanes=lanes)
            with self.assertFails(fly.Status.ARGUMENTS, f"its elements are {text} (DLPack)",
                                  "no Fly type"):
                self.k.launch_config(a, vec(1024), vec(1024))
            self.assertEqual(a.deleted, 1)
        with self.assertFails(fly.Status.ARGUMENTS, "takes f32 elements, not bf16"):
            self.k.launch_config(DLPackArray((1024,), code=4, bits=16), vec(1024), vec(1024))
        # DLPack's 8-bit floats: 10 e4m3fn, 11 e4m3fnuz, 12 e5m2, 13 e5m2fnuz.
        for code, name in ((10, "f8e4m3"), (11, "f8e4m3fnuz"), (12, "f8e5m2"),
                           (13, "f8e5m2fnuz")):
            with self.assertFails(fly.Status.ARGUMENTS, f"takes f32 elements, not {name}"):
                self.k.launch_config(DLPackArray((1024,), code=code, bits=8), vec(1024),
                                     vec(1024))

    def test_released_when_a_later_argument_fails(self):
        a, b = DLPackArray((1024,)), DLPackArray((1024,))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'C'"):
            self.k.launch_config(a, b, [1.0])
        self.assertEqual((a.deleted, b.deleted), (1, 1))
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'C'", "not f16"):
            self.k.launch_config(a, b, vec(1024, "<f2"))  # refused by libflyrt
        self.assertEqual((a.deleted, b.deleted), (2, 2))

    def test_released_when_the_launch_fails(self):
        a = DLPackArray((1024,))
        with self.assertFails(fly.Status.NO_DEVICE):
            self.k(a, a, a)
        self.assertEqual((a.exports, a.deleted), (3, 3))

    def test_not_a_capsule(self):
        class Liar:
            def __dlpack__(self, stream=None):
                return object()

        with self.assertFails(fly.Status.ARGUMENTS, "vector_add: argument 'A': __dlpack__() "
                              "returned something other than a DLPack capsule"):
            self.k.launch_config(Liar(), vec(1024), vec(1024))


# ---- PyTorch, through a stand-in -------------------------------------------------------


class _Dtype:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _fake_torch() -> types.ModuleType:
    """What the binding reads of PyTorch: Tensor (an exact type for the fast
    path), dtypes, and torch.cuda.is_available()."""
    torch = types.ModuleType("torch")
    for name in ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int8",
                 "int16", "bool", "uint8", "complex64"):
        setattr(torch, name, _Dtype(name))

    class Device:
        def __init__(self, kind: str, index) -> None:
            self.type, self.index = kind, index

        def __str__(self) -> str:
            return self.type if self.index is None else f"{self.type}:{self.index}"

    class Tensor:
        def __init__(self, shape, dtype=torch.float32, device=("cuda", 0), ptr=FAKE_BASE,
                     stride=None) -> None:
            self.shape, self.dtype, self._ptr = tuple(shape), dtype, ptr
            self.device = Device(*device)
            self._stride = stride or _arrays.contiguous_strides(self.shape)
            self.reads = 0

        def data_ptr(self) -> int:
            self.reads += 1
            return self._ptr

        def stride(self) -> tuple:
            return self._stride

        def get_device(self) -> int:
            return self.device.index if self.device.type == "cuda" else -1

    torch.Tensor = Tensor
    torch.cuda = types.SimpleNamespace(is_available=lambda: False, current_device=lambda: 0)
    torch._C = types.SimpleNamespace()
    return torch


class TestTorch(FlyTestCase):
    def setUp(self):
        self.saved = sys.modules.get("torch")
        self.torch = sys.modules["torch"] = _fake_torch()
        self.k = vadd()

    def tearDown(self):
        # Forget the stand-in: the binding remembers the torch it has seen.
        if self.saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved
        _arrays._torch_tensor = _arrays._NoTorch
        _arrays._torch_dtypes = {}
        _arrays._converters.pop(self.torch.Tensor, None)
        _streams._torch_current = None

    def test_tensors(self):
        T = self.torch.Tensor
        args = [T((4096,), ptr=FAKE_BASE + 4096 * i) for i in range(3)]
        self.assertEqual(self.k.launch_config(*args).grid, (4, 1, 1))
        self.assertIs(_arrays._torch_tensor, T)  # the fast path is on now
        t = self.k._tls.buffers.argv[2].u.tensor
        self.assertEqual((t.data, t.dtype, t.shape[0]), (FAKE_BASE + 8192, 8, 4096))

    def test_fast_path(self):
        # A kernel on "GPU 0" (this machine has none: only the packer is
        # made for one) takes an exact Tensor of the expected rank without
        # the full path.
        self.k.launch_config(*[vec(1024)] * 3)  # sees no torch yet
        T = self.torch.Tensor
        self.k.launch_config(T((8,)), T((8,)), T((8,)))  # the full path notes torch
        self.k._ordinal = 0
        self.k._pack = _arrays.specialise(self.k)
        calls = []
        full = self.k._pack.__globals__["convert"]
        self.k._pack.__globals__["convert"] = lambda *a: calls.append(a[3]) or full(*a)
        A, B = T((1 << 20,)), T((1 << 20,))
        other = T((1 << 20,), device=("cuda", 1))
        self.assertEqual(self.k.launch_config(A, B, A).grid, (1024, 1, 1))
        self.assertEqual(calls, [])
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'C'", "is on GPU 1",
                              "loaded for GPU 0", "device=1"):
            self.k.launch_config(A, B, other)
        self.assertEqual(calls, [other])
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'A'", "flattened", "2x4"):
            self.k.launch_config(T((2, 4)), B, A)  # another rank: the full path, then C's

    def test_cpu_tensor(self):
        T = self.torch.Tensor
        with self.assertFails(fly.Status.ARGUMENTS, "argument 'B'", "on the CPU",
                              "move it with .cuda()"):
            self.k.launch_config(T((1024,)), T((1024,), device=("cpu", None)), T((1024,)))

    def test_dtypes(self):
        T, torch = self.torch.Tensor, self.torch
        with self.assertFails(fly.Status.ARGUMENTS, "takes f32 elements, not bf16"):
            self.k.launch_config(T((1024,), torch.bfloat16), T((1024,)), T((1024,)))
        with self.assertFails(fly.Status.ARGUMENTS, "its elements are torch.uint8",
                              "no Fly type"):
            self.k.launch_config(T((1024,), torch.uint8), T((1024,)), T((1024,)))

    def test_strided_view(self):
        T = self.torch.Tensor
        with self.assertFails(fly.Status.ARGUMENTS, "its stride is 1; the tensor's is 2"):
            self.k.launch_config(T((1024,), stride=(2,)), T((1024,)), T((1024,)))

    def test_subclass(self):
        class Parameter(self.torch.Tensor):
            pass

        a = Parameter((2048,))
        self.assertEqual(self.k.launch_config(a, a, a).grid, (2, 1, 1))

    def test_default_stream_without_cuda(self):
        # PyTorch without CUDA: launches go to stream 0, and that is settled.
        self.assertEqual(_streams.current_stream(0), 0)
        self.assertIs(_streams._torch_current, _streams._zero)
        self.assertEqual(_streams.current_stream(-2), 0)


class TestStreams(unittest.TestCase):
    def test_forms(self):
        class TorchStream:
            cuda_stream = 0x1234

        class Protocol:
            def __cuda_stream__(self):
                return (0, 0x5678)

        class IntLike(int):
            pass

        self.assertEqual(_streams.to_stream(0), 0)
        self.assertEqual(_streams.to_stream(0xDEADBEEF), 0xDEADBEEF)
        self.assertEqual(_streams.to_stream(TorchStream()), 0x1234)
        self.assertEqual(_streams.to_stream(Protocol()), 0x5678)
        self.assertEqual(_streams.to_stream(IntLike(7)), 7)
        for bad in (True, "s", 1.5, None, object(), -1, 2**64):
            with self.assertRaises(fly.FlyError) as e:
                _streams.to_stream(bad)
            self.assertIn("give a stream handle", str(e.exception))

    def test_no_torch_no_stream(self):
        if "torch" in sys.modules:
            self.skipTest("PyTorch is imported")
        self.assertEqual(_streams.current_stream(0), 0)
        self.assertIsNone(_streams._torch_current)  # asked again next time


if __name__ == "__main__":
    unittest.main()

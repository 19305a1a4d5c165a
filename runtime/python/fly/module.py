"""Bundles loaded for a device (Module) and their kernels (Kernel).

    mod = fly.load("vadd.flyb")        # every kernel found and loaded now
    mod.vector_add(A, B, C)            # on PyTorch's current stream

Everything that allocates, loads or looks up happens in load() and
Module.kernel(); a launch only packs its arguments into a buffer made for
the kernel and thread, and calls flyrtKernelLaunch. That keeps launches
cheap and legal inside CUDA graph capture.
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading
from ctypes import addressof, byref, c_uint32, c_void_p
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional, Union

from . import _arrays, _streams
from ._arrays import release_all
from ._native import (ARG_SIZE, DYNAMIC, PARAM_CONST, PARAM_SCALAR, PARAM_TENSOR, FlyrtArg,
                      FlyrtBundle, FlyrtDevice, FlyrtKernel, FlyrtKernelEntry,
                      FlyrtLaunchConfig, FlyrtModule, FlyrtParamInfo, flyrt, text)
from ._streams import current_stream, to_stream
from .device import Device, device_count, resolve_device
from .errors import FlyError, KernelNotFoundError, Status

NO_DEVICE = "no device"  # fly.load(..., device=fly.NO_DEVICE, target="sm_90")

_KINDS = {PARAM_TENSOR: "tensor", PARAM_SCALAR: "scalar", PARAM_CONST: "const"}


class KernelInfo(NamedTuple):
    """One kernel specialisation of a bundle."""

    name: str        # "vector_add"
    spec: str        # its const bindings, "BLOCK=256 VEC=4" ("" when none)
    target: str      # "sm_90"
    image_kind: str  # "ptx", "cubin", "hsaco"


class LaunchConfig(NamedTuple):
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int  # bytes of dynamic shared memory


@dataclass(frozen=True)
class Param:
    """A kernel parameter, as the bundle records it.

    shape and stride are a tensor's layout leaves, flattened left to right,
    with None where the layout has `?` (known only at run time)."""

    name: str
    kind: str   # "tensor", "scalar" or "const"
    dtype: str  # a tensor's element type or a scalar's type, "f32"; "none" for a const
    type: str   # as Fly writes it: the element type of a tensor, "vec<f16, 8>", "int"
    layout: str  # a tensor's layout "(?,?):(?,1)"; a const's value; ""
    rank: int
    shape: tuple[Optional[int], ...]
    stride: tuple[Optional[int], ...]
    align: int  # bytes the kernel assumes of a tensor's pointer (0: none)
    stride_align: int = 0  # bytes each runtime stride (times the element size) is a multiple of
    max_span: int = 0  # the most bytes a tensor may span (0: any; AMD buffer accesses: 2**31)

    @property
    def value(self) -> Union[int, str, None]:
        """A const's value (an int when it is one)."""
        if self.kind != "const":
            return None
        try:
            return int(self.layout)
        except ValueError:
            return self.layout

    def __str__(self) -> str:
        if self.kind == "tensor":
            return f"{self.name}: tensor<{self.type}, {self.layout}>"
        if self.kind == "const":
            return f"const {self.name}: {self.type} = {self.layout}"
        return f"{self.name}: {self.type}"


def _param(info: FlyrtParamInfo) -> Param:
    def leaves(v: Any) -> tuple[Optional[int], ...]:
        return tuple(None if v[i] == DYNAMIC else v[i] for i in range(info.rank))

    return Param(name=text(info.name), kind=_KINDS.get(info.kind, str(info.kind)),
                 dtype=_arrays.dtype_name(info.dtype), type=text(info.type),
                 layout=text(info.layout), rank=info.rank, shape=leaves(info.shape),
                 stride=leaves(info.stride), align=info.align,
                 stride_align=info.stride_align, max_span=info.max_span)


def _dims(v: object, what: str) -> tuple[int, int, int]:
    """grid= or block= as three components; a shorter tuple is padded with 1
    (as CUDA's dim3), and 0 or None keeps the launch rule's component."""
    if v is None:
        return (0, 0, 0)
    dims = (v,) if isinstance(v, int) else tuple(v)  # type: ignore[arg-type]
    if not 1 <= len(dims) <= 3:
        raise FlyError(f"{what}={v!r}: give one to three components", Status.INVALID_VALUE)
    dims = tuple(0 if d is None else d for d in dims) + (1,) * (3 - len(dims))
    return dims  # type: ignore[return-value]


class _Buffers:
    """A kernel's launch buffers for one thread: the FlyrtArg array and the
    launch configuration override, with their addresses ready as c_void_p
    (ctypes passes those without converting)."""

    __slots__ = ("argv", "argv_p", "override", "override_p")

    def __init__(self, nargs: int) -> None:
        self.argv = (FlyrtArg * max(nargs, 1))()
        self.argv_p = c_void_p(addressof(self.argv))
        self.override = FlyrtLaunchConfig()
        self.override_p = c_void_p(addressof(self.override))


# FlyrtLaunchConfig: grid[3], block[3], shared_bytes, all uint32.
_OVERRIDE = struct.Struct("=7I").pack_into
_CONFIG = struct.Struct("=7I").unpack_from


class Kernel:
    """One kernel specialisation, ready to launch: kernel(*args, stream=None,
    grid=None, block=None, shared=None).

    args are the kernel's tensor and scalar parameters in order (consts are
    compiled in): torch tensors or objects offering __dlpack__ or
    __cuda_array_interface__ for tensors, ints and floats for scalars.
    stream: an int handle, a torch.cuda.Stream or an object with
    __cuda_stream__; by default PyTorch's current stream of the module's
    GPU. grid, block (an int or up to three) and shared (bytes) replace what
    the launch rule gives; a component given as 0 keeps the rule's.
    """

    def __init__(self, module: "Module", handle: FlyrtKernel) -> None:
        lib = flyrt()
        self.module = module  # keeps the module, which owns the kernel, alive
        self._k = c_void_p(handle.ptr)
        self.name = text(lib.flyrtKernelName(handle))
        self.spec = text(lib.flyrtKernelSpec(handle))
        shape = (c_uint32 * 3)()
        # The thread-block cluster it was compiled for, (1, 1, 1) without
        # one; its launches go in whole clusters (libflyrt checks the grid).
        self.cluster: tuple[int, int, int] = (
            tuple(shape) if lib.flyrtKernelCluster(handle, shape) else (1, 1, 1))
        params = []
        for i in range(lib.flyrtKernelParamCount(handle)):
            info = FlyrtParamInfo()
            lib.check(lib.flyrtKernelParam(handle, i, byref(info)))
            params.append(_param(info))
        self.params: tuple[Param, ...] = tuple(params)
        args = [p for p in params if p.kind != "const"]
        # The argument plan: what the packer and its messages need, by argument.
        self._nargs = len(args)
        self._arg_names = tuple(p.name for p in args)
        self._arg_kinds = tuple(PARAM_TENSOR if p.kind == "tensor" else PARAM_SCALAR
                                for p in args)
        self._arg_types = tuple(p.type for p in args)
        self._arg_ranks = tuple(p.rank for p in args)
        device = module.device
        self._ordinal = device.ordinal if device is not None else -2
        self._backend = (device.backend if device is not None
                         else "hip" if module.target.startswith("gfx") else "cuda")
        self._tls = threading.local()
        self._pack = _arrays.specialise(self)
        self._launch = lib.launch
        self._config_for = lib.launch_config

    @property
    def consts(self) -> dict[str, Union[int, str, None]]:
        """The const bindings this specialisation was compiled with."""
        return {p.name: p.value for p in self.params if p.kind == "const"}

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def __repr__(self) -> str:
        return f"<fly.Kernel {self.signature} for {self.module.target}>"

    def _buffers(self) -> _Buffers:
        b = _Buffers(self._nargs)
        self._tls.buffers = b
        return b

    def __call__(self, *args: Any, stream: Any = None, grid: Any = None, block: Any = None,
                 shared: Optional[int] = None) -> None:
        try:
            b = self._tls.buffers
        except AttributeError:
            b = self._buffers()
        if len(args) != self._nargs:
            raise self._count_error(args)
        if stream is None:
            # PyTorch's getter straight away once it is known (one call less).
            current, ordinal = _streams._torch_current, self._ordinal
            if current is not None and ordinal >= 0:
                s = current(ordinal)
            else:
                s = current_stream(ordinal)
        else:
            s = to_stream(stream)
        override = None
        if grid is not None or block is not None or shared is not None:
            override = self._override(b, grid, block, shared)
        pending = self._pack(b.argv, args, s)
        try:
            status = self._launch(self._k, b.argv_p, self._nargs, s, override)
        finally:
            if pending is not None:  # DLPack tensors, read by now
                release_all(pending)
        if status:
            raise flyrt().error(status)

    def bind(self, *args: Any, rebind: tuple[int, ...] = ()) -> "BoundLaunch":
        """The arguments packed once, to launch again and again with new data
        pointers for the tensor arguments at the positions rebind: see
        BoundLaunch. The arguments are checked as a launch checks them; the
        tensors must be torch tensors (read in place, not through DLPack)."""
        return BoundLaunch(self, args, rebind)

    def launch_config(self, *args: Any) -> LaunchConfig:
        """The grid, block and dynamic shared memory the launch rule gives for
        these arguments, after checking them as a launch would."""
        try:
            b = self._tls.buffers
        except AttributeError:
            b = self._buffers()
        if len(args) != self._nargs:
            raise self._count_error(args)
        s = current_stream(self._ordinal)
        pending = self._pack(b.argv, args, s)
        try:
            # The override buffer receives the configuration: a thread does
            # one of the two at a time.
            status = self._config_for(self._k, b.argv_p, self._nargs, b.override_p)
        finally:
            if pending is not None:
                release_all(pending)
        if status:
            raise flyrt().error(status)
        v = _CONFIG(b.override)
        return LaunchConfig(v[0:3], v[3:6], v[6])

    def _override(self, b: _Buffers, grid: Any, block: Any, shared: Optional[int]) -> c_void_p:
        try:
            g, k = _dims(grid, "grid"), _dims(block, "block")
            _OVERRIDE(b.override, 0, *g, *k, shared or 0)
        except (struct.error, TypeError):
            raise FlyError(f"{self.name}: grid={grid!r}, block={block!r}, shared={shared!r}: "
                           f"each is a count from 0 to 2**32 - 1", Status.INVALID_VALUE) from None
        return b.override_p

    def _count_error(self, args: tuple) -> FlyError:
        names = f" ({', '.join(self._arg_names)})" if self._arg_names else ""
        return FlyError(f"{self.name}: takes {self._nargs} arguments{names}, "
                        f"{len(args)} given", Status.ARGUMENTS)


# A FlyrtArg's tensor data pointer: after the kind (4 bytes) and padding.
_DATA = struct.Struct("=Q").pack_into
_DATA_AT = 8


class BoundLaunch:
    """A kernel's arguments packed once (Kernel.bind(*args, rebind=...)),
    launched by bound(*pointers, stream=None) with new data pointers for the
    tensor arguments at the positions rebind, in that order, and every other
    argument as packed. It is for a caller that launches one kernel over and
    over on tensors of the same shapes, strides and types, which it has
    checked (a library's hot path: the packing of every argument is what a
    small launch spends most of its host time on). libflyrt still checks
    each new pointer (GPU memory of the kernel's GPU) and runs the launch
    rule at each launch; the stream is PyTorch's current one by default.
    The tensors packed once are held by the bound launch, so that their
    memory outlives it."""

    def __init__(self, kernel: Kernel, args: tuple, rebind: tuple[int, ...]) -> None:
        if len(args) != kernel._nargs:
            raise kernel._count_error(args)
        for i in rebind:
            if not 0 <= i < kernel._nargs or kernel._arg_kinds[i] != PARAM_TENSOR:
                raise FlyError(f"{kernel.name}: bind: rebind names argument {i}, which is not "
                               f"a tensor parameter", Status.INVALID_VALUE)
        self._kernel = kernel
        self._buffers = _Buffers(kernel._nargs)
        pending = kernel._pack(self._buffers.argv, args, current_stream(kernel._ordinal))
        if pending is not None:
            release_all(pending)
            raise FlyError(f"{kernel.name}: bind takes torch tensors (their memory read in "
                           f"place at each launch), not arrays read through DLPack",
                           Status.ARGUMENTS)
        self._at = tuple(i * ARG_SIZE + _DATA_AT for i in rebind)
        # The arguments packed for good (not rebound at each launch) are
        # held, so that their memory lives as long as the packed pointers.
        self._held = tuple(x for i, x in enumerate(args) if i not in rebind)
        # One launch at a time patches the buffer.
        self._lock = threading.Lock()

    def __call__(self, *pointers: int, stream: Any = None) -> None:
        k = self._kernel
        if len(pointers) != len(self._at):
            raise FlyError(f"{k.name}: the bound launch takes {len(self._at)} pointers, "
                           f"{len(pointers)} given", Status.ARGUMENTS)
        if stream is None:
            current, ordinal = _streams._torch_current, k._ordinal
            s = current(ordinal) if current is not None and ordinal >= 0 else current_stream(
                ordinal)
        else:
            s = to_stream(stream)
        b = self._buffers
        with self._lock:
            for at, p in zip(self._at, pointers):
                _DATA(b.argv, at, p)
            status = k._launch(k._k, b.argv_p, k._nargs, s, None)
        if status:
            raise flyrt().error(status)


class Module:
    """A bundle's kernels for one device (or, without one, for a target: such a
    module checks arguments and computes launch configurations, but does not
    launch). Kernels are attributes: mod.vector_add, or mod.kernel(name,
    spec) to pick among several specialisations."""

    def __init__(self, bundle: FlyrtBundle, device: Optional[Device], target: Optional[str],
                 name: str) -> None:
        lib = flyrt()
        self._lib = lib  # kept for __del__, which may run when the module globals are gone
        self.name = name
        self.device = device
        handle = FlyrtModule()
        lib.check(lib.flyrtModuleCreate(bundle, device.handle if device else FlyrtDevice(),
                                        target.encode() if target else None, byref(handle)))
        self._handle = handle
        self.target = text(lib.flyrtModuleTarget(handle))
        self.compiler = text(lib.flyrtBundleCompiler(bundle))
        self.source_hash = text(lib.flyrtBundleSourceHash(bundle))
        entries = []
        for i in range(lib.flyrtBundleKernelCount(bundle)):
            e = FlyrtKernelEntry()
            lib.check(lib.flyrtBundleKernelEntry(bundle, i, byref(e)))
            entries.append(KernelInfo(text(e.name), text(e.spec), text(e.target),
                                      text(e.image_kind)))
        self.targets: tuple[str, ...] = tuple(sorted({e.target for e in entries}))
        seen: dict[tuple[str, str], KernelInfo] = {}
        for e in entries:
            if e.target == self.target:
                seen.setdefault((e.name, e.spec), e)
        self.kernels: tuple[KernelInfo, ...] = tuple(seen.values())
        self._by_handle: dict[int, Kernel] = {}
        self._by_request: dict[tuple[str, Optional[str]], Kernel] = {}
        self._lock = threading.Lock()
        # Every specialisation is looked up (and its image loaded into the
        # device) now, so that no launch, first ones included, loads anything.
        for e in self.kernels:
            self.kernel(e.name, e.spec)

    def kernel(self, name: str, spec: Union[str, dict, None] = None) -> Kernel:
        """Kernel `name`; spec picks a specialisation among several: its const
        bindings as "BLOCK=128 VEC=4" or {"BLOCK": 128} (a subset that
        picks one is enough)."""
        if isinstance(spec, dict):
            spec = " ".join(f"{k}={_const_text(v)}" for k, v in spec.items())
        key = (name, spec or None)
        k = self._by_request.get(key)
        if k is not None:
            return k
        lib = self._lib
        handle = FlyrtKernel()
        status = lib.flyrtModuleGetKernel(self._handle, name.encode(),
                                          spec.encode() if spec else None, byref(handle))
        if status:
            e = lib.error(status)
            if status == Status.NOT_FOUND:
                raise KernelNotFoundError(e.message, status, e.status_name)
            raise e
        with self._lock:
            k = self._by_handle.get(handle.ptr)
            if k is None:
                k = self._by_handle[handle.ptr] = Kernel(self, handle)
            self._by_request[key] = k
        return k

    def __getattr__(self, name: str) -> Kernel:
        # Only called for names that are not attributes; a kernel found is
        # then cached as one, so later accesses cost a dictionary lookup.
        if name.startswith("_"):
            raise AttributeError(name)
        k = self.kernel(name)
        self.__dict__[name] = k
        return k

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {e.name for e in self.kernels})

    def __repr__(self) -> str:
        where = f"GPU {self.device.ordinal}" if self.device else "no device"
        names = ", ".join(sorted({e.name for e in self.kernels}))
        return f"<fly.Module {self.name} for {self.target} on {where}: {names}>"

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.ptr:
            try:
                self._lib.flyrtModuleDestroy(handle)
            except Exception:  # interpreter shutdown: the process frees everything
                pass
            handle.ptr = None


def _const_text(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


def _open_bundle(source: Source) -> tuple[FlyrtBundle, str]:
    lib = flyrt()
    bundle = FlyrtBundle()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        buf = ctypes.create_string_buffer(data, len(data))
        lib.check(lib.flyrtBundleCreateFromMemory(buf, len(data), byref(bundle)))
        return bundle, "<bytes>"
    path = os.fspath(source)
    lib.check(lib.flyrtBundleCreateFromFile(os.fsencode(path), byref(bundle)))
    return bundle, path


def load(source: Source, *, device: Any = None, target: Optional[str] = None) -> Module:
    """Loads a bundle (a path, or its bytes) and every kernel in it.

    device  the GPU: an ordinal, a fly.Device, a torch.device, "cuda:N", or
            fly.NO_DEVICE; None: PyTorch's current GPU (GPU 0 without
            PyTorch), or no device when the machine has no GPU and a
            target is given
    target  whose images to use ("sm_90"); None: the best for the device.
            Without a device, the target the module checks arguments for.
    """
    dev: Optional[Device] = None
    if device is NO_DEVICE or (isinstance(device, str) and device == NO_DEVICE):
        if not target:
            raise FlyError("a module without a device needs a target (target='sm_90')",
                           Status.INVALID_VALUE)
    elif device is not None:
        dev = resolve_device(device)
    elif not (target and device_count() == 0):
        from .device import current_ordinal

        try:
            dev = Device(current_ordinal())
        except FlyError as e:
            if e.status in (Status.NO_DRIVER, Status.NO_DEVICE) and device_count() == 0:
                raise FlyError(f"{e.message} (to load without a GPU, give a target: "
                               f"fly.load(..., target='sm_90'))", e.status,
                               e.status_name) from None
            raise
    bundle, name = _open_bundle(source)
    lib = flyrt()
    try:
        return Module(bundle, dev, target, name)
    finally:
        lib.flyrtBundleDestroy(bundle)  # the module keeps what it needs

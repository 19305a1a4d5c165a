"""Launch arguments: Python objects written into a FlyrtArg array.

A PyTorch tensor, an object offering DLPack (__dlpack__) or the CUDA Array
Interface (__cuda_array_interface__, v2 and v3) becomes a FlyrtTensor; an
int or a float a scalar. Only what an object *is* is decided here (its data
pointer, element type, shape and strides, in elements); whether it suits
the kernel (dtype, rank, static layout leaves, alignment, scalar ranges) is
libflyrt's to check, so that the C and Python APIs say the same things.
The one check made here is the device an array lives on, which libflyrt
cannot know from a pointer on a machine without the device.

Speed: a kernel's packer (specialise) runs on every launch. It is
generated for the kernel's signature, so it has no loop and its offsets
and ranks are constants; a tensor is written with one struct.pack_into
call straight into the ctypes array (no ctypes objects are made); exact
torch.Tensor, int and float are recognised by `type(a) is` before anything
else; every other type takes the full path (convert), which classifies a
type once and remembers its converter.
"""
from __future__ import annotations

import ctypes
import struct
import sys
from typing import Any, Callable, Optional

from ._native import (ARG_FLOAT, ARG_INT, ARG_SIZE, ARG_TENSOR, ARG_VALUE, DTYPE, DTYPES,
                      MAX_RANK, PARAM_SCALAR, PARAM_TENSOR, TENSOR_SHAPE, TENSOR_STRIDE)
from .errors import FlyError, Status

# ---- writing FlyrtArg records ------------------------------------------------------

# A tensor of rank r, from the start of its FlyrtArg: kind, 4 bytes of
# padding, data, dtype, rank, r shape leaves, then (after the unused shape
# slots) r stride leaves. '=': native byte order, standard sizes, no
# alignment, so the offsets are exactly those spelled here.
assert ARG_VALUE == 8 and TENSOR_SHAPE == 24 and TENSOR_STRIDE == 24 + 8 * MAX_RANK
_TENSOR = tuple(struct.Struct(f"=i4xQii{r}q{(MAX_RANK - r) * 8}x{r}q").pack_into
                for r in range(MAX_RANK + 1))
_INT = struct.Struct("=i4xq").pack_into
_FLOAT = struct.Struct("=i4xd").pack_into

Release = Callable[[], None]  # what a converter gives back to run after the launch


class _NoTorch:  # matches no argument until PyTorch is seen
    pass


_torch_tensor: type = _NoTorch
_torch_dtypes: dict[Any, int] = {}


def specialise(kernel: Any) -> Callable[[Any, tuple, int], Optional[list[Release]]]:
    """The packer of one kernel: pack(argv, args, stream) writes args (whose
    number the caller has checked) into argv, the kernel's FlyrtArg array,
    and returns what must be released once libflyrt has read them (DLPack
    tensors), or None.

    It is generated for the kernel's signature: each argument's offset, the
    rank its parameter expects and the GPU are constants of the code, so a
    launch runs no loop and makes no decision that can be made now. An
    exact torch.Tensor of that rank on that GPU, an int and a float are
    written here; anything else, and any doubt, takes the full path
    (convert), which makes every check and says what is wrong."""
    n = kernel._nargs
    lines = ["def pack(argv, args, stream):"]
    if n:
        lines.append(f"    {''.join(f'a{i}, ' for i in range(n))}= args")
    lines += ["    T = arrays._torch_tensor", "    D = arrays._torch_dtypes", "    pending = None",
              "    try:"]
    for i in range(n):
        a, off = f"a{i}", i * ARG_SIZE
        full = f"pending = convert(kernel, argv, {off}, {a}, stream, pending)"
        if kernel._arg_kinds[i] == PARAM_TENSOR:
            # get_device(): the GPU's ordinal, -1 on the CPU; a kernel without a
            # device has ordinal -2, which no tensor matches. The leaves are
            # indexed, not starred: a call with positional arguments only is
            # much cheaper than one that builds a tuple.
            r = kernel._arg_ranks[i]
            shape = "".join(f"s[{j}], " for j in range(r))
            stride = "".join(f"t[{j}], " for j in range(r))
            lines += [
                f"        if (type({a}) is T and {a}.get_device() == {kernel._ordinal}",
                f"                and len(s := {a}.shape) == {r} and (dt := D.get({a}.dtype))):",
                f"            t = {a}.stride()",
                f"            TENSOR[{r}](argv, {off}, {ARG_TENSOR}, {a}.data_ptr(), dt, {r}, "
                f"{shape}{stride})",
                "        else:",
                f"            {full}"]
        else:
            lines += [
                f"        if type({a}) is float:",
                f"            FLOAT(argv, {off}, {ARG_FLOAT}, {a})",
                f"        elif type({a}) is int and {-(2**63)} <= {a} < {2**63}:",
                f"            INT(argv, {off}, {ARG_INT}, {a})",
                "        else:",
                f"            {full}"]
    if not n:
        lines.append("        pass")
    lines += ["    except BaseException:",
              "        if pending is not None:",
              "            release_all(pending)",
              "        raise",
              "    return pending"]
    scope = {"arrays": sys.modules[__name__], "kernel": kernel, "convert": convert,
             "release_all": release_all, "TENSOR": _TENSOR, "INT": _INT, "FLOAT": _FLOAT}
    exec(compile("\n".join(lines), f"<fly packer of {kernel.name}>", "exec"), scope)
    return scope["pack"]


def convert(kernel: Any, argv: Any, off: int, a: Any, stream: int,
            pending: Optional[list[Release]]) -> Optional[list[Release]]:
    """The full path for one argument, of any type, with every check; returns
    pending with what must be released after the launch added."""
    release = (_converters.get(type(a)) or _classify(a))(kernel, argv, off, a, stream)
    if release is not None:
        if pending is None:
            pending = []
        pending.append(release)
    return pending


def release_all(pending: list[Release]) -> None:
    for release in pending:
        release()


# ---- messages ----------------------------------------------------------------------


def _bad(kernel: Any, off: int, what: str, status: int = Status.ARGUMENTS) -> FlyError:
    """An error about argument number off // ARG_SIZE, worded as libflyrt's."""
    name = kernel._arg_names[off // ARG_SIZE]
    return FlyError(f"{kernel.name}: argument '{name}': {what}", status)


def _takes(kernel: Any, off: int) -> str:
    """What the parameter takes, for messages: "a tensor", "a number (i32)"."""
    i = off // ARG_SIZE
    if kernel._arg_kinds[i] == PARAM_TENSOR:
        return "a tensor"
    return f"a number ({kernel._arg_types[i]})"


def _write_tensor(kernel: Any, argv: Any, off: int, data: int, dtype: int,
                  shape: tuple[int, ...], stride: tuple[int, ...]) -> None:
    rank = len(shape)
    if rank > MAX_RANK:
        raise _bad(kernel, off, f"the array has {rank} dimensions; a Fly tensor has at most "
                   f"{MAX_RANK} (flattened) modes")
    try:
        _TENSOR[rank](argv, off, ARG_TENSOR, data, dtype, rank, *shape, *stride)
    except struct.error as e:
        raise _bad(kernel, off, f"its pointer, shape or strides do not fit 64 bits ({e})")


def _check_gpu_index(kernel: Any, off: int, index: int, what: str) -> None:
    if kernel._ordinal >= 0 and index != kernel._ordinal:
        raise _bad(kernel, off, f"{what} is on GPU {index}, and the module was loaded for "
                   f"GPU {kernel._ordinal} (fly.load(..., device={index}) loads it there)")


# ---- PyTorch -----------------------------------------------------------------------


def _note_torch(torch: Any) -> None:
    """Turns the fast path on for torch.Tensor, with its element types."""
    global _torch_tensor, _torch_dtypes
    names = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
             "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
             "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
             "float8_e4m3fnuz": "f8e4m3fnuz", "float8_e5m2fnuz": "f8e5m2fnuz"}
    dtypes = {getattr(torch, n): DTYPE[f] for n, f in names.items() if hasattr(torch, n)}
    _torch_dtypes = dtypes
    _torch_tensor = torch.Tensor


def _from_torch(kernel: Any, argv: Any, off: int, a: Any, stream: int) -> None:
    """A torch.Tensor (or subclass), with the checks the fast path skipped."""
    dt = _torch_dtypes.get(a.dtype)
    if dt is None:
        raise _bad(kernel, off, f"its elements are {a.dtype}, which have no Fly type")
    device = a.device
    if device.type != "cuda":
        raise _bad(kernel, off, f"the tensor is on the {device.type.upper()} "
                   f"({device}); the kernel needs GPU memory: move it with .cuda()")
    _check_gpu_index(kernel, off, a.get_device(), "the tensor")
    _write_tensor(kernel, argv, off, a.data_ptr(), dt, tuple(a.shape), tuple(a.stride()))


# ---- DLPack ------------------------------------------------------------------------

# dlpack.h: DLDeviceType values the kernel can read from, per backend; the
# first of each is the one that has a GPU ordinal.
kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLROCMHost, kDLCUDAManaged = 1, 2, 3, 10, 11, 13
_DL_DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL",
                    7: "kDLVulkan", 8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM",
                    11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                    14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon", 17: "kDLMAIA"}
GPU_DEVICES = {"cuda": (kDLCUDA, kDLCUDAHost, kDLCUDAManaged), "hip": (kDLROCM, kDLROCMHost)}

# DLDataType (code, bits, lanes) -> FlyrtDtype. Codes: 0 int, 1 uint,
# 2 float, 4 bfloat, 6 bool, 10 float8_e4m3fn, 11 float8_e4m3fnuz,
# 12 float8_e5m2, 13 float8_e5m2fnuz.
_DL_DTYPES = {(0, 8, 1): DTYPE["i8"], (0, 16, 1): DTYPE["i16"], (0, 32, 1): DTYPE["i32"],
              (0, 64, 1): DTYPE["i64"], (2, 16, 1): DTYPE["f16"], (2, 32, 1): DTYPE["f32"],
              (2, 64, 1): DTYPE["f64"], (4, 16, 1): DTYPE["bf16"], (6, 8, 1): DTYPE["i1"],
              (10, 8, 1): DTYPE["f8e4m3"], (12, 8, 1): DTYPE["f8e5m2"],
              (11, 8, 1): DTYPE["f8e4m3fnuz"], (13, 8, 1): DTYPE["f8e5m2fnuz"]}
_DL_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat",
                  5: "complex", 6: "bool"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DLDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# The capsule keeps the pointer it is renamed with: these buffers live as
# long as the module, longer than any capsule.
_USED = ctypes.create_string_buffer(b"used_dltensor")
_USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")


def open_capsule(capsule: object) -> tuple[DLTensor, Release]:
    """Takes the DLManagedTensor (or ...Versioned) out of a DLPack capsule, as
    its consumer: the capsule is renamed "used_..." so that it no longer
    frees the tensor, and the returned release calls the tensor's deleter."""
    if _api.PyCapsule_IsValid(capsule, b"dltensor"):
        address = _api.PyCapsule_GetPointer(capsule, b"dltensor")
        managed: Any = DLManagedTensor.from_address(address)
        used = _USED
    elif _api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        address = _api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        managed = DLManagedTensorVersioned.from_address(address)
        if managed.version.major > 1:
            raise FlyError(f"a DLPack tensor of version {managed.version.major}."
                           f"{managed.version.minor}; this binding reads version 1",
                           Status.ARGUMENTS)
        used = _USED_VERSIONED
    else:
        raise FlyError("__dlpack__() returned something other than a DLPack capsule, or one "
                       "already used", Status.ARGUMENTS)
    _api.PyCapsule_SetName(capsule, ctypes.cast(used, ctypes.c_char_p))
    deleter = managed.deleter

    def release() -> None:
        if deleter:
            DLDeleter(deleter)(address)

    return managed.dl_tensor, release


def _dl_device_name(device_type: int) -> str:
    return _DL_DEVICE_NAMES.get(device_type, f"device type {device_type}")


def _check_dl_device(kernel: Any, off: int, device_type: int, device_id: int) -> None:
    accepted = GPU_DEVICES[kernel._backend]
    if device_type not in accepted:
        raise _bad(kernel, off, f"the array is in {_dl_device_name(device_type)} memory "
                   f"(DLPack device type {device_type}); the kernel needs "
                   f"{_dl_device_name(accepted[0])} memory")
    if device_type == accepted[0]:
        _check_gpu_index(kernel, off, device_id, "the array")


def _from_dlpack(kernel: Any, argv: Any, off: int, a: Any, stream: int) -> Release:
    where = getattr(a, "__dlpack_device__", None)
    if where is not None:  # checked first: exporting may copy or synchronise
        device_type, device_id = where()
        _check_dl_device(kernel, off, int(device_type), int(device_id))
    if kernel._ordinal >= 0:
        # The producer orders its pending work before our stream. CUDA forbids
        # 0 there: the legacy default stream is 1.
        consumer = stream if stream or kernel._backend == "hip" else 1
        try:
            capsule = a.__dlpack__(stream=consumer)
        except TypeError:  # a producer older than the stream argument
            capsule = a.__dlpack__()
    else:
        capsule = a.__dlpack__()
    try:
        t, release = open_capsule(capsule)
    except FlyError as e:
        raise _bad(kernel, off, e.message) from None
    try:
        _check_dl_device(kernel, off, t.device.device_type, t.device.device_id)
        key = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        dt = _DL_DTYPES.get(key)
        if dt is None:
            lanes = f"x{t.dtype.lanes}" if t.dtype.lanes != 1 else ""
            code = _DL_CODE_NAMES.get(t.dtype.code, f"code {t.dtype.code} ")
            raise _bad(kernel, off, f"its elements are {code}{t.dtype.bits}{lanes} "
                       f"(DLPack), which have no Fly type")
        ndim = t.ndim
        shape = tuple(t.shape[i] for i in range(ndim))
        if t.strides:
            stride = tuple(t.strides[i] for i in range(ndim))
        else:  # NULL: compact row-major
            stride = contiguous_strides(shape)
        _write_tensor(kernel, argv, off, (t.data or 0) + t.byte_offset, dt, shape, stride)
    except BaseException:
        release()
        raise
    return release


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements."""
    stride, step = [], 1
    for n in reversed(shape):
        stride.append(step)
        step *= max(n, 1)
    return tuple(reversed(stride))


# ---- the CUDA Array Interface ------------------------------------------------------

# typestr: byte order ('<' little, '|' not applicable, '=' native), kind, size.
_CAI_KINDS = {("i", 1): "i8", ("i", 2): "i16", ("i", 4): "i32", ("i", 8): "i64",
              ("f", 2): "f16", ("f", 4): "f32", ("f", 8): "f64", ("b", 1): "i1"}


def _from_cai(kernel: Any, argv: Any, off: int, a: Any, stream: int) -> None:
    """__cuda_array_interface__ (v2, v3). The device is not part of the
    interface: libflyrt checks that the pointer is memory of the kernel's
    GPU when it launches. v3's "stream" is not waited for: the producer's
    work must be ordered before the launch stream already (as it is when
    both are PyTorch's current stream)."""
    cai = a.__cuda_array_interface__
    try:
        shape = tuple(int(n) for n in cai["shape"])
        typestr = cai["typestr"]
        data = cai["data"][0] or 0
    except (KeyError, TypeError, IndexError) as e:
        raise _bad(kernel, off, f"its __cuda_array_interface__ lacks or mangles {e}")
    if cai.get("mask") is not None:
        raise _bad(kernel, off, "its __cuda_array_interface__ has a mask, which Fly kernels "
                   "do not take")
    order, kind, size = typestr[:1], typestr[1:2], typestr[2:]
    little = sys.byteorder == "little"
    fly = _CAI_KINDS.get((kind, int(size) if size.isdigit() else 0))
    if fly is None or order not in ("|", "=", "<" if little else ">"):
        raise _bad(kernel, off, f"its elements are '{typestr}' (__cuda_array_interface__), "
                   f"which have no Fly type")
    itemsize = int(size)
    byte_strides = cai.get("strides")
    if byte_strides is None:
        stride = contiguous_strides(shape)
    else:
        stride = []
        for s in byte_strides:
            if s % itemsize:
                raise _bad(kernel, off, f"a stride of {s} bytes is not a whole number of "
                           f"{itemsize}-byte elements")
            stride.append(s // itemsize)
        stride = tuple(stride)
    _write_tensor(kernel, argv, off, data, DTYPE[fly], shape, stride)


# ---- numbers and everything else ---------------------------------------------------


def _from_int(kernel: Any, argv: Any, off: int, a: Any, stream: int) -> None:
    v = a.__index__()
    if not -(2**63) <= v < 2**63:
        if kernel._arg_kinds[off // ARG_SIZE] == PARAM_SCALAR:
            raise _bad(kernel, off, f"{v} does not fit {kernel._arg_types[off // ARG_SIZE]}")
        raise _bad(kernel, off, f"the kernel takes {_takes(kernel, off)}, not an integer")
    _INT(argv, off, ARG_INT, v)


def _from_float(kernel: Any, argv: Any, off: int, a: Any, stream: int) -> None:
    _FLOAT(argv, off, ARG_FLOAT, float(a))


def _not_an_argument(kernel: Any, argv: Any, off: int, a: Any, stream: int) -> None:
    what = type(a).__name__
    if kernel._arg_kinds[off // ARG_SIZE] == PARAM_SCALAR:
        raise _bad(kernel, off, f"the kernel takes {_takes(kernel, off)}, not a {what}")
    raise _bad(kernel, off, f"a {what} is not an array: pass a torch.Tensor, or an object with "
               f"__dlpack__ or __cuda_array_interface__ (a CuPy, JAX or Numba array)")


Converter = Callable[[Any, Any, int, Any, int], Optional[Release]]
_converters: dict[type, Converter] = {bool: _from_int}


def _classify(a: Any) -> Converter:
    """The converter for a's type, remembered when the type decides it."""
    t = type(a)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        _note_torch(torch)
        chosen: Converter = _from_torch
    elif hasattr(t, "__dlpack__"):
        chosen = _from_dlpack
    elif hasattr(t, "__cuda_array_interface__"):
        chosen = _from_cai
    elif hasattr(t, "__index__"):
        chosen = _from_int
    elif hasattr(t, "__float__"):
        chosen = _from_float
    elif hasattr(a, "__dlpack__"):  # set on the object itself: not the type's to decide
        return _from_dlpack
    elif hasattr(a, "__cuda_array_interface__"):
        return _from_cai
    else:
        return _not_an_argument
    _converters[t] = chosen
    return chosen


def dtype_name(code: int) -> str:
    return DTYPES[code] if 0 <= code < len(DTYPES) else "unknown"

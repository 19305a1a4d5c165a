"""libflyrt through ctypes: finding the library, and fly/runtime.h restated.

The structures below mirror fly/runtime.h field for field; the header is
the contract, and tests/python/test_binding.py checks the sizes and offsets
the launch path relies on. The library is loaded on first use, not on
`import fly`, so that the package imports (and says what is missing) on a
machine without it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (POINTER, Structure, Union, c_bool, c_char_p, c_double, c_int, c_int64,
                    c_size_t, c_uint32, c_void_p)
from pathlib import Path

from .errors import FlyError, LibraryNotFoundError

MAX_RANK = 16
DYNAMIC = -(2**63)  # FLYRT_DYNAMIC: a layout leaf known only at run time

# FlyrtParamKind and FlyrtArgKind.
PARAM_TENSOR, PARAM_SCALAR, PARAM_CONST = 1, 2, 3
ARG_TENSOR, ARG_INT, ARG_FLOAT = 1, 2, 3

# FlyrtDtype, numbered as in the bundle format.
DTYPES = ("none", "i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "f8e4m3",
          "f8e5m2", "other", "f8e4m3fnuz", "f8e5m2fnuz")
DTYPE = {name: i for i, name in enumerate(DTYPES)}
DTYPE_SIZE = (0, 1, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1, 0, 1, 1)

# FlyrtBackend.
BACKENDS = {1: "cuda", 2: "hip"}


# Handles are one-pointer structures passed by value.
class FlyrtDevice(Structure):
    _fields_ = [("ptr", c_void_p)]


class FlyrtBundle(Structure):
    _fields_ = [("ptr", c_void_p)]


class FlyrtModule(Structure):
    _fields_ = [("ptr", c_void_p)]


class FlyrtKernel(Structure):
    _fields_ = [("ptr", c_void_p)]


class FlyrtKernelEntry(Structure):
    _fields_ = [("name", c_char_p), ("spec", c_char_p), ("target", c_char_p),
                ("image_kind", c_char_p)]


class FlyrtParamInfo(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("dtype", c_int), ("type", c_char_p),
                ("layout", c_char_p), ("rank", c_int), ("shape", c_int64 * MAX_RANK),
                ("stride", c_int64 * MAX_RANK), ("align", c_uint32),
                ("stride_align", c_uint32), ("max_span", c_uint32)]


class FlyrtTensor(Structure):
    _fields_ = [("data", c_void_p), ("dtype", c_int), ("rank", c_int),
                ("shape", c_int64 * MAX_RANK), ("stride", c_int64 * MAX_RANK)]


class _FlyrtArgValue(Union):
    _fields_ = [("tensor", FlyrtTensor), ("i", c_int64), ("f", c_double)]


class FlyrtArg(Structure):
    _fields_ = [("kind", c_int), ("u", _FlyrtArgValue)]


class FlyrtLaunchConfig(Structure):
    _fields_ = [("grid", c_uint32 * 3), ("block", c_uint32 * 3), ("shared_bytes", c_uint32)]


# Where the launch path writes, byte offsets into a FlyrtArg (see _arrays).
ARG_SIZE = ctypes.sizeof(FlyrtArg)
ARG_VALUE = FlyrtArg.u.offset
TENSOR_SHAPE = ARG_VALUE + FlyrtTensor.shape.offset
TENSOR_STRIDE = ARG_VALUE + FlyrtTensor.stride.offset

_S = c_int  # FlyrtStatus
# name: (result, argument types)
_PROTOTYPES = {
    "flyrtVersion": (c_char_p, []),
    "flyrtBundleFormatVersion": (c_uint32, []),
    "flyrtLastError": (c_char_p, []),
    "flyrtStatusName": (c_char_p, [c_int]),
    "flyrtDeviceCount": (_S, [POINTER(c_int)]),
    "flyrtDeviceCreate": (_S, [c_int, POINTER(FlyrtDevice)]),
    "flyrtDeviceDestroy": (None, [FlyrtDevice]),
    "flyrtDeviceTarget": (c_char_p, [FlyrtDevice]),
    "flyrtDeviceName": (c_char_p, [FlyrtDevice]),
    "flyrtDeviceBackend": (c_int, [FlyrtDevice]),
    "flyrtDeviceOrdinal": (c_int, [FlyrtDevice]),
    "flyrtDeviceMultiprocessors": (c_int, [FlyrtDevice]),
    "flyrtDeviceSynchronize": (_S, [FlyrtDevice]),
    "flyrtStreamSynchronize": (_S, [FlyrtDevice, c_void_p]),
    "flyrtBundleCreateFromFile": (_S, [c_char_p, POINTER(FlyrtBundle)]),
    "flyrtBundleCreateFromMemory": (_S, [c_void_p, c_size_t, POINTER(FlyrtBundle)]),
    "flyrtBundleDestroy": (None, [FlyrtBundle]),
    "flyrtBundleKernelCount": (c_uint32, [FlyrtBundle]),
    "flyrtBundleKernelEntry": (_S, [FlyrtBundle, c_uint32, POINTER(FlyrtKernelEntry)]),
    "flyrtBundleCompiler": (c_char_p, [FlyrtBundle]),
    "flyrtBundleSourceHash": (c_char_p, [FlyrtBundle]),
    "flyrtModuleCreate": (_S, [FlyrtBundle, FlyrtDevice, c_char_p, POINTER(FlyrtModule)]),
    "flyrtModuleDestroy": (None, [FlyrtModule]),
    "flyrtModuleTarget": (c_char_p, [FlyrtModule]),
    "flyrtModuleGetKernel": (_S, [FlyrtModule, c_char_p, c_char_p, POINTER(FlyrtKernel)]),
    "flyrtKernelName": (c_char_p, [FlyrtKernel]),
    "flyrtKernelSpec": (c_char_p, [FlyrtKernel]),
    "flyrtKernelParamCount": (c_int, [FlyrtKernel]),
    "flyrtKernelArgCount": (c_int, [FlyrtKernel]),
    "flyrtKernelParam": (_S, [FlyrtKernel, c_int, POINTER(FlyrtParamInfo)]),
    "flyrtKernelCluster": (c_bool, [FlyrtKernel, POINTER(c_uint32)]),
    "flyrtKernelLaunchConfigFor": (_S, [FlyrtKernel, POINTER(FlyrtArg), c_int,
                                        POINTER(FlyrtLaunchConfig)]),
    "flyrtKernelLaunch": (_S, [FlyrtKernel, POINTER(FlyrtArg), c_int, c_void_p,
                               POINTER(FlyrtLaunchConfig)]),
}

_PACKAGE_DIR = Path(__file__).resolve().parent


def library_candidates(env: str, name: str, extra_dirs: tuple[Path, ...] = ()) -> list[str]:
    """Where to look for lib<name>.so, in order: the path in $env; a lib/ folder
    or the file itself inside or beside the package; the system's search
    (ctypes.util.find_library); then extra_dirs."""
    if os.environ.get(env):
        return [os.environ[env]]
    files = (f"lib{name}.so", f"lib{name}.so.0", f"lib{name}.dylib")
    dirs = (_PACKAGE_DIR / "lib", _PACKAGE_DIR, _PACKAGE_DIR.parent / "lib", _PACKAGE_DIR.parent)
    found = [str(d / f) for d in dirs for f in files if (d / f).is_file()]
    system = ctypes.util.find_library(name)
    if system:
        found.append(system)
    found += [str(d / f) for d in extra_dirs for f in files if (d / f).is_file()]
    return found


def open_library(env: str, name: str, extra_dirs: tuple[Path, ...] = ()) -> ctypes.CDLL:
    """The first candidate that loads; LibraryNotFoundError naming what was tried."""
    tried = []
    for path in library_candidates(env, name, extra_dirs):
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    where = "; ".join(tried) if tried else "nothing found"
    raise LibraryNotFoundError(
        f"lib{name} not found (tried: {where}). Set {env} to the path of lib{name}.so "
        f"(after 'cmake --build build' it is build/lib/lib{name}.so), or put it in a lib/ "
        f"folder beside the fly package")


class Library:
    """libflyrt with its prototypes declared; one per process (flyrt())."""

    def __init__(self, dll: ctypes.CDLL) -> None:
        self.dll = dll
        self.path: str = dll._name
        for fname, (restype, argtypes) in _PROTOTYPES.items():
            f = getattr(dll, fname)
            f.restype, f.argtypes = restype, argtypes
            setattr(self, fname, f)
        # The launch path's own function objects (dll[...] makes a fresh one,
        # leaving the declarations above alone). Handles go as c_void_p: a
        # structure holding one pointer is passed exactly as the pointer on
        # the ABIs libflyrt runs on (x86-64 System V, AArch64), and ctypes
        # converts a c_void_p object faster than a Structure.
        self.launch = dll["flyrtKernelLaunch"]
        self.launch.restype = c_int
        self.launch.argtypes = [c_void_p, c_void_p, c_int, c_void_p, c_void_p]
        self.launch_config = dll["flyrtKernelLaunchConfigFor"]
        self.launch_config.restype = c_int
        self.launch_config.argtypes = [c_void_p, c_void_p, c_int, c_void_p]

    def error(self, status: int) -> FlyError:
        """The calling thread's last failure as an exception (raise it)."""
        message = (self.flyrtLastError() or b"").decode(errors="replace")
        name = (self.flyrtStatusName(status) or b"").decode()
        return FlyError(message or "unknown failure", status, name)

    def check(self, status: int) -> None:
        if status:
            raise self.error(status)


_library: Library | None = None
_library_lock = threading.Lock()


def flyrt() -> Library:
    """libflyrt, loaded on first use."""
    global _library
    lib = _library
    if lib is None:
        with _library_lock:
            if _library is None:
                _library = Library(open_library("FLYRT_LIBRARY", "flyrt"))
            lib = _library
    return lib


def text(b: bytes | None) -> str:
    return b.decode(errors="replace") if b else ""

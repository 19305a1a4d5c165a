"""fly.compile: Fly source to a loaded Module, through libflyc (frontend/driver/libflyc.h).

libflyc looks each compile up in flyc's disk cache first, so compiling the
same source with the same constants again costs a file read; only a miss
loads the compiler's back end (libflyc_lower.so) into the process.
"""
from __future__ import annotations

import ctypes
import os
import threading
import warnings
from ctypes import POINTER, Structure, c_bool, c_char_p, c_int, c_size_t, c_void_p
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from ._native import flyrt, open_library, text
from .errors import CompileError, CompileWarning, FlyError, Status
from .device import device_count
from .module import NO_DEVICE, Module, load


class FlycCompileOptions(Structure):
    _fields_ = [("ptr", c_void_p)]


class FlycCompileResult(Structure):
    _fields_ = [("ptr", c_void_p)]


_PROTOTYPES = {
    "flycVersion": (c_char_p, []),
    "flycCompileOptionsCreate": (FlycCompileOptions, []),
    "flycCompileOptionsDestroy": (None, [FlycCompileOptions]),
    "flycCompileOptionsAdd": (None, [FlycCompileOptions, c_char_p]),
    "flycCompile": (FlycCompileResult, [c_char_p, c_char_p, c_size_t, FlycCompileOptions]),
    "flycCompileResultSucceeded": (c_bool, [FlycCompileResult]),
    "flycCompileResultStatus": (c_int, [FlycCompileResult]),
    "flycCompileResultData": (c_void_p, [FlycCompileResult, POINTER(c_size_t)]),
    "flycCompileResultDiagnostics": (c_char_p, [FlycCompileResult]),
    "flycCompileResultDestroy": (None, [FlycCompileResult]),
}

_flyc: Optional[ctypes.CDLL] = None
_flyc_lock = threading.Lock()


def flyc() -> ctypes.CDLL:
    """libflyc, loaded on first use: $FLYC_LIBRARY, beside the package, the
    system's search, then beside libflyrt."""
    global _flyc
    with _flyc_lock:
        if _flyc is None:
            try:
                beside = (Path(flyrt().path).resolve().parent,)
            except OSError:
                beside = ()
            dll = open_library("FLYC_LIBRARY", "flyc", beside)
            for name, (restype, argtypes) in _PROTOTYPES.items():
                f = getattr(dll, name)
                f.restype, f.argtypes = restype, argtypes
            _flyc = dll
        return _flyc


def version() -> str:
    """The compiler's version."""
    return text(flyc().flycVersion())


def _value(v: object) -> str:
    """A const's value as -D takes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise FlyError(f"a const's value must be an int, a float, a bool or a string, not {v!r}",
                   Status.INVALID_VALUE)


def _is_path(source: Union[str, os.PathLike]) -> bool:
    """Text with a newline, or that is not an existing file and does not look
    like a file name, is source; anything else a path."""
    if isinstance(source, (bytes, bytearray)):
        return False
    if not isinstance(source, str):
        return True  # os.PathLike
    if "\n" in source:
        return False
    return source.endswith(".fly") or os.path.exists(source)


def compile_bundle(source: Union[str, bytes, os.PathLike], target: Union[str, Iterable[str],
                   None] = None, *, options: Iterable[str] = (), filename: str = "<source>.fly",
                   **consts: Any) -> bytes:
    """The bundle's bytes; see compile()."""
    lib = flyc()
    opts = lib.flycCompileOptionsCreate()
    try:
        lib.flycCompileOptionsAdd(opts, b"--emit=bundle")
        if target:
            targets = target if isinstance(target, str) else ",".join(target)
            lib.flycCompileOptionsAdd(opts, f"--target={targets}".encode())
        for name, v in consts.items():
            lib.flycCompileOptionsAdd(opts, f"-D{name}={_value(v)}".encode())
        for o in options:
            lib.flycCompileOptionsAdd(opts, o.encode())
        if not _is_path(source):
            data = bytes(source) if isinstance(source, (bytes, bytearray)) else source.encode()
            result = lib.flycCompile(filename.encode(), data, len(data), opts)
        else:
            result = lib.flycCompile(os.fsencode(source), None, 0, opts)
    finally:
        lib.flycCompileOptionsDestroy(opts)
    try:
        diagnostics = text(lib.flycCompileResultDiagnostics(result))
        if not lib.flycCompileResultSucceeded(result):
            raise CompileError(diagnostics, lib.flycCompileResultStatus(result))
        size = c_size_t(0)
        data = lib.flycCompileResultData(result, ctypes.byref(size))
        bundle = ctypes.string_at(data, size.value)
    finally:
        lib.flycCompileResultDestroy(result)
    if diagnostics.strip():
        warnings.warn(diagnostics.strip(), CompileWarning, stacklevel=3)
    return bundle


def compile(source: Union[str, bytes, os.PathLike], target: Union[str, Iterable[str],
            None] = None, *, device: Any = None, options: Iterable[str] = (),
            filename: str = "<source>.fly", **consts: Any) -> Module:
    """Compiles Fly source (a path, or the text itself) and loads the bundle.

    target    "sm_90", or several ("sm_90,gfx942" or a list); None: flyc's
              default ($FLYC_TARGET, this machine's GPU, else sm_90)
    device    as for fly.load; without a GPU and with a target, the module
              has no device (it checks arguments and computes launch
              configurations)
    options   more `flyc compile` options: "-O2", "--kernel=NAME", "-Werror"
    filename  the name messages give text source (and where its relative
              imports are found)
    consts    const bindings: fly.compile(src, BLOCK=128) passes -DBLOCK=128

    A source the compiler refuses raises CompileError with its diagnostics;
    warnings of a compile that succeeds are issued as CompileWarning.
    """
    bundle = compile_bundle(source, target, options=options, filename=filename, **consts)
    targets = [] if not target else target.split(",") if isinstance(target, str) else list(target)
    if len(targets) > 1:
        # Several targets: the device's own on a GPU, else the first one.
        if device is None and device_count() == 0:
            module = load(bundle, device=NO_DEVICE, target=targets[0])
        else:
            module = load(bundle, device=device)
    else:
        module = load(bundle, device=device, target=targets[0] if targets else None)
    module.name = os.fspath(source) if _is_path(source) else filename
    return module

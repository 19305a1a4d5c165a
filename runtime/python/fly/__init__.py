"""Fly kernels from Python: load bundles (.flyb) and launch their kernels.

    import fly
    mod = fly.load("vadd.flyb")           # or fly.compile("vadd.fly", BLOCK=128)
    mod.vector_add(A, B, C)               # torch tensors, DLPack or CUDA Array Interface

A pure-Python binding of libflyrt (fly/runtime.h) through ctypes: no build
step, and neither PyTorch nor NumPy is needed to import it. docs/python.md
describes it.
"""
from __future__ import annotations

from ._native import flyrt as _flyrt
from ._native import text as _text
from .compiler import compile, compile_bundle
from .device import Device, device_count
from .errors import (CompileError, CompileWarning, FlyError, KernelNotFoundError,
                     LibraryNotFoundError, Status)
from .module import NO_DEVICE, BoundLaunch, Kernel, KernelInfo, LaunchConfig, Module, Param, load

__all__ = ["load", "compile", "compile_bundle", "device_count", "Device", "Module", "Kernel",
           "KernelInfo", "BoundLaunch", "Param", "LaunchConfig", "NO_DEVICE", "FlyError",
           "KernelNotFoundError", "CompileError", "CompileWarning", "LibraryNotFoundError",
           "Status", "runtime_version"]


def runtime_version() -> str:
    """libflyrt's version, "0.1.0"."""
    return _text(_flyrt().flyrtVersion())

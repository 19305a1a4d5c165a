"""Stand-ins for GPU arrays, for tests on a machine without a GPU.

Their pointers are made up: a module without a device checks arguments
and computes launch configurations but never launches, so nothing reads
them.
"""
from __future__ import annotations

import ctypes
from typing import Optional

FAKE_BASE = 0x7F0000000000  # a made-up, well aligned device address


class CudaArray:
    """An object offering __cuda_array_interface__ (v3) only, as Numba's
    device arrays do. strides in bytes, None for compact row-major."""

    def __init__(self, shape: tuple, typestr: str = "<f4", strides: Optional[tuple] = None,
                 ptr: int = FAKE_BASE, version: int = 3, **extra: object) -> None:
        self.__cuda_array_interface__ = dict(shape=tuple(shape), typestr=typestr,
                                             data=(ptr, False), strides=strides,
                                             version=version, **extra)


# dlpack.h, restated here rather than taken from the binding, so that the
# tests check the binding against the format and not against itself.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Capsule names must outlive the capsules.
_NAMES = {False: ctypes.create_string_buffer(b"dltensor"),
          True: ctypes.create_string_buffer(b"dltensor_versioned")}


class DLPackArray:
    """An object offering DLPack (__dlpack__, __dlpack_device__) with a
    capsule built here through ctypes, counting exports and deleter calls.

    code, bits: the DLDataType (2, 32 is float32); strides in elements or
    None (a NULL strides pointer: compact row-major); device: (type, id),
    kDLCUDA is 2, kDLCPU 1."""

    def __init__(self, shape: tuple, code: int = 2, bits: int = 32, lanes: int = 1,
                 strides: Optional[tuple] = None, device: tuple = (2, 0),
                 ptr: int = FAKE_BASE, byte_offset: int = 0, versioned: bool = False,
                 report_device: bool = True) -> None:
        self.shape, self.strides = tuple(shape), strides
        self.dtype = (code, bits, lanes)
        self.device, self.ptr, self.byte_offset = device, ptr, byte_offset
        self.versioned = versioned
        self.exports = 0
        self.deleted = 0
        self.streams: list = []
        self._keep: list = []  # what each capsule points into
        self._deleter = _DELETER(self._delete)
        if report_device:
            self.__dlpack_device__ = lambda: self.device

    def _delete(self, address: int) -> None:
        self.deleted += 1

    def __dlpack__(self, stream: object = None) -> object:
        self.exports += 1
        self.streams.append(stream)
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*self.strides) if self.strides else None
        t = _DLTensor(data=self.ptr, device=_DLDevice(*self.device), ndim=n,
                      dtype=_DLDataType(*self.dtype),
                      shape=ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                      strides=ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
                      if strides is not None else None,
                      byte_offset=self.byte_offset)
        if self.versioned:
            m = _DLManagedTensorVersioned(major=1, minor=0, deleter=self._deleter,
                                          dl_tensor=t)
        else:
            m = _DLManagedTensor(dl_tensor=t, deleter=self._deleter)
        self._keep += [shape, strides, m]
        # No capsule destructor: the consumer must call the deleter itself.
        capsule = _api.PyCapsule_New(ctypes.addressof(m),
                                     ctypes.cast(_NAMES[self.versioned], ctypes.c_char_p), None)
        self.capsule = capsule
        return capsule


def capsule_named(capsule: object, name: bytes) -> bool:
    return bool(_api.PyCapsule_IsValid(capsule, name))

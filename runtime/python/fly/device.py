"""GPUs as libflyrt sees them: fly.device_count() and fly.Device."""
from __future__ import annotations

import sys
import threading
from ctypes import byref, c_int

from ._native import BACKENDS, FlyrtDevice, flyrt, text
from .errors import FlyError, Status


def device_count() -> int:
    """How many GPUs the driver sees; 0 when there is no driver at all."""
    lib = flyrt()
    n = c_int(0)
    status = lib.flyrtDeviceCount(byref(n))
    if status == Status.NO_DRIVER:
        return 0
    lib.check(status)
    return n.value


class Device:
    """GPU `ordinal`, through its primary context (the one PyTorch uses).

    fly.Device(0) returns the same object each time: a device is opened once
    per process and stays open, so modules loaded on it can be shared.
    """

    _opened: dict[int, "Device"] = {}
    _lock = threading.Lock()

    ordinal: int
    name: str     # the product name, "NVIDIA H100 80GB HBM3"
    target: str   # what Fly compiles for it, "sm_90"
    backend: str  # "cuda" or "hip"

    def __new__(cls, ordinal: int = 0) -> "Device":
        if isinstance(ordinal, Device):
            return ordinal
        ordinal = int(ordinal)
        with cls._lock:
            d = cls._opened.get(ordinal)
            if d is None:
                d = super().__new__(cls)
                d._open(ordinal)
                cls._opened[ordinal] = d
        return d

    def _open(self, ordinal: int) -> None:
        lib = flyrt()
        handle = FlyrtDevice()
        lib.check(lib.flyrtDeviceCreate(ordinal, byref(handle)))
        self.handle = handle
        self.ordinal = ordinal
        self.name = text(lib.flyrtDeviceName(handle))
        self.target = text(lib.flyrtDeviceTarget(handle))
        self.backend = BACKENDS.get(lib.flyrtDeviceBackend(handle), "unknown")

    def synchronize(self) -> None:
        """Waits for all work queued on the device (never call it in a launch
        path or during graph capture)."""
        lib = flyrt()
        lib.check(lib.flyrtDeviceSynchronize(self.handle))

    def __repr__(self) -> str:
        return f"fly.Device({self.ordinal}: {self.name!r}, {self.target}, {self.backend})"


def current_ordinal() -> int:
    """PyTorch's current GPU when PyTorch is in use, else 0. PyTorch is not
    imported for this: a program that has not imported it does not use it."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
    except Exception:  # a PyTorch without CUDA, or half-imported: not in use
        pass
    return 0


def resolve_device(device: object) -> Device:
    """A Device from what users write: an ordinal, a Device, a torch.device or
    "cuda:N"."""
    if isinstance(device, Device):
        return device
    if isinstance(device, int):
        return Device(device)
    kind = getattr(device, "type", None)  # torch.device
    if kind is not None:
        if kind != "cuda":
            raise FlyError(f"device {device!r} is not a GPU (its type is '{kind}')",
                           Status.INVALID_VALUE)
        return Device(device.index if device.index is not None else current_ordinal())
    if isinstance(device, str):
        head, _, index = device.partition(":")
        if head in ("cuda", "hip", "gpu") and (index == "" or index.isdigit()):
            return Device(int(index or 0))
    raise FlyError(f"device={device!r}: give an ordinal, a fly.Device, a torch.device or "
                   f"'cuda:N'", Status.INVALID_VALUE)

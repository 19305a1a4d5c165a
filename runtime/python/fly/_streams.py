"""Which stream a launch goes to.

By default, PyTorch's current stream on the kernel's GPU, so that a Fly
kernel is ordered with the PyTorch work around it and is captured by
torch.cuda.graph like any PyTorch op. PyTorch is never imported here: if
the program has not imported it, it has no PyTorch stream, and the launch
goes to the default stream (0).
"""
from __future__ import annotations

import sys
from typing import Callable

from .errors import FlyError, Status

# PyTorch's "current raw stream of GPU i" once PyTorch with CUDA is seen; None
# until then.
_torch_current: Callable[[int], int] | None = None


def current_stream(ordinal: int) -> int:
    """The stream a launch on GPU `ordinal` goes to when none is given."""
    if ordinal < 0:
        return 0  # a module without a device: it does not launch
    f = _torch_current
    if f is not None:
        return f(ordinal)
    return _probe(ordinal)


def _zero(ordinal: int) -> int:
    return 0


def _probe(ordinal: int) -> int:
    global _torch_current
    torch = sys.modules.get("torch")
    if torch is None:
        return 0  # probe again next time: PyTorch may be imported later
    try:
        available = torch.cuda.is_available()
    except Exception:  # half-imported (a launch from inside its import): not yet
        return 0
    if not available:
        _torch_current = _zero
        return 0
    # The raw getter returns the cudaStream_t as an int without making a
    # Stream object: about a tenth of the cost of current_stream().cuda_stream.
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        cuda = torch.cuda

        def raw(i: int) -> int:
            return cuda.current_stream(i).cuda_stream

    _torch_current = raw
    return raw(ordinal)


def to_stream(stream: object) -> int:
    """A stream handle from what users write: an int (a cudaStream_t), a
    torch.cuda.Stream (.cuda_stream), or an object with __cuda_stream__ (the
    CUDA Python protocol: a method returning (version, handle))."""
    if type(stream) is int and 0 <= stream < 2**64:
        return stream
    if isinstance(stream, bool) or type(stream) is int:
        handle = None
    elif isinstance(stream, int):  # an int subclass (an enum)
        handle = int(stream)
    else:
        handle = getattr(stream, "cuda_stream", None)
        proto = getattr(stream, "__cuda_stream__", None)
        if handle is None and proto is not None:
            value = proto() if callable(proto) else proto
            handle = value[1] if isinstance(value, tuple) and len(value) == 2 else value
    if type(handle) is int and 0 <= handle < 2**64:
        return handle
    raise FlyError(f"stream={stream!r}: give a stream handle (an int), a torch.cuda.Stream or "
                   f"an object with __cuda_stream__", Status.INVALID_VALUE)

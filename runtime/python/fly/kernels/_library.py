"""The kernel library's machinery: where its bundles and sources are, and a
kernel specialisation for a set of consts, loaded once per GPU.

A specialisation comes from the bundle `make` built ahead of time
(LIBRARY/bundles/KERNEL/SPEC.flyb) when there is one, else it is compiled
from the kernel's source through libflyc and flyc's disk cache. Either way it
is loaded into the GPU once and kept for the life of the process, so every
later call is a dictionary lookup and a launch.

Where things are, in order:

  the library (registry.json and bundles/)   $FLY_KERNELS_DIR; _kernels/ inside
                                             the package (a shipped package);
                                             build/kernels of the source tree
  the sources (for other specialisations)    $FLY_KERNELS_SOURCE; src/ inside
                                             the library; kernels/ of the
                                             source tree
"""
from __future__ import annotations

import os
import threading
from typing import Any, Optional

from ..errors import FlyError, Status
from . import _registry

_HERE = os.path.dirname(os.path.abspath(__file__))
_TREE = os.path.normpath(os.path.join(_HERE, "..", "..", "..", ".."))  # the source tree


def _first_dir(*candidates: Optional[str]) -> Optional[str]:
    for c in candidates:
        if c and os.path.isdir(c):
            return c
    return None


class Library:
    """The registry, the bundles and the specialisations loaded so far."""

    def __init__(self) -> None:
        self.root = _first_dir(os.environ.get("FLY_KERNELS_DIR"),
                               os.path.join(_HERE, "..", "_kernels"),
                               os.path.join(_TREE, "build", "kernels"))
        source = _first_dir(os.environ.get("FLY_KERNELS_SOURCE"),
                            self.root and os.path.join(self.root, "src"),
                            os.path.join(_TREE, "kernels"))
        self.source = source
        registry = None
        for d in (self.root, source):
            if d and os.path.isfile(os.path.join(d, "registry.json")):
                registry = os.path.join(d, "registry.json")
                break
        if registry is None:
            raise FlyError("the kernel library is not built: no registry.json in "
                           f"$FLY_KERNELS_DIR, the package or {_TREE}/build/kernels "
                           "(run make)", Status.NOT_FOUND)
        self.registry = _registry.load(registry)
        self._loaded: dict[tuple, Any] = {}
        # Requests as made (device as given: None means "the current GPU",
        # which may change, so only explicit devices are remembered here).
        self._fast: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def entry(self, name: str) -> dict[str, Any]:
        try:
            return self.registry[name]
        except KeyError:
            raise FlyError(f"the kernel library has no kernel '{name}' (it has "
                           f"{', '.join(sorted(self.registry))})", Status.NOT_FOUND) from None

    def bundle_path(self, name: str, consts: dict[str, Any]) -> Optional[str]:
        """The ahead-of-time bundle of this specialisation, if make built it."""
        if not self.root:
            return None
        path = os.path.join(self.root, "bundles", name,
                            _registry.spec_name(self.entry(name), consts) + ".flyb")
        return path if os.path.isfile(path) else None

    def kernel(self, name: str, consts: dict[str, Any], device: Any = None,
               target: Optional[str] = None) -> Any:
        """The fly.Kernel of kernel `name` specialised for consts, on device
        (an ordinal, a fly.Device, a torch.device; None: the current GPU), or
        with device=fly.NO_DEVICE for target (no GPU: launch configurations
        only)."""
        # The common case first: this very request made before (a torch.device
        # and a dict of consts hash as they are). One lookup, no strings made.
        try:
            fast = (name, tuple(consts.items()), device, target)
            k = self._fast.get(fast)
        except TypeError:  # an unhashable device or const: the full path
            fast = k = None
        if k is not None:
            return k
        from ..module import NO_DEVICE, load
        from ..device import current_ordinal, resolve_device

        e = self.entry(name)
        spec = _registry.spec_name(e, consts)
        if device is NO_DEVICE:
            where: Any = ("none", target)
        else:
            dev = resolve_device(device if device is not None else current_ordinal())
            where = dev.ordinal
        key = (name, spec, where)
        k = self._loaded.get(key)
        if k is not None:
            if fast is not None and device is not None:
                self._fast[fast] = k
            return k
        with self._lock:
            k = self._loaded.get(key)
            if k is not None:
                return k
            dev_arg = NO_DEVICE if device is NO_DEVICE else where
            path = self.bundle_path(name, consts)
            if path is not None:
                module = load(path, device=dev_arg, target=target)
            else:
                module = self._compile(name, e, consts, dev_arg, target)
            by_text = {c: _registry.const_text(consts[c]) for c in e["consts"]}
            k = module.kernel(e["kernel"], by_text)
            self._loaded[key] = k
            if fast is not None and device is not None:
                self._fast[fast] = k
        return k

    def _compile(self, name: str, e: dict[str, Any], consts: dict[str, Any], device: Any,
                 target: Optional[str]) -> Any:
        from ..compiler import compile as fly_compile
        from ..errors import LibraryNotFoundError

        if not self.source:
            raise FlyError(f"{name} {_registry.spec_name(e, consts)}: no bundle was built ahead "
                           f"of time for this specialisation, and the kernels' sources are not "
                           f"here to compile it ($FLY_KERNELS_SOURCE)", Status.NOT_FOUND)
        path = os.path.join(self.source, e["file"])
        try:
            return fly_compile(path, target=target, device=device,
                               options=[f"--kernel={e['kernel']}"],
                               **{c: _registry.const_text(consts[c]) for c in e["consts"]})
        except LibraryNotFoundError as err:
            raise FlyError(f"{name} {_registry.spec_name(e, consts)}: no bundle was built ahead "
                           f"of time for this specialisation, and the compiler (libflyc) is not "
                           f"here to compile it: {err}", Status.NOT_FOUND) from None


_library: Optional[Library] = None
_library_lock = threading.Lock()


def library() -> Library:
    """The process's Library, made on first use."""
    global _library
    if _library is None:
        with _library_lock:
            if _library is None:
                _library = Library()
    return _library


def kernel(name: str, consts: dict[str, Any], device: Any = None,
           target: Optional[str] = None) -> Any:
    return library().kernel(name, consts, device, target)

"""Choosing a row kernel's specialisation (kernels/common/rows.fly) for a
problem, and shaping PyTorch tensors into the M x N matrices the kernels
take. PyTorch is imported only by the functions that need it."""
from __future__ import annotations

import sys
from typing import Any

from ..errors import FlyError, Status

# PyTorch's dtypes by Fly's names, filled on first use.
_FLY_TYPES: dict[Any, str] = {}


def fly_type(dtype: Any) -> str:
    """Fly's name of a torch dtype: "bf16", "f16", "f32" ..."""
    if not _FLY_TYPES:
        import torch

        _FLY_TYPES.update({torch.bfloat16: "bf16", torch.float16: "f16",
                           torch.float32: "f32", torch.float64: "f64",
                           torch.int8: "i8", torch.int32: "i32", torch.int64: "i64",
                           torch.float8_e4m3fn: "f8e4m3", torch.float8_e5m2: "f8e5m2",
                           torch.float8_e4m3fnuz: "f8e4m3fnuz",
                           torch.float8_e5m2fnuz: "f8e5m2fnuz"})
    try:
        return _FLY_TYPES[dtype]
    except KeyError:
        raise FlyError(f"the kernel library has no kernels for {dtype}",
                       Status.ARGUMENTS) from None


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def vector_width(n: int, elem_bytes: int, *tensors: Any) -> int:
    """The elements of one access, VEC: 16 bytes' worth when that divides
    the row length n, every tensor's row stride and the start of every
    tensor; else 1. (Widths between are valid kernels too, compiled on first
    use when asked for; the library builds these two ahead of time.)"""
    vec = 16 // elem_bytes if elem_bytes < 16 else 1
    if n % vec:
        return 1
    for t in tensors:
        if t is not None and (t.data_ptr() % 16 or (t.dim() == 2 and t.stride(0) % vec)):
            return 1
    return vec


_CONSTS: dict[tuple, dict[str, Any]] = {}


def _consts(name: str, dtype: Any, n: int, vec: int, fixed: tuple) -> dict[str, Any]:
    """T, VEC and CAP (kernels/common/rows.fly) of row kernel `name` for rows
    of n elements of dtype read vec at a time: CAP is the smallest of the
    registry's ladder for (T, VEC) that holds the row's vectors; past the
    registers, the ladder's last value, a streamed row. fixed: the kernel's
    other consts, as sorted (name, value) pairs. Remembered."""
    key = (name, dtype, n, vec, fixed)
    c = _CONSTS.get(key)
    if c is None:
        from ._library import library
        from ._registry import aot_values

        t = fly_type(dtype)
        entry = library().entry(name)
        types = set(aot_values(entry, "T"))
        if types and t not in types:
            raise FlyError(f"{name}: the kernel library has this kernel for "
                           f"{', '.join(sorted(types))} tensors, not {dtype}", Status.ARGUMENTS)
        need = -(-n // vec)
        ladder = aot_values(entry, "CAP", T=t, VEC=vec, **dict(fixed))
        cap = next((c for c in ladder if c >= need), None)
        if cap is None:  # no ahead-of-time ladder: compiled on first use
            cap = next_pow2(need)
        c = _CONSTS[key] = {"T": t, "VEC": vec, "CAP": cap, **dict(fixed)}
    return c


# The kernel of each (kernel, dtype, row length, VEC, consts, GPU) met so far:
# after the first call, choosing a specialisation is one dictionary lookup.
_KERNELS: dict[tuple, Any] = {}


def row_kernel(name: str, dtype: Any, n: int, device: Any, *tensors: Any, **fixed: Any) -> Any:
    """The fly.Kernel of row kernel `name` for rows of n elements of dtype
    on device (a torch.device), its VEC chosen for tensors."""
    vec = vector_width(n, dtype.itemsize, *tensors)
    key = (name, dtype, n, vec, device.index, tuple(fixed.items()))
    k = _KERNELS.get(key)
    if k is None:
        from ._library import kernel

        consts = _consts(name, dtype, n, vec, tuple(sorted(fixed.items())))
        k = _KERNELS[key] = kernel(name, consts, device)
    return k


# kernels/common/rows.fly's row_plan, for what Python must know of it (the
# rows a block handles); tests/python/test_kernels.py checks it against the
# kernels' launch rules for every CAP.
REGISTER_ELEMENTS = 16384


def row_plan(cap: int, vec: int, per: int = 4) -> tuple[int, int, int]:
    """(G, ITEMS, THREADS) of row_plan_items(CAP, VEC, PER) in rows.fly."""
    in_registers = cap * vec <= REGISTER_ELEMENTS
    g = 1 if cap <= per else min(cap // per, 2048 // per) if in_registers else 1024
    items = cap // g if in_registers else 0
    return g, items, max(g, 128)


_SMS: dict[int, int] = {}


def sm_count(device: Any) -> int:
    """The multiprocessors of a torch.device."""
    n = _SMS.get(device.index)
    if n is None:
        import torch

        n = _SMS[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return n


_ROWS_PER_BLOCK: dict[tuple, tuple[int, int]] = {}


def row_kernel_early(name: str, dtype: Any, n: int, m: int, device: Any, *tensors: Any,
                     **fixed: Any) -> Any:
    """row_kernel for a kernel with the const EARLY (latency: the weights
    loaded with the row, 2 vectors a thread): true when every block of the
    EARLY grid is resident at once (about 64 registers a thread), so that
    the kernel's time is latency, not throughput; with more blocks, 4
    vectors a thread and the weights loaded late leave more blocks an SM."""
    vec = vector_width(n, dtype.itemsize, *tensors)
    base = (name, dtype, n, vec, device.index, tuple(fixed.items()))
    plan = _ROWS_PER_BLOCK.get(base)
    if plan is None:
        c = _consts(name, dtype, n, vec, tuple(sorted({**fixed, "EARLY": True}.items())))
        g, _, threads = row_plan(c["CAP"], vec, 2)  # norm_items(EARLY) in rows.fly
        resident = min(2048 // threads, 65536 // (64 * threads)) * sm_count(device)
        plan = _ROWS_PER_BLOCK[base] = (threads // g, max(resident, sm_count(device)))
    early = -(-m // plan[0]) <= plan[1]
    key = base + (early,)
    k = _KERNELS.get(key)
    if k is None:
        from ._library import kernel

        consts = _consts(name, dtype, n, vec, tuple(sorted({**fixed, "EARLY": early}.items())))
        k = _KERNELS[key] = kernel(name, consts, device)
    return k


def as_rows(x: Any, what: str) -> Any:
    """x as a 2-D matrix of rows (its last dimension), without copying when
    its layout allows; a last dimension that is not contiguous is copied."""
    d = x.dim()
    if d == 2 and x.stride(1) == 1:  # the common case, in two calls
        return x
    if d == 0:
        raise FlyError(f"{what} must have at least one dimension", Status.ARGUMENTS)
    if d == 1:
        x = x.unsqueeze(0)
    if x.stride(-1) != 1 and x.size(-1) > 1:
        x = x.contiguous()
    if x.dim() > 2:
        try:
            x = x.view(-1, x.size(-1))
        except RuntimeError:
            x = x.reshape(-1, x.size(-1))
    return x


def accepts_dlpack(fn: Any) -> Any:
    """Lets fn, a function of torch tensors, take any array offering DLPack
    (CuPy, JAX ...): such an argument becomes a torch tensor on the same
    memory (torch.from_dlpack, no copy) before fn sees it. Results are torch
    tensors. Arguments that are all tensors, numbers or None go straight
    through: one type test each."""
    import functools

    plain = (int, float, bool, str, type(None), tuple)

    def convert(a: Any) -> Any:
        if hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__"):
            import torch

            if not isinstance(a, torch.Tensor):
                return torch.from_dlpack(a)
        return a

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        torch = sys.modules.get("torch")
        tensor = torch.Tensor if torch is not None else None
        for a in args:
            if type(a) is not tensor and not isinstance(a, plain):
                break
        else:
            for a in kwargs.values():
                if type(a) is not tensor and not isinstance(a, plain):
                    break
            else:
                return fn(*args, **kwargs)
        return fn(*[convert(a) for a in args], **{k: convert(v) for k, v in kwargs.items()})

    return wrapper


def check_device(*tensors: Any) -> Any:
    """The GPU all the tensors are on."""
    dev = None
    for t in tensors:
        if t is None:
            continue
        if not t.is_cuda:
            raise FlyError(f"the tensors must be on a GPU; one is on {t.device}",
                           Status.ARGUMENTS)
        if dev is None:
            dev = t.device
        elif t.device != dev:
            raise FlyError(f"the tensors must be on one GPU, not on {dev} and {t.device}",
                           Status.ARGUMENTS)
    return dev

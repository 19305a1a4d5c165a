"""Matrix multiplies (kernels/gemm/): D = A · B on Hopper's fast path (TMA,
wgmma, a producer warpgroup feeding consumer warpgroups through mbarriers).

    d = fly.kernels.gemm(a, b)            # a (M, K), b (K, N): a @ b

a is read K-contiguous (rows of a). b is read as it comes when it is
K-contiguous (a transposed view of an (N, K) weight, `w.t()`, as torch's
linear layers keep theirs: the "TN" kernel, gemm_tn) or N-contiguous (a
plain row-major (K, N) matrix: the "NN" kernel, gemm_nn, whose wgmma reads
B's tiles MN-major; 16-bit types only). Other strides are copied to the
K-contiguous form first (one extra pass over the operand). TMA reads
rows whose byte stride is a multiple of 16: an operand whose rows are not
(K % 8, or N % 8 for an N-contiguous b, of 16-bit types) is copied into
a K-contiguous buffer whose rows are; what lies past K in a row is never
read (TMA fills zeros past the tensor's end). With split_k=2, 4 or 8 the
K steps are cut in parts, each a unit of work of its own: the parts of a
tile add their f32 sums into a workspace (one per GPU and stream), and
the last to finish stores the tile (no launch besides the kernel's).
Products of few rows whose tiles leave most multiprocessors idle are
split by default (see _split).

On GPUs other than compute capability 9.0 (an A100: 8.0) the product runs
on the Ampere path instead (kernels/gemm/gemm_sm80.fly: cp.async,
ldmatrix, mma.sync), and arch="sm_80" forces it on an H100, for tests and
comparisons; its operands are read K-contiguous with 16-byte rows as
well, any M, N and K, and no split K.
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import FlyError, Status
from ._library import kernel
from ._rows import accepts_dlpack, check_device, fly_type, sm_count

_INPUTS = ("bf16", "f16")  # gemm; scaled_mm takes fp8 (_fp8_types)
_OUTPUTS = ("bf16", "f16", "f32")


def _k_major(x: Any, k_dim: int, pad: int) -> Any:
    """x as (rows, K) with K contiguous and a row stride that is a multiple
    of `pad` elements: a view of x where it already is, else a copy."""
    import torch

    other = 1 - k_dim
    k = x.shape[k_dim]
    if x.stride(k_dim) == 1 and x.stride(other) % pad == 0 and x.data_ptr() % 16 == 0:
        return x.t() if k_dim == 0 else x
    kp = -(-k // pad) * pad
    buf = torch.empty((x.shape[other], kp), dtype=x.dtype, device=x.device)[:, :k]
    buf.copy_(x.t() if k_dim == 0 else x)
    return buf


def _n_major(b: Any, pad: int) -> bool:
    """Whether b (K, N) has N contiguous with rows TMA can read (a stride
    that is a multiple of 16 bytes, a 16-byte aligned start), so that the
    NN kernel reads it without a copy. A b whose K is contiguous too (one
    column, or one row) goes the TN way."""
    return (b.stride(1) == 1 and b.stride(0) != 1 and b.stride(0) % pad == 0 and
            b.data_ptr() % 16 == 0)


# The tiles _tile chooses from. PINGPONG is gemm's and gemm_nn's (two
# consumer warpgroups on alternate tiles); kernels without it (scaled_mm)
# take the tile without.
_TILES = ({"BM": 128, "BN": 256, "BK": 64, "STAGES": 4, "CLUSTER": 1, "PINGPONG": False},
          {"BM": 128, "BN": 128, "BK": 64, "STAGES": 6, "CLUSTER": 2, "PINGPONG": True},
          {"BM": 64, "BN": 128, "BK": 64, "STAGES": 6, "CLUSTER": 1, "PINGPONG": False},
          {"BM": 64, "BN": 64, "BK": 64, "STAGES": 12, "CLUSTER": 1, "PINGPONG": False})


def _rounds(tiles: int, sms: int) -> int:
    """The rounds of a persistent walk of `tiles` tiles on sms
    multiprocessors, one tile at a time each."""
    return -(-tiles // sms)


# A 128 x 128 tile's rate against a 128 x 256 tile's, both storing through
# TMA (at 1024 x 4096 x 4096 on an H100, one round of 128 x 256 tiles
# against two of 128 x 128: 0.90 and 0.98 of cuBLAS).
_SQUARE_RATE = 0.92


def _tile(m: int, n: int, sms: int) -> int:
    """The tile of the kernel for a product of M x N on sms
    multiprocessors (its index in _TILES), from tuning runs on an H100
    (inputs rotated past L2, against cuBLAS in the same process, tiles
    stored by TMA):
    * 128 x 128 (ping-pong consumers, in clusters of two blocks on
      neighbouring tile rows, sharing B's tiles by TMA multicast) where
      their clusters fill at least half of the multiprocessors and their
      rounds (a cluster's work two such tiles, each half a 128 x 256 tile's
      at _SQUARE_RATE of its rate) take less time than 128 x 256 tiles'
      rounds: at 512 rows of Llama's 4096-wide layers one round of them,
      0.86 of cuBLAS, against a half-empty round of 128 x 256, 0.61; at
      512 x 14336 four rounds, 0.92, against two of 128 x 256, 0.98. With
      128 rows or fewer a cluster's second block has no rows: two rounds
      of them at 128 x 11008 gave 0.67.
    * else 128 x 256 where its tiles fill at least half of them (0.95-1.2
      of cuBLAS from 1024 rows);
    * else, for up to 64 rows, 64 x 64 where 64 x 128 tiles would leave
      more than half of the multiprocessors idle and 64 x 64 tiles fill a
      quarter or more (_few_rows_square: at N 4096, 64 tiles against 32,
      0.93-1.15 of cuBLAS against 0.90-1.00 at 1 to 64 rows of K 4096,
      the same lead at K 11008 and 14336, and split K from there), else 64
      x 128 (0.7-1.06 of cuBLAS at 1 and 16 rows of N 11008 and 14336: B
      streamed from memory, which the wider tile reads no slower than 64 x
      64);
    * else 64 x 64 (12 stages) where its tiles fill the rounds better by
      5 % or more, else 64 x 128: at 128 rows 1.0-1.1 of cuBLAS at N 4096
      (64 x 64), 0.96 against 0.87 at N 11008 (64 x 64), 0.95 against 0.90
      at N 14336 (64 x 128, both filling 85 %)."""
    wide = -(-m // 128) * -(-n // 256)
    pairs = -(-m // 256) * -(-n // 128)  # clusters of two 128 x 128 tiles
    if (m > 64 and 2 * pairs >= sms // 2 and
            _rounds(pairs, sms // 2) * 0.5 / _SQUARE_RATE < _rounds(wide, sms)):
        return 1
    if wide >= sms // 2:
        return 0
    if m <= 64:
        return 3 if _few_rows_square(n, sms) else 2
    rows = -(-m // 64)
    wide64, square64 = rows * -(-n // 128), rows * -(-n // 64)
    return 3 if _filled(square64, sms) > _filled(wide64, sms) + 0.05 else 2


def _filled(tiles: int, sms: int) -> float:
    """How full the multiprocessors are over a persistent walk of `tiles`
    tiles, one at a time each: the tiles over the rounds' room."""
    return tiles / (_rounds(tiles, sms) * sms)


def _few_rows_square(n: int, sms: int) -> bool:
    """Whether a product of up to 64 rows runs on 64 x 64 tiles: its 64 x
    128 tiles leave more than half of the multiprocessors idle, and its 64
    x 64 tiles fill a quarter of them or more (fewer, and split K on 64 x
    128 tiles keeps more of them busy)."""
    return -(-n // 128) < sms // 2 and -(-n // 64) >= sms // 4


# Split K on 64 x 64 tiles (few rows) cuts K in two where each part keeps
# at least this many K steps: at 1 and 16 rows of N 4096 on an H100, two
# parts of 112 steps (K 14336 of bf16; 56 of fp8) beat one tile's whole K,
# one of 64 steps (K 4096 of bf16) or 86 (K 11008 of fp8) beat two parts
# (the parts' meeting costs about 45 steps).
_SQUARE_SPLIT_STEPS = 48


def _split(split_k: Optional[int], tile: int, m: int, n: int, k: int, bk: int, sms: int,
           auto: bool) -> int:
    """The parts K is cut in: split_k when given (1, 2, 4 or 8; on 64 x 128
    tiles); else, where auto allows it (a plain product of a K-contiguous
    b):
    * on 64 x 64 tiles (tile 3) of up to 16 rows, two parts where their
      units fit one round and each part keeps _SQUARE_SPLIT_STEPS K steps;
    * for up to 64 rows on 64 x 128 tiles that leave more than half of the
      multiprocessors idle (N too narrow for 64 x 64 tiles to fill a
      quarter), the most parts (up to 8) whose units still fit one round,
      each of at least 8 K steps;
    else 1."""
    if split_k is not None:
        if split_k not in (1, 2, 4, 8):
            raise FlyError(f"gemm: split_k is 1, 2, 4 or 8, not {split_k}", Status.ARGUMENTS)
        return split_k
    if not auto or m > 64:
        return 1
    steps = -(-k // bk)
    if tile == 3:
        tiles = -(-n // 64)
        return 2 if m <= 16 and 2 * tiles <= sms and steps >= 2 * _SQUARE_SPLIT_STEPS else 1
    tiles = -(-n // 128)
    if tile != 2 or tiles >= sms // 2:
        return 1
    for parts in (8, 4, 2):
        if tiles * parts <= sms and steps >= 8 * parts:
            return parts
    return 1


# Split K's meeting places, by GPU and stream: Work (f32) and Count (i32),
# zeros, which each launch leaves zeros again; launches on one stream run
# in turn, so they share them. One grown for a larger product replaces the
# older pair, which lives on only while a replayed call's bound launch
# holds it (BoundLaunch keeps what it packed); freed, its memory goes back
# to PyTorch's allocator in the stream's order, after the launches that
# used it.
_WORKSPACES: dict[Any, tuple[Any, Any]] = {}


def _workspace(device: Any, values: int, counts: int) -> tuple[Any, Any]:
    import torch

    key = (device, torch.cuda.current_stream(device).cuda_stream)
    kept = _WORKSPACES.get(key)
    if kept and kept[0].numel() >= values and kept[1].numel() >= counts:
        return kept
    # Grown by twice at least, the counts with the values (one a 64 x 64
    # tile: split K's smallest).
    grown = 2 * kept[0].numel() if kept else 0
    pair = (torch.zeros(max(values, grown), dtype=torch.float32, device=device),
            torch.zeros(max(counts, grown // (64 * 64)), dtype=torch.int32, device=device))
    _WORKSPACES[key] = pair
    return pair


_ONES: dict[Any, Any] = {}


def _one(device: Any) -> Any:
    """A float32 tensor holding 1 on device: the scales of a plain product."""
    one = _ONES.get(device)
    if one is None:
        import torch

        one = _ONES[device] = torch.ones(1, dtype=torch.float32, device=device)
    return one


def _scales(scale_a: Any, scale_b: Any, m: int, n: int, device: Any) -> tuple[Any, Any, bool]:
    """scaled_mm's scales as the kernel takes them, and whether they are
    rowwise: per tensor, one float32 element each; rowwise, one for each of
    a's M rows ((M, 1) or (M,)) and one for each of b's N columns ((1, N)
    or (N,)), as torch._scaled_mm's; a per-tensor scale beside a rowwise
    one is repeated along its side."""
    import torch

    for s, what, want in ((scale_a, "scale_a", m), (scale_b, "scale_b", n)):
        if (not isinstance(s, torch.Tensor) or s.dtype != torch.float32 or
                s.numel() not in (1, want) or (s.dim() == 2 and 1 not in s.shape) or s.dim() > 2):
            raise FlyError(f"scaled_mm: {what} is a float32 tensor of one element (per tensor) or "
                           f"of {want} ({'rows of a' if what == 'scale_a' else 'columns of b'}: "
                           f"rowwise), not "
                           f"{s if not isinstance(s, torch.Tensor) else tuple(s.shape)}"
                           f"{'' if not isinstance(s, torch.Tensor) else ' of ' + str(s.dtype)}",
                           Status.ARGUMENTS)
        check_device(s)
        if s.device != device:
            raise FlyError(f"scaled_mm: {what} is on {s.device}, the operands on {device}",
                           Status.ARGUMENTS)
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        return scale_a.reshape(1), scale_b.reshape(1), False
    sa = scale_a.reshape(-1).expand(m).contiguous()
    sb = scale_b.reshape(-1).expand(n).contiguous()
    return sa, sb, True


# The kernels chosen, by what chose them (_product).
_KERNELS: dict[tuple, Any] = {}

# The activations of the fused epilogue, by name: std.activation's numbers.
_ACTIVATIONS = {None: 0, "relu": 1, "silu": 2, "gelu": 3, "gelu_tanh": 4}


_STAND_INS: dict[Any, Any] = {}


def _stand_in(device: Any, dtype: Any) -> Any:
    """A vector of one element of dtype on device, made once: the kernel's
    Bias where there is none, its Work and Count without split K (never
    read)."""
    key = (device, dtype)
    t = _STAND_INS.get(key)
    if t is None:
        import torch

        t = _STAND_INS[key] = torch.zeros(1, dtype=dtype, device=device)
    return t


def _epilogue_operands(name: str, m: int, n: int, out: Any, bias: Optional[Any],
                       activation: Optional[str], c: Optional[Any]) -> tuple[Any, int, Any]:
    """The kernel's Bias, ACT and C: bias (N,) and c (M, N) in out's type
    with contiguous columns (copied where they are not), checked; where
    there is none, a view of out stands in (never read)."""
    if activation not in _ACTIVATIONS:
        raise FlyError(f"{name}: activation is one of relu, silu, gelu, gelu_tanh or None, not "
                       f"{activation!r}", Status.ARGUMENTS)
    if bias is None:
        bias_arg = _stand_in(out.device, out.dtype)
    else:
        check_device(bias)
        if bias.dim() != 1 or bias.shape[0] != n or bias.device != out.device:
            raise FlyError(f"{name}: bias is a vector of N = {n} values on {out.device}, not "
                           f"{tuple(bias.shape)} on {bias.device}", Status.ARGUMENTS)
        bias_arg = bias.to(out.dtype).contiguous()
    if c is None:
        c_arg = out
    else:
        check_device(c)
        if tuple(c.shape) != (m, n) or c.device != out.device:
            raise FlyError(f"{name}: c is ({m}, {n}) on {out.device}, like the result, not "
                           f"{tuple(c.shape)} on {c.device}", Status.ARGUMENTS)
        c_arg = c.to(out.dtype)
        if n > 1 and c_arg.stride(1) != 1:
            c_arg = c_arg.contiguous()
    return bias_arg, _ACTIVATIONS[activation], c_arg


def _output(name: str, out: Optional[Any], od: Any, m: int, n: int, device: Any) -> Any:
    """The (M, N) result of type od: out, checked, or a new tensor."""
    import torch

    if fly_type(od) not in _OUTPUTS:
        raise FlyError(f"{name}: out_dtype is bfloat16, float16 or float32, not {od}",
                       Status.ARGUMENTS)
    if out is None:
        return torch.empty((m, n), dtype=od, device=device)
    if tuple(out.shape) != (m, n) or out.dtype != od or (n > 1 and out.stride(1) != 1):
        raise FlyError(f"{name}: out is ({m}, {n}) of {od} with contiguous columns, not "
                       f"{tuple(out.shape)} of {out.dtype} with strides {out.stride()}",
                       Status.ARGUMENTS)
    return out


# Calls replayed. What a product decides (its checks, the views and copies
# of its operands, the kernel and its arguments) follows from its operands'
# shapes, strides, types, GPUs, 16-byte alignment and which of them are one
# tensor, and from its other arguments: a call whose signature (_signature)
# matches one made before launches that call's kernel again, its arguments
# packed once (fly.BoundLaunch), with the new operands' data pointers. Only
# calls whose kernel reads the operands in place, or the library's own
# constant tensors, are replayed (a copy made for the kernel is not the
# caller's next operand). A product of few rows spends most of its time on
# the host otherwise.
_REPLAYS: dict[Any, "_Replay"] = {}
_REPLAYS_MAX = 4096


def _signature(call: tuple, tensors: tuple) -> tuple[Optional[tuple], list]:
    """A call's signature (call: its arguments other than tensors) and its
    tensors' data pointers (None where a tensor is not given); no signature
    for a call of other things than tensors (the full path says what is
    wrong with them)."""
    sig: list = [call]
    ptrs: list = []
    try:
        for t in tensors:
            if t is None:
                sig.append(None)
                ptrs.append(None)
                continue
            p = t.data_ptr()
            # The first tensor of the call at the same address, if any.
            same = ptrs.index(p) if p in ptrs else -1
            sig.append((t.shape, t.stride(), t.dtype, t.get_device(), p % 16, same))
            ptrs.append(p)
        key = tuple(sig)
        hash(key)
    except (AttributeError, TypeError):
        return None, ptrs
    return key, ptrs


class _Replay:
    """A call to replay: the bound kernel, where each rebound argument's
    pointer comes from (the index of the call's tensor, or -1: the result,
    made anew when the call gives no out), the result's shape, and the
    stream whose split K workspace the call uses (None: none)."""

    __slots__ = ("bound", "sources", "made", "stream")

    def __init__(self, bound: Any, sources: tuple[int, ...], made: Optional[tuple],
                 stream: Optional[int]) -> None:
        self.bound, self.sources, self.made, self.stream = bound, sources, made, stream

    def __call__(self, ptrs: list, out: Optional[Any]) -> Any:
        """The call's result, or None where it cannot be replayed (another
        stream than its workspace's: the full path then)."""
        if self.stream is not None:
            import torch

            device = self.bound._kernel._ordinal
            if torch.cuda.current_stream(device).cuda_stream != self.stream:
                return None
        if self.made is not None:
            import torch

            shape, dtype, device = self.made
            out = torch.empty(shape, dtype=dtype, device=device)
            made = out.data_ptr()
        self.bound(*[ptrs[j] if j >= 0 else made for j in self.sources])
        return out


def _tma_ok(out: Any) -> bool:
    """Whether TMA can store out (TMA_STORE): its start and rows on 16
    bytes."""
    return out.data_ptr() % 16 == 0 and out.stride(0) * out.element_size() % 16 == 0


def _replayed(call: tuple, tensors: tuple) -> tuple[Any, tuple]:
    """A call's result where it replays one made before (None otherwise),
    and its signature and tensors (the result last) for _record."""
    sig, ptrs = _signature(call, tensors)
    r = _REPLAYS.get(sig) if sig is not None else None
    return (r(ptrs, tensors[-1]) if r is not None else None), (sig, tensors)


def _record(replay: Optional[tuple], out: Any, out_made: bool, k_: Any, args: tuple,
            split: bool) -> None:
    """Keep the call of kernel k_ on args for replaying calls of its
    signature (replay: _replayed's signature and the call's tensors; none
    without a signature), out its result (out_made: made here), split
    whether it used a split K workspace (its stream's), where every tensor
    argument is one of the call's or a constant of the library."""
    import torch

    if replay is None or replay[0] is None:
        return
    sig, tensors = replay
    tensors = (*tensors[:-1], out)
    if len(_REPLAYS) >= _REPLAYS_MAX:
        _REPLAYS.clear()
    consts = {t.data_ptr() for t in (*_STAND_INS.values(), *_ONES.values())}
    if split:
        consts |= {t.data_ptr() for t in args[-2:]}
    ptrs = [t.data_ptr() if t is not None else None for t in tensors]
    rebind, sources = [], []
    for i, x in enumerate(args):
        if not isinstance(x, torch.Tensor):
            continue
        p = x.data_ptr()
        if out_made and p == ptrs[-1]:
            rebind.append(i)
            sources.append(-1)
        elif p in ptrs:
            rebind.append(i)
            sources.append(ptrs.index(p))
        elif p not in consts:
            return  # a copy of an operand: not the next call's
    out = tensors[-1]
    made = (tuple(out.shape), out.dtype, out.device) if out_made else None
    stream = torch.cuda.current_stream(out.device).cuda_stream if split else None
    _REPLAYS[sig] = _Replay(k_.bind(*args, rebind=tuple(rebind)), tuple(sources), made, stream)


def _product(name: str, entry: str, a: Any, b: Any, sa: Any, sb: Any, out: Optional[Any], od: Any,
             split_k: Optional[int], bk: int, alpha: float = 1.0, bias: Optional[Any] = None,
             activation: Optional[str] = None, c: Optional[Any] = None,
             beta: float = 1.0, rowwise: bool = False, replay: Optional[tuple] = None) -> Any:
    """out = activation(alpha sa sb (a @ b) + bias) + beta c through
    kernels/gemm (the registry's entry). replay: the call's signature and
    tensors (its out last), for _record."""
    import torch

    out_made = out is None

    check_device(a, b)
    m, k = a.shape
    n = b.shape[1]
    out = _output(name, out, od, m, n, a.device)
    if m == 0 or n == 0:
        return out
    bias_arg, act, c_arg = _epilogue_operands(name, m, n, out, bias, activation, c)
    fused = bias is not None or act != 0 or c is not None
    sms = sm_count(a.device)
    pad = 16 // a.element_size()
    # A persistent grid: one block per multiprocessor. Split K asked for
    # runs on 64 x 128 tiles.
    tile = _tile(m, n, sms) if split_k in (None, 1) else 2
    split = _split(split_k, tile, m, n, k, bk, sms,
                   not fused and not rowwise and not (_n_major(b, pad) and entry == "gemm"))
    if split > 1 and (fused or rowwise):
        raise FlyError(f"{name}: split_k is for plain products: no bundle is built for one with "
                       f"bias, activation, c or rowwise scales", Status.ARGUMENTS)
    if k == 0:
        return _epilogue_of_zeros(out, bias_arg if bias is not None else None, activation,
                                  c_arg if c is not None else None, beta)
    A = _k_major(a, 1, pad)
    if _n_major(b, pad) and entry == "gemm" and split == 1:
        # b as it is, N-contiguous: the NN kernel reads it MN-major.
        entry, B = "gemm_nn", b.t()
    else:
        B = _k_major(b, 0, pad)  # (N, K)
    # Pairs of outputs stored (and of c read) at once where D's width, start
    # and rows, and c's, are even.
    pair = (n % 2 == 0 and out.data_ptr() % (2 * out.element_size()) == 0 and
            out.stride(0) % 2 == 0 and
            (c is None or (c_arg.data_ptr() % (2 * c_arg.element_size()) == 0 and
                           c_arg.stride(0) % 2 == 0)))
    # Where D's start and rows also lie on 16 bytes, as TMA needs, its tiles
    # are stored by TMA (TMA_STORE: staged in shared memory and stored while
    # the next tile's MMAs run), else from the registers.
    tma = pair and _tma_ok(out)
    # The kernel of these choices, found once (the call's cost on the host
    # matters to products of few rows).
    key = (entry, a.dtype, b.dtype, od, tile, bk, pair, tma, split, bias is None, act, c is None,
           rowwise, a.device)
    k_ = _KERNELS.get(key)
    if k_ is None:
        consts = {**_input_types(entry, a, b), "TD": fly_type(od), **_TILES[tile], "BK": bk,
                  "PAIR": pair, "TMA_STORE": tma, "SPLIT": split, "BIAS": bias is not None,
                  "ACT": act, "RES": c is not None, "ROWWISE": rowwise}
        # A ping-pong consumer's registers do not hold both bias and c.
        consts["PINGPONG"] = consts["PINGPONG"] and (bias is None or c is None)
        k_ = _KERNELS[key] = kernel(entry, consts, a.device)
    if split > 1:
        # Work holds a tile of f32 sums for each tile (64 rows: one
        # consumer), Count a count for each.
        t = _TILES[tile]
        tiles = -(-m // t["BM"]) * -(-n // t["BN"])
        work, count = _workspace(a.device, tiles * t["BM"] * t["BN"], tiles)
    else:
        work, count = (_stand_in(a.device, torch.float32), _stand_in(a.device, torch.int32))
    args = (A, B, out, sa, sb, sms, alpha, bias_arg, c_arg, beta, work, count)
    k_(*args)
    _record(replay, out, out_made, k_, args, split > 1)
    return out


def _epilogue_of_zeros(out: Any, bias: Optional[Any], activation: Optional[str],
                       c: Optional[Any], beta: float) -> Any:
    """out = activation(0 + bias) + beta c by PyTorch: the result of a
    product with K = 0 (no products)."""
    import torch

    if bias is None and activation is None and c is None:
        return out.zero_()
    x = torch.zeros(out.shape, dtype=torch.float32, device=out.device)
    if bias is not None:
        x += bias.float()
    x = _torch_activation(x, activation)
    if c is not None:
        x += beta * c.float()
    return out.copy_(x)


def _input_types(entry: str, a: Any, b: Any) -> dict[str, str]:
    """The kernel's input-type consts: T (A's), and for scaled_mm TB (B's,
    which may be the other fp8 type); gemm's entries take T alone."""
    if entry == "scaled_mm":
        return {"T": fly_type(a.dtype), "TB": fly_type(b.dtype)}
    return {"T": fly_type(a.dtype)}


def _torch_activation(x: Any, activation: Optional[str]) -> Any:
    """The activation by PyTorch (the epilogue of a product with K = 0)."""
    import torch.nn.functional as F

    if activation == "relu":
        return F.relu(x)
    if activation == "silu":
        return F.silu(x)
    if activation == "gelu":
        return F.gelu(x)
    if activation == "gelu_tanh":
        return F.gelu(x, approximate="tanh")
    return x


_CAPABILITY: dict[Any, tuple[int, int]] = {}


def _arch(arch: Optional[str], device: Any, who: str = "gemm") -> str:
    """The kernel a product runs on device: arch when given ("sm_90a" or
    "sm_80"), else the Hopper kernel on compute capability 9.0 (wgmma and
    setmaxnreg exist there only: sm_90a code runs on no later GPU) and the
    Ampere kernel elsewhere. who names the function in errors."""
    if arch not in (None, "sm_80", "sm_90a"):
        raise FlyError(f"{who}: arch is \"sm_90a\" or \"sm_80\", not {arch!r}", Status.ARGUMENTS)
    cap = _CAPABILITY.get(device)
    if cap is None:
        import torch

        cap = _CAPABILITY[device] = torch.cuda.get_device_capability(device)
    if arch == "sm_90a" and cap != (9, 0):
        raise FlyError(f"{who}: arch sm_90a runs on GPUs of compute capability 9.0, not "
                       f"{cap[0]}.{cap[1]}", Status.ARGUMENTS)
    return arch or ("sm_90a" if cap == (9, 0) else "sm_80")


def _tile_sm80(m: int, n: int, sms: int) -> dict[str, int]:
    """The Ampere kernel's tile for a product of M x N on sms
    multiprocessors: 128 x 128 (4 warps, 4 stages of 32) where those tiles
    fill the multiprocessors, else 64 x 128 (more tiles for few rows)."""
    if -(-m // 128) * -(-n // 128) >= sms:
        return {"BM": 128, "BN": 128, "BK": 32, "STAGES": 4, "WARPS_M": 2, "WARPS_N": 2}
    return {"BM": 64, "BN": 128, "BK": 32, "STAGES": 4, "WARPS_M": 2, "WARPS_N": 2}


def _product_sm80(a: Any, b: Any, sa: Any, sb: Any, out: Optional[Any], od: Any) -> Any:
    """out = sa sb (a @ b) through kernels/gemm/gemm_sm80.fly (the
    registry's gemm_sm80): one block per tile, no split K."""
    check_device(a, b)
    m, k = a.shape
    n = b.shape[1]
    out = _output("gemm", out, od, m, n, a.device)
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    # cp.async moves 16 bytes: rows whose stride is a multiple of them.
    pad = 16 // a.element_size()
    A = _k_major(a, 1, pad)
    B = _k_major(b, 0, pad)  # (N, K)
    pair = (n % 2 == 0 and out.data_ptr() % (2 * out.element_size()) == 0 and
            out.stride(0) % 2 == 0)
    consts = {"T": fly_type(a.dtype), "TD": fly_type(od),
              **_tile_sm80(m, n, sm_count(a.device)), "PAIR": pair}
    kernel("gemm_sm80", consts, a.device)(A, B, out, sa, sb, 1)
    return out


def _check_shapes(name: str, a: Any, b: Any) -> None:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise FlyError(f"{name}: a is (M, K) and b (K, N), not {tuple(a.shape)} and "
                       f"{tuple(b.shape)}", Status.ARGUMENTS)


@accepts_dlpack
def gemm(a: Any, b: Any, *, bias: Optional[Any] = None, activation: Optional[str] = None,
         c: Optional[Any] = None, alpha: float = 1.0, beta: float = 1.0,
         out: Optional[Any] = None, out_dtype: Optional[Any] = None,
         split_k: Optional[int] = None, arch: Optional[str] = None) -> Any:
    """a @ b for a (M, K) and b (K, N) of bfloat16 or float16, f32
    accumulation; the result (M, N) of out_dtype (a's type by default;
    bfloat16, float16 or float32), written to out when given (any row
    stride, columns contiguous). With a fused epilogue, the result is

        activation(alpha * (a @ b) + bias) + beta * c

    computed in f32 before the one rounding to out_dtype: bias a vector of
    N values, activation "relu", "silu", "gelu" (erf) or "gelu_tanh", c an
    (M, N) tensor (a residual), each optional. split_k cuts K in that many
    parts whose f32 sums meet in a workspace (their order varies from run
    to run); by default few rows of a long K are split (_split); asked for,
    it takes no bias, activation or c. arch picks the kernel:
    "sm_90a" the Hopper one (TMA, wgmma; compute capability 9.0 only),
    "sm_80" the Ampere one (cp.async, ldmatrix, mma.sync; any GPU from
    8.0; no split_k and no fused epilogue yet); by default the Hopper
    kernel on 9.0 and the Ampere one elsewhere."""
    done, replay = _replayed(("gemm", activation, alpha, beta, out_dtype, split_k, arch),
                             (a, b, bias, c, out))
    if done is not None:
        return done
    _check_shapes("gemm", a, b)
    if a.dtype != b.dtype or fly_type(a.dtype) not in _INPUTS:
        raise FlyError(f"gemm: a and b are both bfloat16 or both float16, not {a.dtype} and "
                       f"{b.dtype}", Status.ARGUMENTS)
    od = out_dtype or (out.dtype if out is not None else a.dtype)
    one = _one(a.device)
    if _arch(arch, check_device(a, b)) == "sm_80":
        if split_k not in (None, 1):
            raise FlyError("gemm: split_k is for the Hopper kernel (arch sm_90a), not the Ampere "
                           "one", Status.ARGUMENTS)
        if bias is not None or activation is not None or c is not None or alpha != 1.0:
            raise FlyError("gemm: the fused epilogue (bias, activation, c, alpha) is for the "
                           "Hopper kernel (arch sm_90a), not the Ampere one yet",
                           Status.ARGUMENTS)
        return _product_sm80(a, b, one, one, out, od)
    return _product("gemm", "gemm", a, b, one, one, out, od, split_k, 64, alpha, bias, activation,
                    c, beta, replay=replay)


def _check_fp8_pair(a: Any, b: Any) -> None:
    """scaled_mm's operand types, as torch._scaled_mm's on CUDA: each of a
    and b float8_e4m3fn or float8_e5m2, not both float8_e5m2 (wgmma would
    multiply them, but cuBLAS does not, so torch refuses them)."""
    import torch

    fp8 = (torch.float8_e4m3fn, torch.float8_e5m2)
    for x, what in ((a, "a"), (b, "b")):
        if x.dtype not in fp8:
            raise FlyError(f"scaled_mm: {what} is float8_e4m3fn or float8_e5m2, not {x.dtype}",
                           Status.ARGUMENTS)
    if a.dtype == b.dtype == torch.float8_e5m2:
        raise FlyError("scaled_mm: b is float8_e4m3fn where a is float8_e5m2: two float8_e5m2 "
                       "matrices are not multiplied (nor by torch._scaled_mm)", Status.ARGUMENTS)


@accepts_dlpack
def scaled_mm(a: Any, b: Any, scale_a: Any, scale_b: Any, *, bias: Optional[Any] = None,
              activation: Optional[str] = None, out: Optional[Any] = None,
              out_dtype: Optional[Any] = None, split_k: Optional[int] = None) -> Any:
    """(a @ b) * scale_a * scale_b for a (M, K) and b (K, N) of float8, as
    torch._scaled_mm: both float8_e4m3fn, or one float8_e5m2 and the other
    float8_e4m3fn (either way round; two float8_e5m2 are refused, as torch
    refuses them), per tensor or rowwise alike; scale_a and scale_b float32
    tensors of one element (per tensor) or rowwise, (M, 1) and (1, N): a
    scale for each row of a and each column of b (read on the GPU: no host
    wait); f32 accumulation, the result of out_dtype (bfloat16 by default,
    float16 or float32). b is read K-contiguous: pass w.t() of an (N, K)
    weight. bias (N values) and activation as gemm's:
    activation((a @ b) * scale_a * scale_b + bias). Block scales, scale_a
    (M, ceil(K / 128)) and scale_b (ceil(K / 128), ceil(N / 128)) as
    torch._scaled_mm's blockwise form (1 x 128 and 128 x 128), are
    recognised by their shapes and run blockscale_mm (no split_k)."""
    import torch

    done, replay = _replayed(("scaled_mm", activation, out_dtype, split_k),
                             (a, b, scale_a, scale_b, bias, out))
    if done is not None:
        return done
    _check_shapes("scaled_mm", a, b)
    _check_fp8_pair(a, b)
    od = out_dtype or (out.dtype if out is not None else torch.bfloat16)
    if _blockwise(scale_a, scale_b, *a.shape, b.shape[1]):
        if split_k not in (None, 1):
            raise FlyError("scaled_mm: split_k is for per-tensor and rowwise scales, not block "
                           "scales", Status.ARGUMENTS)
        return _blockscale_product("scaled_mm", a, b, scale_a, scale_b, bias, activation, out, od,
                                   replay)
    sa, sb, rowwise = _scales(scale_a, scale_b, a.shape[0], b.shape[1], a.device)
    return _product("scaled_mm", "scaled_mm", a, b, sa, sb, out, od, split_k, 128, 1.0, bias,
                    activation, rowwise=rowwise, replay=replay)


# The K extent of a block scale (both operands') and of the blockscale
# kernel's K step.
_SCALE_BLOCK = 128

# The tiles _blockscale_tile chooses from (BK is the scale block). 192 x 128
# has three consumer warpgroups (OVERLAP false, the kernel's default there).
_BLOCKSCALE_TILES = ({"BM": 128, "BN": 128, "STAGES": 5, "CLUSTER": 1},
                     {"BM": 64, "BN": 128, "STAGES": 7, "CLUSTER": 1},
                     {"BM": 128, "BN": 128, "STAGES": 5, "CLUSTER": 2},
                     {"BM": 192, "BN": 128, "STAGES": 4, "CLUSTER": 2})

# How much faster a multiprocessor runs the blockscale kernel's 192 x 128
# tiles in clusters of two than 128 x 128 ones, all else equal: 1.04-1.07
# from the ratios timed over ten shapes once each one's waste
# (_blockscale_work) is taken out.
_BLOCKSCALE_192_GAIN = 1.05


def _blockscale_work(m: int, n: int, sms: int, bm: int, cluster: int) -> float:
    """The part of a product of M x N in tiles of bm x 128 that is D's: the
    persistent grid's sms / cluster clusters walk units of cluster tile
    rows by one tile column, so the last round's idle clusters (_filled)
    and the tiles' parts past D's edges are waste."""
    units = -(-m // (bm * cluster)) * -(-n // 128)
    return m * n / (units * bm * cluster * 128) * _filled(units, max(1, sms // cluster))


def _blockscale_tile(m: int, n: int, sms: int, pair: bool, tma: bool) -> int:
    """The blockscale kernel's tile for a product of M x N on sms
    multiprocessors (its index in _BLOCKSCALE_TILES), D stored in pairs
    (pair) and by TMA (tma) or not. 128 x 128, two consumer warpgroups,
    where those tiles fill the multiprocessors, in clusters of two sharing
    B's stages where there are at least 30 tiles a multiprocessor (L2's
    traffic then paced the product: 0.89-0.93 of cuBLAS at 8192^3 against
    0.83-0.91); else 64 x 128 (twice the tiles, for few rows). 192 x 128 in
    clusters of two (stored by TMA: from registers it ran 8-15 % slower)
    where its speed times the part of its work that is D's beats 128 x
    128's: 1.01-1.08 of cuBLAS against 0.92-1.02 on products of 7.8 or more
    of its tiles a multiprocessor with few rows past M; 0.93 at 4096^3
    (5.3 tiles: the last of 6 waves a third full) and 0.92 at 1024 x
    128256 (an eighth of the rows past M), where 128 x 128 is kept."""
    tiles = -(-m // 128) * -(-n // 128)
    if m <= 64 or tiles < sms:
        return 1
    tile = 2 if pair and tiles >= 30 * sms else 0
    if pair and tma and (_BLOCKSCALE_192_GAIN * _blockscale_work(m, n, sms, 192, 2) >
                         _blockscale_work(m, n, sms, 128, _BLOCKSCALE_TILES[tile]["CLUSTER"])):
        return 3
    return tile


def _blocks(x: int) -> int:
    return -(-x // _SCALE_BLOCK)


def _blockwise(scale_a: Any, scale_b: Any, m: int, k: int, n: int) -> bool:
    """Whether scale_a and scale_b are block scales (blockscale_mm's shapes,
    (M, ceil(K / 128)) and (ceil(K / 128), ceil(N / 128))) that do not also
    read as per-tensor or rowwise ones: with K <= 128 an (M, 1) scale_a is
    both, and both mean the same (one K block), as do the two readings of
    (1, 1) scales; scaled_mm then takes them as rowwise."""
    shape = lambda s: tuple(getattr(s, "shape", ()))  # noqa: E731
    if shape(scale_a) != (m, _blocks(k)) or shape(scale_b) != (_blocks(k), _blocks(n)):
        return False
    rowwise = (scale_b.numel() in (1, n) and 1 in shape(scale_b) and
               scale_a.numel() in (1, m) and 1 in shape(scale_a))
    return not rowwise


def _block_scales(name: str, scale_a: Any, scale_b: Any, m: int, k: int, n: int,
                  device: Any) -> tuple[Any, Any]:
    """blockscale_mm's scales checked, as the kernel takes them: SA (M,
    ceil(K / 128)) as it is, SB as scale_b's transpose, (ceil(N / 128),
    ceil(K / 128)); any strides (the kernel reads one value at a time)."""
    import torch

    kb, nb = _blocks(k), _blocks(n)
    for s, what, want, role in ((scale_a, "scale_a", (m, kb), "a row of a and 128 of K"),
                                (scale_b, "scale_b", (kb, nb), "128 of K and 128 columns of b")):
        if (not isinstance(s, torch.Tensor) or s.dtype != torch.float32 or
                tuple(s.shape) != want):
            got = (f"{tuple(s.shape)} of {s.dtype}" if isinstance(s, torch.Tensor)
                   else type(s).__name__)
            raise FlyError(f"{name}: {what} is a float32 tensor of shape {want} (a scale per "
                           f"{role}), not {got}", Status.ARGUMENTS)
        check_device(s)
        if s.device != device:
            raise FlyError(f"{name}: {what} is on {s.device}, the operands on {device}",
                           Status.ARGUMENTS)
    return scale_a, scale_b.t()


def _blockscale_product(name: str, a: Any, b: Any, scale_a: Any, scale_b: Any,
                        bias: Optional[Any], activation: Optional[str], out: Optional[Any],
                        od: Any, replay: Optional[tuple] = None) -> Any:
    """out = activation(blockwise-scaled a @ b + bias) through
    kernels/gemm/gemm_blockscale.fly (the registry's blockscale_mm), for
    float8_e4m3fn a and b (its bundles' type); replay as _product's."""
    import torch

    out_made = out is None
    if a.dtype != torch.float8_e4m3fn or b.dtype != torch.float8_e4m3fn:
        raise FlyError(f"{name}: a and b are float8_e4m3fn with block scales, not {a.dtype} and "
                       f"{b.dtype}", Status.ARGUMENTS)
    device = check_device(a, b)
    if _arch(None, device) != "sm_90a":
        raise FlyError(f"{name}: block scales run on Hopper GPUs (compute capability 9.0) only",
                       Status.ARGUMENTS)
    m, k = a.shape
    n = b.shape[1]
    sa, sb = _block_scales(name, scale_a, scale_b, m, k, n, device)
    out = _output(name, out, od, m, n, device)
    if m == 0 or n == 0:
        return out
    bias_arg, act, _ = _epilogue_operands(name, m, n, out, bias, activation, None)
    if k == 0:
        return _epilogue_of_zeros(out, bias_arg if bias is not None else None, activation, None,
                                  1.0)
    A = _k_major(a, 1, 16)
    B = _k_major(b, 0, 16)  # (N, K)
    pair = n % 2 == 0 and out.data_ptr() % (2 * out.element_size()) == 0 and out.stride(0) % 2 == 0
    sms = sm_count(device)
    tma_ok = pair and _tma_ok(out)
    tile = _blockscale_tile(m, n, sms, pair, tma_ok)
    # D stored by TMA where its start and rows lie on 16 bytes (as gemm's),
    # but for a 64-row tile with a bias (its consumer's registers hold not
    # both: ptxas spills).
    tma = tma_ok and not (bias is not None and _BLOCKSCALE_TILES[tile]["BM"] == 64)
    key = ("blockscale_mm", od, tile, pair, tma, bias is None, act, device)
    k_ = _KERNELS.get(key)
    if k_ is None:
        consts = {"T": "f8e4m3", "TD": fly_type(od), **_BLOCKSCALE_TILES[tile], "PAIR": pair,
                  "TMA_STORE": tma, "BIAS": bias is not None, "ACT": act}
        k_ = _KERNELS[key] = kernel("blockscale_mm", consts, device)
    args = (A, B, out, sa, sb, sms, bias_arg)
    k_(*args)
    _record(replay, out, out_made, k_, args, False)
    return out


@accepts_dlpack
def blockscale_mm(a: Any, b: Any, scale_a: Any, scale_b: Any, *, bias: Optional[Any] = None,
                  activation: Optional[str] = None, out: Optional[Any] = None,
                  out_dtype: Optional[Any] = None) -> Any:
    """The blockwise-scaled fp8 product of DeepSeek-V3, as torch._scaled_mm's
    blockwise form (1 x 128 scales for a, 128 x 128 for b): a (M, K) and b
    (K, N) of float8_e4m3fn, scale_a float32 (M, ceil(K / 128)), one per row
    of a and 128 of K, scale_b float32 (ceil(K / 128), ceil(N / 128)), one
    per 128 x 128 block of b;

        out[i, j] = sum_kb scale_a[i, kb] scale_b[kb, j // 128]
                           sum_{k in block kb} a[i, k] b[k, j]

    with f32 sums, the result of out_dtype (bfloat16 by default, float16
    or float32), written to out when given (any row stride, columns
    contiguous). b is read K-contiguous: pass w.t() of an (N, K) weight
    quantised by 128 x 128 blocks, with scale_b = its (N / 128, K / 128)
    scales transposed (torch._scaled_mm's shapes). The scales may have any
    strides (torch._scaled_mm asks for an M-major scale_a, stride (1, M),
    and a scale_b whose transpose is row-major: both are accepted, as are
    others). bias (N values) and activation as scaled_mm's:
    activation(product + bias). Hopper (compute capability 9.0) only; any
    M, N and K. scaled_mm(a, b, scale_a, scale_b) takes the same block
    scales (recognised by their shapes) and calls this."""
    import torch

    done, replay = _replayed(("blockscale_mm", activation, out_dtype),
                             (a, b, scale_a, scale_b, bias, out))
    if done is not None:
        return done
    _check_shapes("blockscale_mm", a, b)
    od = out_dtype or (out.dtype if out is not None else torch.bfloat16)
    return _blockscale_product("blockscale_mm", a, b, scale_a, scale_b, bias, activation, out, od,
                               replay)


def _experts_k_major(b: Any, pad: int) -> Any:
    """b (E, N, K) as the (E N, K) matrix of its rows, K contiguous with a
    row stride that is a multiple of `pad` elements: a view where b's
    experts and rows already lie one stride apart (a contiguous b, or one
    padded along K), else a copy."""
    import torch

    e, n, k = b.shape
    if (b.stride(2) == 1 and b.stride(1) % pad == 0 and b.stride(0) == n * b.stride(1) and
            b.data_ptr() % 16 == 0):
        return torch.as_strided(b, (e * n, k), (b.stride(1), 1))
    kp = -(-k // pad) * pad
    buf = torch.empty((e * n, kp), dtype=b.dtype, device=b.device)[:, :k]
    buf.view(e, n, k).copy_(b)
    return buf


def _grouped_tile(m: int, groups: int) -> dict[str, int]:
    """The grouped kernel's tile for M rows in `groups` groups: a group's
    last tile is partly past its end, about half a tile on average, so
    128-row tiles (two consumer warpgroups sharing each stage of B) where
    the groups average 256 rows or more, else 64 rows. Not measured yet:
    tests/bench/grouped_gemm.py compares them."""
    if m >= 256 * groups:
        return {"BM": 128, "BN": 128, "BK": 64, "STAGES": 6}
    return {"BM": 64, "BN": 128, "BK": 64, "STAGES": 6}


@accepts_dlpack
def grouped_gemm(a: Any, b: Any, offs: Any, *, out: Optional[Any] = None,
                 out_dtype: Optional[Any] = None) -> Any:
    """The grouped product of a mixture of experts, as
    torch._grouped_mm(a, b.transpose(-2, -1), offs=offs): a (M, K) holds
    rows grouped by expert, b (E, N, K) the experts' weights (as a linear
    layer keeps its (N, K) weight), offs an int32 tensor of E values on
    the GPU, where each group ends: group e is rows offs[e - 1] (0 for
    e = 0) to offs[e] of a, and

        out[rows of e] = a[rows of e] @ b[e].T

    with f32 sums, a and b both bfloat16 or both float16, the result (M, N)
    of out_dtype (a's type by default; bfloat16, float16 or float32),
    written to out when given (any row stride, columns contiguous). Groups
    may be empty; offs is non-decreasing with offs[E - 1] <= M, and rows of
    out past offs[E - 1] are left as they were. offs is never read by the
    host (no wait for the GPU): an offs that breaks these rules is not
    refused, but the kernel takes a group ending before the one before it
    as empty and never touches a row past M. Hopper (compute capability
    9.0) only. a and b are read K-contiguous as gemm reads them, copied
    first where their strides do not allow it."""
    import torch

    if a.dim() != 2 or b.dim() != 3 or a.shape[1] != b.shape[2]:
        raise FlyError(f"grouped_gemm: a is (M, K) and b (E, N, K), not {tuple(a.shape)} and "
                       f"{tuple(b.shape)}", Status.ARGUMENTS)
    if a.dtype != b.dtype or fly_type(a.dtype) not in _INPUTS:
        raise FlyError(f"grouped_gemm: a and b are both bfloat16 or both float16, not {a.dtype} "
                       f"and {b.dtype}", Status.ARGUMENTS)
    if not isinstance(offs, torch.Tensor) or offs.dtype != torch.int32 or offs.dim() != 1:
        what = (f"{tuple(offs.shape)} of {offs.dtype}" if isinstance(offs, torch.Tensor)
                else type(offs).__name__)
        raise FlyError(f"grouped_gemm: offs is a vector of int32 (each group's end), not {what}",
                       Status.ARGUMENTS)
    m, k = a.shape
    e, n, _ = b.shape
    if offs.shape[0] != e:
        raise FlyError(f"grouped_gemm: offs holds one end per expert: {e} values (b is "
                       f"{tuple(b.shape)}), not {offs.shape[0]}", Status.ARGUMENTS)
    device = check_device(a, b, offs)
    if _arch(None, device) != "sm_90a":
        raise FlyError("grouped_gemm: runs on Hopper GPUs (compute capability 9.0) only",
                       Status.ARGUMENTS)
    od = out_dtype or (out.dtype if out is not None else a.dtype)
    if out is not None:
        check_device(a, out)
    out = _output("grouped_gemm", out, od, m, n, device)
    if m == 0 or n == 0 or e == 0:
        return out
    if k == 0:
        # No products: the groups' rows are zeros (the rows before offs[E - 1],
        # found on the GPU).
        ends = offs[-1:].clamp(0, m)
        inside = torch.arange(m, device=device).unsqueeze(1) < ends
        return out.masked_fill_(inside, 0)
    pad = 16 // a.element_size()
    A = _k_major(a, 1, pad)
    B = _experts_k_major(b, pad)
    pair = n % 2 == 0 and out.data_ptr() % (2 * out.element_size()) == 0 and out.stride(0) % 2 == 0
    consts = {"T": fly_type(a.dtype), "TD": fly_type(od), **_grouped_tile(m, e), "PAIR": pair}
    one = _one(device)
    kernel("grouped_gemm", consts, device)(A, B, out, offs.contiguous(), one, one,
                                            sm_count(device))
    return out

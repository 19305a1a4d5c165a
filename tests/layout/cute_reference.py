#!/usr/bin/env python3
"""cute_reference.py -- an independent model of CuTe's layout algebra.

Written from the semantics of CuTe C++ (CUTLASS include/cute/layout.hpp,
int_tuple.hpp, stride.hpp, underscore.hpp, algorithm/tuple_algorithms.hpp,
as of CUTLASS 4.3.x, commit 7107b0553), standard library only.  It exists to
check Fly's `sema/` layout algebra differentially (see differential.py).

Model
-----
* An IntTuple is a Python int or a Python tuple of IntTuples.
* `_` (Underscore) is the singleton `U`.
* A Layout is (shape, stride), two congruent IntTuples.
* A tiler is `U`, an int n, a Layout, or a tuple of tilers.

Every integer is treated as a *static* CuTe integer (Int<N>): that is the
setting in which CuTe checks its preconditions (static_assert) and in which
its results are canonical.  A failed static_assert / ill-formed instantiation
raises `CuteRefuse`.  A computation that CuTe performs without complaint but
that yields a value that is not a layout (a shape <= 0) raises `CuteGarbage`
(CuTe would return garbage; a tool that refuses is not wrong).

Where pycute (python/pycute) and CuTe C++ differ, this module follows CuTe C++;
each such place is marked "pycute differs".

Flavours
--------
Most functions take `flavor='cute'` (pure CuTe C++) or `flavor='flydoc'`:
the latter applies the deviations that Fly's docs/layout-algebra.md
documents (section 5 and the operation reference), implemented here from the
text of that document, not from Fly's code.  differential.py uses 'flydoc'
only to *classify* disagreements with 'cute' as documented or not.
"""

from __future__ import annotations

import math
import sys

__all__ = [
    "U", "Layout", "CuteError", "CuteRefuse", "CuteGarbage", "FlyDocRefuse",
    "parse_value", "parse_layout", "parse_tuple", "parse_tiler",
    "tuple_str", "layout_str", "layout_arg_str", "tiler_str",
    "OPS", "run_op",
]


# ---------------------------------------------------------------------------
# errors

class CuteError(Exception):
    """The reference refuses the input."""


class CuteRefuse(CuteError):
    """CuTe C++ does not compile this (static_assert / ill-formed)."""


class CuteGarbage(CuteError):
    """CuTe C++ computes something, but it is not a valid layout."""


class FlyDocRefuse(CuteError):
    """Fly's documentation says Fly refuses this input (flavor 'flydoc')."""

    def __init__(self, msg, item):
        super().__init__(msg)
        self.item = item


def refuse(msg):
    raise CuteRefuse(msg)


# ---------------------------------------------------------------------------
# underscore

class _Underscore:
    __slots__ = ()

    def __repr__(self):
        return "_"


U = _Underscore()


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def is_tuple(x):
    return isinstance(x, tuple)


# ---------------------------------------------------------------------------
# C++ integer arithmetic (truncating division, as for static Int<N>)

def c_div(a, b):
    if b == 0:
        raise CuteRefuse("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a, b):
    return a - b * c_div(a, b)


def signum(a):
    return (a > 0) - (a < 0)


def ceil_div_int(a, b):
    # cute: (a + b - 1) / b
    return c_div(a + b - 1, b)


# ---------------------------------------------------------------------------
# IntTuple algorithms (int_tuple.hpp, tuple_algorithms.hpp)

def rank(t):
    return len(t) if is_tuple(t) else 1


def depth(t):
    if is_tuple(t):
        if len(t) == 0:
            # cute::max() of an empty pack does not compile; Fly says 1
            return 1
        return 1 + max(depth(x) for x in t)
    return 0


def product(t):
    if is_tuple(t):
        p = 1
        for x in t:
            p *= product(x)
        return p
    return t


size_of = product


def flatten_to_tuple(t):
    if is_tuple(t):
        out = []
        for x in t:
            out.extend(flatten_to_tuple(x))
        return tuple(out)
    return (t,)


def flatten(t):
    """cute::flatten: a tuple becomes a flat tuple; an int stays an int."""
    return flatten_to_tuple(t) if is_tuple(t) else t


def unwrap(t):
    while is_tuple(t) and len(t) == 1:
        t = t[0]
    return t


def wrap(t):
    return t if is_tuple(t) else (t,)


def get(t, i):
    if is_tuple(t):
        if not 0 <= i < len(t):
            refuse(f"get<{i}> out of range for rank {len(t)}")
        return t[i]
    if i != 0:
        refuse(f"get<{i}> of an integer")
    return t


def congruent(a, b):
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def ceil_div(a, b):
    """cute::ceil_div on IntTuples."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) < len(b):
                refuse("ceil_div: mismatched ranks")
            bb = tuple(b) + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, bb))
        result = []
        rest = b
        for ai in a:
            result.append(ceil_div(ai, rest))
            rest = ceil_div(rest, ai)
        return tuple(result)
    if is_tuple(b):
        return ceil_div(a, product(b))
    return ceil_div_int(a, b)


def coalesce_shape(t):
    """cute::coalesce(Shape): with all-static integers, the product."""
    return product(t)


def compact_col_major(shape, current=1):
    """compact_major<LayoutLeft>(shape, current): static shape-1 -> stride 0."""
    if is_tuple(shape):
        out = []
        for s in shape:
            d, current = _compact_left(s, current)
            out.append(d)
        return tuple(out)
    d, _ = _compact_left(shape, current)
    return d


def _compact_left(shape, current):
    if is_tuple(shape):
        out = []
        for s in shape:
            d, current = _compact_left(s, current)
            out.append(d)
        return tuple(out), current
    if shape == 1:
        return 0, current
    return current, current * shape


def compact_row_major(shape, current=1):
    def rec(s, cur):
        if is_tuple(s):
            out = [None] * len(s)
            for i in range(len(s) - 1, -1, -1):
                out[i], cur = rec(s[i], cur)
            return tuple(out), cur
        if s == 1:
            return 0, cur
        return cur, cur * s
    return rec(shape, current)[0]


def repeat_like(t, x):
    if is_tuple(t):
        return tuple(repeat_like(a, x) for a in t)
    return x


def exchange_sort_kv(pairs):
    """cute::detail::exchange_sort on (key,val) pairs compared by key only.

    Not stable: equal keys can change order.  SortByKey in int_tuple.hpp."""
    a = list(pairs)
    n = len(a)
    for i in range(n):
        for j in range(i + 1, n):
            if a[j][0] < a[i][0]:
                a[i], a[j] = a[j], a[i]
    return a


# ---------------------------------------------------------------------------
# Layout

class Layout:
    __slots__ = ("shape", "stride")

    def __init__(self, shape, stride=None):
        if stride is None:
            stride = compact_col_major(shape)
        self.shape = shape
        self.stride = stride

    def __eq__(self, other):
        return (isinstance(other, Layout) and self.shape == other.shape
                and self.stride == other.stride)

    def __hash__(self):
        return hash((self.shape, self.stride))

    def __repr__(self):
        return f"Layout({layout_arg_str(self)})"

    def __str__(self):
        return layout_str(self)

    # L(i) for a 1-D index (CuTe's crd2idx with an integer coordinate:
    # indices past the size continue along the last mode)
    def __call__(self, i):
        return crd2idx_raw(i, self.shape, self.stride)


def make_layout(*layouts):
    """make_layout(L0, L1, ...): each layout becomes one mode."""
    return Layout(tuple(l.shape for l in layouts), tuple(l.stride for l in layouts))


def check_layout(L):
    """Validate a layout: congruent, positive shapes (else CuteGarbage)."""
    if not congruent(L.shape, L.stride):
        raise CuteGarbage(f"shape {tuple_str(L.shape)} and stride {tuple_str(L.stride)} not congruent")
    for s in flatten_to_tuple(L.shape):
        if s <= 0:
            raise CuteGarbage(f"result has a non-positive shape {s}: "
                              f"{layout_arg_str(L)}")
    return L


def layout_get(L, i):
    return Layout(get(L.shape, i), get(L.stride, i))


def layout_rank(L):
    return rank(L.shape)


def layout_size(L):
    return product(L.shape)


def cosize(L, flavor="cute"):
    """CuTe >= 3.9: size(coshape) = sum((s-1)*|d|) + 1 (layout.hpp coshape).

    pycute (and CuTe before 3.9) use L(size-1)+1."""
    total = 1
    for s, d in zip(flatten_to_tuple(L.shape), flatten_to_tuple(L.stride)):
        total += (s - 1) * abs(d)
    return total


# ---- crd2idx / idx2crd (stride.hpp) -----------------------------------------

def crd2idx_raw(c, shape, stride):
    """CuTe crd2idx(c, shape, stride), no range checks."""
    if is_tuple(c):
        if not is_tuple(shape):
            refuse("crd2idx: tuple coordinate for an integral shape")
        if len(c) != len(shape):
            refuse("crd2idx: mismatched ranks")
        return sum(crd2idx_raw(ci, si, di) for ci, si, di in zip(c, shape, stride))
    if c is U:
        c = 0
    if is_tuple(shape):
        if len(shape) == 0:
            return 0
        total = 0
        for k in range(len(shape)):
            if k == len(shape) - 1:
                total += crd2idx_raw(c, shape[k], stride[k])
            else:
                p = product(shape[k])
                total += crd2idx_raw(c % p, shape[k], stride[k])
                c = c // p
        return total
    return c * stride


def check_coord(c, shape):
    """Fly (doc 4.3, 5 item 12): a coordinate outside the shape is an error."""
    if is_tuple(c):
        if not is_tuple(shape) or len(c) != len(shape):
            raise FlyDocRefuse("coordinate does not match shape", 12)
        for ci, si in zip(c, shape):
            check_coord(ci, si)
        return
    if c is U:
        return
    if not 0 <= c < product(shape):
        raise FlyDocRefuse(f"coordinate {c} out of range for {tuple_str(shape)}", 12)


def idx2crd(i, shape):
    """CuTe idx2crd(idx, shape): natural coordinate, last leaf absorbs."""
    if is_tuple(shape):
        out = []
        for k, s in enumerate(shape):
            if k == len(shape) - 1:
                out.append(idx2crd(i, s))
            else:
                p = product(s)
                out.append(idx2crd(i % p, s))
                i //= p
        return tuple(out)
    return i


# ---- slice / dice (underscore.hpp) --------------------------------------------

def _lift_slice(a, b):
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            refuse("slice: mismatched ranks")
        out = ()
        for x, y in zip(a, b):
            out += _lift_slice(x, y)
        return out
    if a is U:
        return (b,)
    return ()


def slice_tuple(a, b):
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            refuse("slice: mismatched ranks")
        out = ()
        for x, y in zip(a, b):
            out += _lift_slice(x, y)
        return out
    if a is U:
        return b
    return ()


def _lift_dice(a, b):
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            refuse("dice: mismatched ranks")
        out = ()
        for x, y in zip(a, b):
            out += _lift_dice(x, y)
        return out
    if a is U:
        return ()
    return (b,)


def dice_tuple(a, b):
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            refuse("dice: mismatched ranks")
        out = ()
        for x, y in zip(a, b):
            out += _lift_dice(x, y)
        return out
    if a is U:
        return ()
    return b


def layout_slice(c, L, flavor="cute"):
    if flavor == "flydoc":
        check_coord(c, L.shape)
    sh = slice_tuple(c, L.shape)
    st = slice_tuple(c, L.stride)
    off = crd2idx_raw(c, L.shape, L.stride)
    return Layout(sh, st), off


def layout_dice(c, L, flavor="cute"):
    if flavor == "flydoc":
        check_coord(c, L.shape)
    return Layout(dice_tuple(c, L.shape), dice_tuple(c, L.stride))


# ---- modes ---------------------------------------------------------------------

def layout_select(L, idxs):
    return Layout(tuple(get(L.shape, i) for i in idxs), tuple(get(L.stride, i) for i in idxs))


def _group(t, b, e, flavor="cute"):
    n = rank(t)
    if not (0 <= b <= e <= n):
        refuse(f"group<{b},{e}> out of range for rank {n}")
    tt = wrap(t)
    # construct(t, take<B,E>(t), seq<B>, seq<(B<E)>, range<E,N>): an empty
    # range inserts NOTHING (tuple_algorithms.hpp group/construct).  Fly's
    # doc (4.2): "An empty range inserts an empty mode."
    mid = (tuple(tt[b:e]),) if b < e else ()
    return tuple(tt[:b]) + mid + tuple(tt[e:])


def layout_group(L, b, e, flavor="cute"):
    return Layout(_group(L.shape, b, e, flavor), _group(L.stride, b, e, flavor))


def _append(t, x):
    return t + (x,) if is_tuple(t) else (t, x)


def _prepend(t, x):
    return (x,) + t if is_tuple(t) else (x, t)


def _append_n(t, n, x):
    """append<N>(t, x): pad to rank N."""
    if is_tuple(t):
        if n == len(t):
            return t
        if n < len(t):
            refuse("append<N>: N below rank")
        return t + (x,) * (n - len(t))
    if n == 1:
        return t
    return (t,) + (x,) * (n - 1)


def layout_append(L, X=None):
    X = X or Layout(1, 0)
    return Layout(_append(L.shape, X.shape), _append(L.stride, X.stride))


def layout_prepend(L, X=None):
    X = X or Layout(1, 0)
    return Layout(_prepend(L.shape, X.shape), _prepend(L.stride, X.stride))


def layout_append_n(L, n):
    return Layout(_append_n(L.shape, n, 1), _append_n(L.stride, n, 0))


def _zip(t, flavor="cute"):
    """cute::zip(T): transpose; a tuple whose element 0 is not a tuple is wrapped.

    Under 'flydoc' (docs/layout-algebra.md 5.18) a leaf beside tuples counts
    as a tuple of one element, where CuTe's zip is ill-formed."""
    if is_tuple(t):
        if len(t) == 0:
            refuse("zip of an empty tuple")
        if flavor == "flydoc" and is_tuple(t[0]):
            t = tuple(x if is_tuple(x) else (x,) for x in t)
        if is_tuple(t[0]):
            r = len(t[0])
            for x in t:
                if not is_tuple(x):
                    refuse("zip: tuple_size of a non-tuple mode (ill-formed)")
                if len(x) != r:
                    refuse("zip: mismatched ranks")
            return tuple(tuple(x[j] for x in t) for j in range(r))
        return (t,)
    return t


def layout_zip(L, flavor="cute"):
    return Layout(_zip(L.shape, flavor), _zip(L.stride, flavor))


def layout_zip2(A, B, flavor="cute"):
    """zip(layoutA, layoutB) = make_layout(zip(sa, sb), zip(da, db))."""
    return Layout(_zip((A.shape, B.shape), flavor), _zip((A.stride, B.stride), flavor))


def layout_flatten(L):
    return Layout(flatten(L.shape), flatten(L.stride))


# ---- coalesce / filter (layout.hpp bw_coalesce) ------------------------------

def _bw_coalesce(fs, fd, new_s, new_d):
    """bw_coalesce<R-2>: fs/fd flat lists, (new_s,new_d) the starting back."""
    for I in range(len(fs) - 2, -1, -1):
        s, d = fs[I], fd[I]
        if s == 1:
            continue
        if is_int(new_s) and new_s == 1:
            new_s, new_d = s, d
        elif s * d == (new_d[0] if is_tuple(new_d) else new_d):
            front = new_s[0] if is_tuple(new_s) else new_s
            if is_tuple(new_s):
                new_s = (s * front,) + new_s[1:]
                new_d = (d,) + new_d[1:]
            else:
                new_s, new_d = s * front, d
        else:
            new_s = _prepend(new_s, s)
            new_d = _prepend(new_d, d)
    if is_int(new_s) and new_s == 1:
        return Layout(1, 0)
    return Layout(new_s, new_d)


def coalesce(L, profile=None):
    if profile is not None and is_tuple(profile):
        return _by_mode(L, profile, coalesce)
    fs = flatten_to_tuple(L.shape)
    fd = flatten_to_tuple(L.stride)
    if len(fs) == 0:
        refuse("coalesce of an empty layout")
    return _bw_coalesce(fs, fd, fs[-1], fd[-1])


def coalesce_x(L):
    """detail::coalesce_x: like coalesce but keeps the function past the size."""
    fs = flatten_to_tuple(L.shape)
    fd = flatten_to_tuple(L.stride)
    if len(fs) == 0:
        refuse("coalesce_x of an empty layout")
    if fs[-1] == 1:
        return _bw_coalesce(fs, fd, 2, fd[-1])
    return _bw_coalesce(fs, fd, fs[-1], fd[-1])


def _by_mode(L, profile, f):
    """transform_layout(layout, profile, f): modes past the profile are kept."""
    r = layout_rank(L)
    if len(profile) > r:
        refuse(f"profile of rank {len(profile)} exceeds layout rank {r}")
    modes = [f(layout_get(L, i), profile[i]) for i in range(len(profile))]
    modes += [layout_get(L, i) for i in range(len(profile), r)]
    return make_layout(*modes)


def filter_zeros(L):
    def fz(d, s):
        if is_tuple(d):
            return tuple(fz(x, y) for x, y in zip(d, s))
        return repeat_like(s, 1) if d == 0 else s
    return Layout(fz(L.stride, L.shape), L.stride)


def filter_layout(L, profile=None):
    if profile is not None and is_tuple(profile):
        return _by_mode(L, profile, filter_layout)
    return coalesce(filter_zeros(L))


# ---- composition (layout.hpp composition_impl) ----------------------------------

def _composition_impl(ls, ld, rs, rd, flavor, ctx):
    if is_tuple(rs):
        return make_layout(*[_composition_impl(ls, ld, s, d, flavor, ctx)
                             for s, d in zip(rs, rd)])
    if rd == 0:
        return Layout(rs, rd)
    if flavor == "flydoc":
        if rs == 1:
            return Layout(1, 0)              # doc 5 item 3
        if rd < 0:
            raise FlyDocRefuse("composition: negative stride in the right-hand layout", 1)
        _flydoc_composition_check(ls, rs, rd, ctx)
    if is_int(ls):
        return Layout(rs, rd * ld)
    R = len(ls)
    result_shape, result_stride = [], []
    rest_shape, rest_stride = rs, rd
    for i in range(R - 1):
        curr_shape, curr_stride = ls[i], ld[i]
        if not (c_mod(rest_stride, curr_shape) == 0 or rest_stride < curr_shape):
            refuse(f"Stride Divisibility Condition: stride {rest_stride}, shape {curr_shape}")
        next_shape = ceil_div_int(curr_shape, abs(rest_stride))
        next_stride = ceil_div_int(abs(rest_stride), curr_shape) * signum(rest_stride)
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        new_shape = min(next_shape, rest_shape)
        if c_mod(rest_shape, new_shape) != 0:
            refuse(f"Shape Divisibility Condition: shape {rest_shape}, {new_shape}")
        result_shape.append(new_shape)
        result_stride.append(rest_stride * curr_stride)
        rest_shape = c_div(rest_shape, new_shape)
        rest_stride = next_stride
    if not result_shape:
        return Layout(rest_shape, rest_stride * ld[R - 1])
    if rest_shape == 1:
        return Layout(unwrap(tuple(result_shape)), unwrap(tuple(result_stride)))
    return Layout(tuple(result_shape) + (rest_shape,),
                  tuple(result_stride) + (rest_stride * ld[R - 1],))


def _flydoc_composition_check(ls, n, r, ctx):
    """The admissibility conditions as docs/layout-algebra.md 4.5 states them.

    The samples 0, r, 2r, ... walk the (coalesced) modes s:d of L; the last
    mode is unbounded.  Stride divisibility: at each mode the samples reach,
    r and s divide one another -- unless B is a single leaf and all remaining
    samples fall inside that mode.  Shape divisibility: when the samples spill
    into the next mode, the number still to place is a multiple of the number
    this mode holds."""
    if is_int(ls):
        return
    single = ctx.get("single_leaf", False)
    for s in ls[:-1]:
        if r % s == 0:
            r //= s
            continue
        if s % r != 0:
            if single and (n - 1) * r < s:
                return
            raise FlyDocRefuse(f"composition: stride {r} and shape {s} do not divide "
                               "each other (stride divisibility, exact)", 1)
        held = s // r
        if n <= held:
            return
        if n % held != 0:
            raise FlyDocRefuse(f"composition: shape {n} is not a multiple of {held} "
                               "(shape divisibility)", 1)
        n //= held
        r = 1


def _count_leaves(t):
    return len(flatten_to_tuple(t))


def composition_layout(L, B, flavor="cute"):
    """composition(Layout lhs, Layout rhs)."""
    flat = coalesce_x(L)
    ctx = {"single_leaf": _count_leaves(B.shape) == 1}
    return _composition_impl(flat.shape, flat.stride, B.shape, B.stride, flavor, ctx)


def make_layout_int(n):
    """make_layout(Int<n>): compact, so n == 1 gives 1:0."""
    return Layout(n, compact_col_major(n))


def composition(L, T, flavor="cute"):
    """composition(Layout, Tiler): by mode for a tuple, modes past it dropped."""
    if is_tuple(T):
        if len(T) > layout_rank(L):
            refuse("composition: tiler has more modes than the layout")
        return make_layout(*[composition(layout_get(L, i), T[i], flavor) for i in range(len(T))])
    if T is U:
        return L
    if is_int(T):
        flat = coalesce_x(L)
        ctx = {"single_leaf": True}
        return _composition_impl(flat.shape, flat.stride, T, 1, flavor, ctx)
    return composition_layout(L, T, flavor)


# ---- complement ----------------------------------------------------------------

def complement(L, cotarget=None, flavor="cute"):
    f = filter_layout(L)
    if cotarget is None:
        cotarget = cosize(f, flavor)
    if flavor == "flydoc":
        _flydoc_complement_check(f, cotarget, "complement", 4)
    shape, stride = f.shape, f.stride
    if is_int(stride) and stride == 0:
        n = coalesce_shape(cotarget)
        return make_layout_int(n)
    R = rank(shape)
    shape_l = list(wrap(shape))
    stride_l = list(wrap(stride))
    result_shape = []
    result_stride = [1]
    for i in range(R - 1):
        min_stride = min(stride_l)
        min_idx = stride_l.index(min_stride)
        new_shape = c_div(min_stride, result_stride[i])
        new_stride = min_stride * shape_l[min_idx]
        if new_shape == 0:
            refuse("Non-injective Layout detected in complement.")
        del shape_l[min_idx]
        del stride_l[min_idx]
        result_shape.append(new_shape)
        result_stride.append(new_stride)
    new_shape = c_div(stride_l[0], result_stride[R - 1])
    if new_shape == 0:
        refuse("Non-injective Layout detected in complement.")
    result_shape.append(new_shape)
    new_stride = stride_l[0] * shape_l[0]
    rest_shape = coalesce_shape(ceil_div(cotarget, new_stride))
    rest_stride = compact_col_major(rest_shape, new_stride)
    out = coalesce(Layout((tuple(result_shape), rest_shape),
                          (tuple(result_stride), rest_stride)))
    return check_layout(out)


def _flydoc_complement_check(f, cotarget, what, item):
    if is_int(cotarget) and cotarget <= 0:
        raise FlyDocRefuse(f"{what}: cotarget not positive", item)
    pairs = [(d, s) for s, d in zip(flatten_to_tuple(f.shape), flatten_to_tuple(f.stride))
             if d != 0 and s != 1]
    for d, s in pairs:
        if d < 0:
            raise FlyDocRefuse(f"{what}: negative stride", item)
    cur = 1
    for d, s in sorted(pairs):
        if d < cur:
            raise FlyDocRefuse(f"{what}: modes overlap or interleave", item)
        if d % cur != 0:
            raise FlyDocRefuse(f"{what}: stride {d} not a multiple of {cur}", item)
        cur = s * d


# ---- inverses ------------------------------------------------------------------

def _preprod(lshape):
    out = [1]
    for s in lshape:
        out.append(out[-1] * s)
    return out


def right_inverse(L, flavor="cute"):
    c = coalesce(L)
    lstride = wrap(c.stride)
    lshape = wrap(c.shape)
    pre = _preprod(lshape)
    order = [v for _, v in exchange_sort_kv([(d, i) for i, d in enumerate(lstride)])]
    rs, rd, curr = [1], [0], 1
    for i in order:
        # pycute differs: it stops at the first mismatch (and so at a stride 0)
        if lstride[i] == curr:
            rs.append(lshape[i])
            rd.append(pre[i])
            curr = lshape[i] * lstride[i]
    return coalesce(Layout(tuple(rs), tuple(rd)))


def left_inverse(L, flavor="cute"):
    c = coalesce(L)
    lstride = wrap(c.stride)
    lshape = wrap(c.shape)
    pre = _preprod(lshape)
    order = [v for _, v in exchange_sort_kv([(d, i) for i, d in enumerate(lstride)])]
    if flavor == "flydoc":
        prev_ext = None
        prev_d = None
        for i in order:
            d, s = lstride[i], lshape[i]
            if d == 0:
                continue
            if d < 0:
                raise FlyDocRefuse("left_inverse: negative stride", 6)
            if prev_ext is not None and d < prev_ext:
                raise FlyDocRefuse("left_inverse: modes overlap or interleave", 6)
            if prev_d is not None and d % prev_d != 0:
                raise FlyDocRefuse("left_inverse: divisibility", 6)
            prev_ext, prev_d = s * d, d
    rs, rd = [], [0]
    for i in order:
        d = lstride[i]
        if d == 0:
            continue
        sz = product(tuple(rs))
        if c_mod(d, sz) != 0:
            refuse("Left inverse divisibility condition")
        rs.append(c_div(d, sz))
        rd.append(pre[i])
    rs.append(lshape[order[-1]])
    # pycute differs: left_inverse = right_inverse(make_layout(L, complement(L)))
    return check_layout(coalesce(Layout(tuple(rs), tuple(rd))))


# ---- divides -------------------------------------------------------------------

def logical_divide(L, T, flavor="cute"):
    if is_tuple(T):
        if len(T) > layout_rank(L):
            refuse("logical_divide: Too many modes in tiler.")
        return _by_mode(L, T, lambda l, t: logical_divide(l, t, flavor))
    if T is U:
        return L
    if is_int(T):
        return logical_divide(L, make_layout_int(T), flavor)
    if flavor == "flydoc":
        cot = layout_size(L)                     # doc 5 item 8
    else:
        cot = coalesce(L).shape                  # CuTe: shape(coalesce(layout))
    comp = complement(T, cot, flavor)
    return check_layout(composition_layout(L, make_layout(T, comp), flavor))


def _zip2_by(t, guide, flavor):
    if is_tuple(guide):
        if not is_tuple(t) or len(t) < len(guide):
            refuse("zip2_by: mismatched ranks")
        split = [_zip2_by(t[i], guide[i], flavor) for i in range(len(guide))]
        return (tuple(x[0] for x in split),
                tuple(x[1] for x in split) + tuple(t[len(guide):]))
    if not is_tuple(t) or len(t) != 2:
        refuse("zip2_by: a tiled mode is not rank 2 (static_assert)")
    return t


def tile_unzip(LD, T, flavor, L=None, splitter=None):
    """tile_unzip (layout.hpp): zip2_by on shape and stride.  Under 'flydoc'
    a '_' in the tiler follows pycute's hier_unzip (doc section 5 item 9)."""
    if flavor == "flydoc" and _has_underscore(T):
        return _hier_unzip(splitter, L, T, flavor)
    return Layout(_zip2_by(LD.shape, T, flavor), _zip2_by(LD.stride, T, flavor))


def _has_underscore(T):
    if T is U:
        return True
    if is_tuple(T):
        return any(_has_underscore(x) for x in T)
    return False


def _hier_unzip(splitter, A, B, flavor):
    """pycute's hier_unzip (Fly doc item 9)."""
    if B is U:
        return make_layout(Layout(1, 0), A)
    if is_tuple(B):
        if len(B) > layout_rank(A):
            refuse("too many modes in tiler")
        split = [_hier_unzip(splitter, layout_get(A, i), B[i], flavor) for i in range(len(B))]
        first = make_layout(*[layout_get(s, 0) for s in split])
        second = make_layout(*([layout_get(s, 1) for s in split] +
                               [layout_get(A, i) for i in range(len(B), layout_rank(A))]))
        return make_layout(first, second)
    r = splitter(A, B, flavor)
    if not is_tuple(r.shape) or len(r.shape) != 2:
        refuse("splitter result not rank 2")
    return r


def _repeat_underscore(n):
    return U if n == 1 else tuple([U] * n)


def zipped_divide(L, T, flavor="cute"):
    return tile_unzip(logical_divide(L, T, flavor), T, flavor, L, logical_divide)


def _tiled(res):
    r1 = rank(get(res.shape, 1))
    sl, _ = layout_slice((U, _repeat_underscore(r1)), res)
    return sl


def _flat(res):
    r0 = rank(get(res.shape, 0))
    r1 = rank(get(res.shape, 1))
    sl, _ = layout_slice((_repeat_underscore(r0), _repeat_underscore(r1)), res)
    return sl


def tiled_divide(L, T, flavor="cute"):
    return _tiled(zipped_divide(L, T, flavor))


def flat_divide(L, T, flavor="cute"):
    return _flat(zipped_divide(L, T, flavor))


# ---- products ------------------------------------------------------------------

def logical_product(L, T, flavor="cute"):
    if is_tuple(T):
        if len(T) > layout_rank(L):
            refuse("logical_product: Too many modes in tiler.")
        return _by_mode(L, T, lambda l, t: logical_product(l, t, flavor))
    if T is U:
        return L
    if is_int(T):
        # pycute differs: it calls logical_divide for an integer tiler
        return logical_product(L, make_layout_int(T), flavor)
    comp = complement(L, layout_size(L) * cosize(T, flavor), flavor)
    return check_layout(make_layout(L, composition_layout(comp, T, flavor)))


def zipped_product(L, T, flavor="cute"):
    return tile_unzip(logical_product(L, T, flavor), T, flavor, L, logical_product)


def tiled_product(L, T, flavor="cute"):
    return _tiled(zipped_product(L, T, flavor))


def flat_product(L, T, flavor="cute"):
    return _flat(zipped_product(L, T, flavor))


def blocked_product(L, B, flavor="cute"):
    R = max(layout_rank(L), layout_rank(B))
    res = logical_product(layout_append_n(L, R), layout_append_n(B, R), flavor)
    return layout_zip2(layout_get(res, 0), layout_get(res, 1), flavor)


def raked_product(L, B, flavor="cute"):
    R = max(layout_rank(L), layout_rank(B))
    res = logical_product(layout_append_n(L, R), layout_append_n(B, R), flavor)
    return layout_zip2(layout_get(res, 1), layout_get(res, 0), flavor)


# ---------------------------------------------------------------------------
# shapes and the layouts made after others (int_tuple.hpp, stride.hpp,
# layout.hpp: shape_div, elem_less, product_each, take, compact_order,
# make_layout_like, make_fragment_like, tile_to_shape, get_*_coord)

def shape_div(a, b):
    """cute::shape_div; the static divisibility condition is asserted."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                refuse("shape_div: mismatched ranks")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out, rest = [], b
        for ai in a:
            out.append(shape_div(ai, rest))
            rest = shape_div(rest, ai)
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if a % b != 0 and b % a != 0:
        refuse("shape_div: Divisibility Condition")
    return ceil_div_int(a, b)


def elem_less(a, b):
    """cute::elem_less: a may stop early (true), not run past b (false).
    Every pair of elements up to the shorter's end is instantiated, so a
    mismatch there does not compile even after a false one."""
    if is_tuple(a) and is_tuple(b):
        less = [elem_less(x, y) for x, y in zip(a, b)]
        return all(less) and len(a) <= len(b)
    if is_tuple(a) or is_tuple(b):
        refuse("elem_less of an integer and a tuple")
    return a < b


def product_each(t, flavor="cute"):
    """cute::product_each = transform(wrap(t), product); Fly (doc 5.21)
    gives an integer for an integer."""
    if not is_tuple(t) and flavor == "flydoc":
        return t
    return tuple(product(x) for x in wrap(t))


def layout_take(L, b, e):
    if not (0 <= b < e <= layout_rank(L)):
        refuse("take: range out of bounds")
    return Layout(tuple(wrap(L.shape)[b:e]), tuple(wrap(L.stride)[b:e]))


def _product_like(shape, order):
    if is_tuple(order):
        return tuple(_product_like(s, o) for s, o in zip(shape, order))
    return product(shape)


def compact_order(shape, order, flavor="cute"):
    """cute::compact_order for a static order (congruent to shape, or
    coarser): the part of shape under an order leaf is compact column-major,
    starting after every part of a smaller order (CuTe: equal orders start
    at the same place; Fly, doc 5.23: the earlier part first)."""
    ref_shape = flatten_to_tuple(_product_like(shape, order))
    ref_order = flatten_to_tuple(order)
    k = [0]

    def rec(s, o):
        if is_tuple(o):
            return tuple(rec(x, y) for x, y in zip(s, o))
        i = k[0]
        k[0] += 1
        start = 1
        for j, (rs, ro) in enumerate(zip(ref_shape, ref_order)):
            if ro < o or (flavor == "flydoc" and ro == o and j < i):
                start *= rs
        return compact_col_major(s, start)
    return rec(shape, order)


def filter_zeros_shape(stride, shape):
    """cute::filter_zeros(stride, shape): shape 1 where the stride is 0."""
    if is_tuple(stride):
        return tuple(filter_zeros_shape(d, s) for d, s in zip(stride, shape))
    return 1 if stride == 0 else shape


def make_layout_like(L, flavor="cute"):
    fz = filter_zeros_shape(L.stride, L.shape)
    return Layout(L.shape, compact_order(fz, L.stride, flavor))


def make_fragment_like(L, flavor="cute"):
    R = layout_rank(L)
    if R <= 1:
        return Layout(L.shape, compact_col_major(L.shape))
    s0, d0 = L.shape[0], L.stride[0]
    block = Layout(s0, compact_col_major(filter_zeros_shape(d0, s0)))
    rs, rd = tuple(L.shape[1:R]), tuple(L.stride[1:R])
    tiles = Layout(rs, compact_order(rs, rd, flavor))
    res = tiled_product(block, tiles, flavor)
    if flavor == "flydoc" and R == 2:  # doc 5.23: mode 1 as L has it
        res = Layout((res.shape[0], res.shape[1][0]), (res.stride[0], res.stride[1][0]))
    return res


def tile_to_shape(block, trg, order=None, flavor="cute"):
    R = rank(trg)
    if layout_rank(block) > R:
        refuse("tile_to_shape: Rank of layout must be <= rank of target shape.")
    padded = layout_append_n(block, R)
    bs = product_each(padded.shape)
    ts = product_each(trg)
    if any(t % b != 0 for t, b in zip(ts, bs)):
        refuse("tile_to_shape: block shape does not divide the target shape.")
    ps = ceil_div(ts, bs)
    if order is None:
        tiles = Layout(ps, compact_col_major(ps))
    else:
        if flavor == "flydoc" and len(set(flatten_to_tuple(order))) != len(flatten_to_tuple(order)):
            raise FlyDocRefuse("make_ordered_layout: an order value appears twice", 13)
        tiles = Layout(ps, compact_order(ps, order, flavor))
    return blocked_product(padded, tiles, flavor)


def get_hier_coord(i, L, flavor="cute"):
    """Layout::get_hier_coord = idx2crd(i, shape, stride): (i / d) % s."""
    def rec(s, d):
        if is_tuple(s):
            return tuple(rec(x, y) for x, y in zip(s, d))
        if s == 1:
            return 0
        if d == 0:
            refuse("idx2crd: division by a static stride 0")
        if flavor == "flydoc" and d < 0:
            raise FlyDocRefuse("a stride <= 0 has no inverse", 22)
        return c_mod(c_div(i, d), s)
    c = rec(L.shape, L.stride)
    if flavor == "flydoc" and (i < 0 or crd2idx_raw(c, L.shape, L.stride) != i):
        raise FlyDocRefuse("the layout does not give the index", 22)
    return c


def _colex(c, shape):
    return crd2idx_raw(c, shape, compact_col_major(shape, 1)) if is_tuple(shape) else c


def get_flat_coord(i, L, flavor="cute"):
    c = get_hier_coord(i, L, flavor)
    if not is_tuple(L.shape):
        return c
    return tuple(_colex(x, s) for x, s in zip(c, L.shape))


def get_1d_coord(i, L, flavor="cute"):
    return _colex(get_hier_coord(i, L, flavor), L.shape)


# ---------------------------------------------------------------------------
# text

def tuple_str(t):
    if t is U:
        return "_"
    if is_tuple(t):
        return "(" + ",".join(tuple_str(x) for x in t) + ")"
    return str(t)


def layout_str(L):
    """Canonical text: CuTe's print with the top-level rank-1 levels unwrapped
    (docs/layout-algebra.md 2.2); no blanks, no '_' static prefixes."""
    return tuple_str(unwrap(L.shape)) + ":" + tuple_str(unwrap(L.stride))


def layout_arg_str(L):
    """Exact text (no unwrapping): reads back to the same value."""
    return tuple_str(L.shape) + ":" + tuple_str(L.stride)


def tiler_str(T):
    if T is U:
        return "_"
    if is_int(T):
        return str(T)
    if isinstance(T, Layout):
        return layout_arg_str(T)
    return "(" + ",".join(tiler_str(x) for x in T) + ")"


class ParseError(Exception):
    pass


class _Parser:
    def __init__(self, text):
        self.s = text
        self.i = 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t\n\r":
            self.i += 1

    def peek(self):
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def expect(self, ch):
        if self.peek() != ch:
            raise ParseError(f"expected {ch!r} at {self.i} in {self.s!r}")
        self.i += 1

    def number(self):
        self.ws()
        j = self.i
        if j < len(self.s) and self.s[j] == "-":
            j += 1
        k = j
        while k < len(self.s) and self.s[k].isdigit():
            k += 1
        if k == j:
            raise ParseError(f"expected a number at {self.i} in {self.s!r}")
        v = int(self.s[self.i:k])
        self.i = k
        return v

    def tuple_(self, allow_u=False):
        c = self.peek()
        if c == "(":
            self.i += 1
            items = []
            if self.peek() == ")":
                self.i += 1
                return ()
            while True:
                items.append(self.tuple_(allow_u))
                c = self.peek()
                if c == ",":
                    self.i += 1
                    continue
                self.expect(")")
                return tuple(items)
        if c == "_":
            if not allow_u:
                raise ParseError("'_' not allowed here")
            self.i += 1
            return U
        return self.number()

    def value(self):
        """A tuple, layout, or tiler (tuple of values)."""
        c = self.peek()
        if c == "_":
            self.i += 1
            return U
        if c == "(":
            save = self.i
            # try a plain tuple first (it may be a layout's shape)
            try:
                t = self.tuple_(allow_u=True)
                if self.peek() == ":":
                    self.i += 1
                    d = self.tuple_()
                    return _mk_layout(t, d)
                return t
            except ParseError:
                self.i = save
            self.i += 1
            items = []
            if self.peek() == ")":
                self.i += 1
                return ()
            while True:
                items.append(self.value())
                c = self.peek()
                if c == ",":
                    self.i += 1
                    continue
                self.expect(")")
                return tuple(items)
        n = self.number()
        if self.peek() == ":":
            self.i += 1
            d = self.tuple_()
            return _mk_layout(n, d)
        return n

    def end(self):
        if self.peek() != "":
            raise ParseError(f"trailing text at {self.i} in {self.s!r}")


def _mk_layout(s, d):
    if _has_underscore(s) or _has_underscore(d):
        raise ParseError("'_' in a layout")
    if not congruent(s, d):
        raise ParseError("stride not congruent to shape")
    return Layout(s, d)


def parse_value(text):
    p = _Parser(text)
    v = p.value()
    p.end()
    return v


def parse_layout(text):
    v = parse_value(text)
    if not isinstance(v, Layout):
        raise ParseError(f"not a layout: {text!r}")
    return v


def parse_tuple(text, allow_u=True):
    p = _Parser(text)
    v = p.tuple_(allow_u)
    p.end()
    return v


def parse_tiler(text):
    v = parse_value(text)
    return v


# ---------------------------------------------------------------------------
# operations by name, as fly-layout names them.  Each takes parsed arguments
# and returns ("int", n) / ("tuple", t) / ("layout", L) / ("slice", (L, off)).

def _op_size(L, flavor):
    return "int", layout_size(L)


def _op_cosize(L, flavor):
    return "int", cosize(L, flavor)


def _op_rank(L, flavor):
    return "int", layout_rank(L)


def _op_depth(L, flavor):
    return "int", depth(L.shape)


def _op_shape(L, flavor):
    return "tuple", L.shape


def _op_stride(L, flavor):
    return "tuple", L.stride


def _op_get(L, i, flavor):
    return "layout", layout_get(L, i)


def _op_select(L, *idx, flavor):
    return "layout", layout_select(L, idx)


def _op_group(L, b, e, flavor):
    return "layout", layout_group(L, b, e, flavor)


def _op_append(L, X=None, *, flavor):
    return "layout", layout_append(L, X)


def _op_prepend(L, X=None, *, flavor):
    return "layout", layout_prepend(L, X)


def _op_zip(L, flavor):
    return "layout", layout_zip(L, flavor)


def _op_flatten(L, flavor):
    return "layout", layout_flatten(L)


def _op_crd2idx(c, L, flavor):
    if flavor == "flydoc":
        if _has_underscore(c):
            raise FlyDocRefuse("'_' in a coordinate", 12)
        check_coord(c, L.shape)
    elif _has_underscore(c):
        # Layout::operator() with an underscore slices instead
        refuse("crd2idx with '_' is a slice")
    return "int", crd2idx_raw(c, L.shape, L.stride)


def _op_idx2crd(i, shape, flavor):
    if flavor == "flydoc" and i < 0:
        raise FlyDocRefuse("negative index", 12)
    return "tuple", idx2crd(i, shape)


def _op_slice(c, L, flavor):
    return "slice", layout_slice(c, L, flavor)


def _op_dice(c, L, flavor):
    return "layout", layout_dice(c, L, flavor)


def _op_coalesce(L, profile=None, *, flavor):
    if profile is not None and not is_tuple(profile):
        return "layout", coalesce(L)
    return "layout", coalesce(L, profile)


def _op_filter(L, profile=None, *, flavor):
    if profile is not None and not is_tuple(profile):
        return "layout", filter_layout(L)
    return "layout", filter_layout(L, profile)


def _op_composition(L, T, flavor):
    return "layout", check_layout(composition(L, T, flavor))


def _op_complement(L, cot=None, *, flavor):
    return "layout", complement(L, cot, flavor)


def _op_right_inverse(L, flavor):
    return "layout", right_inverse(L, flavor)


def _op_left_inverse(L, flavor):
    return "layout", left_inverse(L, flavor)


def _wrap2(f):
    def g(L, T, flavor):
        return "layout", check_layout(f(L, T, flavor))
    return g


def _contains_layout(v):
    if isinstance(v, Layout):
        return True
    return is_tuple(v) and any(_contains_layout(x) for x in v)


def value_str(v):
    """Canonical text of any value (docs/layout-algebra.md 2.1-2.2): a tuple
    that holds a layout is a tiler, whose integers print as n:1."""
    if isinstance(v, Layout):
        return layout_str(v)
    if _contains_layout(v):
        def tl(x):
            if isinstance(x, Layout):
                return layout_str(x)
            if x is U:
                return "_"
            if is_int(x):
                return f"{x}:1"
            return "(" + ",".join(tl(y) for y in x) + ")"
        return tl(v)
    return tuple_str(v)


def _op_col_major(shape, flavor):
    # make_layout(shape) = compact_major<LayoutLeft>: a static size-1 mode
    # gets stride _0 (stride.hpp detail::compact)
    return "layout", Layout(shape, compact_col_major(shape))


def _op_row_major(shape, flavor):
    return "layout", Layout(shape, compact_row_major(shape))


def _op_show(v, flavor):
    return "text", value_str(v)


def _op_shape_div(a, b, flavor):
    return "tuple", shape_div(a, b)


def _op_ceil_div(a, b, flavor):
    return "tuple", ceil_div(a, b)


def _op_elem_less(a, b, flavor):
    return "text", "true" if elem_less(a, b) else "false"


def _op_product_each(t, flavor):
    return "tuple", product_each(t, flavor)


def _op_take(L, b, e, flavor):
    return "layout", layout_take(L, b, e)


def _op_layout_like(L, flavor):
    return "layout", make_layout_like(L, flavor)


def _op_fragment_like(L, flavor):
    return "layout", make_fragment_like(L, flavor)


def _op_tile_to_shape(L, trg, order=None, *, flavor):
    return "layout", tile_to_shape(L, trg, order, flavor)


def _op_hier_coord(i, L, flavor):
    return "tuple", get_hier_coord(i, L, flavor)


def _op_flat_coord(i, L, flavor):
    return "tuple", get_flat_coord(i, L, flavor)


def _op_1d_coord(i, L, flavor):
    return "int", get_1d_coord(i, L, flavor)


OPS = {
    "show": _op_show,
    "size": _op_size, "cosize": _op_cosize, "rank": _op_rank, "depth": _op_depth,
    "shape": _op_shape, "stride": _op_stride,
    "get": _op_get, "select": _op_select, "group": _op_group,
    "append": _op_append, "prepend": _op_prepend, "zip": _op_zip, "flatten": _op_flatten,
    "crd2idx": _op_crd2idx, "idx2crd": _op_idx2crd, "slice": _op_slice, "dice": _op_dice,
    "coalesce": _op_coalesce, "filter": _op_filter,
    "composition": _op_composition, "complement": _op_complement,
    "right_inverse": _op_right_inverse, "left_inverse": _op_left_inverse,
    "logical_divide": _wrap2(logical_divide), "zipped_divide": _wrap2(zipped_divide),
    "tiled_divide": _wrap2(tiled_divide), "flat_divide": _wrap2(flat_divide),
    "logical_product": _wrap2(logical_product), "zipped_product": _wrap2(zipped_product),
    "tiled_product": _wrap2(tiled_product), "flat_product": _wrap2(flat_product),
    "blocked_product": _wrap2(blocked_product), "raked_product": _wrap2(raked_product),
    "col_major": _op_col_major, "row_major": _op_row_major,
    "shape_div": _op_shape_div, "ceil_div": _op_ceil_div, "elem_less": _op_elem_less,
    "product_each": _op_product_each, "take": _op_take,
    "layout_like": _op_layout_like, "fragment_like": _op_fragment_like,
    "tile_to_shape": _op_tile_to_shape, "get_hier_coord": _op_hier_coord,
    "get_flat_coord": _op_flat_coord, "get_1d_coord": _op_1d_coord,
}


def run_op(op, args, flavor="cute"):
    """Run an operation on parsed arguments; returns (kind, value)."""
    f = OPS[op]
    try:
        return f(*args, flavor=flavor)
    except RecursionError:
        raise CuteRefuse("recursion too deep")


def result_str(kind, value):
    """The canonical text fly-layout prints for a result."""
    if kind == "int":
        return str(value)
    if kind == "text":
        return value
    if kind == "tuple":
        return tuple_str(value)
    if kind == "layout":
        return layout_str(value)
    if kind == "slice":
        L, off = value
        return f"{layout_str(L)}  offset {off}"
    raise ValueError(kind)


# ---------------------------------------------------------------------------
# self-test: CuTe's documented examples

_EXAMPLES = [
    ("composition", ["(6,2):(8,2)", "(4,3):(3,1)"], "((2,2),3):((24,2),8)"),
    ("composition", ["20:2", "(5,4):(4,1)"], "(5,4):(8,2)"),
    ("composition", ["(10,2):(16,4)", "(5,4):(1,5)"], "(5,(2,2)):(16,(80,4))"),
    ("composition", ["(12,(4,8)):(59,(13,1))", "(3:4,8:2)"], "(3,(2,4)):(236,(26,1))"),
    ("composition", ["(12,(4,8)):(59,(13,1))", "(3,8)"], "(3,(4,2)):(59,(13,1))"),
    ("composition", ["(4,2):(1,8)", "16:1"], "(4,4):(1,8)"),
    ("coalesce", ["(2,(1,6)):(1,(6,2))"], "12:1"),
    ("coalesce", ["(2,(1,6)):(1,(6,2))", "(1,1)"], "(2,6):(1,2)"),
    ("complement", ["(2,2):(1,6)", "24"], "(3,2):(2,12)"),
    ("complement", ["4:2", "24"], "(2,3):(1,8)"),
    ("complement", ["(2,4):(1,6)", "24"], "3:2"),
    ("complement", ["4:1", "(3,8)"], "4:4"),
    ("right_inverse", ["(4,8):(8,1)"], "(8,4):(4,1)"),
    ("right_inverse", ["(3,(2,4)):(2,(1,6))"], "(2,3,4):(3,1,6)"),
    ("left_inverse", ["(4,8):(8,1)"], "(8,4):(4,1)"),
    ("left_inverse", ["4:2"], "(2,4):(0,1)"),
    ("logical_divide", ["(4,2,3):(2,1,8)", "4:2"], "((2,2),(2,3)):((4,1),(2,8))"),
    ("logical_divide", ["(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"],
     "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"),
    ("zipped_divide", ["(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"],
     "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"),
    ("tiled_divide", ["(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"],
     "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"),
    ("flat_divide", ["(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"],
     "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"),
    ("logical_product", ["(2,2):(4,1)", "6:1"], "((2,2),(2,3)):((4,1),(2,8))"),
    ("logical_product", ["(2,5):(5,1)", "(3,4):(1,3)"], "((2,5),(3,4)):((5,1),(10,30))"),
    ("blocked_product", ["(2,5):(5,1)", "(3,4):(1,3)"], "((2,3),(5,4)):((5,10),(1,30))"),
    ("raked_product", ["(2,5):(5,1)", "(3,4):(1,3)"], "((3,2),(4,5)):((10,5),(30,1))"),
    ("cosize", ["8:-1"], "8"),
    ("group", ["(2,3,4):(1,2,6)", "1", "1"], "(2,3,4):(1,2,6)"),
    # int_tuple.hpp's own example, layout.hpp's make_layout_like examples
    ("shape_div", ["(4,5,6)", "40"], "(1,1,3)"),
    ("layout_like", ["(2,2,2,2):(0,2,4,1)"], "(2,2,2,2):(0,2,4,1)"),
    ("layout_like", ["(2,3,4,5):(0,42,1,0)"], "(2,3,4,5):(0,4,1,0)"),
    ("fragment_like", ["((2,2),4,8):((1,64),8,256)"], "((2,2),4,8):((1,2),4,16)"),
    ("get_flat_coord", ["5", "((2,4),8):((1,2),8)"], "(5,0)"),
    ("get_1d_coord", ["5", "((2,4),8):((1,2),8)"], "5"),
]


def _selftest():
    bad = 0
    for op, args, want in _EXAMPLES:
        parsed = parse_args(op, args)
        kind, val = run_op(op, parsed)
        got = result_str(kind, val)
        if got != want:
            bad += 1
            print(f"FAIL {op} {args}: {got} != {want}")
    print(f"{len(_EXAMPLES) - bad}/{len(_EXAMPLES)} examples ok")
    return bad == 0


# Argument kinds for each operation, as fly-layout reads them:
# L layout, I integer, S tuple, C coordinate (tuple with '_'), T tiler,
# V any value;
# a trailing '?' marks an optional argument, '*' a repeated one.
ARG_KINDS = {
    "show": "V", "size": "L", "cosize": "L", "rank": "L", "depth": "L", "shape": "L", "stride": "L",
    "get": "L I", "select": "L I*", "group": "L I I", "append": "L L?", "prepend": "L L?",
    "zip": "L", "flatten": "L", "crd2idx": "C L", "idx2crd": "I S", "slice": "C L",
    "dice": "C L", "coalesce": "L S?", "filter": "L S?", "composition": "L T",
    "complement": "L S?", "right_inverse": "L", "left_inverse": "L",
    "logical_divide": "L T", "zipped_divide": "L T", "tiled_divide": "L T",
    "flat_divide": "L T", "logical_product": "L T", "zipped_product": "L T",
    "tiled_product": "L T", "flat_product": "L T",
    "blocked_product": "L L", "raked_product": "L L",
    "col_major": "S", "row_major": "S",
    "shape_div": "S S", "ceil_div": "S S", "elem_less": "S S", "product_each": "S",
    "take": "L I I", "layout_like": "L", "fragment_like": "L", "tile_to_shape": "L S S?",
    "get_hier_coord": "I L", "get_flat_coord": "I L", "get_1d_coord": "I L",
}


def parse_args(op, texts):
    kinds = ARG_KINDS[op].split()
    out = []
    for k, t in enumerate(texts):
        kind = kinds[min(k, len(kinds) - 1)].rstrip("?*")
        if kind == "L":
            out.append(parse_layout(t))
        elif kind == "I":
            out.append(int(t))
        elif kind in "SC":
            out.append(parse_tuple(t, allow_u=(kind == "C")))
        elif kind in "TV":
            out.append(parse_value(t))
        else:
            raise ValueError(kind)
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] != "--selftest":
        op, texts = sys.argv[1], sys.argv[2:]
        try:
            kind, val = run_op(op, parse_args(op, texts))
            print(result_str(kind, val))
        except CuteError as e:
            print(f"cute_reference: {type(e).__name__}: {e}", file=sys.stderr)
            sys.exit(1)
    else:
        sys.exit(0 if _selftest() else 1)

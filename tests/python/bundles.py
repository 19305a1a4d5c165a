"""Bundles for the tests: compiling with flyc, and editing bundles as
docs/bundle.md lays them out (merging two, fixing the checksum).

flyc writes one specialisation of each kernel per target; merging two
bundles gives one that holds several, which is what spec selection needs.

Importing this module also points the tests at the build tree when the
environment does not (ctest sets FLYRT_LIBRARY, FLYC_LIBRARY, FLYC and
PYTHONPATH; a developer running `python3 -m unittest` by hand need not).
"""
from __future__ import annotations

import atexit
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
os.environ.setdefault("FLYRT_LIBRARY", str(BUILD / "lib" / "libflyrt.so"))
os.environ.setdefault("FLYC_LIBRARY", str(BUILD / "lib" / "libflyc.so"))
os.environ.setdefault("FLYC_CACHE", "0")
if str(REPO / "runtime" / "python") not in sys.path:
    sys.path.append(str(REPO / "runtime" / "python"))
HEADER = struct.Struct("<8sIIQIIIIIIQQQQ" + "QII" * 5)  # 160 bytes
KERNEL_SIZE, PARAM_SIZE, INSN_SIZE, IMAGE_SIZE, TMAP_SIZE = 184, 48, 40, 24, 72
SIZES = (KERNEL_SIZE, PARAM_SIZE, INSN_SIZE, IMAGE_SIZE, TMAP_SIZE)
assert HEADER.size == 160


def python_env(**changes: str) -> dict[str, str]:
    """The environment for a Python subprocess that imports this fly."""
    import fly

    env = dict(os.environ, **changes)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(fly.__file__).parent.parent)] + ([env["PYTHONPATH"]] if "PYTHONPATH" in env
                                                   else []))
    return env


def flyc_path() -> str:
    """The flyc binary: $FLYC, else the build tree's."""
    return os.environ.get("FLYC") or str(BUILD / "bin" / "flyc")


def compile_file(source: Path, out: Path, *options: str) -> bytes:
    """flyc compile SOURCE --emit=bundle OPTIONS -o OUT; the bundle's bytes."""
    env = dict(os.environ, FLYC_CACHE="0")
    # A sanitized flyc carries its own ASan runtime; the preloaded one the
    # Python tests need (tests/python/CMakeLists.txt) would clash with it.
    env.pop("LD_PRELOAD", None)
    r = subprocess.run([flyc_path(), "compile", str(source), "--emit=bundle", *options, "-o",
                        str(out)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"flyc compile {source} {' '.join(options)} failed:\n{r.stderr}")
    return out.read_bytes()


_workdir: Path | None = None
_compiled: dict[tuple, Path] = {}


def workdir() -> Path:
    """A temporary directory for this test run, removed at exit."""
    global _workdir
    if _workdir is None:
        _workdir = Path(tempfile.mkdtemp(prefix="fly-python-tests-"))
        atexit.register(shutil.rmtree, _workdir, True)
    return _workdir


def example(name: str, *options: str) -> Path:
    """examples/NAME.fly compiled (once per run) with OPTIONS, for sm_90
    unless they name targets."""
    if not any(o.startswith("--target") for o in options):
        options += ("--target=sm_90",)
    key = (name, options)
    if key not in _compiled:
        out = workdir() / f"{name}.{len(_compiled)}.flyb"
        compile_file(REPO / "examples" / f"{name}.fly", out, *options)
        _compiled[key] = out
    return _compiled[key]


def source(name: str, text: str, *options: str) -> Path:
    """Fly source text written to NAME.fly and compiled for sm_90."""
    src = workdir() / f"{name}.fly"
    src.write_text(text)
    out = workdir() / f"{name}.flyb"
    compile_file(src, out, "--target=sm_90", *options)
    return out


def with_checksum(b: bytes | bytearray) -> bytes:
    """b with its checksum field recomputed (CRC-32 with the field read as 0)."""
    b = bytearray(b)
    b[24:28] = bytes(4)
    struct.pack_into("<I", b, 24, zlib.crc32(b))
    return bytes(b)


class _Parsed:
    def __init__(self, b: bytes) -> None:
        h = HEADER.unpack_from(b, 0)
        self.head = h
        (self.strings_at, self.strings_size, self.data_at, self.data_size) = h[10:14]
        tables = [h[14 + 3 * i: 17 + 3 * i] for i in range(5)]
        sizes = SIZES
        self.records = []
        for (offset, count, size), want in zip(tables, sizes):
            assert size == want, "a record size this helper does not know"
            self.records.append([bytearray(b[offset + i * size: offset + (i + 1) * size])
                                 for i in range(count)])
        self.strings = b[self.strings_at: self.strings_at + self.strings_size]
        self.data = b[self.data_at: self.data_at + self.data_size]


def _add(rec: bytearray, at: int, fmt: str, delta: int) -> None:
    (v,) = struct.unpack_from(fmt, rec, at)
    struct.pack_into(fmt, rec, at, v + delta)


def merge(a: bytes, b: bytes) -> bytes:
    """One bundle holding the kernels and images of a, then those of b."""
    pa, pb = _Parsed(a), _Parsed(b)
    soff = len(pa.strings)
    data_pad = (-len(pa.data)) % 16
    doff = len(pa.data) + data_pad
    nk, np_, ni, nim, ntm = (len(r) for r in pa.records)
    for k in pb.records[0]:
        for at in (0, 4, 8, 12):  # name, spec, target, symbol
            _add(k, at, "<I", soff)
        _add(k, 16, "<I", nim)  # image
        _add(k, 24, "<I", np_)  # first_param
        _add(k, 36, "<I", ni)  # first_insn
        _add(k, 160, "<I", ntm)  # first_tmap
    for p in pb.records[1]:
        for at in (0, 12, 16):  # name, type, layout
            _add(p, at, "<I", soff)
    for im in pb.records[3]:
        _add(im, 0, "<I", soff)  # target
        _add(im, 8, "<Q", doff)  # offset
    tables = [ra + rb for ra, rb in zip(pa.records, pb.records)]
    strings = pa.strings + pb.strings
    data = pa.data + bytes(data_pad) + pb.data

    out = bytearray(HEADER.size)
    descriptors = []
    for recs, size in zip(tables, SIZES):
        out += bytes((-len(out)) % 8)
        descriptors += [len(out), len(recs), size]
        for r in recs:
            out += r
    strings_at = len(out)
    out += strings
    out += bytes((-len(out)) % 16)
    data_at = len(out)
    out += data
    h = list(pa.head)
    h[3] = len(out)  # file_size
    h[4] = 0  # checksum, below
    h[10:14] = [strings_at, len(strings), data_at, len(data)]
    h[14:29] = descriptors
    HEADER.pack_into(out, 0, *h)
    return with_checksum(out)

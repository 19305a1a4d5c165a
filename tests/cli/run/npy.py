"""Writes .npy files for the flyc run tests without NumPy: a header as
NumPy writes it (or as given), then zero bytes for the data.

usage: npy.py OUT DESCR SHAPE [--fortran] [--version=N] [--cut=N] [--extra=N]
       npy.py OUT --header=TEXT

SHAPE is 3x4 (a 3 x 4 array), 5 or "" (a 0-d array). --cut=N drops the
file's last N bytes, --extra=N adds N; --header writes TEXT as the header's
dict, with no data."""
import struct
import sys

ITEMSIZE = {"b1": 1, "i1": 1, "u1": 1, "i2": 2, "f2": 2, "i4": 4, "f4": 4, "i8": 8, "f8": 8}


def header(descr, shape, fortran):
    dims = shape.split("x") if shape else []
    text = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, text)


def main():
    out, rest = sys.argv[1], sys.argv[2:]
    options = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "") for a in rest
                   if a.startswith("--"))
    positional = [a for a in rest if not a.startswith("--")]
    if "header" in options:
        text, data = options["header"], b""
    else:
        descr, shape = positional
        text = header(descr, shape, "True" if "fortran" in options else "False")
        count = 1
        for d in (shape.split("x") if shape else []):
            count *= int(d)
        data = bytes(count * ITEMSIZE[descr[1:]])
    version = int(options.get("version", "1"))
    prefix = 10 if version == 1 else 12
    pad = (-(prefix + len(text) + 1)) % 64
    body = (text + " " * pad + "\n").encode()
    length = struct.pack("<H", len(body)) if version == 1 else struct.pack("<I", len(body))
    blob = b"\x93NUMPY" + bytes([version, 0]) + length + body + data
    blob += bytes(int(options.get("extra", "0")))
    cut = int(options.get("cut", "0"))
    with open(out, "wb") as f:
        f.write(blob[:len(blob) - cut] if cut else blob)


main()

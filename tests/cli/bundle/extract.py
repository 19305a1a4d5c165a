"""Helpers for bundle tests: print image N of a bundle (without its NUL), or
write a copy with one byte flipped or another format version."""
import struct
import sys

data = bytearray(open(sys.argv[1], "rb").read())
what = sys.argv[2]
if what == "flip":
    data[int(sys.argv[3])] ^= 0x40
    sys.stdout.buffer.write(data)
elif what == "version":
    struct.pack_into("<I", data, 8, int(sys.argv[3]))
    sys.stdout.buffer.write(data)
else:
    # The image table is the fourth table of the header (offset 80 + 3 * 16).
    off, count, size = struct.unpack_from("<QII", data, 80 + 3 * 16)
    data_off = struct.unpack_from("<Q", data, 64)[0]
    rec = off + int(what) * size
    _, _, img_off, img_size = struct.unpack_from("<IIQQ", data, rec)
    image = bytes(data[data_off + img_off:data_off + img_off + img_size])
    sys.stdout.buffer.write(image.rstrip(b"\0"))

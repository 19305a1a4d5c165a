"""Damages the payload of the cache entries whose output holds WORD, behind a
consistent entry checksum: one byte of the output is changed and the entry's
CRC-32 written anew, as a bug or a tool that rewrites entries would leave
them. The entry format is in frontend/driver/libflyc_cache.c.

usage: damage-entry.py CACHE_DIR WORD
"""
import glob
import struct
import sys
import zlib

HEADER = 32


def damage(path: str, word: bytes) -> bool:
    with open(path, "rb") as f:
        entry = bytearray(f.read())
    if entry[:8] != b"FLYCACHE":
        return False
    n1, _ = struct.unpack_from("<QQ", entry, 16)
    output = entry[HEADER:HEADER + n1]
    if word not in output:
        return False
    entry[HEADER + n1 // 2] ^= 0xFF  # a byte in the middle of the output
    struct.pack_into("<I", entry, 12, zlib.crc32(bytes(entry[16:])))
    with open(path, "wb") as f:
        f.write(entry)
    return True


def main() -> int:
    cache, word = sys.argv[1], sys.argv[2].encode()
    hits = [p for p in glob.glob(f"{cache}/v1/*/*") if damage(p, word)]
    print(f"damaged {len(hits)} entr{'y' if len(hits) == 1 else 'ies'}")
    return 0 if hits else 1


if __name__ == "__main__":
    sys.exit(main())

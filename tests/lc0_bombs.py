"""Small files that unpack to gigabytes, made when a test or bench needs them (never committed):
a gzip of zeros, and a valid lc0 protobuf whose one tensor declares gigabytes.

After a full flush a deflate block owes nothing to what came before, so one compressed
mebibyte of zeros repeats: 3 GiB cost about 3 MB, and the CRC is the only real work.
"""

from __future__ import annotations

import struct
import zlib

MIB = 1 << 20
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no name, no time, unknown OS


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def gzip_of(prefix: bytes, zeros_mib: int) -> bytes:
    """A valid gzip file of ``prefix`` followed by ``zeros_mib`` MiB of zero bytes."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(prefix) + deflate.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(MIB)
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.flush()
    crc = zlib.crc32(prefix)
    for _ in range(zeros_mib):
        crc = zlib.crc32(zeros, crc)
    size = (len(prefix) + zeros_mib * MIB) & 0xFFFF_FFFF
    return _GZIP_HEADER + head + block * zeros_mib + tail + struct.pack("<II", crc, size)


def zeros_bomb(mib: int = 3 << 10) -> bytes:
    """``mib`` MiB of zeros (3 GiB unless told), gzipped."""
    return gzip_of(b"", mib)


def declared_tensor_bomb(mib: int = 3 << 10) -> bytes:
    """A valid ``pblczero.Net`` (magic set) whose ``weights.input.weights.params`` holds ``mib`` MiB
    of zeros (3 GiB unless told), gzipped."""
    body = mib * MIB
    header = b""
    for tag in (0x1A, 0x0A, 0x0A, 0x52):  # Layer.params, ConvBlock.weights, Weights.input, Net.weights
        header = bytes([tag]) + varint(len(header) + body) + header
    magic = b"\x0d" + struct.pack("<I", 0x1C0)
    return gzip_of(magic + header, mib)

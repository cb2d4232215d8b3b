"""Unpacking an lc0 file into its protobuf message as it streams in, within a limit.

A ``.pb.gz`` is small and may unpack to anything, so nothing here trusts a size it has
not counted. The gzip stream is inflated one window at a time (``max_length``) and the
unpacked bytes are counted against ``MAX_UNPACKED`` as they appear. The protobuf wire
format is walked as it arrives: a field whose declared length runs past the limit is
refused before a byte of it is kept, and ``Net.weights`` is merged into the message
one field (a layer, a residual block, an encoder) at a time, so the unpacked copy never
sits whole beside the parsed one.

Memory: the parsed message, plus the one ``Weights`` field being read, plus two windows
(compressed and unpacked). A refused file holds what was merged before the refusal;
data that is not protobuf is only counted (to say whether it was also too large), never kept.
"""

from __future__ import annotations

import hashlib
import zlib

from google.protobuf.message import DecodeError

from analysis.errors import CheckpointError, NetworkTooLarge
from analysis.models.lc0.convert.proto import SCHEMA

MAX_UNPACKED = 2 << 30  # 2 GiB; BT4 is ~0.4 GB unpacked
WINDOW = 1 << 20  # bytes read from the file, and unpacked, per step
_NET_WEIGHTS = 10  # Net.weights: merged field by field
_FIXED = {1: 8, 5: 4}  # wire type -> byte width
# message name -> {field number: type name}; a type name in SCHEMA is a message the walk enters.
_FIELDS = {name: {number: kind for _, number, kind, _ in fields} for name, fields in SCHEMA.items()}


class NotProtobuf(Exception):
    """The unpacked bytes are not the protobuf they claim to be (the reason in words)."""


def too_large(limit: int = MAX_UNPACKED) -> NetworkTooLarge:
    return NetworkTooLarge(f"the network unpacks to more than {_size(limit)}")


def _size(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n / (1 << 20):g} MiB"


class UnpackedStream:
    """A file's content as it unpacks (gunzipped when it starts as gzip), hashed as it is read,
    counted against ``limit`` as it unpacks."""

    def __init__(self, f, limit: int = MAX_UNPACKED):
        self._f, self.limit = f, limit
        self.digest = hashlib.sha256()
        self._pending = self._raw()
        self._inflater = zlib.decompressobj(wbits=31) if self._pending[:2] == b"\x1f\x8b" else None
        self._window, self._pos = b"", 0
        self.unpacked = 0  # bytes unpacked so far
        self.consumed = 0  # of those, bytes the walk has taken

    def _raw(self) -> bytes:
        chunk = self._f.read(WINDOW)
        self.digest.update(chunk)
        return chunk

    def _input(self) -> bytes:
        data, self._pending = self._pending or self._raw(), b""
        return data

    def _refill(self) -> bool:
        """The next window of unpacked bytes; False at the end of the content."""
        if self._inflater is None:
            window = self._input()
        else:
            window = b""
            while not window and not self._inflater.eof:
                data = self._inflater.unconsumed_tail or self._input()
                if not data:
                    raise CheckpointError("not an lc0 network: truncated gzip data")
                try:
                    window = self._inflater.decompress(data, WINDOW)
                except zlib.error as exc:
                    raise CheckpointError(f"not an lc0 network: damaged gzip data ({exc})") from None
        self.unpacked += len(window)
        if self.unpacked > self.limit:
            raise too_large(self.limit)
        self._window, self._pos = window, 0
        return bool(window)

    def byte(self) -> int | None:
        """The next byte, None at the end of the content."""
        if self._pos == len(self._window) and not self._refill():
            return None
        self._pos += 1
        self.consumed += 1
        return self._window[self._pos - 1]

    def take(self, n: int, out: bytearray | None) -> None:
        """The next ``n`` bytes, appended to ``out`` (or skipped when it is None)."""
        while n:
            if self._pos == len(self._window) and not self._refill():
                raise NotProtobuf("truncated protobuf data")
            step = min(n, len(self._window) - self._pos)
            if out is not None:
                out += memoryview(self._window)[self._pos:self._pos + step]
            self._pos, self.consumed, n = self._pos + step, self.consumed + step, n - step

    def drain(self) -> None:
        """Unpack (count, hash) the rest without keeping it; the limit still applies."""
        while self._refill():
            pass

    def finish(self) -> None:
        """Hash what is left of the file after the content (a gzip member's trailing bytes)."""
        while self._raw():
            pass


def _varint(stream: UnpackedStream, out: bytearray | None, first: int | None = None) -> int:
    value = shift = 0
    while True:
        byte = stream.byte() if first is None else first
        first = None
        if byte is None:
            raise NotProtobuf("truncated protobuf data")
        if out is not None:
            out.append(byte)
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7
        if shift > 63:
            raise NotProtobuf("a varint longer than 10 bytes")


def _field(stream: UnpackedStream, message: str, end: int | None, out: bytearray | None, tag: int) -> None:
    """Copy the rest of one field of ``message`` (its tag read) to ``out``, entering the messages it holds."""
    number, wire = tag >> 3, tag & 7
    if number == 0:
        raise NotProtobuf("field number 0")
    if wire == 0:
        _varint(stream, out)
        return
    if wire in _FIXED:
        stream.take(_FIXED[wire], out)
        return
    if wire != 2:
        raise NotProtobuf(f"wire type {wire}")
    length = _varint(stream, out)
    room = (end if end is not None else stream.limit) - stream.consumed
    if length > room:
        if end is None:
            raise NetworkTooLarge(f"the network declares a field of {_size(length)}: it unpacks to more than "
                                  f"{_size(stream.limit)}")
        raise NotProtobuf(f"a field of {length} bytes runs past its message")
    kind = _FIELDS[message].get(number)
    if kind in _FIELDS:
        _message(stream, kind, stream.consumed + length, out)
    else:
        stream.take(length, out)


def _message(stream: UnpackedStream, message: str, end: int, out: bytearray | None) -> None:
    while stream.consumed < end:
        first = stream.byte()
        if first is None:
            raise NotProtobuf("truncated protobuf data")
        _field(stream, message, end, out, _varint(stream, out, first))


def _merge_fields(stream: UnpackedStream, target, message: str, end: int | None) -> None:
    """Merge ``message``'s fields into ``target`` one at a time; fields it does not know are skipped."""
    out = bytearray()
    while end is None or stream.consumed < end:
        first = stream.byte()
        if first is None:
            if end is None:
                return
            raise NotProtobuf("truncated protobuf data")
        tag = _varint(stream, out, first)
        if message == "Net" and tag == _NET_WEIGHTS << 3 | 2:
            out.clear()
            length = _varint(stream, None)
            if length > stream.limit - stream.consumed:
                raise NetworkTooLarge(f"the network declares weights of {_size(length)}: it unpacks to more than "
                                      f"{_size(stream.limit)}")
            target.weights.SetInParent()
            _merge_fields(stream, target.weights, "Weights", stream.consumed + length)
            continue
        known = (tag >> 3) in _FIELDS[message]
        _field(stream, message, end, out if known else None, tag)
        if known:
            target.MergeFromString(out)
        out.clear()


def unpack_into(net, f, limit: int = MAX_UNPACKED) -> "hashlib._Hash":
    """Fill ``net`` (an empty ``Net`` message) from file object ``f``; the SHA-256 of the file's bytes.

    Raises ``NetworkTooLarge`` past ``limit`` and ``CheckpointError`` for data that is not
    an lc0 network, in words either way.
    """
    stream = UnpackedStream(f, limit)
    try:
        _merge_fields(stream, net, "Net", None)
    except (NotProtobuf, DecodeError, RuntimeError) as exc:
        stream.drain()  # too large as well? then that is the answer to give
        raise CheckpointError(f"not an lc0 network: not gzip or protobuf data ({exc})") from None
    stream.finish()
    return stream.digest

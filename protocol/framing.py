"""Length-prefixed JSON framing, sans-IO — the one codec behind both hops.

A frame is a fixed-size unsigned 32-bit length header followed by that many bytes of UTF-8 JSON
holding one object. Hop 3 (Chrome's native messaging) uses native byte order; hop 2 (the bridge
socket) uses big-endian. This module never touches a file descriptor, never buffers a body before
checking its declared length against the limit, and after any error stays in that error (sticky),
so a caller can never resynchronise on attacker-chosen bytes.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any


class FramingError(Exception):
    """The peer sent something that is not a valid frame; the connection must close."""


class FrameTooLarge(FramingError):
    """A frame exceeds the size limit for its direction."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the {limit}-byte limit")
        self.size = size
        self.limit = limit


class MalformedFrame(FramingError):
    """The bytes are not one UTF-8 JSON object, or the stream ended inside a frame."""


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError("duplicate key")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-JSON constant {name}")


def _parse_finite_float(text: str) -> float:
    # 1e400 overflows to inf: Infinity by the back door, and dumps_object could not re-emit it.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("float out of range")
    return value


def dumps_object(message: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON for one message."""
    try:
        return json.dumps(
            message, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (legal as a JSON "\ud800" escape, so loads_object and JS can produce
        # one) has no UTF-8 form: emit it escaped, as JSON.stringify does, instead of crashing.
        return json.dumps(
            message, ensure_ascii=True, separators=(",", ":"), allow_nan=False
        ).encode("ascii")


def strict_decoder() -> json.JSONDecoder:
    """The decoder behind ``loads_object``: duplicate keys, NaN/Infinity and out-of-range floats
    raise ``ValueError``, control characters inside strings too (``strict``)."""
    return json.JSONDecoder(
        object_pairs_hook=_reject_duplicate_keys,
        parse_constant=_reject_constant,
        parse_float=_parse_finite_float,
    )


def loads_object(body: bytes) -> dict[str, Any]:
    """Parse exactly one JSON object; duplicate keys, NaN/Infinity and non-objects are refused."""
    try:
        value = strict_decoder().decode(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise MalformedFrame(f"not UTF-8 JSON ({type(exc).__name__})") from None
    if not isinstance(value, dict):
        raise MalformedFrame(f"expected a JSON object, got {type(value).__name__}")
    return value


def encode_body(body: bytes, header: struct.Struct, limit: int) -> bytes:
    """Frame serialised bytes; raises ``FrameTooLarge`` rather than emit an oversize frame."""
    if len(body) > limit:
        raise FrameTooLarge(len(body), limit)
    return header.pack(len(body)) + body


class FrameDecoder:
    """Bytes in with ``receive_data`` (``b""`` = EOF), objects out with ``next_frame``."""

    def __init__(self, header: struct.Struct, limit: int) -> None:
        self._header = header
        self._limit = limit
        self._buffer = bytearray()
        self._need: int | None = None  # declared body length, once the header is in
        self._error: FramingError | None = None
        self._eof = False

    @property
    def eof(self) -> bool:
        """True once EOF was received (``next_frame`` returning None then means: stream over)."""
        return self._eof

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def receive_data(self, data: bytes) -> None:
        if self._error is not None:
            raise self._error
        if not data:
            self._eof = True
            return
        if self._eof:
            self._fail(MalformedFrame("data after EOF"))
        self._buffer += data

    def next_frame(self) -> dict[str, Any] | None:
        """The next complete object, or None when more bytes are needed or the stream ended."""
        if self._error is not None:
            raise self._error
        try:
            return self._next()
        except FramingError as exc:
            self._fail(exc)
            raise  # unreachable; _fail raises

    def _fail(self, exc: FramingError) -> None:
        self._error = exc
        self._buffer.clear()
        raise exc

    def _next(self) -> dict[str, Any] | None:
        size = self._header.size
        if self._need is None:
            if len(self._buffer) < size:
                if self._eof and self._buffer:
                    raise MalformedFrame("stream ended inside a frame header")
                return None
            (length,) = self._header.unpack_from(self._buffer)
            if length > self._limit:
                raise FrameTooLarge(length, self._limit)
            del self._buffer[:size]
            self._need = length
        if len(self._buffer) < self._need:
            if self._eof:
                raise MalformedFrame("stream ended inside a frame body")
            return None
        body = bytes(self._buffer[: self._need])
        del self._buffer[: self._need]
        self._need = None
        return loads_object(body)

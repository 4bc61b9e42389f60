"""Shared oracle for the two length-prefixed codec harnesses (fuzz_frames, fuzz_nativemsg).

Both codecs are a 4-byte length header (``struct.Struct``) followed by a JSON object, decoded by
a ``FrameDecoder`` with a size limit; they differ only in the header's byte order, the decoder
factory and the encoder. ``reference`` walks a stream independently of ``FrameDecoder``;
``check`` is the body of each harness's ``test_one_input``. Plain Python, no atheris.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from tabwarden.protocol.framing import FrameDecoder, FrameTooLarge, FramingError, loads_object

Outcome = tuple[list[dict[str, Any]], str | None]
MakeDecoder = Callable[[int], FrameDecoder]
Encode = Callable[..., bytes]


def reference(data: bytes, header: struct.Struct, limit: int) -> Outcome:
    """Walk the stream independently of FrameDecoder: frames, then how it ends."""
    frames: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < header.size:
            return frames, "MalformedFrame"
        (length,) = header.unpack_from(data, pos)
        if length > limit:
            return frames, "FrameTooLarge"
        pos += header.size
        if len(data) - pos < length:
            return frames, "MalformedFrame"
        try:
            frames.append(loads_object(data[pos : pos + length]))
        except FramingError as exc:
            return frames, type(exc).__name__
        pos += length
    return frames, None


def decode(data: bytes, chunk: int, make_decoder: MakeDecoder, limit: int) -> Outcome:
    """Feed ``data`` in ``chunk``-sized pieces, draining after each, then EOF."""
    decoder = make_decoder(limit)
    frames: list[dict[str, Any]] = []
    error: FramingError | None = None
    try:
        for start in range(0, len(data), chunk):
            decoder.receive_data(data[start : start + chunk])
            while (message := decoder.next_frame()) is not None:
                frames.append(message)
        decoder.receive_data(b"")
        while (message := decoder.next_frame()) is not None:
            frames.append(message)
    except FramingError as exc:  # any other exception escapes: that is a finding
        error = exc
    for message in frames:
        assert type(message) is dict, type(message)
    if error is None:
        assert decoder.eof and decoder.buffered == 0
        assert decoder.next_frame() is None
        return frames, None
    # Sticky, and nothing kept: in particular no body buffered behind an oversize header.
    assert decoder.buffered == 0, decoder.buffered
    if isinstance(error, FrameTooLarge):
        assert error.size > limit
    for poke in (decoder.next_frame, lambda: decoder.receive_data(b"x")):
        try:
            poke()
        except FramingError:
            pass
        else:
            raise AssertionError("decoder error is not sticky")
    return frames, type(error).__name__


def check(
    data: bytes, header: struct.Struct, make_decoder: MakeDecoder, encode: Encode, limit: int
) -> None:
    """Whole, 1-byte and ``data``-chosen chunkings agree with ``reference``; frames re-encode."""
    expected = reference(data, header, limit)
    chunk = (data[0] % 7 + 2) if data else 1
    for size in (max(len(data), 1), 1, chunk):
        got = decode(data, size, make_decoder, limit)
        assert got == expected, (size, got, expected)
    for message in expected[0]:
        # Whatever the browser may send, the host can send back (1e400 and lone surrogates
        # once broke this).
        wire = encode(message, limit=2**32 - 1)
        assert reference(wire, header, 2**32 - 1) == ([message], None)

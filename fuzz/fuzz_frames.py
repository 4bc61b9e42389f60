# Invariant: any byte string fed to the bridge-frame decoder (big-endian ">I"), whole, one byte at a time or in chunks, yields dict messages or raises FramingError — never any other exception, never a frame above the limit — and every chunking agrees with an independent reference parse.  # noqa: E501
"""Atheris harness for hop 2's codec (tabwarden.protocol.frames).

Run: ``python fuzz/fuzz_frames.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
``test_one_input`` is plain Python and importable without atheris.
"""

from __future__ import annotations

import struct
import sys
from typing import Any

try:
    import atheris
except ImportError:  # the harness logic still runs under fuzz.run's fallback and pytest
    atheris = None

if atheris is not None and __name__ == "__main__":
    with atheris.instrument_imports():
        from tabwarden.protocol import frames as codec
        from tabwarden.protocol.framing import FrameTooLarge, FramingError, loads_object
else:
    from tabwarden.protocol import frames as codec
    from tabwarden.protocol.framing import FrameTooLarge, FramingError, loads_object

HEADER: struct.Struct = codec.HEADER
#: Small, so that fuzzer-sized inputs land on both sides of it.
LIMIT = 1024

SEEDS: list[bytes] = [
    codec.encode_frame({"type": "request", "id": 1, "action": "tab_list", "args": {}}),
    codec.encode_frame({"type": "reply", "id": 1, "ok": True, "result": {"tabs": []}})
    + codec.encode_frame({"type": "event", "event": "extension", "connected": False}),
    codec.encode_frame({"type": "reply", "id": 2, "ok": False,
                        "error": {"code": "E_DENIED", "message": "no"}}),
    codec.encode_frame({"t": "challenge", "v": 1, "nonce": "11" * 32}),
    codec.encode_frame({"s": "\u00e9\u2603", "n": [1.5, -0.0, 10**30, None, True]}),
    # Near misses a byte flip away from 1e400 (overflow to inf) or a lone surrogate.
    HEADER.pack(30) + b'{"n":1e300,"s":"\\udbff\\udfff"}',
    HEADER.pack(LIMIT) + b"{",
    HEADER.pack(0xFFFFFFFF) + b"{}",
    HEADER.pack(2) + b"[]",
    b"",
]

Outcome = tuple[list[dict[str, Any]], str | None]


def reference(data: bytes, limit: int = LIMIT) -> Outcome:
    """Walk the stream independently of FrameDecoder: frames, then how it ends."""
    frames: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < HEADER.size:
            return frames, "MalformedFrame"
        (length,) = HEADER.unpack_from(data, pos)
        if length > limit:
            return frames, "FrameTooLarge"
        pos += HEADER.size
        if len(data) - pos < length:
            return frames, "MalformedFrame"
        try:
            frames.append(loads_object(data[pos : pos + length]))
        except FramingError as exc:
            return frames, type(exc).__name__
        pos += length
    return frames, None


def decode(data: bytes, chunk: int) -> Outcome:
    """Feed ``data`` in ``chunk``-sized pieces, draining after each, then EOF."""
    decoder = codec.decoder(limit=LIMIT)
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
        assert error.size > LIMIT
    for poke in (decoder.next_frame, lambda: decoder.receive_data(b"x")):
        try:
            poke()
        except FramingError:
            pass
        else:
            raise AssertionError("decoder error is not sticky")
    return frames, type(error).__name__


def test_one_input(data: bytes) -> None:
    expected = reference(data)
    chunk = (data[0] % 7 + 2) if data else 1
    for size in (max(len(data), 1), 1, chunk):
        got = decode(data, size)
        assert got == expected, (size, got, expected)
    for message in expected[0]:
        # Whatever the browser may send, the host can send back (1e400 and lone surrogates
        # once broke this).
        wire = codec.encode_frame(message, limit=2**32 - 1)
        assert reference(wire, limit=2**32 - 1) == ([message], None)


def main() -> None:
    if atheris is None:
        sys.exit("atheris is not installed; use `python -m fuzz.run` for the fallback fuzzer")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

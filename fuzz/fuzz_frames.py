# Invariant: any byte string fed to the bridge-frame decoder (big-endian ">I"), whole, one byte at a time or in chunks, yields dict messages or raises FramingError — never any other exception, never a frame above the limit — and every chunking agrees with an independent reference parse.  # noqa: E501
"""Atheris harness for hop 2's codec (tabwarden.protocol.frames).

Run: ``python fuzz/fuzz_frames.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
``test_one_input`` is plain Python and importable without atheris.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
    except ImportError:  # `python fuzz/fuzz_frames.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer

with instrumented(__name__):
    from tabwarden.protocol import frames as codec

if TYPE_CHECKING:
    from fuzz import codec_oracle
    from tabwarden.protocol.framing import FrameDecoder
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz import codec_oracle
    except ImportError:  # `python fuzz/fuzz_frames.py`: this directory is sys.path[0]
        import codec_oracle

HEADER: struct.Struct = codec.HEADER
#: Small, so that fuzzer-sized inputs land on both sides of it.
LIMIT = 1024


def make_decoder(limit: int) -> FrameDecoder:
    return codec.decoder(limit=limit)  # looked up per call, so tests can swap it


SEEDS: list[bytes] = [
    codec.encode_frame({"type": "request", "id": 1, "action": "tab_list", "args": {}}),
    codec.encode_frame({"type": "reply", "id": 1, "ok": True, "result": {"tabs": []}})
    + codec.encode_frame({"type": "event", "event": "extension", "connected": False}),
    codec.encode_frame(
        {"type": "reply", "id": 2, "ok": False, "error": {"code": "E_DENIED", "message": "no"}}
    ),
    codec.encode_frame({"t": "challenge", "v": 1, "nonce": "11" * 32}),
    codec.encode_frame({"s": "\u00e9\u2603", "n": [1.5, -0.0, 10**30, None, True]}),
    # Near misses a byte flip away from 1e400 (overflow to inf) or a lone surrogate.
    HEADER.pack(30) + b'{"n":1e300,"s":"\\udbff\\udfff"}',
    HEADER.pack(LIMIT) + b"{",
    HEADER.pack(0xFFFFFFFF) + b"{}",
    HEADER.pack(2) + b"[]",
    b"",
]


def test_one_input(data: bytes) -> None:
    codec_oracle.check(data, HEADER, make_decoder, codec.encode_frame, LIMIT)


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()

# Invariant: any byte string fed to the native-messaging decoder, whole, one byte at a time or in chunks, yields dict messages or raises FramingError — never any other exception, never a frame above the limit — and every chunking agrees with an independent reference parse.  # noqa: E501
"""Atheris harness for hop 3's codec (tabwarden.protocol.nativemsg).

Run: ``python fuzz/fuzz_nativemsg.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
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
    except ImportError:  # `python fuzz/fuzz_nativemsg.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer

with instrumented(__name__):
    from tabwarden.protocol import nativemsg

if TYPE_CHECKING:
    from fuzz import codec_oracle
    from tabwarden.protocol.framing import FrameDecoder
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz import codec_oracle
    except ImportError:  # `python fuzz/fuzz_nativemsg.py`: this directory is sys.path[0]
        import codec_oracle

HEADER: struct.Struct = nativemsg.HEADER
#: Small, so that fuzzer-sized inputs land on both sides of it.
LIMIT = 1024


def make_decoder(limit: int) -> FrameDecoder:
    return nativemsg.decoder(limit=limit)  # looked up per call, so tests can swap it


SEEDS: list[bytes] = [
    nativemsg.encode({"type": "hello", "protocol": 1, "extensionVersion": "0.1.0"}),
    nativemsg.encode({"type": "reply", "id": "1", "ok": True, "result": {"tabs": [{"id": 3}]}})
    + nativemsg.encode(
        {
            "type": "reply",
            "id": "2",
            "ok": False,
            "error": {"code": "E_TAB", "message": "no such tab"},
        }
    ),
    nativemsg.encode({"type": "request", "id": "9", "action": "tab_list", "args": {}}),
    nativemsg.encode({"s": "\u00e9\u2603", "n": [1.5, -0.0, 10**30, None, True]}),
    # Near misses a byte flip away from 1e400 (overflow to inf) or a lone surrogate.
    HEADER.pack(30) + b'{"n":1e300,"s":"\\udbff\\udfff"}',
    HEADER.pack(LIMIT) + b"{",
    HEADER.pack(0xFFFFFFFF) + b"{}",
    HEADER.pack(2) + b"[]",
    b"",
]


def test_one_input(data: bytes) -> None:
    codec_oracle.check(data, HEADER, make_decoder, nativemsg.encode, LIMIT)


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()

"""The shared codec core (tabwarden.protocol.framing): strict JSON, limits, sticky errors."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tabwarden.protocol import framing
from tabwarden.protocol.framing import (
    FrameDecoder,
    FrameTooLarge,
    FramingError,
    MalformedFrame,
    dumps_object,
    encode_body,
    loads_object,
)

HEADER = struct.Struct(">I")


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def test_error_hierarchy() -> None:
    assert issubclass(FrameTooLarge, FramingError)
    assert issubclass(MalformedFrame, FramingError)
    exc = FrameTooLarge(10, 9)
    assert (exc.size, exc.limit) == (10, 9)


def test_loads_object_accepts_one_object() -> None:
    assert loads_object(b'{"a":[1,2.5,"\xc3\xa9",null,true],"b":{}}') == {
        "a": [1, 2.5, "é", None, True],
        "b": {},
    }


@pytest.mark.parametrize("body", [b"[]", b"1", b'"s"', b"null", b"true", b"[{}]"])
def test_loads_object_refuses_non_object(body: bytes) -> None:
    with pytest.raises(MalformedFrame, match="expected a JSON object"):
        loads_object(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":"\xff"}',  # invalid byte
        b'{"a":"\xc0\xaf"}',  # overlong encoding of "/"
        b'{"a":"\xed\xa0\x80"}',  # UTF-8-encoded surrogate
        b'{"a":"\xe2\x82"}',  # truncated sequence
    ],
)
def test_loads_object_refuses_invalid_utf8(body: bytes) -> None:
    with pytest.raises(MalformedFrame):
        loads_object(body)


@pytest.mark.parametrize("body", [b'{"a":1,"a":2}', b'{"x":{"a":1,"a":1}}', b'[{"k":0,"k":0}]'])
def test_loads_object_refuses_duplicate_keys(body: bytes) -> None:
    with pytest.raises(MalformedFrame):
        loads_object(body)


@pytest.mark.parametrize(
    "body",
    [b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}', b'{"a":1e400}', b'{"a":[-1e999]}'],
)
def test_loads_object_refuses_nan_and_infinity(body: bytes) -> None:
    # 1e400 is the back door: it parses as a float and overflows to inf.
    with pytest.raises(MalformedFrame):
        loads_object(body)


@pytest.mark.parametrize("body", [b"", b" ", b"{}{}", b"{} x", b'{"a":', b"\x00{}"])
def test_loads_object_refuses_not_exactly_one_object(body: bytes) -> None:
    with pytest.raises(MalformedFrame):
        loads_object(body)


def test_loads_object_refuses_deep_nesting_without_recursion_error() -> None:
    with pytest.raises(MalformedFrame):
        loads_object(b'{"a":' + b"[" * 200_000 + b"]" * 200_000 + b"}")


def test_loads_object_refuses_huge_integer_literal() -> None:
    with pytest.raises(MalformedFrame):
        loads_object(b'{"a":' + b"9" * 5000 + b"}")


def test_dumps_object_is_compact_utf8() -> None:
    assert dumps_object({"a": [1, "é"], "b": None}) == '{"a":[1,"é"],"b":null}'.encode()


def test_dumps_object_escapes_lone_surrogate_and_round_trips() -> None:
    # A lone surrogate can arrive from the browser as a legal "\ud800" escape (JS strings carry
    # them, e.g. a page title); re-emitting it must not crash with UnicodeEncodeError.
    message = loads_object(b'{"title":"x\\ud800y"}')
    body = dumps_object(message)
    body.decode("ascii")
    assert loads_object(body) == message


def test_dumps_object_refuses_nan() -> None:
    with pytest.raises(ValueError):
        dumps_object({"a": float("nan")})


def test_encode_body_refuses_over_limit_and_emits_header() -> None:
    assert encode_body(b"{}", HEADER, 2) == b"\x00\x00\x00\x02{}"
    with pytest.raises(FrameTooLarge) as info:
        encode_body(b"{} ", HEADER, 2)
    assert (info.value.size, info.value.limit) == (3, 2)


def test_decoder_zero_length_frame_is_malformed() -> None:
    decoder = FrameDecoder(HEADER, 100)
    decoder.receive_data(frame(b""))
    with pytest.raises(MalformedFrame):
        decoder.next_frame()


def test_decoder_sticky_error_blocks_later_valid_frames() -> None:
    decoder = FrameDecoder(HEADER, 100)
    decoder.receive_data(frame(b"[]") + frame(b"{}"))
    with pytest.raises(MalformedFrame) as first:
        decoder.next_frame()
    assert decoder.buffered == 0
    for _ in range(3):
        with pytest.raises(MalformedFrame) as again:
            decoder.next_frame()
        assert again.value is first.value
        with pytest.raises(MalformedFrame):
            decoder.receive_data(frame(b"{}"))
        with pytest.raises(MalformedFrame):
            decoder.receive_data(b"")
    assert decoder.buffered == 0


def test_decoder_repeated_eof_is_harmless() -> None:
    decoder = FrameDecoder(HEADER, 100)
    decoder.receive_data(frame(b"{}"))
    decoder.receive_data(b"")
    decoder.receive_data(b"")
    assert decoder.next_frame() == {}
    assert decoder.next_frame() is None
    assert decoder.eof


def test_decoder_header_struct_is_respected() -> None:
    little = FrameDecoder(struct.Struct("<I"), 100)
    little.receive_data(b"\x02\x00\x00\x00{}")
    assert little.next_frame() == {}


def test_module_has_no_io() -> None:
    # Sans-IO: the codec must not grow socket/file/clock dependencies.
    source = Path(framing.__file__).read_text(encoding="utf-8")
    for forbidden in ("import socket", "import os", "import time", "import random", "asyncio"):
        assert forbidden not in source

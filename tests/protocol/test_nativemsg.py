"""Hop 3 codec (Chrome native messaging): native-endian "=I" header, 1 MiB out, 16 MiB in."""

from __future__ import annotations

import struct
import sys

import pytest

from tabwarden.protocol import nativemsg
from tabwarden.protocol.framing import FrameTooLarge, FramingError, MalformedFrame, dumps_object
from tabwarden.protocol.nativemsg import MAX_BROWSER_TO_HOST, MAX_HOST_TO_BROWSER

HELLO = {"type": "hello", "protocol": 1, "extensionVersion": "0.1.0"}


def raw_frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, sys.byteorder) + body


def message_with_body_size(size: int) -> dict[str, str]:
    overhead = len(b'{"a":""}')
    message = {"a": "x" * (size - overhead)}
    assert len(dumps_object(message)) == size
    return message


def test_constants() -> None:
    assert MAX_HOST_TO_BROWSER == 1_048_576
    assert MAX_BROWSER_TO_HOST == 16 * 1024 * 1024
    assert nativemsg.HEADER.format == "=I"
    assert nativemsg.HEADER.size == 4


def test_encode_header_is_native_byte_order() -> None:
    encoded = nativemsg.encode(HELLO)
    body = encoded[4:]
    assert encoded[:4] == struct.pack("=I", len(body)) == len(body).to_bytes(4, sys.byteorder)
    assert body == b'{"type":"hello","protocol":1,"extensionVersion":"0.1.0"}'


@pytest.mark.promise("H3-03")
def test_encode_exactly_one_mebibyte_is_allowed() -> None:
    encoded = nativemsg.encode(message_with_body_size(1_048_576))
    assert len(encoded) == 4 + 1_048_576
    assert struct.unpack("=I", encoded[:4]) == (1_048_576,)
    assert int.from_bytes(encoded[:4], sys.byteorder) == 1_048_576


@pytest.mark.promise("H3-03")
def test_encode_one_byte_over_raises_and_returns_nothing() -> None:
    result = None
    with pytest.raises(FrameTooLarge) as info:
        result = nativemsg.encode(message_with_body_size(1_048_577))
    assert result is None
    assert (info.value.size, info.value.limit) == (1_048_577, MAX_HOST_TO_BROWSER)


def test_encode_limit_counts_utf8_bytes_not_characters() -> None:
    overhead = len(b'{"a":""}')
    # 2-byte characters: fits by character count, not by byte count.
    message = {"a": "é" * ((MAX_HOST_TO_BROWSER - overhead) // 2 + 1)}
    with pytest.raises(FrameTooLarge):
        nativemsg.encode(message)


def test_exact_limit_frame_decodes() -> None:
    message = message_with_body_size(1_048_576)
    decoder = nativemsg.decoder()
    decoder.receive_data(nativemsg.encode(message))
    assert decoder.next_frame() == message


def test_ffffffff_header_rejected_before_buffering() -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(b"\xff\xff\xff\xff" + b"{" * 1000)
    with pytest.raises(FrameTooLarge) as info:
        decoder.next_frame()
    assert info.value.size == 0xFFFFFFFF
    assert decoder.buffered <= 4
    # Nothing more is accepted, so nothing more is kept.
    with pytest.raises(FrameTooLarge):
        decoder.receive_data(b"x" * 4096)
    assert decoder.buffered <= 4


def test_oversize_header_alone_rejected_immediately() -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(b"\xff\xff")
    assert decoder.next_frame() is None
    decoder.receive_data(b"\xff\xff")
    with pytest.raises(FrameTooLarge):
        decoder.next_frame()
    assert decoder.buffered <= 4


def test_browser_limit_edge_on_header() -> None:
    at_limit = nativemsg.decoder()
    at_limit.receive_data(struct.pack("=I", MAX_BROWSER_TO_HOST))
    assert at_limit.next_frame() is None  # waits for the body
    over = nativemsg.decoder()
    over.receive_data(struct.pack("=I", MAX_BROWSER_TO_HOST + 1))
    with pytest.raises(FrameTooLarge):
        over.next_frame()


def test_custom_limit_edges() -> None:
    message = message_with_body_size(64)
    assert len(nativemsg.encode(message, limit=64)) == 68
    with pytest.raises(FrameTooLarge):
        nativemsg.encode(message, limit=63)
    ok = nativemsg.decoder(limit=64)
    ok.receive_data(nativemsg.encode(message, limit=64))
    assert ok.next_frame() == message
    refused = nativemsg.decoder(limit=63)
    refused.receive_data(nativemsg.encode(message, limit=64))
    with pytest.raises(FrameTooLarge):
        refused.next_frame()


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_eof_mid_header(cut: int) -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(nativemsg.encode(HELLO)[:cut])
    assert decoder.next_frame() is None
    decoder.receive_data(b"")
    with pytest.raises(MalformedFrame, match="header"):
        decoder.next_frame()


@pytest.mark.parametrize("cut", [4, 5, 20])
def test_eof_mid_body(cut: int) -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(nativemsg.encode(HELLO)[:cut])
    assert decoder.next_frame() is None
    decoder.receive_data(b"")
    with pytest.raises(MalformedFrame, match="body"):
        decoder.next_frame()


def test_clean_eof() -> None:
    decoder = nativemsg.decoder()
    assert not decoder.eof
    decoder.receive_data(b"")
    assert decoder.eof
    assert decoder.next_frame() is None
    assert decoder.next_frame() is None


def test_clean_eof_after_frames() -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(nativemsg.encode(HELLO))
    decoder.receive_data(b"")
    assert decoder.next_frame() == HELLO
    assert decoder.next_frame() is None
    assert decoder.eof


def test_two_frames_in_one_read() -> None:
    second = {"type": "reply", "id": "1", "ok": True, "result": {}}
    decoder = nativemsg.decoder()
    decoder.receive_data(nativemsg.encode(HELLO) + nativemsg.encode(second))
    assert decoder.next_frame() == HELLO
    assert decoder.next_frame() == second
    assert decoder.next_frame() is None
    assert decoder.buffered == 0


def test_one_frame_dribbled_a_byte_at_a_time() -> None:
    wire = nativemsg.encode(HELLO)
    decoder = nativemsg.decoder()
    for index, byte in enumerate(wire):
        decoder.receive_data(bytes([byte]))
        got = decoder.next_frame()
        if index < len(wire) - 1:
            assert got is None, index
        else:
            assert got == HELLO
    assert decoder.next_frame() is None


def test_error_is_sticky() -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(raw_frame(b"[1]") + nativemsg.encode(HELLO))
    with pytest.raises(MalformedFrame):
        decoder.next_frame()
    for _ in range(2):
        with pytest.raises(MalformedFrame):
            decoder.next_frame()
        with pytest.raises(MalformedFrame):
            decoder.receive_data(nativemsg.encode(HELLO))
    assert decoder.buffered == 0


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'"hello"',
        b"42",
        b"null",
        b'{"type":"\xff"}',
        b'{"type":"hello","type":"reply"}',
        b'{"n":NaN}',
        b'{"n":Infinity}',
        b'{"n":-Infinity}',
        b'{"n":1e400}',
        b"{",
        b"",
    ],
)
def test_invalid_bodies_refused(body: bytes) -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(raw_frame(body))
    with pytest.raises(MalformedFrame):
        decoder.next_frame()


def test_data_after_eof_refused() -> None:
    decoder = nativemsg.decoder()
    decoder.receive_data(b"")
    with pytest.raises(MalformedFrame, match="after EOF"):
        decoder.receive_data(nativemsg.encode(HELLO))
    with pytest.raises(FramingError):
        decoder.next_frame()

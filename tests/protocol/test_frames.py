"""Hop 2 codec (bridge socket): big-endian ">I" header, MAX_BRIDGE_FRAME = 32 MiB both ways."""

from __future__ import annotations

import struct

import pytest

from tabwarden.protocol import frames
from tabwarden.protocol.frames import MAX_BRIDGE_FRAME
from tabwarden.protocol.framing import FrameTooLarge, FramingError, MalformedFrame, dumps_object

REQUEST = {"type": "request", "id": 7, "action": "tab_list", "args": {}}
SMALL_LIMIT = 256


def raw_frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def message_with_body_size(size: int) -> dict[str, str]:
    overhead = len(b'{"a":""}')
    message = {"a": "x" * (size - overhead)}
    assert len(dumps_object(message)) == size
    return message


def test_constants() -> None:
    assert MAX_BRIDGE_FRAME == 32 * 1024 * 1024
    assert frames.HEADER.format == ">I"
    assert frames.HEADER.size == 4


def test_encode_header_is_big_endian() -> None:
    encoded = frames.encode_frame(REQUEST)
    body = encoded[4:]
    assert encoded[:4] == struct.pack(">I", len(body)) == len(body).to_bytes(4, "big")
    assert body == b'{"type":"request","id":7,"action":"tab_list","args":{}}'
    # A body of 0x0102 bytes makes any byte-order mistake visible.
    assert frames.encode_frame(message_with_body_size(0x0102))[:4] == b"\x00\x00\x01\x02"


def test_encode_exactly_at_limit_is_allowed() -> None:
    encoded = frames.encode_frame(message_with_body_size(SMALL_LIMIT), limit=SMALL_LIMIT)
    assert len(encoded) == 4 + SMALL_LIMIT
    assert struct.unpack(">I", encoded[:4]) == (SMALL_LIMIT,)


def test_encode_one_byte_over_raises_and_returns_nothing() -> None:
    result = None
    with pytest.raises(FrameTooLarge) as info:
        result = frames.encode_frame(message_with_body_size(SMALL_LIMIT + 1), limit=SMALL_LIMIT)
    assert result is None
    assert (info.value.size, info.value.limit) == (SMALL_LIMIT + 1, SMALL_LIMIT)


def test_decode_exactly_at_limit_and_one_over() -> None:
    at = message_with_body_size(SMALL_LIMIT)
    wire = frames.encode_frame(at, limit=SMALL_LIMIT)
    ok = frames.decoder(limit=SMALL_LIMIT)
    ok.receive_data(wire)
    assert ok.next_frame() == at
    over = frames.decoder(limit=SMALL_LIMIT)
    over.receive_data(frames.encode_frame(message_with_body_size(SMALL_LIMIT + 1)))
    with pytest.raises(FrameTooLarge):
        over.next_frame()
    assert over.buffered <= 4


def test_default_limit_edge_on_header() -> None:
    at_limit = frames.decoder()
    at_limit.receive_data(struct.pack(">I", MAX_BRIDGE_FRAME))
    assert at_limit.next_frame() is None  # waits for the body
    over = frames.decoder()
    over.receive_data(struct.pack(">I", MAX_BRIDGE_FRAME + 1) + b"{}")
    with pytest.raises(FrameTooLarge) as info:
        over.next_frame()
    assert info.value.limit == MAX_BRIDGE_FRAME


def test_ffffffff_header_rejected_before_buffering() -> None:
    decoder = frames.decoder()
    decoder.receive_data(b"\xff\xff\xff\xff" + b"[" * 1000)
    with pytest.raises(FrameTooLarge) as info:
        decoder.next_frame()
    assert info.value.size == 0xFFFFFFFF
    assert decoder.buffered <= 4
    with pytest.raises(FrameTooLarge):
        decoder.receive_data(b"x" * 4096)
    assert decoder.buffered <= 4


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_eof_mid_header(cut: int) -> None:
    decoder = frames.decoder()
    decoder.receive_data(frames.encode_frame(REQUEST)[:cut])
    assert decoder.next_frame() is None
    decoder.receive_data(b"")
    with pytest.raises(MalformedFrame, match="header"):
        decoder.next_frame()


@pytest.mark.parametrize("cut", [4, 5, 30])
def test_eof_mid_body(cut: int) -> None:
    decoder = frames.decoder()
    decoder.receive_data(frames.encode_frame(REQUEST)[:cut])
    assert decoder.next_frame() is None
    decoder.receive_data(b"")
    with pytest.raises(MalformedFrame, match="body"):
        decoder.next_frame()


def test_clean_eof() -> None:
    decoder = frames.decoder()
    decoder.receive_data(frames.encode_frame(REQUEST))
    assert decoder.next_frame() == REQUEST
    decoder.receive_data(b"")
    assert decoder.eof
    assert decoder.next_frame() is None
    assert decoder.next_frame() is None


def test_two_frames_in_one_read() -> None:
    reply = {"type": "reply", "id": 7, "ok": True, "result": {"tabs": []}}
    decoder = frames.decoder()
    decoder.receive_data(frames.encode_frame(REQUEST) + frames.encode_frame(reply))
    assert decoder.next_frame() == REQUEST
    assert decoder.next_frame() == reply
    assert decoder.next_frame() is None
    assert decoder.buffered == 0


def test_one_frame_dribbled_a_byte_at_a_time() -> None:
    wire = frames.encode_frame(REQUEST)
    decoder = frames.decoder()
    for index, byte in enumerate(wire):
        decoder.receive_data(bytes([byte]))
        got = decoder.next_frame()
        if index < len(wire) - 1:
            assert got is None, index
        else:
            assert got == REQUEST


def test_little_endian_header_is_not_accepted_as_big_endian() -> None:
    body = dumps_object(REQUEST)
    decoder = frames.decoder(limit=SMALL_LIMIT)
    decoder.receive_data(len(body).to_bytes(4, "little") + body)
    with pytest.raises(FrameTooLarge):
        decoder.next_frame()


def test_error_is_sticky() -> None:
    decoder = frames.decoder()
    decoder.receive_data(raw_frame(b"not json") + frames.encode_frame(REQUEST))
    with pytest.raises(MalformedFrame):
        decoder.next_frame()
    for _ in range(2):
        with pytest.raises(MalformedFrame):
            decoder.next_frame()
        with pytest.raises(MalformedFrame):
            decoder.receive_data(frames.encode_frame(REQUEST))
    assert decoder.buffered == 0


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'"request"',
        b"1",
        b"true",
        b'{"action":"\xc3"}',
        b'{"id":1,"id":2}',
        b'{"n":NaN}',
        b'{"n":Infinity}',
        b'{"n":-Infinity}',
        b'{"n":-1e400}',
        b"{}}",
        b"",
    ],
)
def test_invalid_bodies_refused(body: bytes) -> None:
    decoder = frames.decoder()
    decoder.receive_data(raw_frame(body))
    with pytest.raises(MalformedFrame):
        decoder.next_frame()


def test_data_after_eof_refused() -> None:
    decoder = frames.decoder()
    decoder.receive_data(b"")
    with pytest.raises(MalformedFrame, match="after EOF"):
        decoder.receive_data(b"\x00")
    with pytest.raises(FramingError):
        decoder.next_frame()

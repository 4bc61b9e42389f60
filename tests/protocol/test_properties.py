"""Hypothesis properties of the codecs and the handshake state machines."""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fuzz.codec_oracle import reference  # the same independent stream model the fuzzers use
from tabwarden.protocol import frames, nativemsg
from tabwarden.protocol import handshake as hs
from tabwarden.protocol.framing import FrameDecoder, FramingError, dumps_object
from tabwarden.protocol.handshake import ClientHandshake, HandshakeFailed, HostHandshake, State

from .test_handshake import ConnectionPair

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Five setups per side: 100 each keeps the total near the others' 200.
HANDSHAKE_SETTINGS = settings(SETTINGS, max_examples=100)

Encode = Callable[..., bytes]
Decoder = Callable[..., FrameDecoder]
CODECS = [
    pytest.param(nativemsg.encode, nativemsg.decoder, nativemsg.HEADER, id="nativemsg"),
    pytest.param(frames.encode_frame, frames.decoder, frames.HEADER, id="bridge"),
]

# --- strategies ---------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)

# Text including lone surrogates, which JS strings (and so the browser's JSON) can carry.
surrogate_text = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=10)
surrogate_objects = st.dictionaries(
    surrogate_text, st.lists(surrogate_text, max_size=3) | surrogate_text, max_size=4
)


def drain(decoder: FrameDecoder, out: list[Any] | None = None) -> list[Any]:
    """Every complete frame, appended to ``out`` as it comes (kept even if a later one raises)."""
    out = [] if out is None else out
    while (message := decoder.next_frame()) is not None:
        assert isinstance(message, dict)
        out.append(message)
    return out


# --- round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize(("encode", "make_decoder", "header"), CODECS)
@SETTINGS
@given(messages=st.lists(json_objects, min_size=1, max_size=3))
def test_roundtrip_whole(
    encode: Encode, make_decoder: Decoder, header: struct.Struct, messages: list[dict[str, Any]]
) -> None:
    decoder = make_decoder()
    decoder.receive_data(b"".join(encode(m) for m in messages))
    decoder.receive_data(b"")
    assert drain(decoder) == messages
    assert decoder.eof and decoder.buffered == 0


@pytest.mark.parametrize(("encode", "make_decoder", "header"), CODECS)
@SETTINGS
@given(message=json_objects)
def test_roundtrip_byte_by_byte(
    encode: Encode, make_decoder: Decoder, header: struct.Struct, message: dict[str, Any]
) -> None:
    wire = encode(message)
    decoder = make_decoder()
    got = []
    for index in range(len(wire)):
        decoder.receive_data(wire[index : index + 1])
        got += drain(decoder)
        assert len(got) == (1 if index == len(wire) - 1 else 0)
    assert got == [message]


@pytest.mark.parametrize(("encode", "make_decoder", "header"), CODECS)
@SETTINGS
@given(messages=st.lists(json_objects, min_size=1, max_size=3), data=st.data())
def test_roundtrip_random_chunks(
    encode: Encode,
    make_decoder: Decoder,
    header: struct.Struct,
    messages: list[dict[str, Any]],
    data: st.DataObject,
) -> None:
    wire = b"".join(encode(m) for m in messages)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(wire)), max_size=12)))
    decoder = make_decoder()
    got = []
    for start, end in zip([0, *cuts], [*cuts, len(wire)], strict=True):
        if end > start:
            decoder.receive_data(wire[start:end])
        got += drain(decoder)
    decoder.receive_data(b"")
    got += drain(decoder)
    assert got == messages


@pytest.mark.parametrize(("encode", "make_decoder", "header"), CODECS)
@SETTINGS
@given(message=surrogate_objects)
def test_roundtrip_lone_surrogates(
    encode: Encode, make_decoder: Decoder, header: struct.Struct, message: dict[str, Any]
) -> None:
    decoder = make_decoder()
    decoder.receive_data(encode(message))
    assert drain(decoder) == [message]


# --- arbitrary bytes into the decoders ----------------------------------------------------------


def framed(header: struct.Struct, message: dict[str, Any]) -> bytes:
    body = dumps_object(message)
    return header.pack(len(body)) + body


def pieces(header: struct.Struct) -> st.SearchStrategy[bytes]:
    """Stream fragments: valid frames, junk, and headers that lie about their length."""
    return st.one_of(
        st.binary(max_size=12),
        json_objects.map(lambda message: framed(header, message)),
        st.integers(0, 2**32 - 1).map(header.pack),
        st.just(b"\xff\xff\xff\xff"),
    )


@pytest.mark.parametrize(("encode", "make_decoder", "header"), CODECS)
@SETTINGS
@given(data=st.data(), limit=st.sampled_from([0, 2, 16, 64, 4096]))
def test_arbitrary_bytes_only_dicts_or_framing_errors(
    encode: Encode, make_decoder: Decoder, header: struct.Struct, data: st.DataObject, limit: int
) -> None:
    stream = b"".join(data.draw(st.lists(pieces(header), max_size=6)))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(stream)), max_size=8)))
    decoder = make_decoder(limit=limit)
    got: list[Any] = []
    error: FramingError | None = None
    try:
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
            if end > start:
                decoder.receive_data(stream[start:end])
            drain(decoder, got)
        decoder.receive_data(b"")
        drain(decoder, got)
    except FramingError as exc:  # anything else propagates and fails the test
        error = exc
    expected, expected_error = reference(stream, header, limit)
    assert got == expected
    assert (type(error).__name__ if error else None) == expected_error
    if error is not None:
        assert decoder.buffered == 0
        with pytest.raises(FramingError):
            decoder.next_frame()
        with pytest.raises(FramingError):
            decoder.receive_data(b"x")
    else:
        assert decoder.next_frame() is None


@pytest.mark.parametrize(("encode", "make_decoder", "header"), CODECS)
@SETTINGS
@given(stream=st.binary(max_size=64))
def test_raw_random_bytes_never_escape_framing_error(
    encode: Encode, make_decoder: Decoder, header: struct.Struct, stream: bytes
) -> None:
    decoder = make_decoder(limit=32)
    try:
        for index in range(len(stream)):
            decoder.receive_data(stream[index : index + 1])
            for message in drain(decoder):
                assert isinstance(message, dict)
        decoder.receive_data(b"")
        drain(decoder)
    except FramingError:
        pass


# --- the handshake under arbitrary messages -----------------------------------------------------

K = bytes(range(32))
NH = b"\x11" * 32
NC = b"\x22" * 32


def good_mac(label: str, first: bytes, second: bytes) -> str:
    data = b"tabwarden/bridge/v1/" + label.encode() + b"\x00" + first + second
    return hmac.new(K, data, hashlib.sha256).hexdigest()


def pick(*options: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An even choice between strategies (``one_of`` leans hard towards some branches)."""
    return st.sampled_from(range(len(options))).flatmap(lambda index: options[index])


containers = st.lists(json_scalars, max_size=2) | st.dictionaries(
    st.text(max_size=3), json_scalars, max_size=2
)
hexish = pick(
    st.binary(min_size=32, max_size=32).map(bytes.hex),
    st.text("0123456789abcdefABCDEF \t\n", max_size=70),
    st.sampled_from([NH.hex(), NC.hex(), K.hex(), " " * 64]),
    json_scalars,
    containers,
)
kinds = st.sampled_from(["challenge", "proof", "admit", "admitted", "refused"])
versions = pick(st.sampled_from([0, 1, 2, True, "1", 1.0]), json_scalars, containers)


FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "v": versions,
    "nonce": hexish,
    "mac": hexish,
    "role": pick(st.sampled_from(["mcp", "cli", "root", ""]), containers, json_scalars),
    "protocol": versions,
    "browser": pick(st.text(max_size=8), containers, json_scalars),
    "extensionConnected": pick(st.booleans(), containers, json_scalars),
}
REQUIRED = {
    "challenge": ("v", "nonce"),
    "proof": ("nonce", "mac"),
    "admit": ("role", "protocol"),
    "admitted": ("protocol", "browser", "extensionConnected"),
}


def messages_for(kind: str | None) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Arbitrary objects, handshake-shaped objects, and well-formed-looking ``kind`` messages
    (every field present, each value valid, a container or a random scalar)."""
    anything = st.fixed_dictionaries({"t": pick(kinds, json_scalars, containers)}, optional=FIELDS)
    options = [anything, json_objects]
    if kind is not None:
        required = {key: FIELDS[key] for key in REQUIRED[kind]}
        rest = {key: value for key, value in FIELDS.items() if key not in required}
        expected = st.fixed_dictionaries({"t": st.just(kind), **required}, optional=rest)
        options += [expected, expected]
    return st.lists(pick(*options), max_size=4)


HOST_SETUPS = {
    "fresh": "proof",
    "challenged": "proof",
    "await_admit": "admit",
    "admitted": "admit",
    "failed": None,
}
CLIENT_SETUPS = {
    "await_challenge": "challenge",
    "await_host_proof": "proof",
    "await_admitted": "admitted",
    "admitted": "admitted",
    "failed": None,
}


def make_host(setup: str) -> HostHandshake:
    h = HostHandshake(K, NH, browser="chromium", extension_connected=True)
    if setup == "fresh":
        return h
    h.start()
    if setup == "failed":
        with pytest.raises(HandshakeFailed):
            h.receive({"t": "admit"})
    if setup in ("await_admit", "admitted"):
        h.receive({"t": "proof", "nonce": NC.hex(), "mac": good_mac("client-to-host", NH, NC)})
    if setup == "admitted":
        h.receive({"t": "admit", "role": "mcp", "protocol": 1})
    return h


def make_client(setup: str) -> ClientHandshake:
    c = ClientHandshake(K, NC, role="mcp")
    if setup == "failed":
        with pytest.raises(HandshakeFailed):
            c.receive({"t": "refused"})
    if setup in ("await_challenge", "failed"):
        return c
    c.receive({"t": "challenge", "v": 1, "nonce": NH.hex()})
    if setup == "await_host_proof":
        return c
    c.receive({"t": "proof", "mac": good_mac("host-to-client", NC, NH)})
    if setup == "admitted":
        c.receive({"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": True})
    return c


def feed(side: hs._Machine, messages: list[dict[str, Any]]) -> list[State]:
    """Feed everything; only HandshakeFailed may escape a receive; returns the states seen."""
    states = [side.state]
    for message in messages:
        failed_before = side.state is State.FAILED
        try:
            out, admitted = side.receive(message)
        except HandshakeFailed as exc:
            assert side.state is State.FAILED
            assert isinstance(exc.reason, str)
        else:
            assert not failed_before
            for reply in out:
                frames.encode_frame(reply)  # every reply is a sendable frame
            if admitted is not None:
                assert side.state is State.ADMITTED
                assert admitted.role in hs.ROLES and admitted.protocol == 1
        states.append(side.state)
    return states


@pytest.mark.parametrize("setup", HOST_SETUPS)
@HANDSHAKE_SETTINGS
@given(data=st.data())
def test_host_only_raises_handshake_failed_and_never_admits_without_mac(
    setup: str, data: st.DataObject
) -> None:
    messages = data.draw(messages_for(HOST_SETUPS[setup]))
    h = make_host(setup)
    states = feed(h, messages)
    if setup in ("fresh", "challenged"):
        # No valid client MAC was sent, so the host can never get past the proof.
        assert not {State.AWAIT_ADMIT, State.ADMITTED} & set(states)
    if setup in ("admitted", "failed"):
        assert set(states[1:]) <= {State.FAILED}


@pytest.mark.parametrize("setup", CLIENT_SETUPS)
@HANDSHAKE_SETTINGS
@given(data=st.data())
def test_client_only_raises_handshake_failed_and_never_admits_without_mac(
    setup: str, data: st.DataObject
) -> None:
    messages = data.draw(messages_for(CLIENT_SETUPS[setup]))
    c = make_client(setup)
    states = feed(c, messages)
    if setup in ("await_challenge", "await_host_proof"):
        # No valid host MAC was sent, so the client can never get past the host proof.
        assert not {State.AWAIT_ADMITTED, State.ADMITTED} & set(states)
    if setup in ("admitted", "failed"):
        assert set(states[1:]) <= {State.FAILED}


keys = st.binary(min_size=32, max_size=32)


@SETTINGS
@given(host_key=keys, client_key=keys, nh=keys, nc=keys, role=st.sampled_from(["mcp", "cli"]))
def test_pair_admits_iff_secrets_match(
    host_key: bytes, client_key: bytes, nh: bytes, nc: bytes, role: str
) -> None:
    assume(nh != nc)
    pair = ConnectionPair(
        HostHandshake(host_key, nh, browser="x", extension_connected=False),
        ClientHandshake(client_key, nc, role=role),
    )
    if host_key == client_key:
        pair.run()
        assert pair.admitted["host"] == pair.admitted["client"]
        assert pair.admitted["host"].role == role
    else:
        with pytest.raises(HandshakeFailed):
            pair.run()
        assert pair.host.state is State.FAILED
        assert pair.admitted == {}
